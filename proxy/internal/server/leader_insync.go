// leader_insync.go: the SetInSync RPC, by which a namespace's primary grows
// (after a repair) or shrinks (before acknowledging a write a member misses)
// the namespace's in-sync set. Every change moves the namespace epoch and the
// node-map epoch, so servers refetch placements and replicas refuse frames of
// the older epoch (docs/cluster.md).
package server

import (
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/auth"
	"rpmp.io/proxy/internal/model"
	pb "rpmp.io/proxy/internal/rpmpv1"
	"rpmp.io/proxy/internal/store"
)

// SetInSync applies one in-sync change asked by the namespace's primary.
// FailedPrecondition when the caller acts on an old epoch or is not the
// primary, or the member is not in the placement.
// With TLS, only the node certificate bound to req.Primary may ask.
func (l *Leader) SetInSync(req *pb.SetInSyncRequest, caller auth.Identity) (*pb.Namespace, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkNodeOwner(req.Primary, caller, "in-sync change"); err != nil {
		return nil, err
	}
	ns, ok := l.cat.Get(req.Name)
	if !ok {
		return nil, status.Errorf(codes.NotFound, "namespace %q not found", req.Name)
	}
	dead := func(id uint64) bool { return l.replaceReason(id) == "dead" }
	primary, _ := ns.Primary(dead)
	if req.Epoch != ns.Epoch || req.Primary != primary {
		return nil, status.Errorf(codes.FailedPrecondition,
			"namespace %q is at epoch %d with primary %016x; refused in-sync change from %016x at epoch %d",
			req.Name, ns.Epoch, primary, req.Primary, req.Epoch)
	}
	if !slices.Contains(ns.Placement, req.Node) {
		return nil, status.Errorf(codes.FailedPrecondition, "node %016x is not in the placement %s of %q",
			req.Node, model.HexIDs(ns.Placement), req.Name)
	}
	synced := ns.Synced()
	has := slices.Contains(synced, req.Node)
	switch {
	case req.InSync == has:
		return nsToPB(ns, l.nodes.Get), nil
	case req.InSync:
		synced = append(synced, req.Node)
	case req.Node == primary:
		return nil, status.Errorf(codes.FailedPrecondition, "the primary %016x cannot leave the in-sync set", primary)
	default:
		synced = slices.DeleteFunc(synced, func(x uint64) bool { return x == req.Node })
	}
	epoch := l.epoch + 1
	next := ns.Clone()
	next.InSync, next.Epoch = synced, epoch
	var b store.Batch
	l.st.PutNamespace(&b, next)
	l.st.PutEpoch(&b, epoch)
	if err := l.commit(&b); err != nil {
		return nil, err
	}
	l.epoch = epoch
	l.cat.PutNamespace(next)
	l.cfg.Logf("namespace %q: in sync %s (primary %016x), epoch %d", next.Name, model.HexIDs(next.InSync), primary, epoch)
	return nsToPB(next, l.nodes.Get), nil
}
