// leader_tenant.go: per-application credentials on the leader (docs/security.md
// "Tenants"). IssueCredential mints a token for a prefix: admins any prefix ("*"
// too) without a claim; other callers only a prefix that no live claim equals,
// contains or lies under, which they then claim (in etcd first, then in memory)
// until the token's expiry + Config.ClaimGrace. RenewCredential re-mints for whoever
// holds a valid token and extends its claim. expireClaims (the TTL tick) removes
// claims past their grace. Tokens are secrets: nothing here logs one.
package server

import (
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/auth"
	pb "rpmp.io/proxy/internal/rpmpv1"
	"rpmp.io/proxy/internal/store"
	"rpmp.io/proxy/internal/tenant"
)

// Credential lifetimes: the default, and the longest one may ask for.
const (
	defaultCredentialTTL = 24 * time.Hour
	maxCredentialTTL     = 7 * 24 * time.Hour
)

func credentialTTL(seconds uint64) (time.Duration, error) {
	if seconds == 0 {
		return defaultCredentialTTL, nil
	}
	if seconds > uint64(maxCredentialTTL/time.Second) {
		return 0, status.Errorf(codes.InvalidArgument, "ttl_seconds %d is longer than %v", seconds, maxCredentialTTL)
	}
	return time.Duration(seconds) * time.Second, nil
}

func (l *Leader) credential(prefix, app string, expiry int64) *pb.Credential {
	return &pb.Credential{Token: l.cfg.TokenKey.Mint(prefix, app, expiry), ExpiryUnix: expiry, Prefix: prefix, App: app}
}

func utc(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }

// IssueCredential mints a credential for req.Prefix (see the file comment).
func (l *Leader) IssueCredential(req *pb.IssueCredentialRequest, caller auth.Identity) (*pb.Credential, error) {
	if caller.Role == auth.Node {
		return nil, status.Errorf(codes.PermissionDenied, "%q is a node certificate: nodes get no application credentials", caller.Name)
	}
	if err := tenant.ValidatePrefix(req.Prefix, caller.IsAdmin()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if err := tenant.ValidateApp(req.App); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	ttl, err := credentialTTL(req.TtlSeconds)
	if err != nil {
		return nil, err
	}
	now := l.now()
	expiry := now.Add(ttl).Unix()
	if caller.IsAdmin() {
		l.cfg.Logf("credential for prefix %q (app %q) issued to admin %q, expires %s", req.Prefix, req.App, caller.Name, utc(expiry))
		return l.credential(req.Prefix, req.App, expiry), nil
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, held := l.claims.Conflict(req.Prefix, now); held {
		return nil, status.Errorf(codes.AlreadyExists, "prefix %q is claimed by application %q (prefix %q) until %s: "+
			"an application renews its own credential with RenewCredential", req.Prefix, c.App, c.Prefix, utc(c.Expiry))
	}
	c := tenant.Claim{Prefix: req.Prefix, App: req.App, Owner: caller.Name, ClaimMs: now.UnixMilli(), Expiry: expiry}
	var b store.Batch
	l.st.PutClaim(&b, c)
	if err := l.commit(&b); err != nil {
		return nil, err
	}
	l.claims.Put(c)
	l.cfg.Logf("prefix %q claimed by app %q (certificate %q), credential expires %s", c.Prefix, c.App, caller.Name, utc(expiry))
	return l.credential(c.Prefix, c.App, expiry), nil
}

// RenewCredential re-mints a valid credential with a new expiry.
func (l *Leader) RenewCredential(req *pb.RenewCredentialRequest) (*pb.Credential, error) {
	ttl, err := credentialTTL(req.TtlSeconds)
	if err != nil {
		return nil, err
	}
	now := l.now()
	tok, err := l.cfg.TokenKey.Verify(req.Token, now)
	if err != nil {
		return nil, status.Errorf(codes.PermissionDenied, "cannot renew: %v", err)
	}
	expiry := now.Add(ttl).Unix()
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.claims.Get(tok.Prefix); ok && l.claims.Live(c, now) {
		if c.App != tok.App {
			return nil, status.Errorf(codes.PermissionDenied, "cannot renew: prefix %q is claimed by application %q now", tok.Prefix, c.App)
		}
		c.Expiry = max(c.Expiry, expiry)
		var b store.Batch
		l.st.PutClaim(&b, c)
		if err := l.commit(&b); err != nil {
			return nil, err
		}
		l.claims.Put(c)
	}
	l.cfg.Logf("credential for prefix %q (app %q) renewed until %s", tok.Prefix, tok.App, utc(expiry))
	return l.credential(tok.Prefix, tok.App, expiry), nil
}

// expireClaims removes the claims past their credential's expiry + grace.
func (l *Leader) expireClaims() {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	prefixes := l.claims.Expired(l.now())
	if len(prefixes) == 0 {
		return
	}
	var b store.Batch
	for _, p := range prefixes {
		l.st.DeleteClaim(&b, p)
	}
	if err := l.commit(&b); err != nil {
		l.cfg.Logf("expired claims %q not removed: %v", prefixes, err)
		return
	}
	for _, p := range prefixes {
		l.claims.Remove(p)
	}
	l.cfg.Logf("claims expired, removed: %q", prefixes)
}
