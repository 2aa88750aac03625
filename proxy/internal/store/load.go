// load.go: reads of the cluster state, used by a newly elected leader
// (Load) and by followers answering read RPCs.
package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"

	"rpmp.io/proxy/internal/model"
	"rpmp.io/proxy/internal/quota"
	"rpmp.io/proxy/internal/tenant"
)

// State is everything a leader needs to take over.
type State struct {
	Epoch      uint64
	Nodes      []model.Node
	Namespaces []model.Namespace
	Deletions  []model.Deletion
	Quotas     []quota.Limit
	Claims     []tenant.Claim
}

// Load reads the full state at one etcd revision.
func (s *Store) Load(ctx context.Context) (State, error) {
	var st State
	resp, err := s.cli.Get(ctx, s.prefix, clientv3.WithPrefix())
	if err != nil {
		return st, fmt.Errorf("etcd get %s: %w", s.prefix, err)
	}
	for _, kv := range resp.Kvs {
		if err := st.add(s, string(kv.Key), kv.Value); err != nil {
			return st, err
		}
	}
	return st, nil
}

// add decodes one key of the cluster prefix into the state.
func (st *State) add(s *Store, key string, val []byte) error {
	var err error
	switch rest := key[len(s.prefix):]; {
	case rest == "epoch":
		st.Epoch, err = strconv.ParseUint(string(val), 10, 64)
	case hasPrefix(rest, "nodes/"):
		var n model.Node
		if err = json.Unmarshal(val, &n); err == nil {
			st.Nodes = append(st.Nodes, n)
		}
	case hasPrefix(rest, "namespaces/"):
		var ns model.Namespace
		if err = json.Unmarshal(val, &ns); err == nil {
			st.Namespaces = append(st.Namespaces, ns)
		}
	case hasPrefix(rest, "quotas/"):
		var q quota.Limit
		if err = json.Unmarshal(val, &q); err == nil {
			st.Quotas = append(st.Quotas, q)
		}
	case hasPrefix(rest, "tenants/"):
		var c tenant.Claim
		if err = json.Unmarshal(val, &c); err == nil {
			st.Claims = append(st.Claims, c)
		}
	case hasPrefix(rest, "deletions/"):
		var d model.Deletion
		if err = json.Unmarshal(val, &d); err == nil {
			st.Deletions = append(st.Deletions, d)
		}
	}
	if err != nil {
		return fmt.Errorf("decode %s: %w", key, err)
	}
	return nil
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// Nodes reads the epoch and all nodes, ordered by id, at one revision.
func (s *Store) Nodes(ctx context.Context) (uint64, []model.Node, error) {
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.epochKey()),
		clientv3.OpGet(s.dir("nodes", ""), clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return 0, nil, fmt.Errorf("etcd read nodes: %w", err)
	}
	var st State
	for _, r := range resp.Responses {
		for _, kv := range r.GetResponseRange().Kvs {
			if err := st.add(s, string(kv.Key), kv.Value); err != nil {
				return 0, nil, err
			}
		}
	}
	sort.Slice(st.Nodes, func(i, j int) bool { return st.Nodes[i].ID < st.Nodes[j].ID })
	return st.Epoch, st.Nodes, nil
}

// Namespaces reads the namespaces whose name starts with prefix, by name.
func (s *Store) Namespaces(ctx context.Context, prefix string) ([]model.Namespace, error) {
	resp, err := s.cli.Get(ctx, s.dir("namespaces", prefix), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("etcd read namespaces: %w", err)
	}
	var st State
	for _, kv := range resp.Kvs {
		if err := st.add(s, string(kv.Key), kv.Value); err != nil {
			return nil, err
		}
	}
	return st.Namespaces, nil // etcd returns keys sorted
}

// Namespace reads one namespace; ok is false if it does not exist.
func (s *Store) Namespace(ctx context.Context, name string) (ns model.Namespace, ok bool, err error) {
	resp, err := s.cli.Get(ctx, s.nsKey(name))
	if err != nil {
		return ns, false, fmt.Errorf("etcd read namespace: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return ns, false, nil
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &ns); err != nil {
		return ns, false, fmt.Errorf("decode namespace %q: %w", name, err)
	}
	return ns, true, nil
}
