// leader_rpc.go: the RPCs as served by the leader from its memory.
package server

import (
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/auth"
	"rpmp.io/proxy/internal/catalog"
	"rpmp.io/proxy/internal/model"
	"rpmp.io/proxy/internal/nodemap"
	"rpmp.io/proxy/internal/nsname"
	pb "rpmp.io/proxy/internal/rpmpv1"
	"rpmp.io/proxy/internal/store"
	"rpmp.io/proxy/internal/tenant"
)

// Heartbeat registers/refreshes a node and hands it pending deletions.
// With TLS, a node id belongs to the node certificate that first registered it.
func (l *Leader) Heartbeat(req *pb.HeartbeatRequest, caller auth.Identity) (*pb.HeartbeatReply, error) {
	if req.NodeId == 0 || req.Endpoint == "" {
		return nil, status.Errorf(codes.InvalidArgument, "heartbeat needs a non-zero node_id and an endpoint (got id %016x, endpoint %q)", req.NodeId, req.Endpoint)
	}
	now := l.now()
	beat := nodemap.Beat{ID: req.NodeId, Endpoint: req.Endpoint, Capacity: req.Capacity,
		Free: req.Free, Used: req.Used, Pools: req.Pools, Tiers: model.Tiers{FastCapacity: req.FastCapacity,
			FastFree: req.FastFree, CapacityTierCapacity: req.CapacityTierCapacity, CapacityTierFree: req.CapacityTierFree},
		WantDrain: req.StateHint == pb.NodeStateHint_NODE_STATE_HINT_DRAINING, Identity: caller.Name}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkNodeOwner(req.NodeId, caller, "heartbeat"); err != nil {
		return nil, err
	}
	rec, changed := l.nodes.Next(beat, now)
	if changed { // registration or state change: must be durable first
		l.mu.Unlock()
		l.wmu.Lock()
		defer l.wmu.Unlock()
		l.mu.Lock()
		if err := l.checkNodeOwner(req.NodeId, caller, "heartbeat"); err != nil { // may have changed meanwhile
			return nil, err
		}
		rec, changed = l.nodes.Next(beat, now)
	}
	epoch := l.epoch
	if changed {
		var b store.Batch
		l.st.PutEpoch(&b, epoch+1)
		l.st.PutNode(&b, rec)
		if err := l.commit(&b); err != nil {
			return nil, err
		}
		epoch = l.epoch + 1
		l.statsSaved[rec.ID] = now
	}
	l.nodes.Put(rec, now)
	l.epoch = epoch
	reply := &pb.HeartbeatReply{Epoch: epoch, Leader: l.cfg.Advertise, State: nodeState(rec),
		HeartbeatIntervalMs: uint32(l.cfg.HeartbeatInterval / time.Millisecond),
		LeaseMs:             uint32(l.cfg.lease() / time.Millisecond)}
	// Deletions are resent until the node acknowledges them (at-least-once). A
	// name recreated since with this node in its placement is not deleted there:
	// the copy belongs to the new namespace, whose primary's repair rewrites it
	// before the node is in sync; it counts as acknowledged.
	acks := slices.Clone(req.DeletedNamespaces)
	for _, d := range l.cat.DeletionsFor(rec.ID) {
		if ns, ok := l.cat.Get(d.Name); ok && slices.Contains(ns.Placement, rec.ID) {
			acks = append(acks, d.Name)
			continue
		}
		reply.DeleteNamespaces = append(reply.DeleteNamespaces, d.Name)
	}
	if len(acks) > 0 {
		go l.markDelivered(rec.ID, acks)
	}
	l.quotaHeartbeat(req, reply)
	large := make(map[string]uint64, len(req.LargeNamespaces))
	for _, nb := range req.LargeNamespaces {
		large[nb.Name] = nb.Bytes
	}
	l.nodes.ReportLarge(rec.ID, large)
	if changed {
		l.cfg.Logf("node %016x (%s) is now %s (epoch %d)", rec.ID, rec.Endpoint, nodeState(rec), epoch)
	}
	return reply, nil
}

// checkNodeOwner refuses a node call (heartbeat, in-sync change) for node id
// from a certificate other than the one the id is bound to. An id not bound yet
// (new, or registered before TLS) is bound by the heartbeat. Caller holds l.mu.
func (l *Leader) checkNodeOwner(id uint64, caller auth.Identity, what string) error {
	if !caller.Authenticated() {
		return nil
	}
	n, ok := l.nodes.Get(id)
	if !ok || n.Identity == "" || n.Identity == caller.Name {
		return nil
	}
	l.cfg.Logf("refused %s for node %016x from certificate %q: the node is bound to %q", what, id, caller.Name, n.Identity)
	return status.Errorf(codes.PermissionDenied, "%s refused: node %016x is registered to certificate %q, "+
		"not to %q (a node may only speak for its own id)", what, id, n.Identity, caller.Name)
}

// NodeMap returns the leader's node map.
func (l *Leader) NodeMap() *pb.NodeMap {
	l.mu.Lock()
	defer l.mu.Unlock()
	return nodeMapToPB(l.epoch, l.cfg.Advertise, l.nodes.All())
}

// CreateNamespace places and persists a new namespace.
// With TLS, the caller's certificate CN becomes the namespace's owner; with a
// tenant token (tok, verified), the name must be under its prefix, which becomes
// the namespace's tenant (nsAccess).
func (l *Leader) CreateNamespace(req *pb.CreateNamespaceRequest, caller auth.Identity, tok *tenant.Token) (*pb.Namespace, error) {
	if tok != nil && !tenant.Covers(tok.Prefix, req.Name) {
		return nil, outsidePrefix(req.Name, tok)
	}
	o := req.GetOptions()
	opts := catalog.Options{Replicas: o.GetReplicas(), MinReplicas: o.GetMinReplicas(), TTLSeconds: o.GetTtlSeconds()}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkCreateQuota(req.Name); err != nil {
		return nil, err
	}
	candidates := l.nodes.RoomyIDs(int(opts.Replicas))
	if prev, _, ok := nsname.Extent(req.Name); ok {
		// A namespace that ran out of space continues here: away from its full members.
		var avoid []uint64
		if p, found := l.cat.Get(prev); found {
			avoid = p.Placement
		}
		candidates = l.nodes.ExtentIDs(int(opts.Replicas), avoid)
	}
	ns, isNew, err := l.cat.PlanCreate(req.Name, opts, candidates, func(id uint64) bool {
		n, known := l.nodes.Get(id)
		return !known || n.Liveness == model.Dead // unknown: removed by an operator
	}, l.now().UnixMilli(), l.epoch)
	if err != nil || !isNew {
		return l.nsReply(ns, err)
	}
	ns.Owner = caller.Name
	if tok != nil {
		ns.Tenant = tok.Prefix
	}
	var b store.Batch
	l.st.PutNamespace(&b, ns)
	if err := l.commit(&b); err != nil {
		return nil, err
	}
	l.cat.PutNamespace(ns)
	l.cfg.Logf("created namespace %q replicas=%d placement %s", ns.Name, ns.Replicas, model.HexIDs(ns.Placement))
	return l.nsReply(ns, nil)
}

// GetPlacement returns one namespace.
func (l *Leader) GetPlacement(name string) (*pb.Namespace, error) {
	if err := nsname.Validate(name); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ns, ok := l.cat.Get(name)
	if !ok {
		return nil, status.Errorf(codes.NotFound, "namespace %q not found", name)
	}
	return l.nsReply(ns, nil)
}

// ListNamespaces returns namespaces by prefix.
func (l *Leader) ListNamespaces(prefix string) (*pb.ListNamespacesReply, error) {
	if err := nsname.ValidatePrefix(prefix); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := &pb.ListNamespacesReply{}
	for _, ns := range l.cat.List(prefix) {
		out.Namespaces = append(out.Namespaces, nsToPB(ns, l.nodes.Get))
	}
	return out, nil
}

// nsReply converts a namespace (caller holds l.mu) or passes err through.
func (l *Leader) nsReply(ns nsRecord, err error) (*pb.Namespace, error) {
	if err != nil {
		return nil, err
	}
	return nsToPB(ns, l.nodes.Get), nil
}

// markDelivered records that node acknowledged deleting names. Best effort:
// if it cannot be persisted the deletions stay pending and are resent.
func (l *Leader) markDelivered(node uint64, names []string) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	var b store.Batch
	var dels []model.Deletion
	for _, d := range l.cat.DeletionsFor(node) {
		if slices.Contains(names, d.Name) {
			l.st.PutDeletion(&b, d)
			dels = append(dels, d)
		}
	}
	if err := l.commitBestEffort(&b); err != nil {
		l.cfg.Logf("node %016x: deletion progress not persisted, will resend: %v", node, err)
		return
	}
	for _, d := range dels {
		l.cat.PutDeletion(d)
	}
}
