// Package auth says who is calling the proxy and what they may do. With TLS on
// (rpmp-proxy --tls-cert/--tls-key/--tls-ca) every caller presents a client
// certificate signed by the cluster CA; its subject gives the identity:
//
//	OU=rpmp-node   a storage server; CN names it (node ids are bound to the CN)
//	OU=rpmp-admin  an operator: drain, remove a dead node, delete any namespace
//	anything else  an application (Spark, rpmpctl, librpmp): create and use
//	               namespaces, delete only the ones it created (those created
//	               with a tenant token: only with a token for their prefix,
//	               server/server_tenant.go)
//
// The Interceptor checks the role a method needs and stores the Identity in the
// call's context; the leader checks ownership (node ids, namespaces) with Caller.
// Without TLS there is no authentication: Caller returns Unauthenticated, which may
// do everything (the proxy then serves loopback only unless --insecure).
package auth

import (
	"context"
	"crypto/x509"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Role is what an identity may do.
type Role int

// Roles, from least to most trusted for administration (Node is separate: only
// nodes heartbeat and change in-sync sets, and a node is not an admin).
const (
	Client Role = iota
	Node
	Admin
)

// Organizational units that give a certificate its role.
const (
	OUNode  = "rpmp-node"
	OUAdmin = "rpmp-admin"
)

func (r Role) String() string {
	switch r {
	case Node:
		return "node"
	case Admin:
		return "admin"
	}
	return "client"
}

// ou is the organizational unit that gives a certificate the role.
func (r Role) ou() string {
	switch r {
	case Node:
		return OUNode
	case Admin:
		return OUAdmin
	}
	return "(none)"
}

// Identity is an authenticated caller. Name is the certificate's CN; it is empty
// only for Unauthenticated.
type Identity struct {
	Name string
	Role Role
}

// Unauthenticated is the caller when TLS is off: no name, every right.
var Unauthenticated = Identity{Role: Admin}

// Authenticated reports whether the identity comes from a certificate.
func (id Identity) Authenticated() bool { return id.Name != "" }

// IsAdmin reports whether id may run administrative calls.
func (id Identity) IsAdmin() bool { return id.Role == Admin }

// FromCert derives the identity of a verified client certificate.
func FromCert(c *x509.Certificate) Identity {
	id := Identity{Name: c.Subject.CommonName, Role: Client}
	switch {
	case slices.Contains(c.Subject.OrganizationalUnit, OUAdmin):
		id.Role = Admin
	case slices.Contains(c.Subject.OrganizationalUnit, OUNode):
		id.Role = Node
	}
	return id
}

type ctxKey struct{}

// Caller returns the identity the Interceptor stored, or Unauthenticated.
func Caller(ctx context.Context) Identity {
	if id, ok := ctx.Value(ctxKey{}).(Identity); ok {
		return id
	}
	return Unauthenticated
}

// methodRoles lists the methods that need a particular role; others need only a
// valid certificate.
var methodRoles = map[string]Role{
	"/rpmp.v1.Proxy/Heartbeat":  Node,
	"/rpmp.v1.Proxy/SetInSync":  Node,
	"/rpmp.v1.Proxy/Drain":      Admin,
	"/rpmp.v1.Proxy/RemoveNode": Admin,
	"/rpmp.v1.Proxy/SetQuota":   Admin,
	"/rpmp.v1.Proxy/ClearQuota": Admin,
}

// Interceptor authenticates every unary call from the verified peer certificate
// (the TLS handshake already required one signed by the CA) and refuses calls
// the identity's role does not allow, with PermissionDenied naming what is needed.
func Interceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	id, err := fromPeer(ctx)
	if err != nil {
		return nil, err
	}
	if need, ok := methodRoles[info.FullMethod]; ok && id.Role != need {
		return nil, status.Errorf(codes.PermissionDenied, "%s is for %s certificates (OU=%s) only; %q is a %s certificate",
			info.FullMethod, need, need.ou(), id.Name, id.Role)
	}
	return handler(context.WithValue(ctx, ctxKey{}, id), req)
}

func fromPeer(ctx context.Context) (Identity, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return Identity{}, status.Error(codes.Unauthenticated, "no peer information")
	}
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(ti.State.VerifiedChains) == 0 || len(ti.State.VerifiedChains[0]) == 0 {
		return Identity{}, status.Error(codes.Unauthenticated, "a client certificate signed by the cluster CA is required")
	}
	id := FromCert(ti.State.VerifiedChains[0][0])
	if id.Name == "" {
		return Identity{}, status.Error(codes.Unauthenticated, "the client certificate has no CN (its identity)")
	}
	return id, nil
}
