// leader_admin.go: leader RPCs that delete, touch and drain.
package server

import (
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/auth"
	"rpmp.io/proxy/internal/model"
	"rpmp.io/proxy/internal/nsname"
	pb "rpmp.io/proxy/internal/rpmpv1"
	"rpmp.io/proxy/internal/store"
	"rpmp.io/proxy/internal/tenant"
)

type nsRecord = model.Namespace

// DeleteNamespace deletes a namespace (and its "name/" children if asked).
// The caller must have access (nsAccess) to every namespace matched.
func (l *Leader) DeleteNamespace(req *pb.DeleteNamespaceRequest, caller auth.Identity, tok *tenant.Token) (*pb.DeleteNamespaceReply, error) {
	if err := nsname.Validate(req.Name); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	names := l.cat.Matching(req.Name, req.Recursive)
	if len(names) == 0 {
		return nil, status.Errorf(codes.NotFound, "namespace %q not found (recursive=%v)", req.Name, req.Recursive)
	}
	for _, name := range names {
		ns, _ := l.cat.Get(name)
		if err := l.nsAccess(ns, caller, tok, "delete"); err != nil {
			return nil, err
		}
	}
	if err := l.deleteLocked(names); err != nil {
		return nil, err
	}
	l.cfg.Logf("deleted namespaces %v", names)
	return &pb.DeleteNamespaceReply{Deleted: names}, nil
}

// TouchNamespace refreshes a namespace's TTL. A tenant-owned one needs access
// (nsAccess); others may be touched by any caller, as before tenants.
func (l *Leader) TouchNamespace(name string, caller auth.Identity, tok *tenant.Token) (*pb.Namespace, error) {
	if err := nsname.Validate(name); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	ns, ok := l.cat.Get(name)
	if !ok {
		return nil, status.Errorf(codes.NotFound, "namespace %q not found", name)
	}
	if ns.Tenant != "" {
		if err := l.nsAccess(ns, caller, tok, "touch"); err != nil {
			return nil, err
		}
	}
	ns.TouchedMs = l.now().UnixMilli()
	var b store.Batch
	l.st.PutNamespace(&b, ns)
	if err := l.commit(&b); err != nil {
		return nil, err
	}
	l.cat.PutNamespace(ns)
	return nsToPB(ns, l.nodes.Get), nil
}

// nsAccess says whether caller (with tenant token tok, verified, or nil) may
// delete or touch ns. Admins may always. A tenant-owned namespace (created with a
// token) needs a token whose prefix covers its name, whatever the certificate;
// any other needs the certificate that created it (Owner). Caller holds l.mu.
func (l *Leader) nsAccess(ns nsRecord, caller auth.Identity, tok *tenant.Token, what string) error {
	switch {
	case caller.IsAdmin():
		return nil
	case ns.Tenant != "" && tok != nil && tenant.Covers(tok.Prefix, ns.Name):
		return nil
	case ns.Tenant != "" && tok != nil:
		l.cfg.Logf("refused %s of namespace %q (tenant %q) from %q with a credential for %q", what, ns.Name, ns.Tenant, caller.Name, tok.Prefix)
		return outsidePrefix(ns.Name, tok)
	case ns.Tenant != "":
		l.cfg.Logf("refused %s of namespace %q (tenant %q) from %q without a credential", what, ns.Name, ns.Tenant, caller.Name)
		return status.Errorf(codes.PermissionDenied, "namespace %q belongs to the tenant of prefix %q: to %s it, present "+
			"a credential for that prefix (RPMP_TOKEN_FILE) or use an admin certificate (OU=%s)", ns.Name, ns.Tenant, what, auth.OUAdmin)
	case ns.Owner != caller.Name:
		l.cfg.Logf("refused %s of namespace %q (owner %q) from %q", what, ns.Name, ns.Owner, caller.Name)
		return status.Errorf(codes.PermissionDenied, "namespace %q belongs to %q, not to %q: to %s "+
			"another application's namespace needs an admin certificate (OU=%s)", ns.Name, ns.Owner, caller.Name, what, auth.OUAdmin)
	}
	return nil
}

// outsidePrefix is the refusal of a name outside tok's prefix, worded as the servers'.
func outsidePrefix(name string, tok *tenant.Token) error {
	return status.Errorf(codes.PermissionDenied, "namespace %q is outside this credential's prefix %q", name, tok.Prefix)
}

// Drain marks a node as draining (or not) and repairs placements at once.
func (l *Leader) Drain(req *pb.DrainRequest) (*pb.DrainReply, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.nodes.Get(req.NodeId)
	if !ok {
		return nil, status.Errorf(codes.NotFound, "node %016x is not known", req.NodeId)
	}
	if n.Draining != !req.Cancel {
		n.Draining = !req.Cancel
		epoch := l.epoch + 1
		var b store.Batch
		l.st.PutNode(&b, n)
		l.st.PutEpoch(&b, epoch)
		if err := l.commit(&b); err != nil {
			return nil, err
		}
		l.epoch = epoch
		l.nodes.Put(n, time.Time{})
		l.cfg.Logf("node %016x draining=%v (epoch %d)", n.ID, n.Draining, epoch)
		l.repairLocked(l.now())
	}
	return &pb.DrainReply{Node: nodeToPB(n)}, nil
}
