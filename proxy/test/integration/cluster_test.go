// cluster_test.go: integration tests of election, follower behaviour,
// request validation, node death and substitution, drain, and deletion,
// against real etcd and rpmp-proxy processes.
package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "rpmp.io/proxy/internal/rpmpv1"
)

// cluster is etcd + two proxies with an elected leader.
type cluster struct {
	etcd     *etcdProc
	proxies  []*proxyProc
	leader   *proxyProc
	follower *proxyProc
}

func startCluster(t *testing.T) *cluster {
	c := &cluster{etcd: startEtcd(t)}
	c.proxies = []*proxyProc{startProxy(t, c.etcd.URL()), startProxy(t, c.etcd.URL())}
	c.leader = waitLeader(t, 10*time.Second, c.proxies...)
	for _, p := range c.proxies {
		if p != c.leader {
			c.follower = p
		}
	}
	return c
}

// startClusterWithNodes is startCluster plus one fake node per id, heartbeating to both
// proxies; it returns once the leader sees them all LIVE, with a client of the leader.
func startClusterWithNodes(t *testing.T, ids ...uint64) (*cluster, pb.ProxyClient, map[uint64]*fakeNode) {
	c := startCluster(t)
	lc := dial(t, c.leader.Addr)
	nodes := map[uint64]*fakeNode{}
	for _, id := range ids {
		nodes[id] = startNode(t, id, c.proxies...)
	}
	eventually(t, 5*time.Second, fmt.Sprintf("%d LIVE nodes", len(ids)), func() bool {
		return allState(lc, pb.NodeState_NODE_STATE_LIVE, ids...)
	})
	return c, lc, nodes
}

func TestEtcdServerVersion(t *testing.T) {
	e := startEtcd(t)
	cli := e.client()
	defer cli.Close()
	ctx, cancel := ctx1s()
	defer cancel()
	st, err := cli.Status(ctx, e.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd server version %s with client v3.5", st.Version)
	if !strings.HasPrefix(st.Version, "3.") {
		t.Fatalf("unexpected etcd version %q", st.Version)
	}
}

func TestExactlyOneLeaderAndFollowerRedirects(t *testing.T) {
	c := startCluster(t)
	lc, fc := dial(t, c.leader.Addr), dial(t, c.follower.Addr)
	// One election key in etcd: exactly one leader.
	cli := c.etcd.client()
	defer cli.Close()
	ctx, cancel := ctx1s()
	defer cancel()
	resp, err := cli.Get(ctx, "/rpmp/test/leader/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	holders := 0
	for _, kv := range resp.Kvs {
		if string(kv.Value) == c.leader.Addr {
			holders++
		}
	}
	if holders != 1 {
		t.Fatalf("%d election keys hold the leader address; keys: %d", holders, len(resp.Kvs))
	}

	startNode(t, 1, c.proxies...)
	startNode(t, 2, c.proxies...)
	eventually(t, 5*time.Second, "nodes 1,2 LIVE on follower", func() bool {
		return allState(fc, pb.NodeState_NODE_STATE_LIVE, 1, 2)
	})

	// Writes on the follower: UNAVAILABLE + leader address in message and trailer.
	_, tr, err := createOn(fc, "ns/a", 2, 0, 0)
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), c.leader.Addr) {
		t.Fatalf("create on follower: %v", err)
	}
	if got := tr.Get("rpmp-leader"); len(got) != 1 || got[0] != c.leader.Addr {
		t.Fatalf("rpmp-leader trailer = %v; want %s", got, c.leader.Addr)
	}
	ns, _, err := createOn(dial(t, tr.Get("rpmp-leader")[0]), "ns/a", 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Reads on the follower come from etcd and match the leader.
	ctx2, cancel2 := ctx1s()
	defer cancel2()
	got, err := fc.GetPlacement(ctx2, &pb.GetPlacementRequest{Name: "ns/a"})
	if err != nil || !slices.Equal(placement(got), placement(ns)) || got.Placement[0].Endpoint == "" {
		t.Fatalf("follower placement %v err %v; leader said %v", got, err, placement(ns))
	}
	list, err := fc.ListNamespaces(ctx2, &pb.ListNamespacesRequest{Prefix: "ns/"})
	if err != nil || len(list.Namespaces) != 1 {
		t.Fatalf("follower list: %v %v", list, err)
	}
	if m, err := lc.GetNodeMap(ctx2, &pb.GetNodeMapRequest{}); err != nil || m.Leader != c.leader.Addr || len(m.Nodes) != 2 {
		t.Fatalf("leader node map %v %v", m, err)
	}
}

func TestBadRequests(t *testing.T) {
	c, lc, _ := startClusterWithNodes(t, 1, 2, 3)
	cases := []struct {
		name    string
		r, minR uint32
		want    codes.Code
		msg     string
	}{
		{"ok", 0, 0, codes.InvalidArgument, "replicas must be >= 1"},
		{"ok", 2, 3, codes.InvalidArgument, "min_replicas (3) must not exceed replicas (2)"},
		{"ok", 4, 0, codes.FailedPrecondition, "replicas=4 but only 3"},
		{"", 1, 0, codes.InvalidArgument, "empty"},
		{"/abs", 1, 0, codes.InvalidArgument, "starts with '/'"},
		{"a/../b", 1, 0, codes.InvalidArgument, `".."`},
		{"nul\x00x", 1, 0, codes.InvalidArgument, "NUL"},
		{strings.Repeat("x", 256), 1, 0, codes.InvalidArgument, "longer than 255"},
	}
	for _, tc := range cases {
		_, _, err := createOn(lc, tc.name, tc.r, tc.minR, 0)
		if status.Code(err) != tc.want || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("create %q r=%d min=%d: %v; want %s containing %q", tc.name, tc.r, tc.minR, err, tc.want, tc.msg)
		}
	}
	ctx, cancel := ctx1s()
	defer cancel()
	if _, err := lc.GetPlacement(ctx, &pb.GetPlacementRequest{Name: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("GetPlacement unknown: %v", err)
	}
	if _, err := dial(t, c.follower.Addr).GetPlacement(ctx, &pb.GetPlacementRequest{Name: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("follower GetPlacement unknown: %v", err)
	}
	if _, err := lc.TouchNamespace(ctx, &pb.TouchNamespaceRequest{Name: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("Touch unknown: %v", err)
	}
	if _, err := lc.DeleteNamespace(ctx, &pb.DeleteNamespaceRequest{Name: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("Delete unknown: %v", err)
	}
	if _, err := lc.Drain(ctx, &pb.DrainRequest{NodeId: 99}); status.Code(err) != codes.NotFound {
		t.Errorf("Drain unknown: %v", err)
	}
	if _, err := lc.Heartbeat(ctx, &pb.HeartbeatRequest{NodeId: 0, Endpoint: "127.0.0.1:1"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Heartbeat id 0: %v", err)
	}
	// Existing name: equal options are an idempotent success, others ALREADY_EXISTS.
	first, _, err := createOn(lc, "dup", 2, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := createOn(lc, "dup", 2, 1, 0)
	if err != nil || again.CreatedUnixMs != first.CreatedUnixMs || !slices.Equal(placement(again), placement(first)) {
		t.Errorf("idempotent create: %v %v", again, err)
	}
	if _, _, err := createOn(lc, "dup", 3, 0, 0); status.Code(err) != codes.AlreadyExists {
		t.Errorf("create dup with other options: %v", err)
	}
}

func TestNodeDeathSubstitutionDrainAndDelete(t *testing.T) {
	c := startCluster(t)
	lc, fc := dial(t, c.leader.Addr), dial(t, c.follower.Addr)
	nodes := map[uint64]*fakeNode{}
	for id := uint64(1); id <= 4; id++ {
		nodes[id] = startNode(t, id, c.proxies...)
	}
	eventually(t, 5*time.Second, "4 LIVE nodes", func() bool {
		return allState(lc, pb.NodeState_NODE_STATE_LIVE, 1, 2, 3, 4)
	})
	ns, _, err := createOn(lc, "spark/app-1/shuffle", 2, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	victim := ns.Placement[0].NodeId
	nodes[victim].Stop()
	stopped := time.Now()
	took := eventually(t, 5*time.Second, "victim DEAD", func() bool {
		return allState(lc, pb.NodeState_NODE_STATE_DEAD, victim)
	})
	t.Logf("node %d DEAD %v after its last heartbeat (timeout 1.5s)", victim, took)
	var sub *pb.Namespace
	eventually(t, 3*time.Second, "placement substituted (seen on follower)", func() bool {
		ctx, cancel := ctx1s()
		defer cancel()
		got, err := fc.GetPlacement(ctx, &pb.GetPlacementRequest{Name: ns.Name})
		if err != nil || slices.Contains(placement(got), victim) {
			return false
		}
		sub = got
		return true
	})
	t.Logf("placement %v -> %v, %v after heartbeats stopped", placement(ns), placement(sub), time.Since(stopped))
	s := sub.Substitutions
	if len(s) != 1 || s[0].ReplacedNode != victim || s[0].Index != 0 || s[0].Reason != "dead" ||
		sub.Placement[0].NodeId != s[0].ReplacementNode || sub.Placement[1].NodeId != ns.Placement[1].NodeId {
		t.Fatalf("substitution record %v for placement %v", s, placement(sub))
	}

	// The dead member left the in-sync set; the substitute is not in it until
	// the primary (the surviving original) says it repaired it. A stale epoch
	// or a caller that is not the primary is refused.
	drained := sub.Placement[1].NodeId
	if !slices.Equal(sub.InSync, []uint64{drained}) {
		t.Fatalf("in sync %v after the substitution; want [%d]", sub.InSync, drained)
	}
	ctx, cancel := ctx1s()
	defer cancel()
	newcomer := sub.Placement[0].NodeId
	if _, err := lc.SetInSync(ctx, &pb.SetInSyncRequest{Name: ns.Name, Epoch: sub.Epoch, Primary: newcomer,
		Node: newcomer, InSync: true}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("SetInSync by a non-primary: %v", err)
	}
	if _, err := lc.SetInSync(ctx, &pb.SetInSyncRequest{Name: ns.Name, Epoch: sub.Epoch - 1, Primary: drained,
		Node: newcomer, InSync: true}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("SetInSync at an old epoch: %v", err)
	}
	got, err := lc.SetInSync(ctx, &pb.SetInSyncRequest{Name: ns.Name, Epoch: sub.Epoch, Primary: drained,
		Node: newcomer, InSync: true})
	if err != nil || !slices.Equal(got.InSync, []uint64{drained, newcomer}) || got.Epoch <= sub.Epoch {
		t.Fatalf("SetInSync: %v %v", got, err)
	}

	// Drain the other original member: it is substituted too.
	if rep, err := lc.Drain(ctx, &pb.DrainRequest{NodeId: drained}); err != nil || rep.Node.State != pb.NodeState_NODE_STATE_DRAINING {
		t.Fatalf("drain: %v %v", rep, err)
	}
	eventually(t, 3*time.Second, "drained node substituted", func() bool {
		got, err := lc.GetPlacement(ctx, &pb.GetPlacementRequest{Name: ns.Name})
		return err == nil && !slices.Contains(placement(got), drained) && len(got.Substitutions) == 2
	})

	// Recursive delete of the application prefix; holders are told to delete.
	if _, _, err := createOn(lc, "spark/app-1/broadcast", 1, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := createOn(lc, "spark/app-10/x", 1, 0, 0); err != nil {
		t.Fatal(err)
	}
	// One live holder never acknowledges: the leader keeps resending to it.
	var silent *fakeNode
	for _, id := range sub.Placement {
		if n := nodes[id.NodeId]; id.NodeId != victim && silent == nil {
			silent = n
			n.SetNoAck(true)
		}
	}
	del, err := lc.DeleteNamespace(ctx, &pb.DeleteNamespaceRequest{Name: "spark/app-1", Recursive: true})
	if err != nil || !slices.Equal(del.Deleted, []string{"spark/app-1/broadcast", "spark/app-1/shuffle"}) {
		t.Fatalf("recursive delete: %v %v", del, err)
	}
	if _, err := lc.GetPlacement(ctx, &pb.GetPlacementRequest{Name: "spark/app-10/x"}); err != nil {
		t.Fatalf("sibling prefix deleted: %v", err)
	}
	eventually(t, 3*time.Second, "live holders told to delete spark/app-1/shuffle", func() bool {
		for id, n := range nodes {
			if id != victim && !slices.Contains(n.Deleted(), "spark/app-1/shuffle") {
				return false
			}
		}
		return true
	})
	eventually(t, 3*time.Second, "an unacknowledged deletion is resent", func() bool {
		k := 0
		for _, name := range silent.Deleted() {
			if name == "spark/app-1/shuffle" {
				k++
			}
		}
		return k >= 3
	})
}

func TestTTLExpiry(t *testing.T) {
	_, lc, nodes := startClusterWithNodes(t, 1)
	n1 := nodes[1]
	for _, name := range []string{"tmp/expires", "tmp/touched"} {
		if _, _, err := createOn(lc, name, 1, 0, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := createOn(lc, "tmp/forever", 1, 0, 0); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	notFound := func(name string) bool {
		ctx, cancel := ctx1s()
		defer cancel()
		if _, err := lc.TouchNamespace(ctx, &pb.TouchNamespaceRequest{Name: "tmp/touched"}); err != nil {
			t.Fatalf("touch: %v", err)
		}
		_, err := lc.GetPlacement(ctx, &pb.GetPlacementRequest{Name: name})
		return status.Code(err) == codes.NotFound
	}
	took := eventually(t, 5*time.Second, "tmp/expires deleted by TTL", func() bool { return notFound("tmp/expires") })
	t.Logf("ttl=1s namespace gone %v after creation", time.Since(created).Round(time.Millisecond))
	if took < 900*time.Millisecond {
		t.Fatalf("expired too early: %v", took)
	}
	for _, name := range []string{"tmp/touched", "tmp/forever"} {
		if notFound(name) {
			t.Fatalf("%s was deleted", name)
		}
	}
	eventually(t, 3*time.Second, "node told to delete tmp/expires", func() bool {
		return slices.Contains(n1.Deleted(), "tmp/expires")
	})
}
