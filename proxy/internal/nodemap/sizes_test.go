// Unit tests for the large-namespace reports and the room check that sizes substitutes.
package nodemap

import (
	"testing"
	"time"
)

func TestHasRoomForSizesByTheLargestReportedCopy(t *testing.T) {
	t0 := time.Unix(4000, 0)
	m := New(time.Second, 3*time.Second)
	space := func(id, capacity, free uint64) { report(m, t0, id, capacity, free) }
	space(1, 1600, 1100) // 1/16 of 1600 is 100: room for a copy of up to 1000
	space(2, 1600, 1099)
	space(3, 0, 0) // no capacity reported yet
	space(4, 1600, 100)
	m.ReportLarge(1, map[string]uint64{"big": 1000})
	m.ReportLarge(2, map[string]uint64{"big": 600, "other": 50})
	if got := m.NamespaceBytes("big"); got != 1000 {
		t.Fatalf("NamespaceBytes(big) = %d, want the largest report, 1000", got)
	}
	for _, c := range []struct {
		id   uint64
		name string
		want bool
	}{
		{1, "big", true}, {2, "big", false}, {3, "big", true}, {9, "big", false},
		{4, "small", true}, {4, "other", false}, {2, "other", true},
	} {
		if got := m.HasRoomFor(c.id, c.name); got != c.want {
			t.Errorf("HasRoomFor(%d, %q) = %v, want %v", c.id, c.name, got, c.want)
		}
	}
	// A report replaces the node's last one; an empty one or removal forgets it.
	m.ReportLarge(1, map[string]uint64{"big": 300})
	if got := m.NamespaceBytes("big"); got != 600 {
		t.Fatalf("after node 1 reports 300: NamespaceBytes(big) = %d, want 600", got)
	}
	m.ReportLarge(2, nil)
	m.Remove(1)
	if got := m.NamespaceBytes("big"); got != 0 {
		t.Fatalf("after both reports went: NamespaceBytes(big) = %d, want 0", got)
	}
	if !m.HasRoomFor(2, "big") {
		t.Fatalf("HasRoomFor(2, big) with no report: want HasRoom's answer, true")
	}
}
