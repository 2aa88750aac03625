// Package quota keeps the per-prefix quotas of the leader proxy and decides what
// they refuse (docs/cluster.md "Quotas"). A quota on prefix P covers the namespace
// named P and every namespace under "P/": an application's namespaces (e.g.
// spark/<app>) and their placement groups. It limits the number of namespaces
// (checked exactly by the leader when one is created) and their bytes (summed from
// the nodes' heartbeats: for each namespace the largest copy any node reports, so
// replicas do not count twice; approximate, one heartbeat behind).
//
// Pure logic, no locking, no I/O: the leader (internal/server) owns a Table under its
// mutex, persists Limits in etcd (internal/store) before it changes the Table, and
// feeds it heartbeats. Names come from the caller (the catalog), so a namespace that
// was deleted stops counting at once even while nodes still report its bytes.
package quota

import (
	"fmt"
	"sort"
	"strings"

	"rpmp.io/proxy/internal/nsname"
)

// Limit is one prefix's quota as stored in etcd. 0 means no limit for that dimension.
type Limit struct {
	Prefix     string `json:"prefix"`
	Bytes      uint64 `json:"bytes,omitempty"`
	Namespaces uint64 `json:"namespaces,omitempty"`
	// Sessions of tenant credentials under the prefix, per server (the servers
	// enforce it at HELLO; docs/cluster.md "Quotas").
	Sessions uint32 `json:"sessions,omitempty"`
	SetBy    string `json:"set_by,omitempty"` // certificate CN; "" without TLS
	SetMs    int64  `json:"set_ms"`
}

// Usage is a Limit with its current use.
type Usage struct {
	Limit
	UsedBytes      uint64
	UsedNamespaces uint64
}

// OverBytes reports whether the byte quota is used up (use >= limit).
func (u Usage) OverBytes() bool { return u.Bytes > 0 && u.UsedBytes >= u.Bytes }

// Exceeded is the error of a refused namespace creation. Its text names the prefix,
// the quota and the use.
type Exceeded struct {
	Prefix      string
	What        string // "namespaces" or "bytes"
	Limit, Used uint64
}

func (e *Exceeded) Error() string {
	if e.What == "namespaces" {
		return fmt.Sprintf("quota exceeded: prefix %q holds %d namespaces, its quota is %d "+
			"(delete some, or raise it: rpmpctl quota set %s --namespaces N)", e.Prefix, e.Used, e.Limit, e.Prefix)
	}
	return fmt.Sprintf("quota exceeded: prefix %q uses %s of its %s byte quota "+
		"(delete data, or raise it: rpmpctl quota set %s --bytes N)", e.Prefix, FormatBytes(e.Used),
		FormatBytes(e.Limit), e.Prefix)
}

// Covers reports whether a quota on prefix applies to namespace name.
func Covers(prefix, name string) bool {
	return name == prefix || (strings.HasPrefix(name, prefix) && name[len(prefix)] == '/')
}

// ValidatePrefix checks a quota prefix: a well-formed namespace name (so "" and
// "a/" are refused: a quota names one subtree).
func ValidatePrefix(prefix string) error {
	if err := nsname.Validate(prefix); err != nil {
		return fmt.Errorf("quota prefix: %v", err)
	}
	return nil
}

// NamesFunc returns the names of the existing namespaces that start with a string
// (a superset of those a prefix covers is fine: Table filters with Covers).
type NamesFunc func(start string) []string

// Table is the leader's quotas and the nodes' last byte reports.
type Table struct {
	limits  map[string]Limit
	reports map[uint64]map[string]uint64 // node -> namespace -> bytes
}

// New returns an empty table.
func New() *Table {
	return &Table{limits: map[string]Limit{}, reports: map[uint64]map[string]uint64{}}
}

// Set adds or replaces a limit (the caller persisted it first).
func (t *Table) Set(l Limit) { t.limits[l.Prefix] = l }

// Remove drops a prefix's limit; ok is false when it had none.
func (t *Table) Remove(prefix string) (Limit, bool) {
	l, ok := t.limits[prefix]
	delete(t.limits, prefix)
	return l, ok
}

// Get returns a prefix's limit.
func (t *Table) Get(prefix string) (Limit, bool) {
	l, ok := t.limits[prefix]
	return l, ok
}

// Len is the number of quotas.
func (t *Table) Len() int { return len(t.limits) }

// Report replaces what node last said about its namespaces' bytes.
func (t *Table) Report(node uint64, bytes map[string]uint64) {
	if len(bytes) == 0 {
		delete(t.reports, node)
		return
	}
	t.reports[node] = bytes
}

// ForgetNode drops a removed node's report.
func (t *Table) ForgetNode(node uint64) { delete(t.reports, node) }

// use computes a limit's use over the namespaces names lists.
func (t *Table) use(l Limit, names NamesFunc) Usage {
	u := Usage{Limit: l}
	for _, name := range names(l.Prefix) {
		if !Covers(l.Prefix, name) {
			continue
		}
		u.UsedNamespaces++
		var most uint64
		for _, r := range t.reports {
			most = max(most, r[name])
		}
		u.UsedBytes += most
	}
	return u
}

// All returns every quota with its use, by prefix.
func (t *Table) All(names NamesFunc) []Usage {
	out := make([]Usage, 0, len(t.limits))
	for _, l := range t.limits {
		out = append(out, t.use(l, names))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Prefix < out[j].Prefix })
	return out
}

// CheckCreate returns an *Exceeded when creating namespace name (not existing yet)
// would pass a covering quota's namespace limit, or a covering byte quota is used up.
func (t *Table) CheckCreate(name string, names NamesFunc) error {
	var prefixes []string
	for p := range t.limits {
		if Covers(p, name) {
			prefixes = append(prefixes, p)
		}
	}
	sort.Strings(prefixes) // outermost first: a stable, predictable message
	for _, p := range prefixes {
		u := t.use(t.limits[p], names)
		if u.Namespaces > 0 && u.UsedNamespaces >= u.Namespaces {
			return &Exceeded{Prefix: p, What: "namespaces", Limit: u.Namespaces, Used: u.UsedNamespaces}
		}
		if u.OverBytes() {
			return &Exceeded{Prefix: p, What: "bytes", Limit: u.Bytes, Used: u.UsedBytes}
		}
	}
	return nil
}

// FormatBytes writes n as rpmpctl does: B, KiB, MiB, GiB, TiB with one decimal.
func FormatBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
