// client_test.go: gRPC helpers for the integration tests: connections,
// leader discovery, and fake storage nodes that heartbeat the leader and
// follow "rpmp-leader" redirects.
package integration

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "rpmp.io/proxy/internal/rpmpv1"
)

// dial returns a Proxy client for addr, closed at test end.
func dial(t *testing.T, addr string) pb.ProxyClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewProxyClient(conn)
}

func ctx1s() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Second)
}

// leaderOf asks one proxy who leads ("" on error).
func leaderOf(c pb.ProxyClient) string {
	ctx, cancel := ctx1s()
	defer cancel()
	m, err := c.GetNodeMap(ctx, &pb.GetNodeMapRequest{})
	if err != nil {
		return ""
	}
	return m.Leader
}

// waitLeader waits until all proxies agree on one leader among them.
func waitLeader(t *testing.T, timeout time.Duration, procs ...*proxyProc) *proxyProc {
	t.Helper()
	var leader *proxyProc
	eventually(t, timeout, "all proxies agree on one leader", func() bool {
		l := leaderOf(dial(t, procs[0].Addr))
		for _, p := range procs[1:] {
			if leaderOf(dial(t, p.Addr)) != l {
				return false
			}
		}
		for _, p := range procs {
			if p.Addr == l {
				leader = p
				return true
			}
		}
		return false
	})
	return leader
}

// createOn calls CreateNamespace and returns the reply, trailer and error.
func createOn(c pb.ProxyClient, name string, r, minR uint32, ttl uint64) (*pb.Namespace, metadata.MD, error) {
	ctx, cancel := ctx1s()
	defer cancel()
	var tr metadata.MD
	ns, err := c.CreateNamespace(ctx, &pb.CreateNamespaceRequest{Name: name,
		Options: &pb.NamespaceOptions{Replicas: r, MinReplicas: minR, TtlSeconds: ttl}}, grpc.Trailer(&tr))
	return ns, tr, err
}

// placement returns the node ids of a namespace's placement.
func placement(ns *pb.Namespace) []uint64 {
	var ids []uint64
	for _, r := range ns.Placement {
		ids = append(ids, r.NodeId)
	}
	return ids
}

// fakeNode is a storage server stand-in that heartbeats the leader.
type fakeNode struct {
	id      uint64
	addrs   []string
	mu      sync.Mutex
	target  string
	deleted []string
	pending []string // deletions applied, acknowledged in the next heartbeat
	noAck   bool     // never acknowledge deletions (a server that keeps failing them)
	free    uint64   // free bytes reported (of 1 GiB); 0: half
	large   []*pb.NamespaceBytes
	lastErr error
	stop    chan struct{}
	done    chan struct{}
}

// startNode heartbeats every 150ms until stopped (at the latest at test end).
func startNode(t *testing.T, id uint64, proxies ...*proxyProc) *fakeNode {
	return startNodeWith(t, id, func(addr string) pb.ProxyClient { return dial(t, addr) }, proxies...)
}

// startNodeWith is startNode with connections made by dialer (e.g. with TLS).
func startNodeWith(t *testing.T, id uint64, dialer func(addr string) pb.ProxyClient, proxies ...*proxyProc) *fakeNode {
	n := &fakeNode{id: id, stop: make(chan struct{}), done: make(chan struct{})}
	for _, p := range proxies {
		n.addrs = append(n.addrs, p.Addr)
	}
	n.target = n.addrs[0]
	clients := map[string]pb.ProxyClient{}
	for _, a := range n.addrs {
		clients[a] = dialer(a)
	}
	go n.loop(clients)
	t.Cleanup(n.Stop)
	return n
}

func (n *fakeNode) loop(clients map[string]pb.ProxyClient) {
	defer close(n.done)
	tick := time.NewTicker(150 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-n.stop:
			return
		case <-tick.C:
		}
		n.beat(clients, i)
	}
}

// beat sends one heartbeat, following a redirect or rotating on failure.
func (n *fakeNode) beat(clients map[string]pb.ProxyClient, i int) {
	n.mu.Lock()
	target := n.target
	acks := slices.Clone(n.pending)
	free, large := n.free, n.large
	n.mu.Unlock()
	if free == 0 {
		free = 1 << 29
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var tr metadata.MD
	rep, err := clients[target].Heartbeat(ctx, &pb.HeartbeatRequest{NodeId: n.id,
		Endpoint: "127.0.0.1:" + strconv.FormatUint(20000+n.id, 10), Capacity: 1 << 30, Free: free, Used: 1<<30 - free, Pools: 1,
		DeletedNamespaces: acks, LargeNamespaces: large}, grpc.Trailer(&tr))
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lastErr = err
	if err == nil {
		n.deleted = append(n.deleted, rep.DeleteNamespaces...)
		n.pending = nil
		if !n.noAck {
			n.pending = slices.Clone(rep.DeleteNamespaces)
		}
		return
	}
	if l := tr.Get("rpmp-leader"); len(l) > 0 && clients[l[0]] != nil {
		n.target = l[0]
		return
	}
	n.target = n.addrs[(slices.Index(n.addrs, target)+1)%len(n.addrs)]
}

// Stop ends the heartbeats (idempotent).
func (n *fakeNode) Stop() {
	select {
	case <-n.stop:
	default:
		close(n.stop)
	}
	<-n.done
}

// SetNoAck makes the node stop acknowledging deletions.
func (n *fakeNode) SetNoAck(v bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.noAck = v
}

// SetSpace sets the free bytes (of 1 GiB) and the large namespaces the next
// heartbeats report.
func (n *fakeNode) SetSpace(free uint64, large map[string]uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.free, n.large = free, nil
	for name, b := range large {
		n.large = append(n.large, &pb.NamespaceBytes{Name: name, Bytes: b})
	}
}

// LastErr is the outcome of the latest heartbeat.
func (n *fakeNode) LastErr() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lastErr
}

// Deleted returns the namespaces the proxy told this node to delete (once per
// heartbeat reply that named them).
func (n *fakeNode) Deleted() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.deleted)
}

// nodeStates returns id -> state from a proxy's node map.
func nodeStates(c pb.ProxyClient) map[uint64]pb.NodeState {
	ctx, cancel := ctx1s()
	defer cancel()
	m, err := c.GetNodeMap(ctx, &pb.GetNodeMapRequest{})
	if err != nil {
		return nil
	}
	out := map[uint64]pb.NodeState{}
	for _, n := range m.Nodes {
		out[n.Id] = n.State
	}
	return out
}

// allState reports whether every listed node has the given state.
func allState(c pb.ProxyClient, want pb.NodeState, ids ...uint64) bool {
	st := nodeStates(c)
	for _, id := range ids {
		if st[id] != want {
			return false
		}
	}
	return true
}

func code(err error) string { return status.Code(err).String() }
