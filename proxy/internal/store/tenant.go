// tenant.go: prefix claims of per-application credentials in etcd, under
// /rpmp/<cluster>/tenants/<prefix> (JSON tenant.Claim). Written by the leader
// (fenced, as every leader write), loaded by a new leader with the rest (Load).
package store

import (
	clientv3 "go.etcd.io/etcd/client/v3"

	"rpmp.io/proxy/internal/tenant"
)

func (s *Store) claimKey(prefix string) string { return s.prefix + "tenants/" + prefix }

// PutClaim queues a claim record.
func (s *Store) PutClaim(b *Batch, c tenant.Claim) { b.putJSON(s.claimKey(c.Prefix), c) }

// DeleteClaim queues removal of a claim record.
func (s *Store) DeleteClaim(b *Batch, prefix string) {
	b.ops = append(b.ops, clientv3.OpDelete(s.claimKey(prefix)))
}
