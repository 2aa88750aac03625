// server_tenant.go: the credential RPCs of pb.ProxyServer (leader_tenant.go).
// Both are leader-only (claims are serialized there); a proxy started without
// --token-secret-file answers FAILED_PRECONDITION before any redirect. Also
// tenantOf: the tenant token a namespace call carries (docs/security.md "Tenants").
package server

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/auth"
	pb "rpmp.io/proxy/internal/rpmpv1"
	"rpmp.io/proxy/internal/tenant"
)

// TenantTokenMetadataKey is the request metadata carrying a client's tenant token
// on namespace calls (CreateNamespace, DeleteNamespace, TouchNamespace).
const TenantTokenMetadataKey = "rpmp-tenant-token"

// tenantOf returns the verified tenant token of a call, nil when it carries none
// or this proxy has no --token-secret-file (it cannot verify one: the call keeps
// the certificate rules). A forged, expired or malformed token, or more than one,
// is PermissionDenied; the error never contains the token.
func (s *Server) tenantOf(ctx context.Context) (*tenant.Token, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(TenantTokenMetadataKey)
	if len(vals) == 0 || s.cfg.TokenKey == nil {
		return nil, nil
	}
	if len(vals) > 1 {
		return nil, status.Errorf(codes.PermissionDenied, "%d tenant tokens in one call; send one", len(vals))
	}
	t, err := s.cfg.TokenKey.Verify(vals[0], time.Now())
	if err != nil {
		return nil, status.Errorf(codes.PermissionDenied, "tenant token refused: %v", err)
	}
	return &t, nil
}

// NoIssuance is the message of a proxy that issues no credentials.
const NoIssuance = "this proxy issues no credentials: start it with --token-secret-file"

// IssueCredential implements pb.ProxyServer.
func (s *Server) IssueCredential(ctx context.Context, req *pb.IssueCredentialRequest) (*pb.Credential, error) {
	if s.cfg.TokenKey == nil {
		return nil, status.Error(codes.FailedPrecondition, NoIssuance)
	}
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	return l.IssueCredential(req, auth.Caller(ctx))
}

// RenewCredential implements pb.ProxyServer.
func (s *Server) RenewCredential(ctx context.Context, req *pb.RenewCredentialRequest) (*pb.Credential, error) {
	if s.cfg.TokenKey == nil {
		return nil, status.Error(codes.FailedPrecondition, NoIssuance)
	}
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	return l.RenewCredential(req)
}
