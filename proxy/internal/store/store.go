// Package store reads and writes the cluster state in etcd under
// /rpmp/<cluster>/: nodes/<id>, namespaces/<name>, deletions/<name> (JSON)
// and epoch (decimal). Leader writes are fenced: a batch commits only while
// the writer's election key still exists with the revision it was elected
// with, so a deposed leader can never overwrite its successor's state.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"

	"rpmp.io/proxy/internal/model"
)

// ErrNotLeader is returned by Commit when the fence no longer holds.
var ErrNotLeader = errors.New("store: write fenced off, this proxy is no longer the leader")

// maxOpsPerTxn stays below etcd's default --max-txn-ops (128).
const maxOpsPerTxn = 100

// Store is the etcd-backed cluster state of one cluster name.
type Store struct {
	cli    *clientv3.Client
	prefix string
}

// New returns a store for cluster under /rpmp/<cluster>/.
func New(cli *clientv3.Client, cluster string) *Store {
	return &Store{cli: cli, prefix: "/rpmp/" + cluster + "/"}
}

// LeaderPrefix is the election prefix.
func (s *Store) LeaderPrefix() string { return s.prefix + "leader" }

func (s *Store) nodeKey(id uint64) string     { return s.prefix + "nodes/" + strconv.FormatUint(id, 10) }
func (s *Store) nsKey(name string) string     { return s.prefix + "namespaces/" + name }
func (s *Store) delKey(name string) string    { return s.prefix + "deletions/" + name }
func (s *Store) epochKey() string             { return s.prefix + "epoch" }
func (s *Store) dir(kind, rest string) string { return s.prefix + kind + "/" + rest }

// Fence identifies a leadership term: the election key and its create revision.
type Fence struct {
	Key string
	Rev int64
}

// Batch collects writes to commit atomically (per chunk of maxOpsPerTxn).
type Batch struct{ ops []clientv3.Op }

// Len is the number of queued writes.
func (b *Batch) Len() int { return len(b.ops) }

func (b *Batch) putJSON(key string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("store: marshal %T: %v", v, err)) // plain structs cannot fail
	}
	b.ops = append(b.ops, clientv3.OpPut(key, string(data)))
}

// PutNode queues a node record.
func (s *Store) PutNode(b *Batch, n model.Node) { b.putJSON(s.nodeKey(n.ID), n) }

// DeleteNode queues removal of a node record.
func (s *Store) DeleteNode(b *Batch, id uint64) {
	b.ops = append(b.ops, clientv3.OpDelete(s.nodeKey(id)))
}

// PutNamespace queues a namespace record.
func (s *Store) PutNamespace(b *Batch, ns model.Namespace) { b.putJSON(s.nsKey(ns.Name), ns) }

// DeleteNamespace queues removal of a namespace record.
func (s *Store) DeleteNamespace(b *Batch, name string) {
	b.ops = append(b.ops, clientv3.OpDelete(s.nsKey(name)))
}

// PutDeletion queues a deletion record, or its removal if nothing is pending.
func (s *Store) PutDeletion(b *Batch, d model.Deletion) {
	if len(d.Pending) == 0 {
		b.ops = append(b.ops, clientv3.OpDelete(s.delKey(d.Name)))
		return
	}
	b.putJSON(s.delKey(d.Name), d)
}

// PutEpoch queues the epoch.
func (s *Store) PutEpoch(b *Batch, epoch uint64) {
	b.ops = append(b.ops, clientv3.OpPut(s.epochKey(), strconv.FormatUint(epoch, 10)))
}

// Commit writes the batch under the fence. Chunks beyond maxOpsPerTxn are
// separate transactions (each fenced); callers keep batches small.
func (s *Store) Commit(ctx context.Context, f Fence, b *Batch) error {
	for start := 0; start < len(b.ops); start += maxOpsPerTxn {
		end := min(start+maxOpsPerTxn, len(b.ops))
		resp, err := s.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(f.Key), "=", f.Rev)).
			Then(b.ops[start:end]...).Commit()
		if err != nil {
			return fmt.Errorf("etcd txn: %w", err)
		}
		if !resp.Succeeded {
			return ErrNotLeader
		}
	}
	return nil
}
