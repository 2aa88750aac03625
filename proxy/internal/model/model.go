// Package model holds the plain records the proxy keeps in memory and
// stores in etcd as JSON: storage nodes, namespaces (with their placement)
// and pending namespace deletions.
package model

import (
	"fmt"
	"slices"
	"strings"
)

// Liveness of a node as decided by the leader from heartbeats.
type Liveness string

// Liveness values.
const (
	Live    Liveness = "LIVE"
	Suspect Liveness = "SUSPECT"
	Dead    Liveness = "DEAD"
)

// Node is a storage server known to the cluster.
type Node struct {
	ID              uint64   `json:"id"`
	Endpoint        string   `json:"endpoint"`
	Liveness        Liveness `json:"liveness"`
	Draining        bool     `json:"draining,omitempty"`
	Capacity        uint64   `json:"capacity"`
	Free            uint64   `json:"free"`
	Used            uint64   `json:"used"`
	Pools           uint32   `json:"pools"`
	LastHeartbeatMs int64    `json:"last_heartbeat_ms"`
	RegisteredMs    int64    `json:"registered_ms"`
	// Identity is the CN of the node certificate that registered the id (TLS on);
	// heartbeats for this id from another certificate are refused (docs/security.md).
	Identity string `json:"identity,omitempty"`
	Tiers
}

// Tiers is a node's space per tier (fast pools, capacity pools), as its last
// heartbeat reported it; zero from servers that do not report tiers.
type Tiers struct {
	FastCapacity         uint64 `json:"fast_capacity,omitempty"`
	FastFree             uint64 `json:"fast_free,omitempty"`
	CapacityTierCapacity uint64 `json:"capacity_tier_capacity,omitempty"`
	CapacityTierFree     uint64 `json:"capacity_tier_free,omitempty"`
}

// Usable reports whether new data may be placed on the node.
func (n Node) Usable() bool { return n.Liveness == Live && !n.Draining }

// Substitution records that Placement[Index] changed from Replaced to
// Replacement, so that servers can repair the new member.
type Substitution struct {
	Index       int    `json:"index"`
	Replaced    uint64 `json:"replaced"`
	Replacement uint64 `json:"replacement"`
	Epoch       uint64 `json:"epoch"`
	AtMs        int64  `json:"at_ms"`
	Reason      string `json:"reason"`
	// WasInSync: the replaced member was in the in-sync set when it died (it held
	// every acknowledged record then), so it may take its place back if it returns
	// before its substitute is in sync (catalog.revertSubstitutes).
	WasInSync bool `json:"was_in_sync,omitempty"`
}

// Namespace is a named set of records replicated on Placement.
type Namespace struct {
	Name          string         `json:"name"`
	Replicas      uint32         `json:"replicas"`
	MinReplicas   uint32         `json:"min_replicas"`
	TTLSeconds    uint64         `json:"ttl_seconds"`
	Placement     []uint64       `json:"placement"`
	Substitutions []Substitution `json:"substitutions,omitempty"`
	CreatedMs     int64          `json:"created_ms"`
	TouchedMs     int64          `json:"touched_ms"`
	Epoch         uint64         `json:"epoch"`
	// InSync lists, in the order they joined, the members known to hold every
	// acknowledged record (docs/cluster.md). Empty only in records written
	// before the field existed: then every member counts (see Synced).
	InSync []uint64 `json:"in_sync,omitempty"`
	// Owner is the CN of the client certificate that created the namespace (TLS
	// on; empty otherwise). Only the owner or an admin may delete it.
	Owner string `json:"owner,omitempty"`
	// Tenant is the prefix of the tenant token the creator presented (a proxy with
	// --token-secret-file; empty otherwise, and in records written before the field).
	// A tenant-owned namespace is deleted or touched only with an admin certificate
	// or a valid token whose prefix covers its name; Owner then does not matter.
	Tenant string `json:"tenant,omitempty"`
}

// Synced returns the in-sync members (the whole placement for old records).
func (ns Namespace) Synced() []uint64 {
	if len(ns.InSync) == 0 {
		return slices.Clone(ns.Placement)
	}
	return slices.Clone(ns.InSync)
}

// Primary returns the namespace's primary: the first in-sync member that is
// not dead, as proto/placement.cc computes it for servers and clients.
func (ns Namespace) Primary(dead func(uint64) bool) (uint64, bool) {
	for _, id := range ns.Synced() {
		if slices.Contains(ns.Placement, id) && !dead(id) {
			return id, true
		}
	}
	return 0, false
}

// Clone returns a deep copy.
func (ns Namespace) Clone() Namespace {
	ns.Placement = slices.Clone(ns.Placement)
	ns.Substitutions = slices.Clone(ns.Substitutions)
	ns.InSync = slices.Clone(ns.InSync)
	return ns
}

// Expired reports whether a namespace with a TTL has gone untouched for
// longer than the TTL at wall-clock time nowMs.
func (ns Namespace) Expired(nowMs int64) bool {
	if ns.TTLSeconds == 0 {
		return false
	}
	return ns.TouchedMs+int64(ns.TTLSeconds)*1000 < nowMs
}

// Holders returns every node that may hold data of the namespace: the
// current placement plus every node substituted out of it.
func (ns Namespace) Holders() []uint64 {
	out := slices.Clone(ns.Placement)
	for _, s := range ns.Substitutions {
		if !slices.Contains(out, s.Replaced) {
			out = append(out, s.Replaced)
		}
	}
	return out
}

// Deletion is a deleted namespace whose holders have not all been told yet.
type Deletion struct {
	Name      string   `json:"name"`
	DeletedMs int64    `json:"deleted_ms"`
	Pending   []uint64 `json:"pending"`
}

// HexID formats a node id as every RPMP tool and log prints it: 16 lowercase
// hex digits (rpmpctl nodes, rpmp-server's ready line, Java exceptions).
func HexID(id uint64) string { return fmt.Sprintf("%016x", id) }

// HexIDs formats node ids as HexID does, in brackets: [00000000000000a1 ...].
func HexIDs(ids []uint64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = HexID(id)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
