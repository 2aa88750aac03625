package integration

// Namespace calls with tenant tokens (docs/security.md "Tenants"): applications
// sharing one certificate are told apart by the token each presents.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"rpmp.io/proxy/internal/model"
	pb "rpmp.io/proxy/internal/rpmpv1"
)

// withToken is a 1 s context carrying token as the client library sends it ("" none).
func withToken(token string) (context.Context, context.CancelFunc) {
	ctx, cancel := ctx1s()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "rpmp-tenant-token", token)
	}
	return ctx, cancel
}

func TestTenantOwnedNamespacesThroughTheProxy(t *testing.T) {
	ca := newTestCA(t, "rpmp test CA")
	e := startEtcdTLS(t, ca)
	secret, key := writeSecret(t)
	srv := ca.issue("rpmp-proxy", "")
	p := startProxy(t, e.URL(), append(e.proxyFlags(), "--tls-cert", srv.Cert, "--tls-key", srv.Key, "--tls-ca", ca.File,
		"--token-secret-file", secret)...)
	c := &securedCluster{ca: ca, etcd: e, proxy: p}
	node := ca.clientTLS(ca.issue("node-a", "rpmp-node"))
	startNodeWith(t, 0xA1, func(addr string) pb.ProxyClient { return dialAs(t, addr, node) }, p)
	app, admin := c.as(t, "rpmp-client", ""), c.as(t, "ops", "rpmp-admin") // app: the certificate A and B share
	eventually(t, 15*time.Second, "node LIVE", func() bool { return allState(app, pb.NodeState_NODE_STATE_LIVE, 0xA1) })
	exp := time.Now().Add(time.Hour).Unix()
	tokA, tokB := key.Mint("a/", "A", exp), key.Mint("b/", "B", exp)

	create := func(token, name string) error {
		ctx, cancel := withToken(token)
		defer cancel()
		_, err := app.CreateNamespace(ctx, &pb.CreateNamespaceRequest{Name: name, Options: &pb.NamespaceOptions{Replicas: 1, MinReplicas: 1}})
		return err
	}
	del := func(cl pb.ProxyClient, token, name string, recursive bool) error {
		ctx, cancel := withToken(token)
		defer cancel()
		_, err := cl.DeleteNamespace(ctx, &pb.DeleteNamespaceRequest{Name: name, Recursive: recursive})
		return err
	}
	touch := func(token, name string) error {
		ctx, cancel := withToken(token)
		defer cancel()
		_, err := app.TouchNamespace(ctx, &pb.TouchNamespaceRequest{Name: name})
		return err
	}
	for _, name := range []string{"a/x", "a/y", "a/x/g0", "a/z"} {
		if err := create(tokA, name); err != nil {
			t.Fatalf("A creates %s: %v", name, err)
		}
	}
	wantRefused(t, "A creates outside its prefix", create(tokA, "b/x"), codes.PermissionDenied,
		`namespace "b/x" is outside this credential's prefix "a/"`)
	wantRefused(t, "a forged token", create(key.Mint("a/", "A", exp)[:20]+"x", "a/w"), codes.PermissionDenied, "tenant token refused")
	wantRefused(t, "an expired token", create(key.Mint("a/", "A", time.Now().Add(-time.Second).Unix()), "a/w"),
		codes.PermissionDenied, "expired")

	// The owner is the tenant, in etcd.
	cli := e.client()
	defer cli.Close()
	ctx, cancel := ctx1s()
	defer cancel()
	resp, err := cli.Get(ctx, "/rpmp/test/namespaces/a/x")
	var rec model.Namespace
	if err != nil || len(resp.Kvs) != 1 || json.Unmarshal(resp.Kvs[0].Value, &rec) != nil || rec.Tenant != "a/" || rec.Owner != "rpmp-client" {
		t.Fatalf("a/x in etcd: %v %v %+v", resp, err, rec)
	}

	// B (same certificate, its own token) and a caller without a token cannot delete or touch A's.
	wantRefused(t, "B deletes a/x", del(app, tokB, "a/x", false), codes.PermissionDenied, `outside this credential's prefix "b/"`)
	wantRefused(t, "B deletes a/ recursively", del(app, tokB, "a", true), codes.PermissionDenied)
	wantRefused(t, "B touches a/x", touch(tokB, "a/x"), codes.PermissionDenied, `prefix "b/"`)
	wantRefused(t, "no token deletes a/x", del(app, "", "a/x", false), codes.PermissionDenied, `tenant of prefix "a/"`)
	wantRefused(t, "no token touches a/x", touch("", "a/x"), codes.PermissionDenied)
	l, err := admin.ListNamespaces(ctx, &pb.ListNamespacesRequest{Prefix: "a/"})
	if err != nil || len(l.Namespaces) != 4 {
		t.Fatalf("after refused deletes: %v, %v; want 4 namespaces", l, err)
	}
	// A touches and deletes its own (children included); the admin deletes any.
	if err := touch(tokA, "a/x"); err != nil {
		t.Fatalf("A touches a/x: %v", err)
	}
	if err := del(app, tokA, "a/x", true); err != nil {
		t.Fatalf("A deletes a/x and a/x/g0: %v", err)
	}
	if err := del(admin, "", "a/y", false); err != nil {
		t.Fatalf("admin deletes a/y: %v", err)
	}
	// Namespaces created without a token keep the certificate rule.
	if err := create("", "legacy"); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, "another certificate deletes legacy", del(c.as(t, "app2", ""), "", "legacy", false), codes.PermissionDenied, "admin certificate")
	if err := del(app, "", "legacy", false); err != nil {
		t.Fatalf("the creating certificate deletes legacy: %v", err)
	}
	if strings.Contains(p.log.String(), tokA[len(tokA)-64:]) || strings.Contains(p.log.String(), tokB[len(tokB)-64:]) {
		t.Fatal("the proxy logged a credential")
	}
}
