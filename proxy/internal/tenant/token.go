// Package tenant holds the per-application credentials the proxy issues
// (docs/security.md "Tenants"): the token format, which every rpmp-server
// verifies offline with the cluster secret, the secret file, and the claims
// that give an application's prefix to one holder at a time.
//
// token.go: the v1 token. K = HKDF-SHA256(cluster secret, salt empty,
// info "rpmp tenant tokens", 32 bytes);
// MAC = HMAC-SHA256(K, "rpmp-token-v1\0" PREFIX "\0" APP "\0" EXPIRY);
// token = "v1." b64url(PREFIX) "." b64url(APP) "." EXPIRY "." hex(MAC).
// The C++ side (common/) must mint and verify the same bytes; the test
// vector in token_test.go pins both. Pure functions, safe from any goroutine.
package tenant

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AllPrefix is the prefix of an admin credential: every namespace.
const AllPrefix = "*"

// Key is the token key derived from the cluster secret.
type Key []byte

// DeriveKey returns K for a cluster secret (the file's bytes without trailing whitespace).
func DeriveKey(secret []byte) (Key, error) {
	k, err := hkdf.Key(sha256.New, secret, nil, "rpmp tenant tokens", 32)
	if err != nil {
		return nil, fmt.Errorf("derive the token key: %w", err)
	}
	return k, nil
}

// Token is the public part of a credential plus its MAC.
type Token struct {
	Prefix string
	App    string
	Expiry int64 // unix seconds
	MAC    []byte
}

// ExpiryTime is Expiry as a time.
func (t Token) ExpiryTime() time.Time { return time.Unix(t.Expiry, 0) }

func (k Key) mac(prefix, app string, expiry int64) []byte {
	h := hmac.New(sha256.New, k)
	h.Write([]byte("rpmp-token-v1\x00" + prefix + "\x00" + app + "\x00" + strconv.FormatInt(expiry, 10)))
	return h.Sum(nil)
}

var b64 = base64.RawURLEncoding

// Mint returns the token string for prefix and app valid until expiry.
func (k Key) Mint(prefix, app string, expiry int64) string {
	return "v1." + b64.EncodeToString([]byte(prefix)) + "." + b64.EncodeToString([]byte(app)) + "." +
		strconv.FormatInt(expiry, 10) + "." + hex.EncodeToString(k.mac(prefix, app, expiry))
}

// Covers reports whether a credential for prefix may act on namespace ns, the
// servers' rule (common/tenant_token.h Authorizes): ns starts with prefix, or
// ns + "/" == prefix; "*" covers every namespace, an empty prefix none.
func Covers(prefix, ns string) bool {
	if prefix == "" {
		return false
	}
	return prefix == AllPrefix || strings.HasPrefix(ns, prefix) || ns+"/" == prefix
}

// ErrMalformed is returned for a string that is not a v1 token.
var ErrMalformed = errors.New("not an rpmp v1 credential")

// Parse splits a token string without checking its MAC.
func Parse(s string) (Token, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 5 || parts[0] != "v1" {
		return Token{}, ErrMalformed
	}
	prefix, err1 := b64.DecodeString(parts[1])
	app, err2 := b64.DecodeString(parts[2])
	expiry, err3 := strconv.ParseInt(parts[3], 10, 64)
	mac, err4 := hex.DecodeString(parts[4])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(mac) != sha256.Size || expiry <= 0 ||
		parts[3] != strconv.FormatInt(expiry, 10) {
		return Token{}, ErrMalformed
	}
	return Token{Prefix: string(prefix), App: string(app), Expiry: expiry, MAC: mac}, nil
}

// Verify parses s and checks its MAC under k and that it has not expired at now.
// The error says which check failed, never the MAC.
func (k Key) Verify(s string, now time.Time) (Token, error) {
	t, err := Parse(s)
	if err != nil {
		return t, err
	}
	if !hmac.Equal(t.MAC, k.mac(t.Prefix, t.App, t.Expiry)) {
		return t, errors.New("the credential was not issued under this cluster's secret")
	}
	if now.Unix() >= t.Expiry {
		return t, fmt.Errorf("the credential of %q expired at %s", t.Prefix, t.ExpiryTime().UTC().Format(time.RFC3339))
	}
	return t, nil
}
