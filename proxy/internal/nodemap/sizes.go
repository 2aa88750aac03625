// sizes.go: the bytes of large namespaces as the nodes holding them report them
// (HeartbeatRequest.large_namespaces: each namespace of at least 1/64 of the node's
// capacity), and the room check that sizes a substitute by them
// (docs/cluster.md "Substitutes with room"). Leader memory only: a new leader
// knows the sizes again after one heartbeat of each node, and until then sizes
// substitutes by HasRoom alone.
package nodemap

// ReportLarge replaces what node id last reported of its large namespaces.
func (m *Map) ReportLarge(id uint64, bytes map[string]uint64) {
	if len(bytes) == 0 {
		delete(m.large, id)
		return
	}
	m.large[id] = bytes
}

// NamespaceBytes is the largest copy of namespace name that a node reports (0
// when no node reports it: a small namespace, or one not heard of yet).
func (m *Map) NamespaceBytes(name string) uint64 {
	var most uint64
	for _, r := range m.large {
		most = max(most, r[name])
	}
	return most
}

// HasRoomFor says whether node id could take a whole copy of namespace name
// and still have 1/RoomFraction of its capacity free (HasRoom for a namespace
// no node reports as large). A repair copies every record of the namespace to
// its substitute; one that does not fit fills the substitute, which then
// refuses every other namespace's writes, and never finishes.
func (m *Map) HasRoomFor(id uint64, name string) bool {
	n, ok := m.nodes[id]
	if !ok {
		return false
	}
	if n.Capacity == 0 {
		return true
	}
	need := m.NamespaceBytes(name)
	return n.Free >= n.Capacity/RoomFraction && n.Free-n.Capacity/RoomFraction >= need
}
