// Unit tests for namespace name validation.
package nsname

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	good := []string{"a", "spark/app-1/shuffle-0", "x.y", "a..b", strings.Repeat("n", MaxLen), "ünïcode/ok"}
	for _, n := range good {
		if err := Validate(n); err != nil {
			t.Errorf("Validate(%q) = %v; want ok", n, err)
		}
	}
	bad := map[string]string{
		"":                            "empty",
		strings.Repeat("n", MaxLen+1): "longer than",
		"a\x00b":                      "NUL",
		"/abs":                        "starts with",
		"a/../b":                      `".."`,
		"..":                          `".."`,
		"a/./b":                       `"."`,
		"a//b":                        "empty path component",
		"a/":                          "ends with",
	}
	for n, want := range bad {
		err := Validate(n)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%q) = %v; want error containing %q", n, err, want)
		}
	}
}

func TestValidatePrefix(t *testing.T) {
	for _, p := range []string{"", "spark/", "spark/app"} {
		if err := ValidatePrefix(p); err != nil {
			t.Errorf("ValidatePrefix(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"/x", "a\x00", strings.Repeat("p", MaxLen+1)} {
		if ValidatePrefix(p) == nil {
			t.Errorf("ValidatePrefix(%q) accepted", p)
		}
	}
}

func TestGroup(t *testing.T) {
	for _, tc := range []struct {
		name, parent string
		index        int
		ok           bool
	}{
		{"spark/app-1/3/g0", "spark/app-1/3", 0, true},
		{"spark/app-1/3/g17", "spark/app-1/3", 17, true},
		{"a/g4095", "a", 4095, true},
		{"g1", "", 0, false},        // no parent
		{"a/g", "", 0, false},       // no index
		{"a/g01", "", 0, false},     // leading zero
		{"a/gx", "", 0, false},      // not decimal
		{"a/g123456", "", 0, false}, // too long
		{"a/b", "", 0, false},
	} {
		parent, index, ok := Group(tc.name)
		if parent != tc.parent || index != tc.index || ok != tc.ok {
			t.Errorf("Group(%q) = %q, %d, %v; want %q, %d, %v", tc.name, parent, index, ok, tc.parent, tc.index, tc.ok)
		}
	}
}

func TestExtent(t *testing.T) {
	for _, c := range []struct {
		name, prev string
		k          int
		ok         bool
	}{
		{"spark/a/3/g2/x1", "spark/a/3/g2", 1, true},
		{"spark/a/3/g2/x2", "spark/a/3/g2/x1", 2, true},
		{"a/x10", "a/x9", 10, true},
		{"x1", "", 0, false},       // no parent
		{"a/x0", "", 0, false},     // extents start at 1
		{"a/x01", "", 0, false},    // leading zero
		{"a/x", "", 0, false},      // no index
		{"a/x1b", "", 0, false},    // not decimal
		{"a/x12345", "", 0, false}, // too long
		{"a/g1", "", 0, false},     // a group, not an extent
	} {
		prev, k, ok := Extent(c.name)
		if prev != c.prev || k != c.k || ok != c.ok {
			t.Errorf("Extent(%q) = %q, %d, %v; want %q, %d, %v", c.name, prev, k, ok, c.prev, c.k, c.ok)
		}
	}
	// An extent of a group is not itself a group.
	if _, _, ok := Group("spark/a/3/g2/x1"); ok {
		t.Errorf("Group(extent) = ok")
	}
}
