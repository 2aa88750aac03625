// nodes_test.go: integration test of RemoveNode (rpmpctl nodes rm) against real
// etcd and rpmp-proxy processes: who may remove, which nodes, and what it leaves.
package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "rpmp.io/proxy/internal/rpmpv1"
)

func removeNode(c pb.ProxyClient, id uint64) (*pb.RemoveNodeReply, error) {
	ctx, cancel := ctx1s()
	defer cancel()
	return c.RemoveNode(ctx, &pb.RemoveNodeRequest{NodeId: id})
}

// wantRefused fails unless err has the code and mentions every fragment.
func wantRefused(t *testing.T, what string, err error, c codes.Code, fragments ...string) {
	t.Helper()
	if status.Code(err) != c {
		t.Fatalf("%s: want %v, got %v", what, c, err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("%s: error %q lacks %q", what, err, f)
		}
	}
	t.Logf("refused as expected (%s): %v", what, err)
}

func TestRemoveDeadNode(t *testing.T) {
	c, lc, nodes := startClusterWithNodes(t, 1, 2, 3)
	fc := dial(t, c.follower.Addr)
	solo, _, err := createOn(lc, "solo", 1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	victim := solo.Placement[0].NodeId
	if _, _, err := createOn(lc, "pair", 2, 1, 0); err != nil {
		t.Fatal(err)
	}

	_, err = removeNode(lc, 0xff)
	wantRefused(t, "unknown id", err, codes.NotFound, "00000000000000ff", "not in the node map")
	_, err = removeNode(lc, victim)
	wantRefused(t, "LIVE node", err, codes.FailedPrecondition, "is LIVE", "only a DEAD node")

	nodes[victim].Stop()
	eventually(t, 5*time.Second, "victim DEAD", func() bool { return allState(lc, pb.NodeState_NODE_STATE_DEAD, victim) })
	// The leader logs node ids as rpmpctl prints them (16 hex digits), not in decimal.
	eventually(t, 2*time.Second, "hex id in the leader's log", func() bool {
		return strings.Contains(c.leader.log.String(), fmt.Sprintf("node %016x (127.0.0.1:%d) is now DEAD", victim, 20000+victim))
	})
	// "pair" is repaired onto the third node; "solo" keeps its only in-sync copy there.
	eventually(t, 3*time.Second, "pair substituted", func() bool {
		ctx, cancel := ctx1s()
		defer cancel()
		ns, err := lc.GetPlacement(ctx, &pb.GetPlacementRequest{Name: "pair"})
		return err == nil && !containsNode(ns, victim)
	})
	_, err = removeNode(lc, victim)
	wantRefused(t, "only in-sync copy", err, codes.FailedPrecondition, `namespace "solo"`, "only in-sync copy")
	_, err = removeNode(fc, victim) // a follower redirects, never removes
	wantRefused(t, "on a follower", err, codes.Unavailable, "not the leader")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := lc.DeleteNamespace(ctx, &pb.DeleteNamespaceRequest{Name: "solo"}); err != nil {
		t.Fatal(err)
	}
	before, err := lc.GetNodeMap(ctx, &pb.GetNodeMapRequest{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := removeNode(lc, victim)
	if err != nil || rep.Node.Id != victim || rep.Node.State != pb.NodeState_NODE_STATE_DEAD {
		t.Fatalf("removing the dead node: %v %v", rep, err)
	}
	// Gone from the leader's map and from etcd (a follower reads etcd), at a new epoch.
	for _, p := range []pb.ProxyClient{lc, fc} {
		m, err := p.GetNodeMap(ctx, &pb.GetNodeMapRequest{})
		if err != nil || len(m.Nodes) != 2 || containsID(m.Nodes, victim) || m.Epoch <= before.Epoch {
			t.Fatalf("node map after the removal: %v %v (epoch before %d)", m, err, before.Epoch)
		}
	}
	// The deletion of "solo" it never acknowledged does not block a new "solo".
	if _, _, err := createOn(lc, "solo", 1, 1, 0); err != nil {
		t.Fatalf("recreating a name whose deletion only the removed node had pending: %v", err)
	}
	_, err = removeNode(lc, victim)
	wantRefused(t, "already removed", err, codes.NotFound, "not in the node map")
	// The node comes back: it registers as a new node.
	startNode(t, victim, c.proxies...)
	eventually(t, 5*time.Second, "returned node LIVE", func() bool { return allState(lc, pb.NodeState_NODE_STATE_LIVE, victim) })
}

func containsNode(ns *pb.Namespace, id uint64) bool {
	for _, r := range ns.Placement {
		if r.NodeId == id {
			return true
		}
	}
	return false
}

func containsID(nodes []*pb.Node, id uint64) bool {
	for _, n := range nodes {
		if n.Id == id {
			return true
		}
	}
	return false
}
