// Package catalog is the leader's in-memory set of namespaces and pending
// deletions, with the placement rules: creation over the usable nodes of a
// consistent-hash ring, repair by substitution, TTL expiry. Like nodemap it
// only plans changes; the caller persists them and then commits (Put*).
// Errors are gRPC status errors so handlers can return them unchanged.
package catalog

import (
	"slices"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/model"
	"rpmp.io/proxy/internal/nsname"
	"rpmp.io/proxy/internal/ring"
)

// Options are the user-chosen namespace options.
type Options struct {
	Replicas, MinReplicas uint32
	TTLSeconds            uint64
}

// Catalog holds namespaces and deletions. Not safe for concurrent use.
type Catalog struct {
	vnodes     int
	namespaces map[string]model.Namespace
	deletions  map[string]model.Deletion
}

// New returns an empty catalog using rings with vnodes points per node.
func New(vnodes int) *Catalog {
	return &Catalog{vnodes: vnodes, namespaces: map[string]model.Namespace{}, deletions: map[string]model.Deletion{}}
}

// CheckOptions validates options and fills MinReplicas = Replicas when 0.
func CheckOptions(o Options) (Options, error) {
	if o.Replicas < 1 {
		return o, status.Errorf(codes.InvalidArgument, "replicas must be >= 1, got %d", o.Replicas)
	}
	if o.MinReplicas == 0 {
		o.MinReplicas = o.Replicas
	}
	if o.MinReplicas > o.Replicas {
		return o, status.Errorf(codes.InvalidArgument, "min_replicas (%d) must not exceed replicas (%d)", o.MinReplicas, o.Replicas)
	}
	return o, nil
}

// PlanCreate returns the namespace to create, or (existing, false, nil) for
// an idempotent repeat with equal options. usable are the LIVE,
// non-draining node ids; dead reports nodes that are DEAD.
func (c *Catalog) PlanCreate(name string, o Options, usable []uint64, dead func(uint64) bool, nowMs int64, epoch uint64) (ns model.Namespace, isNew bool, err error) {
	if err := nsname.Validate(name); err != nil {
		return ns, false, status.Error(codes.InvalidArgument, err.Error())
	}
	if o, err = CheckOptions(o); err != nil {
		return ns, false, err
	}
	if old, ok := c.namespaces[name]; ok {
		if old.Replicas == o.Replicas && old.MinReplicas == o.MinReplicas && old.TTLSeconds == o.TTLSeconds {
			return old, false, nil
		}
		return ns, false, status.Errorf(codes.AlreadyExists,
			"namespace %q already exists with replicas=%d min_replicas=%d ttl_seconds=%d",
			name, old.Replicas, old.MinReplicas, old.TTLSeconds)
	}
	if err := c.checkNoPendingDeletion(name, dead); err != nil {
		return ns, false, err
	}
	if int(o.Replicas) > len(usable) {
		return ns, false, status.Errorf(codes.FailedPrecondition,
			"replicas=%d but only %d storage nodes are LIVE", o.Replicas, len(usable))
	}
	ns = model.Namespace{
		Name: name, Replicas: o.Replicas, MinReplicas: o.MinReplicas, TTLSeconds: o.TTLSeconds,
		Placement: placeNew(ring.New(usable, c.vnodes), name, int(o.Replicas)),
		CreatedMs: nowMs, TouchedMs: nowMs, Epoch: epoch,
	}
	ns.InSync = slices.Clone(ns.Placement) // all empty: trivially in sync
	return ns, true, nil
}

// placeNew chooses a new namespace's members. A placement group <parent>/g<i>
// takes its parent's ring order rotated by i, so the groups of one parent stripe
// over every node (group i's primary is the i-th node of that order); any other
// name walks the ring from its own hash.
func placeNew(r *ring.Ring, name string, n int) []uint64 {
	parent, index, ok := nsname.Group(name)
	if !ok {
		return r.Place(name, n)
	}
	order := r.Place(parent, r.Len())
	out := make([]uint64, 0, n)
	for k := 0; k < n && k < len(order); k++ {
		out = append(out, order[(index+k)%len(order)])
	}
	return out
}

// checkNoPendingDeletion refuses to recreate a name while a node that is
// not DEAD still has to be told to delete its previous incarnation.
func (c *Catalog) checkNoPendingDeletion(name string, dead func(uint64) bool) error {
	d, ok := c.deletions[name]
	if !ok {
		return nil
	}
	var waiting []uint64
	for _, id := range d.Pending {
		if !dead(id) {
			waiting = append(waiting, id)
		}
	}
	if len(waiting) > 0 {
		return status.Errorf(codes.FailedPrecondition,
			"namespace %q was deleted and nodes %s have not acknowledged it yet; retry after their next heartbeat", name, model.HexIDs(waiting))
	}
	return nil
}

// Get returns a namespace.
func (c *Catalog) Get(name string) (model.Namespace, bool) {
	ns, ok := c.namespaces[name]
	return ns.Clone(), ok
}

// List returns namespaces whose name starts with prefix, sorted by name.
func (c *Catalog) List(prefix string) []model.Namespace {
	var out []model.Namespace
	for name, ns := range c.namespaces {
		if strings.HasPrefix(name, prefix) {
			out = append(out, ns.Clone())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PutNamespace commits a created or changed namespace.
func (c *Catalog) PutNamespace(ns model.Namespace) { c.namespaces[ns.Name] = ns.Clone() }

// RemoveNamespace commits a deletion from the namespace set.
func (c *Catalog) RemoveNamespace(name string) { delete(c.namespaces, name) }

// Matching returns the names deleted by DeleteNamespace(name, recursive).
func (c *Catalog) Matching(name string, recursive bool) []string {
	var out []string
	if _, ok := c.namespaces[name]; ok {
		out = append(out, name)
	}
	if recursive {
		for _, ns := range c.List(name + "/") {
			out = append(out, ns.Name)
		}
	}
	return out
}

// PlacedOn returns the namespaces whose placement includes node, sorted by name.
func (c *Catalog) PlacedOn(node uint64) []model.Namespace {
	var out []model.Namespace
	for _, ns := range c.namespaces {
		if slices.Contains(ns.Placement, node) {
			out = append(out, ns.Clone())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Expired returns the names of namespaces whose TTL has run out at nowMs.
func (c *Catalog) Expired(nowMs int64) []string {
	var out []string
	for name, ns := range c.namespaces {
		if ns.Expired(nowMs) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// PlanDeletion returns the deletion record for a namespace being deleted.
// A deletion still pending for an older incarnation is merged in.
func (c *Catalog) PlanDeletion(name string, nowMs int64) model.Deletion {
	d := model.Deletion{Name: name, DeletedMs: nowMs}
	if ns, ok := c.namespaces[name]; ok {
		d.Pending = ns.Holders()
	}
	for _, id := range c.deletions[name].Pending {
		if !slices.Contains(d.Pending, id) {
			d.Pending = append(d.Pending, id)
		}
	}
	return d
}

// PutDeletion commits a deletion record (removing it when nothing is pending).
func (c *Catalog) PutDeletion(d model.Deletion) {
	if len(d.Pending) == 0 {
		delete(c.deletions, d.Name)
		return
	}
	d.Pending = slices.Clone(d.Pending)
	c.deletions[d.Name] = d
}

// DeletionsFor returns the deletions the node still has to be told about,
// each already updated as if this node had been told (node removed).
func (c *Catalog) DeletionsFor(node uint64) []model.Deletion {
	var out []model.Deletion
	for _, d := range c.deletions {
		i := slices.Index(d.Pending, node)
		if i < 0 {
			continue
		}
		d.Pending = slices.Delete(slices.Clone(d.Pending), i, i+1)
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Deletions returns all pending deletions (for inspection and tests).
func (c *Catalog) Deletions() []model.Deletion {
	var out []model.Deletion
	for _, d := range c.deletions {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
