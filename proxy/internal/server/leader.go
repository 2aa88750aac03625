// leader.go: the leader's in-memory state and its life cycle (load from
// etcd, periodic liveness and TTL checks). Every change is first committed
// to etcd under the election fence and only then applied in memory.
package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/catalog"
	"rpmp.io/proxy/internal/nodemap"
	"rpmp.io/proxy/internal/quota"
	"rpmp.io/proxy/internal/store"
	"rpmp.io/proxy/internal/tenant"
)

// Leader is the state of a proxy while it leads.
type Leader struct {
	cfg      Config
	st       *store.Store
	fence    store.Fence
	abdicate context.CancelFunc
	now      func() time.Time

	// wmu serializes writers (plan, commit, apply) and is held across the
	// etcd round trip; mu guards memory and is released during that round
	// trip (see commitWithin) so heartbeats and reads never wait for etcd.
	// Lock order: wmu, then mu.
	wmu        sync.Mutex
	mu         sync.Mutex
	epoch      uint64
	nodes      *nodemap.Map
	cat        *catalog.Catalog
	statsSaved map[uint64]time.Time // last time a node's record was written
	quotas     *quota.Table         // leader_quota.go
	claims     *tenant.Claims       // leader_tenant.go
	// bestEffortPause: no best-effort writes before this time.
	bestEffortPause time.Time
}

// newLeader loads the cluster state and claims a new epoch.
func newLeader(ctx context.Context, cfg Config, st *store.Store, f store.Fence, abdicate context.CancelFunc) (*Leader, error) {
	lctx, cancel := context.WithTimeout(ctx, cfg.OpTimeout)
	defer cancel()
	state, err := st.Load(lctx)
	if err != nil {
		return nil, err
	}
	l := &Leader{cfg: cfg, st: st, fence: f, abdicate: abdicate, now: time.Now,
		nodes: nodemap.New(cfg.SuspectAfter, cfg.DeadAfter), cat: catalog.New(cfg.VNodes),
		statsSaved: map[uint64]time.Time{}, quotas: quota.New(),
		claims: tenant.NewClaims(cfg.ClaimGrace)}
	now := l.now()
	l.nodes.Restore(state.Nodes, now)
	for _, ns := range state.Namespaces {
		l.cat.PutNamespace(ns)
	}
	for _, d := range state.Deletions {
		l.cat.PutDeletion(d)
	}
	for _, q := range state.Quotas {
		l.quotas.Set(q)
	}
	for _, c := range state.Claims {
		l.claims.Put(c)
	}
	var b store.Batch
	st.PutEpoch(&b, state.Epoch+1)
	for _, n := range l.nodes.All() { // restored nodes are SUSPECT now
		st.PutNode(&b, n)
	}
	if err := st.Commit(lctx, f, &b); err != nil {
		return nil, err
	}
	l.epoch = state.Epoch + 1
	cfg.Logf("leader state loaded: epoch %d, %d nodes, %d namespaces, %d pending deletions",
		l.epoch, len(state.Nodes), len(state.Namespaces), len(state.Deletions))
	return l, nil
}

// run performs the periodic checks until ctx is done.
func (l *Leader) run(ctx context.Context) {
	live := time.NewTicker(l.cfg.livenessTick())
	defer live.Stop()
	ttl := time.NewTicker(l.cfg.TTLCheck)
	defer ttl.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-live.C:
			l.checkLiveness()
		case <-ttl.C:
			l.expireTTL()
			l.expireClaims()
		}
	}
}

// commit writes a batch under the fence; losing the fence ends leadership.
func (l *Leader) commit(b *store.Batch) error {
	return l.commitWithin(b, l.cfg.OpTimeout)
}

// commitBestEffort is commit with a short timeout, for writes that may be
// retried later (statistics, deletion progress); it is skipped for a while
// after a failure so an etcd outage does not stall heartbeats.
func (l *Leader) commitBestEffort(b *store.Batch) error {
	if now := l.now(); now.Before(l.bestEffortPause) {
		return errors.New("skipped: etcd failed recently")
	}
	err := l.commitWithin(b, l.cfg.OpTimeout/4)
	if err != nil {
		l.bestEffortPause = l.now().Add(2 * time.Second)
	}
	return err
}

// commitWithin commits with the given timeout. The caller holds wmu and mu;
// mu is released during the etcd call.
func (l *Leader) commitWithin(b *store.Batch, timeout time.Duration) error {
	if b.Len() == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	l.mu.Unlock()
	err := l.st.Commit(ctx, l.fence, b)
	l.mu.Lock()
	if errors.Is(err, store.ErrNotLeader) {
		l.cfg.Logf("fenced write refused: giving up leadership")
		l.abdicate()
	}
	if err != nil {
		return status.Errorf(codes.Unavailable, "could not persist to etcd: %v", err)
	}
	return nil
}
