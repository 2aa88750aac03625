// claims.go: which application holds which namespace prefix. A non-admin caller
// gets a credential only for a prefix no live claim overlaps (first come); the
// claim lives until its credential's expiry plus a grace, is extended by each
// renewal, and is removed by the leader once past that. Admins need no claim.
//
// Pure logic, no locking, no I/O: the leader (internal/server) owns a Claims under
// its mutex and persists each Claim in etcd (internal/store) before changing it.
package tenant

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"rpmp.io/proxy/internal/nsname"
)

// Claim is one application's hold on a prefix, as stored in etcd.
type Claim struct {
	Prefix  string `json:"prefix"`
	App     string `json:"app"`
	Owner   string `json:"owner,omitempty"` // certificate CN of the issuer's caller
	ClaimMs int64  `json:"claim_ms"`
	Expiry  int64  `json:"expiry"` // unix seconds: its credential's current expiry
}

// ValidatePrefix checks a credential's prefix: non-empty, ending in "/", no NUL,
// not starting with "/", at most nsname.MaxLen bytes; "*" (every namespace) only
// for admins.
func ValidatePrefix(prefix string, admin bool) error {
	if prefix == AllPrefix {
		if admin {
			return nil
		}
		return fmt.Errorf("prefix %q (every namespace) is for admin certificates only", AllPrefix)
	}
	if prefix == "" || !strings.HasSuffix(prefix, "/") || prefix == "/" {
		return fmt.Errorf("prefix %q must be non-empty and end with '/' (e.g. \"spark/app-1/\")", prefix)
	}
	if err := nsname.ValidatePrefix(prefix); err != nil {
		return err
	}
	return nsname.Validate(strings.TrimSuffix(prefix, "/"))
}

// ValidateApp checks an application name: non-empty, at most 255 bytes, no NUL.
func ValidateApp(app string) error {
	if app == "" || len(app) > nsname.MaxLen || strings.IndexByte(app, 0) >= 0 {
		return fmt.Errorf("application name %q must be 1 to %d bytes without NUL", app, nsname.MaxLen)
	}
	return nil
}

// Claims is the table of claims by prefix.
type Claims struct {
	grace time.Duration
	by    map[string]Claim
}

// NewClaims returns an empty table whose claims outlive their expiry by grace.
func NewClaims(grace time.Duration) *Claims { return &Claims{grace: grace, by: map[string]Claim{}} }

// Live reports whether c still holds its prefix at now.
func (t *Claims) Live(c Claim, now time.Time) bool {
	return now.Before(time.Unix(c.Expiry, 0).Add(t.grace))
}

// Conflict returns a live claim that equals, contains or is contained by prefix.
func (t *Claims) Conflict(prefix string, now time.Time) (Claim, bool) {
	for _, c := range t.sorted() {
		if t.Live(c, now) && (strings.HasPrefix(prefix, c.Prefix) || strings.HasPrefix(c.Prefix, prefix)) {
			return c, true
		}
	}
	return Claim{}, false
}

// Get returns the claim of exactly prefix.
func (t *Claims) Get(prefix string) (Claim, bool) {
	c, ok := t.by[prefix]
	return c, ok
}

// Put adds or replaces a claim.
func (t *Claims) Put(c Claim) { t.by[c.Prefix] = c }

// Remove drops the claim of prefix.
func (t *Claims) Remove(prefix string) { delete(t.by, prefix) }

// Expired returns the prefixes whose claims are no longer live at now.
func (t *Claims) Expired(now time.Time) []string {
	var out []string
	for _, c := range t.sorted() {
		if !t.Live(c, now) {
			out = append(out, c.Prefix)
		}
	}
	return out
}

// Len is the number of claims held, live or not yet removed.
func (t *Claims) Len() int { return len(t.by) }

func (t *Claims) sorted() []Claim {
	out := make([]Claim, 0, len(t.by))
	for _, c := range t.by {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Prefix < out[j].Prefix })
	return out
}
