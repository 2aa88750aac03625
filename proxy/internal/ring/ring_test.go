// Unit tests for the consistent-hash ring: determinism, balance, stability
// when unrelated nodes join, and substitution.
package ring

import (
	"fmt"
	"testing"
)

func ids(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

func TestDeterministic(t *testing.T) {
	a := New(ids(8), DefaultVNodes)
	b := New([]uint64{8, 7, 6, 5, 4, 3, 2, 1, 1}, DefaultVNodes) // order and dups must not matter
	for i := 0; i < 500; i++ {
		name := fmt.Sprintf("spark/app-%d/shuffle", i)
		pa, pb := a.Place(name, 3), b.Place(name, 3)
		if fmt.Sprint(pa) != fmt.Sprint(pb) {
			t.Fatalf("%s: %v vs %v", name, pa, pb)
		}
		if len(pa) != 3 || pa[0] == pa[1] || pa[1] == pa[2] || pa[0] == pa[2] {
			t.Fatalf("%s: bad placement %v", name, pa)
		}
	}
}

func TestBalanced(t *testing.T) {
	const nodes, names = 10, 20000
	r := New(ids(nodes), DefaultVNodes)
	count := map[uint64]int{}
	for i := 0; i < names; i++ {
		count[r.Place(fmt.Sprintf("ns-%d", i), 1)[0]]++
	}
	mean := float64(names) / nodes
	for id, c := range count {
		ratio := float64(c) / mean
		t.Logf("node %d: %d (%.2f of mean)", id, c, ratio)
		if ratio < 0.6 || ratio > 1.4 {
			t.Errorf("node %d owns %d names, %.2f of the mean; want within [0.6,1.4]", id, c, ratio)
		}
	}
	if len(count) != nodes {
		t.Errorf("only %d of %d nodes own names", len(count), nodes)
	}
}

func TestStableWhenNodeJoins(t *testing.T) {
	before := New(ids(6), DefaultVNodes)
	after := New(append(ids(6), 99), DefaultVNodes)
	moved := 0
	const names = 5000
	for i := 0; i < names; i++ {
		name := fmt.Sprintf("ns-%d", i)
		pb, pa := before.Place(name, 2), after.Place(name, 2)
		// Unless the new node took a slot, the replica set is unchanged.
		if fmt.Sprint(pa) != fmt.Sprint(pb) {
			has99 := pa[0] == 99 || pa[1] == 99
			if !has99 {
				t.Fatalf("%s moved without involving the new node: %v -> %v", name, pb, pa)
			}
			moved++
		}
	}
	// A 7th node should take roughly 2/7 of the slots' names, never most of them.
	if moved > names/2 {
		t.Errorf("%d of %d placements changed", moved, names)
	}
}

func TestSubstitute(t *testing.T) {
	r := New(ids(5), DefaultVNodes)
	name := "some/namespace"
	full := r.Place(name, 5) // complete ring order from the name
	cur := full[:2]
	sub, ok := r.Substitute(name, cur, nil)
	if !ok || sub != full[2] {
		t.Fatalf("substitute = %d,%v; want next on ring %d (order %v)", sub, ok, full[2], full)
	}
	// With the next one excluded from the live ring, the one after is used.
	live := New([]uint64{full[0], full[1], full[3], full[4]}, DefaultVNodes)
	if sub, _ := live.Substitute(name, cur, nil); sub != full[3] {
		t.Fatalf("substitute with %d down = %d; want %d", full[2], sub, full[3])
	}
	if _, ok := New(ids(2), DefaultVNodes).Substitute(name, []uint64{1, 2}, nil); ok {
		t.Fatal("substitute found a node on a ring with no spare node")
	}
	// A node that does not fit is passed over like one already in the placement.
	if sub, _ := r.Substitute(name, cur, func(id uint64) bool { return id != full[2] }); sub != full[3] {
		t.Fatalf("substitute with %d not fitting = %d; want %d", full[2], sub, full[3])
	}
}

func TestWalkEmpty(t *testing.T) {
	if got := New(nil, 0).Place("x", 3); len(got) != 0 {
		t.Fatalf("empty ring placed %v", got)
	}
	if got := New(ids(2), 4).Place("x", 3); len(got) != 2 {
		t.Fatalf("2-node ring placed %v for 3 replicas", got)
	}
}
