// Unit tests for namespace creation rules, repair by substitution, TTL
// expiry with an injected clock, and pending deletions.
package catalog

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/model"
	"rpmp.io/proxy/internal/ring"
)

func never(uint64) bool { return false }

func create(t *testing.T, c *Catalog, name string, o Options, usable []uint64, now int64) model.Namespace {
	t.Helper()
	ns, isNew, err := c.PlanCreate(name, o, usable, never, now, 1)
	if err != nil || !isNew {
		t.Fatalf("create %s: new=%v err=%v", name, isNew, err)
	}
	c.PutNamespace(ns)
	return ns
}

func TestCreateErrors(t *testing.T) {
	c := New(ring.DefaultVNodes)
	usable := []uint64{1, 2, 3}
	create(t, c, "a/b", Options{Replicas: 2}, usable, 0)
	cases := []struct {
		name string
		o    Options
		code codes.Code
	}{
		{"x", Options{Replicas: 0}, codes.InvalidArgument},
		{"x", Options{Replicas: 2, MinReplicas: 3}, codes.InvalidArgument},
		{"x", Options{Replicas: 4}, codes.FailedPrecondition},
		{"/x", Options{Replicas: 1}, codes.InvalidArgument},
		{"", Options{Replicas: 1}, codes.InvalidArgument},
		{"a/b", Options{Replicas: 3}, codes.AlreadyExists},
	}
	for _, tc := range cases {
		_, _, err := c.PlanCreate(tc.name, tc.o, usable, never, 0, 1)
		if status.Code(err) != tc.code {
			t.Errorf("create %q %+v: %v; want %s", tc.name, tc.o, err, tc.code)
		}
	}
	// Equal options: idempotent success returning the existing namespace.
	ns, isNew, err := c.PlanCreate("a/b", Options{Replicas: 2, MinReplicas: 2}, usable, never, 5, 1)
	if err != nil || isNew || ns.CreatedMs != 0 {
		t.Fatalf("idempotent create: %+v new=%v err=%v", ns, isNew, err)
	}
}

func TestRepairSubstitutesNextOnRing(t *testing.T) {
	c := New(ring.DefaultVNodes)
	all := []uint64{1, 2, 3, 4, 5}
	ns := create(t, c, "spark/app/shuffle", Options{Replicas: 2}, all, 0)
	order := ring.New(all, ring.DefaultVNodes).Place(ns.Name, 5)
	if !slices.Equal(ns.Placement, order[:2]) {
		t.Fatalf("placement %v not the ring order prefix %v", ns.Placement, order)
	}
	dead := order[1]
	usable := slices.DeleteFunc(slices.Clone(all), func(id uint64) bool { return id == dead })
	reason := func(id uint64) string {
		if id == dead {
			return "dead"
		}
		return ""
	}
	got := c.PlanRepairs(reason, usable, nil, 77, 9)
	if len(got) != 1 {
		t.Fatalf("repairs = %v", got)
	}
	want := []uint64{order[0], order[2]}
	if !slices.Equal(got[0].Placement, want) {
		t.Fatalf("repaired placement %v; want %v", got[0].Placement, want)
	}
	s := got[0].Substitutions
	if len(s) != 1 || s[0] != (model.Substitution{Index: 1, Replaced: dead, Replacement: order[2], Epoch: 9, AtMs: 77, Reason: "dead", WasInSync: true}) {
		t.Fatalf("substitutions %+v", s)
	}
	if g, _ := c.Get(ns.Name); !slices.Equal(g.Placement, order[:2]) {
		t.Fatal("PlanRepairs changed the catalog before commit")
	}
	c.PutNamespace(got[0])
	if again := c.PlanRepairs(reason, usable, nil, 78, 10); len(again) != 0 {
		t.Fatalf("second repair changed %v", again)
	}
}

func TestRepairWithoutSpareNode(t *testing.T) {
	c := New(ring.DefaultVNodes)
	create(t, c, "n", Options{Replicas: 2}, []uint64{1, 2}, 0)
	got := c.PlanRepairs(func(id uint64) string {
		if id == 1 {
			return "dead"
		}
		return ""
	}, []uint64{2}, nil, 0, 2)
	// The dead member leaves the in-sync set but stays in the placement.
	if len(got) != 1 || !slices.Equal(got[0].Placement, []uint64{1, 2}) || !slices.Equal(got[0].InSync, []uint64{2}) {
		t.Fatalf("repair without spare node: %+v", got)
	}
	c.PutNamespace(got[0])
	dead2 := func(id uint64) string {
		if id == 2 {
			return "dead"
		}
		return ""
	}
	// Now the last in-sync member dies: it is neither substituted nor dropped.
	if again := c.PlanRepairs(dead2, []uint64{1, 3}, nil, 0, 3); len(again) != 0 {
		t.Fatalf("last in-sync member substituted: %+v", again)
	}
}

// A substitute must have room: the next node on the ring that is full is
// passed over for one with room, and with none the dead member stays in the
// placement (degraded, so it rejoins when it returns) instead of moving its
// copy onto a full node where its repair could never finish.
func TestRepairSubstituteNeedsRoom(t *testing.T) {
	c := New(ring.DefaultVNodes)
	all := []uint64{1, 2, 3, 4, 5}
	ns := create(t, c, "group/x1", Options{Replicas: 2}, all, 0)
	order := ring.New(all, ring.DefaultVNodes).Place(ns.Name, 5)
	dead := order[1]
	usable := slices.DeleteFunc(slices.Clone(all), func(id uint64) bool { return id == dead })
	reason := func(id uint64) string {
		if id == dead {
			return "dead"
		}
		return ""
	}
	full := map[uint64]bool{order[2]: true, order[3]: true}
	room := func(id uint64, _ string) bool { return !full[id] }
	got := c.PlanRepairs(reason, usable, room, 1, 5)
	if len(got) != 1 || !slices.Equal(got[0].Placement, []uint64{order[0], order[4]}) {
		t.Fatalf("repair past full nodes %v: %+v; want placement %v", order[2:4], got, []uint64{order[0], order[4]})
	}
	full[order[4]] = true
	got = c.PlanRepairs(reason, usable, room, 2, 6)
	if len(got) != 1 || !slices.Equal(got[0].Placement, order[:2]) || !slices.Equal(got[0].InSync, []uint64{order[0]}) {
		t.Fatalf("repair with every spare node full: %+v; want placement %v in sync %v", got, order[:2], order[:1])
	}
	if len(got[0].Substitutions) != 0 {
		t.Fatalf("a full node was chosen: %+v", got[0].Substitutions)
	}
}

// Room is judged per namespace (nodemap.Map.HasRoomFor sizes it by the copy a
// repair would write): when a member dies, a small namespace gets a substitute
// while a large one that no spare node could hold keeps its dead member.
func TestRepairRoomIsPerNamespace(t *testing.T) {
	c := New(ring.DefaultVNodes)
	all := []uint64{1, 2, 3}
	big := create(t, c, "shuffle/g0", Options{Replicas: 2}, all, 0)
	dead := big.Placement[0]
	small := create(t, c, "shuffle/g1", Options{Replicas: 2}, all, 0)
	if !slices.Contains(small.Placement, dead) {
		small = create(t, c, "kv/a", Options{Replicas: 2}, []uint64{dead, spareOf(all, big.Placement)}, 0)
	}
	usable := slices.DeleteFunc(slices.Clone(all), func(id uint64) bool { return id == dead })
	reason := func(id uint64) string {
		if id == dead {
			return "dead"
		}
		return ""
	}
	room := func(_ uint64, ns string) bool { return ns != big.Name }
	got := c.PlanRepairs(reason, usable, room, 1, 5)
	var sawBig, sawSmall bool
	for _, ns := range got {
		switch ns.Name {
		case big.Name:
			sawBig = true
			if len(ns.Substitutions) != 0 || !slices.Contains(ns.Placement, dead) || slices.Contains(ns.InSync, dead) {
				t.Fatalf("large namespace: %+v; want its dead member kept in the placement, out of sync, no substitute", ns)
			}
		case small.Name:
			sawSmall = true
			if len(ns.Substitutions) != 1 || slices.Contains(ns.Placement, dead) {
				t.Fatalf("small namespace: %+v; want the dead member substituted", ns)
			}
		}
	}
	if !sawBig || !sawSmall {
		t.Fatalf("plans %+v: want both namespaces changed", got)
	}
}

// spareOf returns the first id of all not in placement.
func spareOf(all, placement []uint64) uint64 {
	for _, id := range all {
		if !slices.Contains(placement, id) {
			return id
		}
	}
	return 0
}

// A member substituted out because it died, and back while its substitute is
// still out of sync, takes its place again (its repair copies only what it
// missed; the substitute's might never finish); a substitute already in sync
// stays, and a member that left by draining is not put back.
func TestReturningMemberReplacesUnsyncedSubstitute(t *testing.T) {
	c := New(ring.DefaultVNodes)
	all := []uint64{1, 2, 3, 4, 5}
	ns := create(t, c, "kv/returning", Options{Replicas: 2}, all, 0)
	order := ring.New(all, ring.DefaultVNodes).Place(ns.Name, 5)
	dead := order[1]
	isDead := true
	reason := func(id uint64) string {
		if id == dead && isDead {
			return "dead"
		}
		return ""
	}
	usableNow := func() []uint64 {
		if isDead {
			return slices.DeleteFunc(slices.Clone(all), func(id uint64) bool { return id == dead })
		}
		return all
	}
	got := c.PlanRepairs(reason, usableNow(), nil, 1, 5)
	if len(got) != 1 || got[0].Placement[1] != order[2] {
		t.Fatalf("substitution: %+v", got)
	}
	c.PutNamespace(got[0])
	// Still dead: nothing to do.
	if again := c.PlanRepairs(reason, usableNow(), nil, 2, 6); len(again) != 0 {
		t.Fatalf("changed while the member is dead: %+v", again)
	}
	isDead = false
	got = c.PlanRepairs(reason, usableNow(), nil, 3, 7)
	if len(got) != 1 || !slices.Equal(got[0].Placement, order[:2]) || got[0].Epoch != 7 {
		t.Fatalf("returning member not put back: %+v; want placement %v at epoch 7", got, order[:2])
	}
	if !slices.Equal(got[0].InSync, []uint64{order[0]}) {
		t.Fatalf("the returning member must rejoin through repair: in sync %v", got[0].InSync)
	}
	last := got[0].Substitutions[len(got[0].Substitutions)-1]
	if last != (model.Substitution{Index: 1, Replaced: order[2], Replacement: dead, Epoch: 7, AtMs: 3, Reason: "returned"}) {
		t.Fatalf("revert recorded as %+v", last)
	}
	if h := got[0].Holders(); !slices.Contains(h, order[2]) {
		t.Fatalf("the substitute's partial copy must stay among the holders (deletion): %v", h)
	}
	c.PutNamespace(got[0])
	if again := c.PlanRepairs(reason, usableNow(), nil, 4, 8); len(again) != 0 {
		t.Fatalf("second plan changed %+v", again)
	}
	// Repaired: the member is in sync again.
	back, _ := c.Get(ns.Name)
	back.InSync = append(back.InSync, dead)
	c.PutNamespace(back)

	// The member dies again; its substitute dies too before its repair ended while
	// the member is back: the member takes its place back, and the substitute,
	// back in turn, does not take it again (it never held the namespace: two
	// partial copies would swap places, a flip-flop seen in chaos_campaign).
	isDead = true
	got = c.PlanRepairs(reason, usableNow(), nil, 4, 8)
	if len(got) != 1 || got[0].Placement[1] != order[2] {
		t.Fatalf("substitution before the flip-flop check: %+v", got)
	}
	c.PutNamespace(got[0])
	isDead = false
	subDead := func(id uint64) string {
		if id == order[2] {
			return "dead"
		}
		return ""
	}
	noSub := slices.DeleteFunc(slices.Clone(all), func(id uint64) bool { return id == order[2] })
	got = c.PlanRepairs(subDead, noSub, nil, 5, 9)
	if len(got) != 1 || got[0].Placement[1] != dead {
		t.Fatalf("the member did not take the dead substitute's place back: %+v", got)
	}
	c.PutNamespace(got[0])
	if again := c.PlanRepairs(reason, all, nil, 6, 10); len(again) != 0 {
		t.Fatalf("a substitute that never was in sync took the place back: %+v", again)
	}
	// Start over from a fully synced placement for the next case.
	reset, _ := c.Get(ns.Name)
	reset.Placement = slices.Clone(order[:2])
	reset.InSync = slices.Clone(order[:2])
	reset.Substitutions = nil
	c.PutNamespace(reset)

	// A substitute that joined the in-sync set stays when the member returns.
	isDead = true
	got = c.PlanRepairs(reason, usableNow(), nil, 5, 9)
	if len(got) != 1 || got[0].Placement[1] != order[2] {
		cur, _ := c.Get("kv/returning")
		t.Fatalf("second substitution: %+v (catalog %+v)", got, cur)
	}
	synced := got[0]
	synced.InSync = append(synced.InSync, order[2])
	c.PutNamespace(synced)
	isDead = false
	if again := c.PlanRepairs(reason, usableNow(), nil, 6, 10); len(again) != 0 {
		t.Fatalf("an in-sync substitute was replaced: %+v", again)
	}

	// Draining: the member left on purpose and is not put back.
	d := create(t, c, "kv/drained", Options{Replicas: 2}, all, 0)
	dOrder := ring.New(all, ring.DefaultVNodes).Place(d.Name, 5)
	draining := true
	drainReason := func(id uint64) string {
		if id == dOrder[0] && draining {
			return "draining"
		}
		return ""
	}
	rest := slices.DeleteFunc(slices.Clone(all), func(id uint64) bool { return id == dOrder[0] })
	var moved model.Namespace
	for _, n := range c.PlanRepairs(drainReason, rest, nil, 7, 11) {
		if n.Name == d.Name {
			moved = n
		}
	}
	if moved.Name == "" || slices.Contains(moved.Placement, dOrder[0]) {
		t.Fatalf("drain substitution: %+v", moved)
	}
	c.PutNamespace(moved)
	draining = false
	for _, n := range c.PlanRepairs(drainReason, all, nil, 8, 12) {
		if n.Name == d.Name {
			t.Fatalf("a drained member was put back: %+v", n)
		}
	}
}

func TestTTLExpiryInjectedClock(t *testing.T) {
	c := New(ring.DefaultVNodes)
	const t0 = int64(1_700_000_000_000)
	create(t, c, "keep", Options{Replicas: 1}, []uint64{1}, t0)
	create(t, c, "short", Options{Replicas: 1, TTLSeconds: 2}, []uint64{1}, t0)
	create(t, c, "long", Options{Replicas: 1, TTLSeconds: 60}, []uint64{1}, t0)
	if got := c.Expired(t0 + 1999); len(got) != 0 {
		t.Fatalf("expired early: %v", got)
	}
	if got := c.Expired(t0 + 2001); !slices.Equal(got, []string{"short"}) {
		t.Fatalf("expired at +2.001s: %v", got)
	}
	// Touch refreshes: the caller moves TouchedMs.
	ns, _ := c.Get("short")
	ns.TouchedMs = t0 + 2000
	c.PutNamespace(ns)
	if got := c.Expired(t0 + 3000); len(got) != 0 {
		t.Fatalf("touched namespace expired: %v", got)
	}
	if got := c.Expired(t0 + 61_000); !slices.Equal(got, []string{"long", "short"}) {
		t.Fatalf("expired at +61s: %v", got)
	}
}

func TestDeletionsPendingPerNode(t *testing.T) {
	c := New(ring.DefaultVNodes)
	create(t, c, "app/x", Options{Replicas: 2}, []uint64{1, 2, 3}, 0)
	create(t, c, "app", Options{Replicas: 1}, []uint64{1, 2, 3}, 0)
	names := c.Matching("app", true)
	if !slices.Equal(names, []string{"app", "app/x"}) {
		t.Fatalf("Matching = %v", names)
	}
	d := c.PlanDeletion("app/x", 10)
	holders := d.Pending
	c.RemoveNamespace("app/x")
	c.PutDeletion(d)
	for _, id := range holders {
		ds := c.DeletionsFor(id)
		if len(ds) != 1 || ds[0].Name != "app/x" || slices.Contains(ds[0].Pending, id) {
			t.Fatalf("DeletionsFor(%d) = %+v", id, ds)
		}
		c.PutDeletion(ds[0])
	}
	if len(c.Deletions()) != 0 {
		t.Fatalf("deletion still pending after all holders were told: %+v", c.Deletions())
	}
}

func TestRecreateWhilePending(t *testing.T) {
	c := New(ring.DefaultVNodes)
	create(t, c, "r", Options{Replicas: 1}, []uint64{1}, 0)
	c.PutDeletion(c.PlanDeletion("r", 1))
	c.RemoveNamespace("r")
	_, _, err := c.PlanCreate("r", Options{Replicas: 1}, []uint64{1}, never, 2, 1)
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("recreate while pending: %v", err)
	}
	dead := func(id uint64) bool { return id == 1 }
	if _, _, err := c.PlanCreate("r", Options{Replicas: 1}, []uint64{2}, dead, 2, 1); err != nil {
		t.Fatalf("recreate while only a dead node is pending: %v", err)
	}
}

func TestPlacementGroupsStripeOverEveryNode(t *testing.T) {
	c := New(ring.DefaultVNodes)
	usable := []uint64{1, 2, 3}
	order := ring.New(usable, ring.DefaultVNodes).Place("spark/app-1/7", 3)
	primaries := map[uint64]int{}
	for g := 0; g < 6; g++ {
		ns := create(t, c, fmt.Sprintf("spark/app-1/7/g%d", g), Options{Replicas: 2}, usable, 0)
		want := []uint64{order[g%3], order[(g+1)%3]}
		if !slices.Equal(ns.Placement, want) {
			t.Fatalf("group %d placed on %v, want %v", g, ns.Placement, want)
		}
		primaries[ns.Placement[0]]++
	}
	for _, id := range usable {
		if primaries[id] != 2 {
			t.Fatalf("node %d is the primary of %d of 6 groups, want 2: %v", id, primaries[id], primaries)
		}
	}
}
