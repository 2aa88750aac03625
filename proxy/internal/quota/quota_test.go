package quota

import (
	"errors"
	"strings"
	"testing"
)

// names returns a NamesFunc over a fixed set of existing namespaces.
func names(all ...string) NamesFunc {
	return func(start string) []string {
		var out []string
		for _, n := range all {
			if strings.HasPrefix(n, start) {
				out = append(out, n)
			}
		}
		return out
	}
}

func TestCovers(t *testing.T) {
	for _, c := range []struct {
		prefix, name string
		want         bool
	}{
		{"spark/app1", "spark/app1", true},
		{"spark/app1", "spark/app1/0/g3", true},
		{"spark/app1", "spark/app10", false}, // a component boundary, not a string prefix
		{"spark/app1", "spark", false},
		{"a", "b/a", false},
	} {
		if got := Covers(c.prefix, c.name); got != c.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", c.prefix, c.name, got, c.want)
		}
	}
	for _, bad := range []string{"", "a/", "/a", "a//b", "a/../b"} {
		if ValidatePrefix(bad) == nil {
			t.Errorf("ValidatePrefix(%q) accepted", bad)
		}
	}
}

func TestNamespaceLimitIsExact(t *testing.T) {
	q := New()
	q.Set(Limit{Prefix: "app", Namespaces: 2})
	if err := q.CheckCreate("app/a", names()); err != nil {
		t.Fatalf("first namespace refused: %v", err)
	}
	if err := q.CheckCreate("app/b", names("app/a")); err != nil {
		t.Fatalf("second namespace refused: %v", err)
	}
	err := q.CheckCreate("app/c", names("app/a", "app/b", "other/x", "app2/y"))
	var ex *Exceeded
	if !errors.As(err, &ex) || ex.What != "namespaces" || ex.Used != 2 || ex.Limit != 2 || ex.Prefix != "app" {
		t.Fatalf("third namespace: got %v, want a namespace quota error for app (2 of 2)", err)
	}
	if !strings.Contains(err.Error(), `prefix "app" holds 2 namespaces, its quota is 2`) {
		t.Errorf("message %q does not name prefix, use and quota", err)
	}
	// Outside the prefix nothing is limited.
	if err := q.CheckCreate("app2/z", names("app/a", "app/b", "app2/y")); err != nil {
		t.Errorf("app2/z refused by app's quota: %v", err)
	}
	// Deleting one (the catalog no longer lists it) makes room at once.
	if err := q.CheckCreate("app/c", names("app/a")); err != nil {
		t.Errorf("after a deletion: %v", err)
	}
}

func TestBytesAreTheLargestCopyPerNamespace(t *testing.T) {
	q := New()
	q.Set(Limit{Prefix: "app", Bytes: 1000})
	ns := names("app/a", "app/b", "zzz")
	// Two copies of app/a (one behind), one of app/b; zzz is outside.
	q.Report(1, map[string]uint64{"app/a": 400, "app/b": 100, "zzz": 5000})
	q.Report(2, map[string]uint64{"app/a": 300})
	all := q.All(ns)
	if len(all) != 1 || all[0].UsedBytes != 500 || all[0].UsedNamespaces != 2 {
		t.Fatalf("use = %+v, want 500 bytes (400 + 100) in 2 namespaces", all)
	}
	if q.All(ns)[0].OverBytes() {
		t.Fatalf("over at 500 of 1000")
	}
	q.Report(2, map[string]uint64{"app/a": 950}) // node 2's copy grew past node 1's
	if u := q.All(ns)[0]; !u.OverBytes() || u.UsedBytes != 1050 {
		t.Fatalf("use = %+v, want app over at 1050", u)
	}
	err := q.CheckCreate("app/c", ns)
	var ex *Exceeded
	if !errors.As(err, &ex) || ex.What != "bytes" || !strings.Contains(err.Error(), "uses 1.0 KiB of its 1000 B byte quota") {
		t.Fatalf("create under a used-up byte quota: %v", err)
	}
	// A deleted namespace stops counting even while a node still reports it.
	if got := q.All(names("app/b"))[0].UsedBytes; got != 100 {
		t.Errorf("after deleting app/a: %d bytes, want 100", got)
	}
	// A node that reports nothing more (it deleted everything) no longer counts.
	q.Report(1, nil)
	q.ForgetNode(2)
	if got := q.All(ns)[0].UsedBytes; got != 0 {
		t.Errorf("after the nodes' reports went: %d bytes", got)
	}
}

func TestNestedQuotasAllApply(t *testing.T) {
	q := New()
	q.Set(Limit{Prefix: "spark", Namespaces: 3})
	q.Set(Limit{Prefix: "spark/app1", Namespaces: 10})
	err := q.CheckCreate("spark/app1/s/g0", names("spark/app1/x", "spark/app2/y", "spark/app2/z"))
	var ex *Exceeded
	if !errors.As(err, &ex) || ex.Prefix != "spark" {
		t.Fatalf("outer quota not applied: %v", err)
	}
	if l, ok := q.Remove("spark"); !ok || l.Namespaces != 3 {
		t.Fatalf("Remove = %+v %v", l, ok)
	}
	if err := q.CheckCreate("spark/app1/s/g0", names("spark/app1/x", "spark/app2/y", "spark/app2/z")); err != nil {
		t.Fatalf("inner quota (1 of 10) refused: %v", err)
	}
	if _, ok := q.Remove("spark"); ok {
		t.Fatalf("removed twice")
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 29: "1.5 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
