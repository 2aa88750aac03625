// Package nodemap tracks storage-node liveness on the leader. It is pure
// in-memory logic driven by an injected clock: callers compute the next
// record (Next, Expire), persist it, and only then commit it (Put), so that
// memory never runs ahead of etcd.
package nodemap

import (
	"sort"
	"time"

	"rpmp.io/proxy/internal/model"
)

// Beat is the content of one heartbeat.
type Beat struct {
	ID                   uint64
	Endpoint             string
	Capacity, Free, Used uint64
	Pools                uint32
	Tiers                model.Tiers
	WantDrain            bool
	Identity             string // certificate CN of the sender; "" without TLS
}

// Map is the leader's view of all nodes. Not safe for concurrent use.
type Map struct {
	suspectAfter time.Duration
	deadAfter    time.Duration
	nodes        map[uint64]model.Node
	lastSeen     map[uint64]time.Time         // monotonic, leader-local
	large        map[uint64]map[string]uint64 // sizes.go: each node's large namespaces
}

// New returns an empty map: nodes become SUSPECT after suspectAfter without
// a heartbeat and DEAD after deadAfter.
func New(suspectAfter, deadAfter time.Duration) *Map {
	return &Map{suspectAfter: suspectAfter, deadAfter: deadAfter,
		nodes: map[uint64]model.Node{}, lastSeen: map[uint64]time.Time{},
		large: map[uint64]map[string]uint64{}}
}

// Restore loads nodes read from etcd by a new leader. Nodes that were not
// DEAD become SUSPECT and get a full deadAfter from now to heartbeat.
func (m *Map) Restore(nodes []model.Node, now time.Time) {
	for _, n := range nodes {
		if n.Liveness != model.Dead {
			n.Liveness = model.Suspect
		}
		m.nodes[n.ID] = n
		m.lastSeen[n.ID] = now
	}
}

// Next returns the record a heartbeat produces, and whether it differs from
// the stored one in a way that changes the node map (new node, liveness,
// endpoint or draining change).
func (m *Map) Next(b Beat, now time.Time) (rec model.Node, changed bool) {
	old, known := m.nodes[b.ID]
	rec = old
	rec.ID, rec.Endpoint, rec.Liveness = b.ID, b.Endpoint, model.Live
	rec.Capacity, rec.Free, rec.Used, rec.Pools, rec.Tiers = b.Capacity, b.Free, b.Used, b.Pools, b.Tiers
	rec.LastHeartbeatMs = now.UnixMilli()
	if !known {
		rec.RegisteredMs = now.UnixMilli()
	}
	rec.Draining = old.Draining || b.WantDrain
	if b.Identity != "" {
		rec.Identity = b.Identity
	}
	changed = !known || old.Liveness != model.Live || old.Endpoint != rec.Endpoint || old.Draining != rec.Draining ||
		old.Identity != rec.Identity
	return rec, changed
}

// Put commits a record; seen, if non-zero, is the time of its heartbeat.
func (m *Map) Put(n model.Node, seen time.Time) {
	m.nodes[n.ID] = n
	if !seen.IsZero() {
		m.lastSeen[n.ID] = seen
	}
}

// Remove forgets a node (an operator removed it; the caller persisted that).
func (m *Map) Remove(id uint64) {
	delete(m.nodes, id)
	delete(m.lastSeen, id)
	delete(m.large, id)
}

// Expire returns the records whose liveness must change at time now
// (LIVE -> SUSPECT -> DEAD), without applying them.
func (m *Map) Expire(now time.Time) []model.Node {
	var out []model.Node
	for _, id := range m.IDs() {
		n := m.nodes[id]
		quiet := now.Sub(m.lastSeen[id])
		next := n.Liveness
		switch {
		case n.Liveness == model.Dead:
			continue
		case quiet > m.deadAfter:
			next = model.Dead
		case quiet > m.suspectAfter:
			next = model.Suspect
		}
		if next != n.Liveness {
			n.Liveness = next
			out = append(out, n)
		}
	}
	return out
}

// Get returns a node by id.
func (m *Map) Get(id uint64) (model.Node, bool) {
	n, ok := m.nodes[id]
	return n, ok
}

// IDs returns all node ids, ascending.
func (m *Map) IDs() []uint64 {
	ids := make([]uint64, 0, len(m.nodes))
	for id := range m.nodes {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// All returns all nodes ordered by id.
func (m *Map) All() []model.Node {
	out := make([]model.Node, 0, len(m.nodes))
	for _, id := range m.IDs() {
		out = append(out, m.nodes[id])
	}
	return out
}

// RoomFraction is the share of its capacity a node must have free to take new
// namespaces while enough other nodes have that much (RoomyIDs).
const RoomFraction = 16 // 1/16 of capacity

// HasRoom says whether a known node has at least 1/RoomFraction of its
// capacity free, or reported no capacity yet. Free is what the server can
// still use for new data: it reports free space less its delete reserve and
// less what its allocator could not give when the pool last filled
// (server/store PoolStats.free), so a full pool of any size has no room.
func (m *Map) HasRoom(id uint64) bool {
	n, ok := m.nodes[id]
	return ok && (n.Capacity == 0 || n.Free >= n.Capacity/RoomFraction)
}

// RoomyIDs returns the usable nodes with at least 1/RoomFraction of their
// capacity free (a node that reported no capacity yet counts as roomy), or all
// usable nodes when fewer than want of them have that room: new namespaces
// (Spark's placement groups among them) go to nodes that can hold them, and a
// nearly full cluster still places where it can.
func (m *Map) RoomyIDs(want int) []uint64 {
	if want < 1 {
		want = 1
	}
	usable := m.UsableIDs()
	var roomy []uint64
	for _, id := range usable {
		if m.HasRoom(id) {
			roomy = append(roomy, id)
		}
	}
	if len(roomy) < want {
		return usable
	}
	return roomy
}

// ExtentIDs chooses the want nodes for a new extent of a namespace that ran
// out of space (docs/cluster.md "Split instead of fail"): usable nodes with at
// least 1/RoomFraction of their capacity free first, among them those not in
// avoid (the members of the namespace that refused the write) first, then the
// most free bytes first; ties by id. All usable nodes when there are at most
// want of them.
func (m *Map) ExtentIDs(want int, avoid []uint64) []uint64 {
	usable := m.UsableIDs()
	if want < 1 {
		want = 1
	}
	if len(usable) <= want {
		return usable
	}
	avoided := map[uint64]bool{}
	for _, id := range avoid {
		avoided[id] = true
	}
	sort.SliceStable(usable, func(i, j int) bool {
		a, b := m.nodes[usable[i]], m.nodes[usable[j]]
		if ra, rb := m.HasRoom(usable[i]), m.HasRoom(usable[j]); ra != rb {
			return ra
		}
		if aa, ab := avoided[usable[i]], avoided[usable[j]]; aa != ab {
			return !aa
		}
		return a.Free > b.Free
	})
	out := usable[:want]
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// UsableIDs returns the ids of LIVE, non-draining nodes, ascending.
func (m *Map) UsableIDs() []uint64 {
	var out []uint64
	for _, id := range m.IDs() {
		if m.nodes[id].Usable() {
			out = append(out, id)
		}
	}
	return out
}
