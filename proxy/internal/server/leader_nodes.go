// leader_nodes.go: the leader's node administration beyond draining: an
// operator removes a DEAD node from the node map for good (rpmpctl nodes rm).
package server

import (
	"fmt"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/model"
	pb "rpmp.io/proxy/internal/rpmpv1"
	"rpmp.io/proxy/internal/store"
)

// RemoveNode deletes a DEAD node's record (admin only: auth.Interceptor).
// Refused while the node is not DEAD, or while a namespace still places a
// copy on it: its only in-sync copy (the data would be lost), or a copy no
// LIVE node could take over yet. The node's pending deletions are dropped (it
// will never acknowledge them); if it heartbeats again it registers as new.
func (l *Leader) RemoveNode(id uint64) (*pb.RemoveNodeReply, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.nodes.Get(id)
	if !ok {
		return nil, status.Errorf(codes.NotFound, "node %016x is not in the node map (rpmpctl nodes lists the ids)", id)
	}
	if n.Liveness != model.Dead {
		return nil, status.Errorf(codes.FailedPrecondition, "node %016x (%s) is %s: only a DEAD node can be removed; "+
			"stop it and wait until 'rpmpctl nodes' shows it DEAD", id, n.Endpoint, nodeState(n).String()[len("NODE_STATE_"):])
	}
	if err := dependents(id, l.cat.PlacedOn(id)); err != nil {
		return nil, err
	}
	epoch := l.epoch + 1
	var b store.Batch
	l.st.DeleteNode(&b, id)
	dels := l.cat.DeletionsFor(id) // each without id in Pending
	for _, d := range dels {
		l.st.PutDeletion(&b, d)
	}
	l.st.PutEpoch(&b, epoch)
	if err := l.commit(&b); err != nil {
		return nil, err
	}
	l.epoch = epoch
	l.nodes.Remove(id)
	l.quotas.ForgetNode(id)
	delete(l.statsSaved, id)
	for _, d := range dels {
		l.cat.PutDeletion(d)
	}
	l.cfg.Logf("node %016x (%s) removed from the node map by an operator (epoch %d)", id, n.Endpoint, epoch)
	return &pb.RemoveNodeReply{Node: nodeToPB(n)}, nil
}

// dependents returns the FailedPrecondition naming a namespace that still
// places a copy on node (nil if none): one whose only in-sync copy is there
// first, as that one would lose data.
func dependents(node uint64, placed []model.Namespace) error {
	if len(placed) == 0 {
		return nil
	}
	more := ""
	if len(placed) > 1 {
		more = fmt.Sprintf(" (and %d more namespaces)", len(placed)-1)
	}
	for _, ns := range placed {
		synced := slices.DeleteFunc(ns.Synced(), func(x uint64) bool { return !slices.Contains(ns.Placement, x) })
		if len(synced) == 1 && synced[0] == node {
			return status.Errorf(codes.FailedPrecondition, "namespace %q%s has its only in-sync copy on node %016x: "+
				"removing the node would lose that data; restart the node, or delete the namespace first (rpmpctl ns rm)",
				ns.Name, more, node)
		}
	}
	return status.Errorf(codes.FailedPrecondition, "namespace %q%s still places a copy on node %016x (no LIVE node "+
		"could take it over yet): start or add a node so the placement is repaired, then retry", placed[0].Name, more, node)
}
