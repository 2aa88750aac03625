// failover_test.go: integration tests of leader failover (kill -9 and
// SIGTERM), etcd restarted under a running cluster, and startup errors.
package integration

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "rpmp.io/proxy/internal/rpmpv1"
)

// leads reports whether p serves leader-only RPCs: a Drain of an unknown
// node is NOT_FOUND on the leader and UNAVAILABLE elsewhere.
func leads(t *testing.T, p *proxyProc) bool {
	c := dial(t, p.Addr)
	ctx, cancel := ctx1s()
	defer cancel()
	_, err := c.Drain(ctx, &pb.DrainRequest{NodeId: 1 << 60})
	return status.Code(err) == codes.NotFound && leaderOf(c) == p.Addr
}

func TestFailoverKill9(t *testing.T) {
	c, lc, _ := startClusterWithNodes(t, 1, 2, 3)
	before, _, err := createOn(lc, "durable/ns", 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	c.leader.kill() // SIGKILL: no resign, the standby waits for the lease to expire
	eventually(t, 10*time.Second, "standby leads", func() bool { return leads(t, c.follower) })
	t.Logf("FAILOVER (kill -9): standby %s leads %v after the leader was killed (session TTL 2s)",
		c.follower.Addr, time.Since(killed).Round(time.Millisecond))
	fc := dial(t, c.follower.Addr)
	ctx, cancel := ctx1s()
	defer cancel()
	after, err := fc.GetPlacement(ctx, &pb.GetPlacementRequest{Name: "durable/ns"})
	if err != nil || !slices.Equal(placement(after), placement(before)) || after.CreatedUnixMs != before.CreatedUnixMs {
		t.Fatalf("namespace after failover: %v %v; before %v", after, err, before)
	}
	// Nodes restored from etcd come back LIVE as their heartbeats follow the redirect.
	eventually(t, 5*time.Second, "nodes LIVE on the new leader", func() bool {
		return allState(fc, pb.NodeState_NODE_STATE_LIVE, 1, 2, 3)
	})
	ctx2, cancel2 := ctx1s() // the first context may have expired while we polled
	defer cancel2()
	m, err := fc.GetNodeMap(ctx2, &pb.GetNodeMapRequest{})
	if err != nil || m.Leader != c.follower.Addr || len(m.Nodes) != 3 {
		t.Fatalf("node map after failover: %v %v", m, err)
	}
}

func TestFailoverSIGTERMResigns(t *testing.T) {
	c := startCluster(t)
	start := time.Now()
	if err := c.leader.term(10 * time.Second); err != nil {
		t.Fatalf("leader exit after SIGTERM: %v (want status 0)", err)
	}
	eventually(t, 5*time.Second, "standby leads", func() bool { return leads(t, c.follower) })
	t.Logf("FAILOVER (SIGTERM, resign): standby leads %v after the signal", time.Since(start).Round(time.Millisecond))
	// Its stderr reaches the log through a pipe that may still be draining.
	eventually(t, 5*time.Second, "the leader logged resigning", func() bool {
		return strings.Contains(c.leader.log.String(), "stepping down as leader")
	})
}

func TestEtcdRestartUnderRunningCluster(t *testing.T) {
	c := startCluster(t)
	for id := uint64(1); id <= 2; id++ {
		startNode(t, id, c.proxies...)
	}
	lc := dial(t, c.leader.Addr)
	eventually(t, 5*time.Second, "2 LIVE nodes", func() bool {
		return allState(lc, pb.NodeState_NODE_STATE_LIVE, 1, 2)
	})
	if _, _, err := createOn(lc, "survives/etcd", 2, 0, 0); err != nil {
		t.Fatal(err)
	}
	c.etcd.kill()
	down := time.Now()
	// While etcd is down nobody can commit; give the proxies a moment of it.
	eventually(t, 10*time.Second, "writes fail while etcd is down", func() bool {
		for _, p := range c.proxies {
			if _, _, err := createOn(dial(t, p.Addr), "probe/during-outage", 1, 0, 0); err == nil {
				return false
			}
		}
		return true
	})
	c.etcd.start() // same ports, same data dir
	restarted := time.Now()
	t.Logf("etcd was down %v", restarted.Sub(down).Round(time.Millisecond))
	var leader *proxyProc
	eventually(t, 20*time.Second, "a proxy leads again", func() bool {
		for _, p := range c.proxies {
			if leads(t, p) {
				leader = p
				return true
			}
		}
		return false
	})
	t.Logf("RECOVERY: %s leads and accepts writes %v after etcd restarted",
		leader.Addr, time.Since(restarted).Round(time.Millisecond))
	waitLeader(t, 10*time.Second, c.proxies...)
	ctx, cancel := ctx1s()
	defer cancel()
	for _, p := range c.proxies {
		ns, err := dial(t, p.Addr).GetPlacement(ctx, &pb.GetPlacementRequest{Name: "survives/etcd"})
		if err != nil || len(ns.Placement) != 2 {
			t.Fatalf("%s GetPlacement after etcd restart: %v %v", p.Addr, ns, err)
		}
	}
	eventually(t, 5*time.Second, "nodes LIVE after etcd restart", func() bool {
		return allState(dial(t, leader.Addr), pb.NodeState_NODE_STATE_LIVE, 1, 2)
	})
}

// runExpectExit runs the proxy binary to completion and returns its exit
// code and output.
func runExpectExit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, proxyBin, args...).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("run proxy: %v", err)
	return 0, ""
}

func TestStartupErrors(t *testing.T) {
	deadEtcd := "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"bad flag", []string{"--bogus"}, 2, "flag provided but not defined"},
		{"bad duration", []string{"--listen", "127.0.0.1:0", "--etcd", deadEtcd, "--heartbeat-timeout", "soon"}, 2, "invalid value"},
		{"suspect >= timeout", []string{"--listen", "127.0.0.1:0", "--etcd", deadEtcd, "--suspect-after", "5s"}, 2, "must be shorter"},
		{"missing etcd", []string{"--listen", "127.0.0.1:0"}, 2, "--etcd"},
		{"unreachable etcd", []string{"--listen", "127.0.0.1:0", "--etcd", deadEtcd, "--etcd-timeout", "1s", "--op-timeout", "300ms"}, 1, "unreachable after trying for 1s"},
	}
	for _, tc := range cases {
		code, out := runExpectExit(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.msg) {
			t.Errorf("%s: exit %d, output %q; want exit %d with %q", tc.name, code, out, tc.code, tc.msg)
		}
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	code, out := runExpectExit(t, "--listen", busy.Addr().String(), "--etcd", deadEtcd)
	if code != 1 || !strings.Contains(out, "cannot listen on "+busy.Addr().String()) {
		t.Errorf("port in use: exit %d, output %q", code, out)
	}
}
