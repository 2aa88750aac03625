// repair.go: substitution of dead or draining nodes in namespace
// placements with the next usable node on the ring.
package catalog

import (
	"sort"

	"rpmp.io/proxy/internal/model"
	"rpmp.io/proxy/internal/ring"
)

// NodeInfo answers, for a node id, whether it must be replaced in
// placements and why ("dead" or "draining"); "" means keep it.
type NodeInfo func(id uint64) (reason string)

// PlanRepairs returns every namespace whose placement changes because a
// member must be replaced, with the substitutions recorded. usable are the
// LIVE non-draining node ids. A member with no available substitute stays
// (the namespace is degraded) and is retried on the next call.
func (c *Catalog) PlanRepairs(replace NodeInfo, usable []uint64, nowMs int64, epoch uint64) []model.Namespace {
	r := ring.New(usable, c.vnodes)
	var out []model.Namespace
	for _, ns := range c.namespaces {
		if next, changed := repairOne(ns.Clone(), r, replace, nowMs, epoch); changed {
			out = append(out, next)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// repairOne substitutes the members of one namespace that must go.
func repairOne(ns model.Namespace, r *ring.Ring, replace NodeInfo, nowMs int64, epoch uint64) (model.Namespace, bool) {
	changed := false
	for i, id := range ns.Placement {
		reason := replace(id)
		if reason == "" {
			continue
		}
		sub, ok := r.Substitute(ns.Name, ns.Placement)
		if !ok {
			continue
		}
		ns.Placement[i] = sub
		ns.Substitutions = append(ns.Substitutions, model.Substitution{
			Index: i, Replaced: id, Replacement: sub, Epoch: epoch, AtMs: nowMs, Reason: reason,
		})
		changed = true
	}
	if changed {
		ns.Epoch = epoch
	}
	return ns, changed
}
