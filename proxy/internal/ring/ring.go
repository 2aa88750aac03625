// Package ring implements the consistent-hash ring used for namespace
// placement: every node contributes a fixed number of virtual points, and a
// namespace's replica set is the ordered list of distinct nodes met when
// walking the ring clockwise from the hash of its name.
package ring

import (
	"crypto/sha256"
	"encoding/binary"
	"sort"
	"strconv"
)

// DefaultVNodes is the number of virtual points per node.
const DefaultVNodes = 64

type point struct {
	hash uint64
	node uint64
}

// Ring is an immutable consistent-hash ring over a set of node ids.
type Ring struct {
	points []point
	nodes  int
}

// Hash maps a string to a ring position (first 8 bytes of SHA-256, big
// endian). Deterministic across processes and platforms.
func Hash(s string) uint64 {
	sum := sha256.Sum256([]byte(s))
	return binary.BigEndian.Uint64(sum[:8])
}

// vnodeKey is the string hashed for virtual point v of a node.
func vnodeKey(node uint64, v int) string {
	return "node-" + strconv.FormatUint(node, 10) + "#" + strconv.Itoa(v)
}

// New builds a ring from node ids (duplicates ignored) with vnodes points each.
func New(nodes []uint64, vnodes int) *Ring {
	if vnodes <= 0 {
		vnodes = DefaultVNodes
	}
	seen := make(map[uint64]bool, len(nodes))
	r := &Ring{}
	for _, n := range nodes {
		if seen[n] {
			continue
		}
		seen[n] = true
		for v := 0; v < vnodes; v++ {
			r.points = append(r.points, point{Hash(vnodeKey(n, v)), n})
		}
	}
	r.nodes = len(seen)
	sort.Slice(r.points, func(i, j int) bool {
		if r.points[i].hash != r.points[j].hash {
			return r.points[i].hash < r.points[j].hash
		}
		return r.points[i].node < r.points[j].node
	})
	return r
}

// Len is the number of distinct nodes on the ring.
func (r *Ring) Len() int { return r.nodes }

// Walk returns up to n distinct nodes met walking clockwise from Hash(name),
// skipping nodes for which skip returns true (skip may be nil).
func (r *Ring) Walk(name string, n int, skip func(uint64) bool) []uint64 {
	if n <= 0 || len(r.points) == 0 {
		return nil
	}
	h := Hash(name)
	start := sort.Search(len(r.points), func(i int) bool { return r.points[i].hash >= h })
	out := make([]uint64, 0, n)
	seen := make(map[uint64]bool, n)
	for i := 0; i < len(r.points) && len(out) < n; i++ {
		id := r.points[(start+i)%len(r.points)].node
		if seen[id] {
			continue
		}
		seen[id] = true
		if skip != nil && skip(id) {
			continue
		}
		out = append(out, id)
	}
	return out
}

// Place returns the replica set of a namespace: the first n distinct nodes
// on the ring from Hash(name). Fewer than n are returned if the ring is small.
func (r *Ring) Place(name string, n int) []uint64 {
	return r.Walk(name, n, nil)
}

// Substitute returns the next node on the ring (from Hash(name)) that is not
// already in current and that fits (nil: every node fits), or ok=false if
// there is none.
func (r *Ring) Substitute(name string, current []uint64, fits func(uint64) bool) (uint64, bool) {
	in := make(map[uint64]bool, len(current))
	for _, id := range current {
		in[id] = true
	}
	got := r.Walk(name, 1, func(id uint64) bool { return in[id] || (fits != nil && !fits(id)) })
	if len(got) == 0 {
		return 0, false
	}
	return got[0], true
}
