package integration

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "rpmp.io/proxy/internal/rpmpv1"
)

// Quotas (docs/cluster.md "Quotas") through a TLS proxy: only the admin certificate
// sets and clears them; the namespace quota is enforced at creation with a message
// naming prefix, use and quota; an application can list the use.
func TestAttackQuotaIsAdminOnlyAndLimitsNamespaces(t *testing.T) {
	c := startSecured(t)
	node := c.ca.clientTLS(c.ca.issue("node-a", "rpmp-node"))
	startNodeWith(t, 0xA1, func(addr string) pb.ProxyClient { return dialAs(t, addr, node) }, c.proxy)
	app, admin := c.as(t, "app1", ""), c.as(t, "ops", "rpmp-admin")
	eventually(t, 15*time.Second, "node LIVE", func() bool { return allState(app, pb.NodeState_NODE_STATE_LIVE, 0xA1) })
	ctx, cancel := ctx1s()
	defer cancel()

	set := &pb.SetQuotaRequest{Prefix: "app1", MaxNamespaces: 2, MaxBytes: 1 << 30}
	if _, err := app.SetQuota(ctx, set); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("SetQuota by an application: want PermissionDenied, got %v", err)
	}
	if _, err := admin.SetQuota(ctx, &pb.SetQuotaRequest{Prefix: "app1/"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("SetQuota of a bad prefix without limits: want InvalidArgument, got %v", err)
	}
	q, err := admin.SetQuota(ctx, set)
	if err != nil || q.MaxNamespaces != 2 || q.SetBy != "ops" {
		t.Fatalf("SetQuota by the admin: %v %v", q, err)
	}
	for _, name := range []string{"app1/a", "app1/b"} {
		if _, _, err := createOn(app, name, 1, 1, 0); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	_, _, err = createOn(app, "app1/c", 1, 1, 0)
	if status.Code(err) != codes.ResourceExhausted ||
		!strings.Contains(err.Error(), `prefix "app1" holds 2 namespaces, its quota is 2`) {
		t.Fatalf("third namespace: want ResourceExhausted naming prefix, use and quota, got %v", err)
	}
	if _, _, err := createOn(app, "app10", 1, 1, 0); err != nil {
		t.Fatalf("app10 is not under app1: %v", err)
	}
	list, err := app.ListQuotas(ctx, &pb.ListQuotasRequest{})
	if err != nil || len(list.Quotas) != 1 || list.Quotas[0].Namespaces != 2 || list.Quotas[0].Prefix != "app1" {
		t.Fatalf("ListQuotas: %v %v", list, err)
	}
	if _, err := app.ClearQuota(ctx, &pb.ClearQuotaRequest{Prefix: "app1"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("ClearQuota by an application: want PermissionDenied, got %v", err)
	}
	if _, err := admin.ClearQuota(ctx, &pb.ClearQuotaRequest{Prefix: "app1"}); err != nil {
		t.Fatalf("ClearQuota by the admin: %v", err)
	}
	if _, err := admin.ClearQuota(ctx, &pb.ClearQuotaRequest{Prefix: "app1"}); status.Code(err) != codes.NotFound {
		t.Fatalf("ClearQuota twice: want NotFound, got %v", err)
	}
	if _, _, err := createOn(app, "app1/c", 1, 1, 0); err != nil {
		t.Fatalf("create after the quota was cleared: %v", err)
	}
}

// A quota is in etcd: the standby that takes over after kill -9 of the leader
// enforces it.
func TestQuotaSurvivesLeaderFailover(t *testing.T) {
	c, lc, _ := startClusterWithNodes(t, 1)
	ctx, cancel := ctx1s()
	defer cancel()
	if _, err := lc.SetQuota(ctx, &pb.SetQuotaRequest{Prefix: "q", MaxNamespaces: 1}); err != nil {
		t.Fatalf("SetQuota: %v", err)
	}
	if _, _, err := createOn(lc, "q/one", 1, 0, 0); err != nil {
		t.Fatal(err)
	}
	c.leader.kill()
	eventually(t, 10*time.Second, "standby leads", func() bool { return leads(t, c.follower) })
	fc := dial(t, c.follower.Addr)
	_, _, err := createOn(fc, "q/two", 1, 0, 0)
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("second namespace under a 1-namespace quota after failover: want ResourceExhausted, got %v", err)
	}
	ctx2, cancel2 := ctx1s()
	defer cancel2()
	list, err := fc.ListQuotas(ctx2, &pb.ListQuotasRequest{})
	if err != nil || len(list.Quotas) != 1 || list.Quotas[0].Namespaces != 1 || list.Quotas[0].MaxNamespaces != 1 {
		t.Fatalf("ListQuotas on the new leader: %v %v", list, err)
	}
}

// A session quota reaches the servers in every heartbeat reply (they enforce it at
// HELLO), and ListQuotas shows it; clearing it stops sending it.
func TestSessionQuotaReachesNodesInHeartbeats(t *testing.T) {
	_, lc, _ := startClusterWithNodes(t, 1)
	ctx, cancel := ctx1s()
	defer cancel()
	q, err := lc.SetQuota(ctx, &pb.SetQuotaRequest{Prefix: "spark/app-7", MaxSessions: 3})
	if err != nil || q.MaxSessions != 3 {
		t.Fatalf("SetQuota with only max_sessions: %v %v", q, err)
	}
	beat := func() *pb.HeartbeatReply {
		ctx, cancel := ctx1s()
		defer cancel()
		rep, err := lc.Heartbeat(ctx, &pb.HeartbeatRequest{NodeId: 2, Endpoint: "127.0.0.1:2", Capacity: 1 << 30,
			Free: 1 << 30, Pools: 1})
		if err != nil {
			t.Fatalf("heartbeat: %v", err)
		}
		return rep
	}
	rep := beat()
	if len(rep.SessionQuotas) != 1 || rep.SessionQuotas[0].Prefix != "spark/app-7" || rep.SessionQuotas[0].MaxSessions != 3 {
		t.Fatalf("heartbeat reply's session quotas: want spark/app-7=3, got %v", rep.SessionQuotas)
	}
	if len(rep.ByteQuotas) != 0 {
		t.Fatalf("a sessions-only quota sent as a byte quota: %v", rep.ByteQuotas)
	}
	list, err := lc.ListQuotas(ctx, &pb.ListQuotasRequest{})
	if err != nil || len(list.Quotas) != 1 || list.Quotas[0].MaxSessions != 3 {
		t.Fatalf("ListQuotas: %v %v", list, err)
	}
	if _, err := lc.ClearQuota(ctx, &pb.ClearQuotaRequest{Prefix: "spark/app-7"}); err != nil {
		t.Fatalf("ClearQuota: %v", err)
	}
	if rep := beat(); len(rep.SessionQuotas) != 0 {
		t.Fatalf("session quotas after ClearQuota: %v", rep.SessionQuotas)
	}
}
