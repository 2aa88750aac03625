package tenant

import (
	"testing"
	"time"
)

func TestValidatePrefix(t *testing.T) {
	for _, ok := range []string{"spark/app-1/", "a/"} {
		if err := ValidatePrefix(ok, false); err != nil {
			t.Fatalf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/", "spark", "*", "/x/", "a//", "a/../", "a\x00/"} {
		if ValidatePrefix(bad, false) == nil {
			t.Fatalf("%q accepted for an application", bad)
		}
	}
	if ValidatePrefix("*", true) != nil {
		t.Fatal("admin refused *")
	}
	if ValidateApp("") == nil || ValidateApp("a\x00b") == nil || ValidateApp("app-1") != nil {
		t.Fatal("ValidateApp")
	}
}

func TestClaimsConflictAndExpiry(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	c := NewClaims(time.Minute)
	c.Put(Claim{Prefix: "spark/a/", App: "a", Expiry: now.Unix() + 10})
	for _, p := range []string{"spark/a/", "spark/", "spark/a/sub/"} {
		if got, ok := c.Conflict(p, now); !ok || got.Prefix != "spark/a/" {
			t.Fatalf("Conflict(%q) = %v %v, want spark/a/", p, got, ok)
		}
	}
	for _, p := range []string{"spark/b/", "spark/ab/", "other/"} {
		if got, ok := c.Conflict(p, now); ok {
			t.Fatalf("Conflict(%q) = %v, want none", p, got)
		}
	}
	// Live until expiry + grace, then expired and no longer in the way.
	at := now.Add(10*time.Second + time.Minute - time.Millisecond)
	if _, ok := c.Conflict("spark/", at); !ok || len(c.Expired(at)) != 0 {
		t.Fatal("claim gone before its grace ended")
	}
	after := now.Add(10*time.Second + time.Minute)
	if _, ok := c.Conflict("spark/", after); ok {
		t.Fatal("expired claim still conflicts")
	}
	if e := c.Expired(after); len(e) != 1 || e[0] != "spark/a/" {
		t.Fatalf("Expired = %v", e)
	}
	c.Remove("spark/a/")
	if c.Len() != 0 {
		t.Fatal("Remove")
	}
}
