// Package server implements the rpmp.v1.Proxy gRPC service. A Server is
// always a follower (reads from etcd, writes redirected) and becomes the
// leader (state in memory, persisted to etcd before it changes) while the
// election package says so.
package server

import (
	"time"

	"rpmp.io/proxy/internal/tenant"
)

// Config holds the tunables of a proxy.
type Config struct {
	Advertise         string        // address clients should use for this proxy
	SuspectAfter      time.Duration // LIVE -> SUSPECT after this long without a heartbeat
	DeadAfter         time.Duration // -> DEAD after this long (--heartbeat-timeout)
	HeartbeatInterval time.Duration // told to storage servers
	TTLCheck          time.Duration // namespace TTL scan period
	VNodes            int           // virtual nodes per storage node on the ring
	OpTimeout         time.Duration // per etcd operation
	Logf              func(format string, args ...any)
	// TokenKey signs per-application credentials (--token-secret-file); nil: none issued.
	TokenKey tenant.Key
	// ClaimGrace: a prefix claim outlives its credential's expiry this long.
	ClaimGrace time.Duration
}

// statsEvery is how often unchanged node statistics are written to etcd.
func (c Config) statsEvery() time.Duration { return 4 * c.HeartbeatInterval }

// livenessTick is how often the leader looks for silent nodes.
func (c Config) livenessTick() time.Duration { return min(c.SuspectAfter/4, 250*time.Millisecond) }

// lease is how long a storage server may act as a primary after it sent a
// heartbeat the leader answered: shorter than SuspectAfter, which is itself
// shorter than DeadAfter, after which another member may become primary.
func (c Config) lease() time.Duration { return c.SuspectAfter * 9 / 10 }
