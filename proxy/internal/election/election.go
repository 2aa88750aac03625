// Package election runs the proxy's leader campaign with the official etcd
// concurrency package (Session + Election): campaign, lead until the session
// is lost or the context ends, resign, and campaign again. It also observes
// who the leader is so followers can redirect clients.
package election

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"rpmp.io/proxy/internal/store"
)

// LeadFunc is called while this proxy is leader. It must return soon after
// ctx is done; returning early (e.g. after a fenced write failed) gives up
// leadership.
type LeadFunc func(ctx context.Context, f store.Fence)

// Config configures an Elector.
type Config struct {
	Client     *clientv3.Client
	Prefix     string // election key prefix, e.g. /rpmp/<cluster>/leader
	Value      string // advertised address of this proxy
	SessionTTL int    // seconds
	Logf       func(format string, args ...any)
}

// Elector campaigns and tracks the current leader.
type Elector struct {
	cfg    Config
	mu     sync.Mutex
	leader string
}

// New returns an Elector; call Run to start it.
func New(cfg Config) *Elector { return &Elector{cfg: cfg} }

// Leader returns the last observed leader address ("" if unknown).
func (e *Elector) Leader() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leader
}

func (e *Elector) setLeader(addr string) {
	e.mu.Lock()
	old := e.leader
	e.leader = addr
	e.mu.Unlock()
	if old != addr {
		e.cfg.Logf("leader is now %q (was %q)", addr, old)
	}
}

// Run campaigns until ctx is done, calling lead each time it is elected.
func (e *Elector) Run(ctx context.Context, lead LeadFunc) {
	backoff := 200 * time.Millisecond
	for ctx.Err() == nil {
		if err := e.term(ctx, lead); err != nil && ctx.Err() == nil {
			e.cfg.Logf("election: %v; retrying in %v", err, backoff)
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 200 * time.Millisecond
	}
}

// term runs one session: campaign, lead, step down.
func (e *Elector) term(ctx context.Context, lead LeadFunc) error {
	sess, err := concurrency.NewSession(e.cfg.Client, concurrency.WithTTL(e.cfg.SessionTTL), concurrency.WithContext(ctx))
	if err != nil {
		return err
	}
	defer e.closeSession(sess)
	el := concurrency.NewElection(sess, e.cfg.Prefix)
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the term ends when the session's lease is lost
		select {
		case <-sess.Done():
			cancel()
		case <-tctx.Done():
		}
	}()
	go e.observe(tctx, el)
	if err := el.Campaign(tctx, e.cfg.Value); err != nil {
		return err
	}
	e.cfg.Logf("elected leader as %q (key %s rev %d)", e.cfg.Value, el.Key(), el.Rev())
	e.setLeader(e.cfg.Value)
	lead(tctx, store.Fence{Key: el.Key(), Rev: el.Rev()})
	e.cfg.Logf("stepping down as leader")
	e.setLeader("")
	e.resign(el)
	return nil
}

// observe follows the election key and records the leader's address.
func (e *Elector) observe(ctx context.Context, el *concurrency.Election) {
	for ctx.Err() == nil {
		for resp := range el.Observe(ctx) {
			if len(resp.Kvs) > 0 {
				e.setLeader(string(resp.Kvs[0].Value))
			}
		}
		select { // Observe ends on errors: retry after a pause
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// resign deletes our election key so a standby takes over at once.
func (e *Elector) resign(el *concurrency.Election) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := el.Resign(ctx); err != nil {
		e.cfg.Logf("resign: %v (the lease will expire instead)", err)
	}
}

// closeSession revokes the lease even if the run context is cancelled.
func (e *Elector) closeSession(sess *concurrency.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	sess.Orphan()
	if _, err := e.cfg.Client.Revoke(ctx, sess.Lease()); err != nil {
		e.cfg.Logf("revoke lease: %v", err)
	}
}
