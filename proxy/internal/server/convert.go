// convert.go: model records -> protobuf messages.
package server

import (
	pb "rpmp.io/proxy/internal/rpmpv1"

	"rpmp.io/proxy/internal/model"
)

// nodeState maps liveness + draining to the wire enum.
func nodeState(n model.Node) pb.NodeState {
	switch {
	case n.Liveness == model.Dead:
		return pb.NodeState_NODE_STATE_DEAD
	case n.Draining:
		return pb.NodeState_NODE_STATE_DRAINING
	case n.Liveness == model.Suspect:
		return pb.NodeState_NODE_STATE_SUSPECT
	case n.Liveness == model.Live:
		return pb.NodeState_NODE_STATE_LIVE
	}
	return pb.NodeState_NODE_STATE_UNSPECIFIED
}

func nodeToPB(n model.Node) *pb.Node {
	return &pb.Node{Id: n.ID, Endpoint: n.Endpoint, State: nodeState(n), Capacity: n.Capacity,
		Free: n.Free, Used: n.Used, Pools: n.Pools, LastHeartbeatUnixMs: n.LastHeartbeatMs,
		FastCapacity: n.FastCapacity, FastFree: n.FastFree, CapacityTierCapacity: n.CapacityTierCapacity,
		CapacityTierFree: n.CapacityTierFree}
}

// nodeMapToPB builds a NodeMap message.
func nodeMapToPB(epoch uint64, leader string, nodes []model.Node) *pb.NodeMap {
	m := &pb.NodeMap{Epoch: epoch, Leader: leader}
	for _, n := range nodes {
		m.Nodes = append(m.Nodes, nodeToPB(n))
	}
	return m
}

// nsToPB builds a Namespace message, resolving endpoints with lookup.
func nsToPB(ns model.Namespace, lookup func(uint64) (model.Node, bool)) *pb.Namespace {
	out := &pb.Namespace{
		Name: ns.Name,
		Options: &pb.NamespaceOptions{Replicas: ns.Replicas, MinReplicas: ns.MinReplicas,
			TtlSeconds: ns.TTLSeconds},
		CreatedUnixMs: ns.CreatedMs, TouchedUnixMs: ns.TouchedMs, Epoch: ns.Epoch,
		InSync: ns.Synced(),
	}
	alive := 0
	for _, id := range ns.Placement {
		r := &pb.Replica{NodeId: id}
		if n, ok := lookup(id); ok {
			r.Endpoint, r.State = n.Endpoint, nodeState(n)
		}
		if r.State != pb.NodeState_NODE_STATE_DEAD && r.State != pb.NodeState_NODE_STATE_UNSPECIFIED {
			alive++
		}
		out.Placement = append(out.Placement, r)
	}
	out.Degraded = alive < int(ns.Replicas)
	for _, s := range ns.Substitutions {
		out.Substitutions = append(out.Substitutions, &pb.Substitution{Index: uint32(s.Index),
			ReplacedNode: s.Replaced, ReplacementNode: s.Replacement, Epoch: s.Epoch,
			AtUnixMs: s.AtMs, Reason: s.Reason})
	}
	return out
}

// lookupIn returns a lookup function over a node slice.
func lookupIn(nodes []model.Node) func(uint64) (model.Node, bool) {
	m := make(map[uint64]model.Node, len(nodes))
	for _, n := range nodes {
		m[n.ID] = n
	}
	return func(id uint64) (model.Node, bool) { n, ok := m[id]; return n, ok }
}
