// Package nsname validates namespace names. Names are opaque byte strings
// to the proxy except for the rules below, which keep them safe to use as
// etcd key suffixes and as directory-like paths on the storage servers.
package nsname

import (
	"fmt"
	"strings"
)

// MaxLen is the longest allowed name in bytes.
const MaxLen = 255

// Validate returns nil for a well-formed name, else an error saying why.
// Rules: non-empty, at most MaxLen bytes, valid UTF-8 is not required but NUL
// is forbidden, no leading "/", no trailing "/", no empty ("//"), "." or
// ".." path component.
func Validate(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("namespace name is empty")
	case len(name) > MaxLen:
		return fmt.Errorf("namespace name is %d bytes, longer than %d", len(name), MaxLen)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("namespace name %q contains a NUL byte", name)
	case strings.HasPrefix(name, "/"):
		return fmt.Errorf("namespace name %q starts with '/'", name)
	case strings.HasSuffix(name, "/"):
		return fmt.Errorf("namespace name %q ends with '/'", name)
	}
	for _, part := range strings.Split(name, "/") {
		switch part {
		case "":
			return fmt.Errorf("namespace name %q has an empty path component", name)
		case ".", "..":
			return fmt.Errorf("namespace name %q has a %q path component", name, part)
		}
	}
	return nil
}

// ValidatePrefix checks a ListNamespaces prefix: empty is allowed, otherwise
// it may not contain NUL, start with "/" or exceed MaxLen.
func ValidatePrefix(prefix string) error {
	switch {
	case len(prefix) > MaxLen:
		return fmt.Errorf("prefix is %d bytes, longer than %d", len(prefix), MaxLen)
	case strings.IndexByte(prefix, 0) >= 0:
		return fmt.Errorf("prefix %q contains a NUL byte", prefix)
	case strings.HasPrefix(prefix, "/"):
		return fmt.Errorf("prefix %q starts with '/'", prefix)
	}
	return nil
}

// Group reports whether name is a placement group: its last path component is
// "g" and a decimal index without leading zeros (g0, g1, ... g4095) under a
// non-empty parent. The proxy stripes a parent's groups over the nodes
// (docs/cluster.md "Placement groups").
func Group(name string) (parent string, index int, ok bool) {
	slash := strings.LastIndexByte(name, '/')
	if slash <= 0 {
		return "", 0, false
	}
	last := name[slash+1:]
	if len(last) < 2 || len(last) > 5 || last[0] != 'g' || (last[1] == '0' && len(last) > 2) {
		return "", 0, false
	}
	for _, c := range last[1:] {
		if c < '0' || c > '9' {
			return "", 0, false
		}
		index = index*10 + int(c-'0')
	}
	return name[:slash], index, true
}

// Extent reports whether name is extent k >= 1 of a namespace: its last path
// component is "x" and a decimal index without leading zeros (x1 ... x9999)
// under a non-empty parent. A placement group that ran out of space continues
// in <group>/x1, x2, ... (docs/cluster.md "Split instead of fail"); prev is the
// namespace extent k follows: the parent for k = 1, else <parent>/x<k-1>.
func Extent(name string) (prev string, k int, ok bool) {
	slash := strings.LastIndexByte(name, '/')
	if slash <= 0 {
		return "", 0, false
	}
	last := name[slash+1:]
	if len(last) < 2 || len(last) > 5 || last[0] != 'x' || last[1] == '0' {
		return "", 0, false
	}
	for _, c := range last[1:] {
		if c < '0' || c > '9' {
			return "", 0, false
		}
		k = k*10 + int(c-'0')
	}
	if k == 1 {
		return name[:slash], k, true
	}
	return fmt.Sprintf("%s/x%d", name[:slash], k-1), k, true
}
