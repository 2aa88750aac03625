// Substitutes sized by the namespace (docs/cluster.md "Room-aware substitution"):
// against a real etcd and two rpmp-proxy processes, with nodes that heartbeat by
// hand the free space and large namespaces a server reports.
package integration

import (
	"slices"
	"testing"
	"time"

	pb "rpmp.io/proxy/internal/rpmpv1"
)

// freeOf returns id -> free bytes from a proxy's node map.
func freeOf(c pb.ProxyClient) map[uint64]uint64 {
	ctx, cancel := ctx1s()
	defer cancel()
	m, err := c.GetNodeMap(ctx, &pb.GetNodeMapRequest{})
	if err != nil {
		return nil
	}
	out := map[uint64]uint64{}
	for _, n := range m.Nodes {
		out[n.Id] = n.Free
	}
	return out
}

// A dead member of a namespace holding 700 MiB is not substituted by nodes with
// 300 MiB free (over the 1/16 mark of 1 GiB, which alone let them be chosen
// before: their repair would have filled them and never finished); the
// namespace stays degraded until a node reports room for the copy, which then
// replaces the dead member.
func TestSubstituteNeedsRoomForTheWholeCopy(t *testing.T) {
	_, lc, nodes := startClusterWithNodes(t, 1, 2, 3, 4)
	ns, _, err := createOn(lc, "spark/app-9/shuffle/g0", 2, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	members := placement(ns)
	victim, survivor := members[0], members[1]
	var spares []uint64
	for id := range nodes {
		if !slices.Contains(members, id) {
			spares = append(spares, id)
		}
	}
	slices.Sort(spares)
	const mib = 1 << 20
	large := map[string]uint64{ns.Name: 700 * mib}
	nodes[victim].SetSpace(200*mib, large)
	nodes[survivor].SetSpace(200*mib, large)
	for _, id := range spares {
		nodes[id].SetSpace(300*mib, nil)
	}
	// The leader took the reports once the free space they came with shows.
	eventually(t, 5*time.Second, "the new free space in the leader's node map", func() bool {
		f := freeOf(lc)
		return f[victim] == 200*mib && f[survivor] == 200*mib && f[spares[0]] == 300*mib && f[spares[1]] == 300*mib
	})

	nodes[victim].Stop()
	eventually(t, 5*time.Second, "victim DEAD", func() bool {
		return allState(lc, pb.NodeState_NODE_STATE_DEAD, victim)
	})
	var got *pb.Namespace
	eventually(t, 3*time.Second, "the dead member out of the in-sync set", func() bool {
		ctx, cancel := ctx1s()
		defer cancel()
		got, err = lc.GetPlacement(ctx, &pb.GetPlacementRequest{Name: ns.Name})
		return err == nil && slices.Equal(got.InSync, []uint64{survivor})
	})
	if !slices.Equal(placement(got), members) || len(got.Substitutions) != 0 {
		t.Fatalf("placement %v, substitutions %v: want %v kept (no spare can hold 700 MiB + 1/16)",
			placement(got), got.Substitutions, members)
	}

	roomy := spares[1]
	nodes[roomy].SetSpace(900*mib, nil)
	eventually(t, 3*time.Second, "the node with room substitutes the dead member", func() bool {
		ctx, cancel := ctx1s()
		defer cancel()
		got, err = lc.GetPlacement(ctx, &pb.GetPlacementRequest{Name: ns.Name})
		return err == nil && !slices.Contains(placement(got), victim)
	})
	s := got.Substitutions
	if len(s) != 1 || s[0].ReplacedNode != victim || s[0].ReplacementNode != roomy || s[0].Reason != "dead" {
		t.Fatalf("substitutions %v (placement %v): want %d replaced by %d", s, placement(got), victim, roomy)
	}
}
