// security_test.go: the control-plane rows of the attack table in
// docs/security.md, against real etcd and rpmp-proxy processes with TLS on both
// hops (etcd with --client-cert-auth, the proxy's gRPC with mutual TLS):
// plaintext and wrong-CA clients are refused, a node cannot heartbeat for
// another node's id, namespace delete and drain need the owner or an admin
// certificate, and a proxy without TLS serves only loopback unless --insecure.
package integration

import (
	"crypto/tls"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	pb "rpmp.io/proxy/internal/rpmpv1"
)

// securedCluster is etcd + one proxy, TLS everywhere, and the CA that signed them.
type securedCluster struct {
	ca    *testCA
	etcd  *etcdProc
	proxy *proxyProc
}

func startSecured(t *testing.T) *securedCluster {
	t.Helper()
	ca := newTestCA(t, "rpmp test CA")
	e := startEtcdTLS(t, ca)
	srv := ca.issue("rpmp-proxy", "")
	flags := append(e.proxyFlags(), "--tls-cert", srv.Cert, "--tls-key", srv.Key, "--tls-ca", ca.File)
	p := startProxy(t, e.URL(), flags...)
	return &securedCluster{ca: ca, etcd: e, proxy: p}
}

// dialAs connects with the given TLS client configuration.
func dialAs(t *testing.T, addr string, c *tls.Config) pb.ProxyClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(c)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewProxyClient(conn)
}

// as returns a client presenting a fresh certificate for cn/ou from the cluster CA.
func (c *securedCluster) as(t *testing.T, cn, ou string) pb.ProxyClient {
	return dialAs(t, c.proxy.Addr, c.ca.clientTLS(c.ca.issue(cn, ou)))
}

func nodeMap(c pb.ProxyClient) error {
	ctx, cancel := ctx1s()
	defer cancel()
	_, err := c.GetNodeMap(ctx, &pb.GetNodeMapRequest{})
	return err
}

func TestAttackGRPCWithoutTLSOrWithWrongCertificate(t *testing.T) {
	c := startSecured(t)
	// The right client certificate works (and proves the proxy reached etcd over TLS).
	app := c.as(t, "app1", "")
	eventually(t, 15*time.Second, "leader elected, node map served over mTLS", func() bool { return nodeMap(app) == nil })

	// Plaintext gRPC: the TLS listener never completes a handshake.
	if err := nodeMap(dial(t, c.proxy.Addr)); err == nil {
		t.Fatal("plaintext gRPC against the TLS proxy was served")
	} else {
		t.Logf("plaintext refused: %v", err)
	}
	// TLS without a client certificate.
	if err := nodeMap(dialAs(t, c.proxy.Addr, c.ca.clientTLS(certFiles{}))); err == nil {
		t.Fatal("TLS without a client certificate was served")
	} else {
		t.Logf("no client certificate refused: %v", err)
	}
	// A client certificate from another CA, even with an admin OU.
	other := newTestCA(t, "attacker CA")
	wrong := c.ca.clientTLS(certFiles{})
	wrong.Certificates = other.clientTLS(other.issue("admin", "rpmp-admin")).Certificates
	if err := nodeMap(dialAs(t, c.proxy.Addr, wrong)); err == nil {
		t.Fatal("a certificate from another CA was served")
	} else {
		t.Logf("wrong CA refused: %v", err)
	}
	// A client that does not trust the proxy's CA refuses the proxy (no impostor proxy).
	if err := nodeMap(dialAs(t, c.proxy.Addr, other.clientTLS(other.issue("app2", "")))); err == nil {
		t.Fatal("a client trusting another CA accepted the proxy")
	}
	// The proxy keeps serving the legitimate client.
	if err := nodeMap(app); err != nil {
		t.Fatalf("legitimate client no longer served: %v", err)
	}
	// etcd itself refuses a client without a certificate.
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.etcd.URL()}, DialTimeout: time.Second,
		Logger: zap.NewNop(), TLS: c.ca.clientTLS(certFiles{})})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := ctx1s()
	defer cancel()
	if _, err := cli.Get(ctx, "/rpmp/", clientv3.WithPrefix()); err == nil {
		t.Fatal("etcd served a client without a certificate")
	} else {
		t.Logf("etcd refused a client without a certificate: %v", err)
	}
}

func TestAttackHeartbeatClaimingAnotherNodesID(t *testing.T) {
	c := startSecured(t)
	nodeA := c.ca.clientTLS(c.ca.issue("node-a", "rpmp-node"))
	a := startNodeWith(t, 0xA1, func(addr string) pb.ProxyClient { return dialAs(t, addr, nodeA) }, c.proxy)
	admin := c.as(t, "admin", "rpmp-admin")
	eventually(t, 15*time.Second, "node a LIVE", func() bool { return allState(admin, pb.NodeState_NODE_STATE_LIVE, 0xA1) })

	hb := func(cl pb.ProxyClient, id uint64, endpoint string) error {
		ctx, cancel := ctx1s()
		defer cancel()
		_, err := cl.Heartbeat(ctx, &pb.HeartbeatRequest{NodeId: id, Endpoint: endpoint, Capacity: 1 << 30, Free: 1 << 30, Pools: 1})
		return err
	}
	// Another node's certificate claims a's id and points its traffic elsewhere.
	b := c.as(t, "node-b", "rpmp-node")
	err := hb(b, 0xA1, "10.9.9.9:7300")
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), `registered to certificate "node-a"`) {
		t.Fatalf("heartbeat for another node's id: want PermissionDenied naming node-a, got %v", err)
	}
	t.Logf("refused: %v", err)
	// Not a node at all (application, admin): no heartbeat.
	for _, who := range []pb.ProxyClient{c.as(t, "app1", ""), admin} {
		if err := hb(who, 0xB2, "127.0.0.1:1"); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("heartbeat from a non-node certificate: want PermissionDenied, got %v", err)
		}
	}
	// Nor an in-sync change in a's name.
	ctx, cancel := ctx1s()
	defer cancel()
	if _, err := b.SetInSync(ctx, &pb.SetInSyncRequest{Name: "x", Primary: 0xA1, Node: 0xA1}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("SetInSync as another node: want PermissionDenied, got %v", err)
	}
	// a's endpoint is unchanged, a keeps heartbeating, and b registers its own id.
	m, err := admin.GetNodeMap(ctx, &pb.GetNodeMapRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range m.Nodes {
		if n.Id == 0xA1 && n.Endpoint != "127.0.0.1:20161" {
			t.Fatalf("node a's endpoint was changed to %s", n.Endpoint)
		}
	}
	if err := hb(b, 0xB2, "127.0.0.1:20178"); err != nil {
		t.Fatalf("node b's own heartbeat: %v", err)
	}
	if err := a.LastErr(); err != nil {
		t.Fatalf("node a's heartbeats fail: %v", err)
	}
}

func TestAttackNamespaceDeleteAndDrainNeedAdmin(t *testing.T) {
	c := startSecured(t)
	node := c.ca.clientTLS(c.ca.issue("node-a", "rpmp-node"))
	startNodeWith(t, 0xA1, func(addr string) pb.ProxyClient { return dialAs(t, addr, node) }, c.proxy)
	app1, app2, admin := c.as(t, "app1", ""), c.as(t, "app2", ""), c.as(t, "ops", "rpmp-admin")
	eventually(t, 15*time.Second, "node LIVE", func() bool { return allState(app1, pb.NodeState_NODE_STATE_LIVE, 0xA1) })

	for _, name := range []string{"app1/a", "app1/b", "app1/c"} {
		if _, _, err := createOn(app1, name, 1, 1, 0); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	del := func(cl pb.ProxyClient, name string, recursive bool) error {
		ctx, cancel := ctx1s()
		defer cancel()
		_, err := cl.DeleteNamespace(ctx, &pb.DeleteNamespaceRequest{Name: name, Recursive: recursive})
		return err
	}
	// Another application can read the namespace but not delete it.
	ctx, cancel := ctx1s()
	defer cancel()
	if _, err := app2.GetPlacement(ctx, &pb.GetPlacementRequest{Name: "app1/a"}); err != nil {
		t.Fatalf("reading another application's placement: %v", err)
	}
	err := del(app2, "app1/a", false)
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "admin certificate") {
		t.Fatalf("delete of another's namespace: want PermissionDenied naming the admin certificate, got %v", err)
	}
	t.Logf("refused: %v", err)
	if err := del(app2, "app1", true); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("recursive delete of another's namespaces: want PermissionDenied, got %v", err)
	}
	// A node certificate is not an admin either.
	if err := del(dialAs(t, c.proxy.Addr, node), "app1/a", false); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("delete with a node certificate: want PermissionDenied, got %v", err)
	}
	// Drain needs the admin certificate.
	if _, err := app1.Drain(ctx, &pb.DrainRequest{NodeId: 0xA1}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("drain by an application: want PermissionDenied, got %v", err)
	}
	if _, err := admin.Drain(ctx, &pb.DrainRequest{NodeId: 0xA1}); err != nil {
		t.Fatalf("drain by the admin: %v", err)
	}
	if _, err := admin.Drain(ctx, &pb.DrainRequest{NodeId: 0xA1, Cancel: true}); err != nil {
		t.Fatalf("undrain by the admin: %v", err)
	}
	// Removing a node needs the admin certificate too (and the node must be DEAD).
	for who, cl := range map[string]pb.ProxyClient{"an application": app1, "a node": dialAs(t, c.proxy.Addr, node)} {
		if _, err := cl.RemoveNode(ctx, &pb.RemoveNodeRequest{NodeId: 0xA1}); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("RemoveNode by %s: want PermissionDenied, got %v", who, err)
		}
	}
	if _, err := admin.RemoveNode(ctx, &pb.RemoveNodeRequest{NodeId: 0xA1}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("RemoveNode of a LIVE node by the admin: want FailedPrecondition, got %v", err)
	}
	// Nothing was deleted by the refused calls.
	l, err := app1.ListNamespaces(ctx, &pb.ListNamespacesRequest{Prefix: "app1/"})
	if err != nil || len(l.Namespaces) != 3 {
		t.Fatalf("after refused deletes: %v namespaces, err %v; want 3", l, err)
	}
	// The owner deletes its own; the admin deletes anyone's.
	if err := del(app1, "app1/a", false); err != nil {
		t.Fatalf("owner's delete: %v", err)
	}
	if err := del(admin, "app1/b", false); err != nil {
		t.Fatalf("admin's delete: %v", err)
	}
	if err := del(app1, "app1", true); err != nil {
		t.Fatalf("owner's recursive delete: %v", err)
	}
}

func TestProtectedModeProxyWithoutTLSServesOnlyLoopback(t *testing.T) {
	e := startEtcd(t)
	// Non-loopback without TLS: refused at start, exit 2, message naming the way out.
	for _, listen := range []string{"0.0.0.0:0", ":0"} {
		cmd := exec.Command(proxyBin, "--listen", listen, "--etcd", e.URL(), "--cluster", "test")
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "protected mode") || !strings.Contains(string(out), "--insecure") {
			t.Fatalf("--listen %s without TLS: want exit 2 naming protected mode and --insecure, got %v: %s", listen, err, out)
		}
	}
	// Loopback without TLS: served, with a warning.
	p := startProxy(t, e.URL())
	eventually(t, 10*time.Second, "warning logged", func() bool {
		return strings.Contains(p.log.String(), "no TLS configured") && strings.Contains(p.log.String(), "loopback only")
	})
	// --insecure: a non-loopback address is served (a wildcard with the address to advertise).
	port := freePort(t)
	q := exec.Command(proxyBin, "--listen", "0.0.0.0:"+strconv.Itoa(port), "--advertise", "127.0.0.1:"+strconv.Itoa(port),
		"--etcd", e.URL(), "--cluster", "test", "--insecure")
	lb := &logBuf{}
	q.Stdout, q.Stderr = lb, lb
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Process.Kill(); _ = q.Wait() })
	eventually(t, 15*time.Second, "--insecure proxy listening on 0.0.0.0", func() bool {
		return strings.Contains(lb.String(), "listening on 0.0.0.0:"+strconv.Itoa(port)) || strings.Contains(lb.String(), "listening on [::]:"+strconv.Itoa(port))
	})
}

func TestWildcardListenWithoutAdvertiseExits2(t *testing.T) {
	// Nothing is written to etcd: the proxy refuses before connecting (the URL is never dialled).
	cmd := exec.Command(proxyBin, "--listen", "0.0.0.0:0", "--etcd", "http://127.0.0.1:1", "--insecure")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "wildcard") || !strings.Contains(string(out), "--advertise") {
		t.Fatalf("--listen 0.0.0.0:0 without --advertise: want exit 2 naming --advertise, got %v: %s", err, out)
	}
}
