// quota.go: the quotas in etcd, under /rpmp/<cluster>/quotas/<prefix> (JSON
// quota.Limit). Written by the leader (fenced, as every leader write), loaded by
// a new leader with the rest of the state (Load).
package store

import (
	clientv3 "go.etcd.io/etcd/client/v3"

	"rpmp.io/proxy/internal/quota"
)

func (s *Store) quotaKey(prefix string) string { return s.prefix + "quotas/" + prefix }

// PutQuota queues a quota record.
func (s *Store) PutQuota(b *Batch, l quota.Limit) { b.putJSON(s.quotaKey(l.Prefix), l) }

// DeleteQuota queues removal of a quota record.
func (s *Store) DeleteQuota(b *Batch, prefix string) {
	b.ops = append(b.ops, clientv3.OpDelete(s.quotaKey(prefix)))
}
