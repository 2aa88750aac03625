package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "rpmp.io/proxy/internal/rpmpv1"
	"rpmp.io/proxy/internal/tenant"
)

// writeSecret writes a cluster secret file (mode 0600) and returns its path and key.
func writeSecret(t *testing.T) (string, tenant.Key) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte("integration-test-cluster-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := tenant.DeriveKey([]byte("integration-test-cluster-secret"))
	if err != nil {
		t.Fatal(err)
	}
	return path, k
}

func issue(c pb.ProxyClient, prefix, app string, ttl uint64) (*pb.Credential, error) {
	ctx, cancel := ctx1s()
	defer cancel()
	return c.IssueCredential(ctx, &pb.IssueCredentialRequest{Prefix: prefix, App: app, TtlSeconds: ttl})
}

func renew(c pb.ProxyClient, token string, ttl uint64) (*pb.Credential, error) {
	ctx, cancel := ctx1s()
	defer cancel()
	return c.RenewCredential(ctx, &pb.RenewCredentialRequest{Token: token, TtlSeconds: ttl})
}

// Per-application credentials (docs/security.md "Tenants") through a TLS proxy with
// --token-secret-file and a real etcd: first come claims, overlap refusals naming the
// prefix, admin-only "*", renewal, the claim in etcd and its removal after expiry+grace.
func TestTenantCredentialsClaimsAndRenewal(t *testing.T) {
	ca := newTestCA(t, "rpmp test CA")
	e := startEtcdTLS(t, ca)
	secret, key := writeSecret(t)
	srv := ca.issue("rpmp-proxy", "")
	p := startProxy(t, e.URL(), append(e.proxyFlags(), "--tls-cert", srv.Cert, "--tls-key", srv.Key, "--tls-ca", ca.File,
		"--token-secret-file", secret, "--claim-grace", "1s")...)
	sc := &securedCluster{ca: ca, etcd: e, proxy: p}
	app1, app2, admin := sc.as(t, "app1", ""), sc.as(t, "app2", ""), sc.as(t, "ops", "rpmp-admin")

	var cred *pb.Credential
	eventually(t, 10*time.Second, "a leader issues", func() bool {
		var err error
		cred, err = issue(app1, "spark/a/", "a", 0)
		return status.Code(err) != codes.Unavailable
	})
	if cred == nil {
		t.Fatalf("first claim of spark/a/ refused")
	}
	tok, err := key.Verify(cred.Token, time.Now())
	if err != nil || tok.Prefix != "spark/a/" || tok.App != "a" || cred.ExpiryUnix != tok.Expiry ||
		time.Until(tok.ExpiryTime()) < 23*time.Hour {
		t.Fatalf("issued token: %+v %v (reply %v)", tok, err, cred.ExpiryUnix)
	}
	// Equal, containing and contained prefixes are refused, naming the held prefix.
	for _, pfx := range []string{"spark/a/", "spark/", "spark/a/x/"} {
		_, err := issue(app2, pfx, "b", 0)
		wantRefused(t, "claim of "+pfx, err, codes.AlreadyExists, `prefix "spark/a/"`, `application "a"`)
	}
	_, err = issue(app1, "spark/a/", "a", 0) // the holder too: it renews instead
	wantRefused(t, "second issue by the holder", err, codes.AlreadyExists, "RenewCredential")
	if _, err := issue(app2, "spark/b/", "b", 0); err != nil {
		t.Fatalf("spark/b/ is free: %v", err)
	}
	_, err = issue(app2, "*", "b", 0)
	wantRefused(t, "* by an application", err, codes.InvalidArgument, "admin")
	for _, bad := range []string{"", "spark", "/x/"} {
		_, err = issue(app2, bad, "b", 0)
		wantRefused(t, "prefix "+bad, err, codes.InvalidArgument)
	}
	_, err = issue(app2, "c/", "b", 8*24*3600)
	wantRefused(t, "ttl of 8 days", err, codes.InvalidArgument)
	_, err = issue(sc.as(t, "node-x", "rpmp-node"), "n/", "n", 0)
	wantRefused(t, "a node certificate", err, codes.PermissionDenied)
	// Admins: any prefix, held ones and "*" included, without claiming.
	for _, pfx := range []string{"*", "spark/a/"} {
		c, err := issue(admin, pfx, "ops", 60)
		if err != nil || c.Prefix != pfx {
			t.Fatalf("admin issue of %q: %v %v", pfx, c, err)
		}
	}

	// The claim is in etcd, under the proxy's prefix.
	cli := e.client()
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/rpmp/test/tenants/spark/a/")
	var claim tenant.Claim
	if err != nil || len(resp.Kvs) != 1 || json.Unmarshal(resp.Kvs[0].Value, &claim) != nil ||
		claim.App != "a" || claim.Owner != "app1" || claim.Expiry != cred.ExpiryUnix {
		t.Fatalf("claim in etcd: %v %v %+v", resp, err, claim)
	}

	// Renewal: for whoever holds a valid token; a forged or foreign one is refused.
	r, err := renew(app2, cred.Token, 48*3600) // twice the first one's lifetime

	if err != nil || r.Prefix != "spark/a/" || r.App != "a" || r.ExpiryUnix <= cred.ExpiryUnix || r.Token == cred.Token {
		t.Fatalf("renew: %v %v", r, err)
	}
	other, _ := tenant.DeriveKey([]byte("not-this-cluster-secret"))
	_, err = renew(app1, other.Mint("spark/a/", "a", time.Now().Add(time.Hour).Unix()), 0)
	wantRefused(t, "renew of a foreign token", err, codes.PermissionDenied, "not issued under this cluster's secret")
	_, err = renew(app1, key.Mint("spark/a/", "a", time.Now().Add(-time.Second).Unix()), 0)
	wantRefused(t, "renew of an expired token", err, codes.PermissionDenied, "expired")

	// A claim past expiry + grace is removed from etcd and the prefix is free again.
	short, err := issue(app1, "tmp/", "t1", 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = issue(app2, "tmp/", "t2", 1)
	wantRefused(t, "tmp/ while held", err, codes.AlreadyExists)
	eventually(t, 10*time.Second, "expired claim removed from etcd", func() bool {
		ctx, cancel := ctx1s()
		defer cancel()
		resp, err := cli.Get(ctx, "/rpmp/test/tenants/tmp/")
		return err == nil && len(resp.Kvs) == 0
	})
	// The leader deletes the claim, then logs it; the log reaches p.log through a pipe.
	eventually(t, 5*time.Second, "the removal logged", func() bool {
		return strings.Contains(p.log.String(), `claims expired, removed: ["tmp/"]`)
	})
	if c, err := issue(app2, "tmp/", "t2", 0); err != nil || c.App != "t2" {
		t.Fatalf("tmp/ after the first claim expired: %v %v (first expired %d)", c, err, short.ExpiryUnix)
	}
	// No token in the proxy's log.
	if strings.Contains(p.log.String(), cred.Token[len(cred.Token)-64:]) {
		t.Fatal("the proxy logged a credential")
	}
}

// Without --token-secret-file a proxy says how to get credentials, for issue and renew.
func TestTenantNoIssuanceWithoutSecret(t *testing.T) {
	c := startCluster(t)
	lc := dial(t, c.leader.Addr)
	_, err := issue(lc, "spark/a/", "a", 0)
	wantRefused(t, "issue", err, codes.FailedPrecondition, "start it with --token-secret-file")
	_, err = renew(lc, "v1.x", 0)
	wantRefused(t, "renew", err, codes.FailedPrecondition, "start it with --token-secret-file")
}

// Claims are in etcd: the standby that takes over after kill -9 of the leader refuses
// a second claim of a held prefix and renews the holder's credential.
func TestTenantClaimSurvivesLeaderFailover(t *testing.T) {
	ca := newTestCA(t, "rpmp test CA")
	e := startEtcdTLS(t, ca)
	secret, _ := writeSecret(t)
	srv := ca.issue("rpmp-proxy", "")
	flags := append(e.proxyFlags(), "--tls-cert", srv.Cert, "--tls-key", srv.Key, "--tls-ca", ca.File,
		"--token-secret-file", secret)
	ps := []*proxyProc{startProxy(t, e.URL(), flags...), startProxy(t, e.URL(), flags...)}
	app1 := ca.clientTLS(ca.issue("app1", ""))
	var leader *proxyProc
	var cred *pb.Credential
	eventually(t, 10*time.Second, "a leader issues", func() bool {
		for _, p := range ps {
			c, err := issue(dialAs(t, p.Addr, app1), "held/", "h", 0)
			if err == nil {
				leader, cred = p, c
				return true
			}
		}
		return false
	})
	follower := ps[0]
	if follower == leader {
		follower = ps[1]
	}
	leader.kill()
	app2 := dialAs(t, follower.Addr, ca.clientTLS(ca.issue("app2", "")))
	var err error
	eventually(t, 10*time.Second, "the standby answers as leader", func() bool {
		_, err = issue(app2, "held/x/", "h2", 0)
		return status.Code(err) != codes.Unavailable
	})
	wantRefused(t, "claim under a held prefix after failover", err, codes.AlreadyExists, `prefix "held/"`)
	if r, err := renew(dialAs(t, follower.Addr, app1), cred.Token, 0); err != nil || r.Prefix != "held/" {
		t.Fatalf("renew on the new leader: %v %v", r, err)
	}
}
