// leader_tick.go: the leader's periodic work: node liveness transitions,
// substitution of dead/draining nodes in placements, TTL expiry.
package server

import (
	"slices"
	"time"

	"rpmp.io/proxy/internal/model"
	"rpmp.io/proxy/internal/store"
)

// checkLiveness applies LIVE->SUSPECT->DEAD transitions, then repairs.
func (l *Leader) checkLiveness() {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if changes := l.nodes.Expire(now); len(changes) > 0 {
		var b store.Batch
		epoch := l.epoch + 1
		for _, n := range changes {
			l.st.PutNode(&b, n)
		}
		l.st.PutEpoch(&b, epoch)
		if err := l.commit(&b); err != nil {
			l.cfg.Logf("liveness update not persisted: %v", err)
			return
		}
		l.epoch = epoch
		for _, n := range changes {
			l.nodes.Put(n, time.Time{})
			l.cfg.Logf("node %016x (%s) is now %s (epoch %d)", n.ID, n.Endpoint, n.Liveness, epoch)
		}
	}
	l.repairLocked(now)
	l.flushStatsLocked(now)
}

// flushStatsLocked writes the statistics of heartbeating nodes to etcd
// every statsEvery so that followers' node maps stay roughly current.
func (l *Leader) flushStatsLocked(now time.Time) {
	var b store.Batch
	var ids []uint64
	for _, n := range l.nodes.All() {
		if n.Liveness == model.Live && now.Sub(l.statsSaved[n.ID]) >= l.cfg.statsEvery() {
			l.st.PutNode(&b, n)
			ids = append(ids, n.ID)
		}
	}
	if err := l.commitBestEffort(&b); err != nil {
		return
	}
	for _, id := range ids {
		l.statsSaved[id] = now
	}
}

// replaceReason says whether a placement member must be substituted.
func (l *Leader) replaceReason(id uint64) string {
	n, ok := l.nodes.Get(id)
	switch {
	case !ok:
		return ""
	case n.Liveness == model.Dead:
		return "dead"
	case n.Draining:
		return "draining"
	}
	return ""
}

// repairLocked substitutes dead/draining members of every placement.
func (l *Leader) repairLocked(now time.Time) {
	epoch := l.epoch + 1
	plans := l.cat.PlanRepairs(l.replaceReason, l.nodes.UsableIDs(), l.nodes.HasRoomFor, now.UnixMilli(), epoch)
	if len(plans) == 0 {
		return
	}
	var b store.Batch
	for _, ns := range plans {
		l.st.PutNamespace(&b, ns)
	}
	l.st.PutEpoch(&b, epoch)
	if err := l.commit(&b); err != nil {
		l.cfg.Logf("placement repair not persisted: %v", err)
		return
	}
	l.epoch = epoch
	for _, ns := range plans {
		l.cat.PutNamespace(ns)
		if k := len(ns.Substitutions); k > 0 && ns.Substitutions[k-1].Epoch == epoch {
			s := ns.Substitutions[k-1]
			l.cfg.Logf("namespace %q: node %016x replaced by %016x (%s), placement %s, in sync %s, epoch %d",
				ns.Name, s.Replaced, s.Replacement, s.Reason, model.HexIDs(ns.Placement), model.HexIDs(ns.InSync), epoch)
		} else {
			l.cfg.Logf("namespace %q: in sync %s (placement %s), epoch %d", ns.Name, model.HexIDs(ns.InSync),
				model.HexIDs(ns.Placement), epoch)
		}
	}
}

// expireTTL deletes namespaces whose TTL ran out.
func (l *Leader) expireTTL() {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	names := l.cat.Expired(l.now().UnixMilli())
	if len(names) == 0 {
		return
	}
	if err := l.deleteLocked(names); err != nil {
		l.cfg.Logf("TTL expiry of %v not persisted: %v", names, err)
		return
	}
	l.cfg.Logf("TTL expired, deleted namespaces %v", names)
}

// deleteLocked removes namespaces and records their pending deletions.
func (l *Leader) deleteLocked(names []string) error {
	nowMs := l.now().UnixMilli()
	var b store.Batch
	dels := make([]model.Deletion, 0, len(names))
	for _, name := range names {
		d := l.cat.PlanDeletion(name, nowMs)
		d.Pending = slices.DeleteFunc(d.Pending, func(id uint64) bool { // removed nodes never acknowledge
			_, known := l.nodes.Get(id)
			return !known
		})
		dels = append(dels, d)
		l.st.DeleteNamespace(&b, name)
		l.st.PutDeletion(&b, d)
	}
	if err := l.commit(&b); err != nil {
		return err
	}
	for _, d := range dels {
		l.cat.RemoveNamespace(d.Name)
		l.cat.PutDeletion(d)
	}
	return nil
}
