// Unit tests for the TTL expiry rule and holder computation.
package model

import (
	"slices"
	"testing"
)

func TestExpired(t *testing.T) {
	ns := Namespace{TTLSeconds: 10, TouchedMs: 1_000_000}
	cases := []struct {
		now  int64
		want bool
	}{
		{1_000_000, false},
		{1_010_000, false}, // exactly at touched+ttl: not yet
		{1_010_001, true},
	}
	for _, c := range cases {
		if got := ns.Expired(c.now); got != c.want {
			t.Errorf("Expired(%d) = %v; want %v", c.now, got, c.want)
		}
	}
	if (Namespace{TTLSeconds: 0, TouchedMs: 0}).Expired(1 << 50) {
		t.Error("namespace without TTL expired")
	}
}

func TestHolders(t *testing.T) {
	ns := Namespace{Placement: []uint64{1, 4}, Substitutions: []Substitution{{Replaced: 2, Replacement: 4}, {Replaced: 1, Replacement: 1}}}
	if got := ns.Holders(); !slices.Equal(got, []uint64{1, 4, 2}) {
		t.Fatalf("Holders = %v", got)
	}
}

func TestHexIDsPrintAsRpmpctlDoes(t *testing.T) {
	if got := HexID(0x80ff37acd4d8f63f); got != "80ff37acd4d8f63f" {
		t.Fatalf("HexID: %s", got)
	}
	if got := HexIDs([]uint64{0xa1, 0x80ff37acd4d8f63f}); got != "[00000000000000a1 80ff37acd4d8f63f]" {
		t.Fatalf("HexIDs: %s", got)
	}
}
