// Unit tests for node liveness transitions with an injected clock.
package nodemap

import (
	"testing"
	"time"

	"rpmp.io/proxy/internal/model"
)

func beat(m *Map, id uint64, now time.Time) bool {
	rec, changed := m.Next(Beat{ID: id, Endpoint: "127.0.0.1:1"}, now)
	m.Put(rec, now)
	return changed
}

// report commits a heartbeat of node id reporting capacity and free bytes.
func report(m *Map, now time.Time, id, capacity, free uint64) {
	rec, _ := m.Next(Beat{ID: id, Endpoint: "127.0.0.1:1", Capacity: capacity, Free: free}, now)
	m.Put(rec, now)
}

func apply(m *Map, now time.Time) []model.Node {
	out := m.Expire(now)
	for _, n := range out {
		m.Put(n, time.Time{})
	}
	return out
}

func TestLivenessTransitions(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := New(1500*time.Millisecond, 3*time.Second)
	if !beat(m, 7, t0) {
		t.Fatal("first heartbeat not reported as a change")
	}
	if beat(m, 7, t0.Add(500*time.Millisecond)) {
		t.Fatal("repeat heartbeat reported as a change")
	}
	last := t0.Add(500 * time.Millisecond)
	if got := apply(m, last.Add(1500*time.Millisecond)); len(got) != 0 {
		t.Fatalf("changed at exactly suspect-after: %v", got)
	}
	got := apply(m, last.Add(1600*time.Millisecond))
	if len(got) != 1 || got[0].Liveness != model.Suspect {
		t.Fatalf("want SUSPECT, got %v", got)
	}
	got = apply(m, last.Add(3100*time.Millisecond))
	if len(got) != 1 || got[0].Liveness != model.Dead {
		t.Fatalf("want DEAD, got %v", got)
	}
	if got := apply(m, last.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("dead node changed again: %v", got)
	}
	if !beat(m, 7, last.Add(time.Hour)) {
		t.Fatal("dead node coming back not reported as a change")
	}
	if n, _ := m.Get(7); n.Liveness != model.Live || n.RegisteredMs != t0.UnixMilli() {
		t.Fatalf("after return: %+v", n)
	}
}

func TestRestoreStartsSuspect(t *testing.T) {
	t0 := time.Unix(2000, 0)
	m := New(time.Second, 3*time.Second)
	m.Restore([]model.Node{{ID: 1, Liveness: model.Live}, {ID: 2, Liveness: model.Dead}}, t0)
	if n, _ := m.Get(1); n.Liveness != model.Suspect {
		t.Fatalf("restored live node is %s", n.Liveness)
	}
	if len(m.UsableIDs()) != 0 {
		t.Fatal("restored nodes usable before heartbeating")
	}
	// Not dead before the full timeout, even though suspect-after passed.
	if got := apply(m, t0.Add(2*time.Second)); len(got) != 0 {
		t.Fatalf("early transition %v", got)
	}
	got := apply(m, t0.Add(3100*time.Millisecond))
	if len(got) != 1 || got[0].ID != 1 || got[0].Liveness != model.Dead {
		t.Fatalf("want node 1 DEAD, got %v", got)
	}
}

func TestDrainSticky(t *testing.T) {
	t0 := time.Unix(3000, 0)
	m := New(time.Second, 3*time.Second)
	beat(m, 1, t0)
	rec, changed := m.Next(Beat{ID: 1, Endpoint: "127.0.0.1:1", WantDrain: true}, t0)
	if !changed || !rec.Draining || rec.Usable() {
		t.Fatalf("drain hint: changed=%v rec=%+v", changed, rec)
	}
	m.Put(rec, t0)
	if rec, changed := m.Next(Beat{ID: 1, Endpoint: "127.0.0.1:1"}, t0); changed || !rec.Draining {
		t.Fatalf("drain not sticky: changed=%v rec=%+v", changed, rec)
	}
}

func TestRoomyIDsPrefersNodesWithRoom(t *testing.T) {
	t0 := time.Unix(4000, 0)
	m := New(time.Second, 3*time.Second)
	space := func(id, capacity, free uint64) { report(m, t0, id, capacity, free) }
	space(1, 1600, 1600)
	space(2, 1600, 99) // under 1/16 free: full for new namespaces
	space(3, 1600, 100)
	space(4, 0, 0) // no capacity reported yet: counts as roomy
	got := m.RoomyIDs(2)
	if len(got) != 3 || got[0] != 1 || got[1] != 3 || got[2] != 4 {
		t.Fatalf("RoomyIDs(2) = %v, want [1 3 4]", got)
	}
	// Fewer roomy nodes than copies wanted: every usable node.
	if got := m.RoomyIDs(4); len(got) != 4 {
		t.Fatalf("RoomyIDs(4) = %v, want all 4 usable nodes", got)
	}
}

func TestHasRoom(t *testing.T) {
	t0 := time.Unix(4000, 0)
	m := New(time.Second, 3*time.Second)
	space := func(id, capacity, free uint64) { report(m, t0, id, capacity, free) }
	space(1, 1600, 100) // exactly 1/16 free
	space(2, 1600, 99)
	space(3, 0, 0)
	for id, want := range map[uint64]bool{1: true, 2: false, 3: true, 9: false} {
		if got := m.HasRoom(id); got != want {
			t.Errorf("HasRoom(%d) = %v, want %v", id, got, want)
		}
	}
}

func TestExtentIDsAvoidFullMembers(t *testing.T) {
	t0 := time.Unix(4000, 0)
	m := New(time.Second, 3*time.Second)
	space := func(id, capacity, free uint64) { report(m, t0, id, capacity, free) }
	space(1, 1600, 50)   // full: refused the write
	space(2, 1600, 900)  // roomy, a member of the full namespace
	space(3, 1600, 400)  // roomy
	space(4, 1600, 1000) // roomy, most free
	if got := m.ExtentIDs(1, []uint64{1, 2}); len(got) != 1 || got[0] != 4 {
		t.Fatalf("ExtentIDs(1) = %v, want [4]", got)
	}
	// Non-members first (4, 3), ahead of a member with more room than 3.
	if got := m.ExtentIDs(2, []uint64{1, 2}); len(got) != 2 || got[0] != 3 || got[1] != 4 {
		t.Fatalf("ExtentIDs(2) = %v, want [3 4]", got)
	}
	// A roomy member before a full non-member; the full node last.
	if got := m.ExtentIDs(3, []uint64{2}); len(got) != 3 || got[0] != 2 || got[1] != 3 || got[2] != 4 {
		t.Fatalf("ExtentIDs(3) = %v, want [2 3 4]", got)
	}
	if got := m.ExtentIDs(4, nil); len(got) != 4 {
		t.Fatalf("ExtentIDs(4) = %v, want all 4 usable nodes", got)
	}
}
