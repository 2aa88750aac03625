// repair.go: substitution of dead or draining nodes in namespace
// placements with the next usable node with room on the ring.
package catalog

import (
	"slices"
	"sort"

	"rpmp.io/proxy/internal/model"
	"rpmp.io/proxy/internal/ring"
)

// NodeInfo answers, for a node id, whether it must be replaced in
// placements and why ("dead" or "draining"); "" means keep it.
type NodeInfo func(id uint64) (reason string)

// PlanRepairs returns every namespace whose placement changes because a
// member must be replaced, or because a member that died came back while its
// substitute was still out of sync (revertSubstitutes), with the substitutions
// recorded. usable are the
// LIVE non-draining node ids; room says whether a node has room for a whole
// copy of a namespace (nodemap.Map.HasRoomFor; nil: every node has). A
// substitute is the next usable node with room on the ring that is not in the
// placement: a node without room could not take the copy, so its repair would
// never finish, its partial copy would fill the node (refusing every other
// namespace's writes there), and the member it replaced could not rejoin when
// it came back. A member with no such substitute stays (the namespace is
// degraded: a dead member rejoins through repair when it returns) and is
// retried on the next call.
func (c *Catalog) PlanRepairs(replace NodeInfo, usable []uint64, room func(id uint64, ns string) bool, nowMs int64, epoch uint64) []model.Namespace {
	if room == nil {
		room = func(uint64, string) bool { return true }
	}
	r := ring.New(usable, c.vnodes)
	var out []model.Namespace
	for _, ns := range c.namespaces {
		next, reverted := revertSubstitutes(ns.Clone(), usable, replace, nowMs, epoch)
		if next, changed := repairOne(next, r, room, replace, nowMs, epoch); changed || reverted {
			out = append(out, next)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// revertSubstitutes puts back a member that was substituted out because it died
// while in the in-sync set, and is usable again, when its substitute has not
// joined the in-sync set yet (a member substituted out of sync, a substitute
// that died before its repair ended among them, is not put back: its copy may be
// a fraction of the namespace, and putting it back would swap two partial copies):
// the returning member holds the namespace up to its death, so its repair copies
// what it missed, where the substitute's copies everything, and may never finish
// (a full group's copy on a node that cannot hold it: the namespace would stay
// degraded and the substitute's partial copy would fill that node). The
// substitute is recorded as substituted out ("returned"), so it stays among the
// holders a deletion reaches. A substitute in sync stays: it is a full copy.
func revertSubstitutes(ns model.Namespace, usable []uint64, replace NodeInfo, nowMs int64, epoch uint64) (model.Namespace, bool) {
	changed := false
	for i, current := range ns.Placement {
		if slices.Contains(ns.InSync, current) {
			continue
		}
		last := -1
		for k, s := range ns.Substitutions {
			if s.Index == i {
				last = k
			}
		}
		if last < 0 {
			continue
		}
		s := ns.Substitutions[last]
		back := s.Replaced
		if s.Replacement != current || s.Reason != "dead" || !s.WasInSync || !slices.Contains(usable, back) ||
			replace(back) != "" || slices.Contains(ns.Placement, back) {
			continue
		}
		ns.Placement[i] = back
		ns.Substitutions = append(ns.Substitutions, model.Substitution{
			Index: i, Replaced: current, Replacement: back, Epoch: epoch, AtMs: nowMs, Reason: "returned",
		})
		changed = true
	}
	if changed {
		ns.Epoch = epoch
	}
	return ns, changed
}

// repairOne substitutes the members of one namespace that must go. A dead
// member leaves the in-sync set (it may miss writes from now on, and must be
// repaired before it can lead or serve again) unless it is the last one: the
// last member known to hold every acknowledged record is never substituted
// out, so such a namespace waits for it (unavailable, not lost). The
// substitute joins out of sync; its primary repairs it and adds it.
func repairOne(ns model.Namespace, r *ring.Ring, room func(uint64, string) bool, replace NodeInfo, nowMs int64, epoch uint64) (model.Namespace, bool) {
	changed := false
	ns.InSync = ns.Synced()
	for i, id := range ns.Placement {
		reason := replace(id)
		if reason == "" {
			continue
		}
		inSync := slices.Contains(ns.InSync, id)
		if inSync && len(ns.InSync) == 1 {
			continue
		}
		wasInSync := inSync
		if inSync && reason == "dead" {
			ns.InSync = slices.DeleteFunc(ns.InSync, func(x uint64) bool { return x == id })
			inSync, changed = false, true
		}
		sub, ok := r.Substitute(ns.Name, ns.Placement, func(id uint64) bool { return room(id, ns.Name) })
		if !ok {
			continue
		}
		if inSync {
			ns.InSync = slices.DeleteFunc(ns.InSync, func(x uint64) bool { return x == id })
		}
		ns.Placement[i] = sub
		ns.Substitutions = append(ns.Substitutions, model.Substitution{
			Index: i, Replaced: id, Replacement: sub, Epoch: epoch, AtMs: nowMs, Reason: reason,
			WasInSync: wasInSync,
		})
		changed = true
	}
	if changed {
		ns.Epoch = epoch
	}
	return ns, changed
}
