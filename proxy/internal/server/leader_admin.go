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
)

type nsRecord = model.Namespace

// DeleteNamespace deletes a namespace (and its "name/" children if asked).
// Only an admin, or the owner of every namespace matched, may delete.
func (l *Leader) DeleteNamespace(req *pb.DeleteNamespaceRequest, caller auth.Identity) (*pb.DeleteNamespaceReply, error) {
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
	if !caller.IsAdmin() {
		for _, name := range names {
			if ns, _ := l.cat.Get(name); ns.Owner != caller.Name {
				l.cfg.Logf("refused delete of namespace %q (owner %q) from %q", name, ns.Owner, caller.Name)
				return nil, status.Errorf(codes.PermissionDenied, "namespace %q belongs to %q, not to %q: deleting "+
					"another application's namespace needs an admin certificate (OU=%s)", name, ns.Owner, caller.Name, auth.OUAdmin)
			}
		}
	}
	if err := l.deleteLocked(names); err != nil {
		return nil, err
	}
	l.cfg.Logf("deleted namespaces %v", names)
	return &pb.DeleteNamespaceReply{Deleted: names}, nil
}

// TouchNamespace refreshes a namespace's TTL.
func (l *Leader) TouchNamespace(name string) (*pb.Namespace, error) {
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
	ns.TouchedMs = l.now().UnixMilli()
	var b store.Batch
	l.st.PutNamespace(&b, ns)
	if err := l.commit(&b); err != nil {
		return nil, err
	}
	l.cat.PutNamespace(ns)
	return nsToPB(ns, l.nodes.Get), nil
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
