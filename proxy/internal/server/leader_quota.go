// leader_quota.go: quotas per namespace prefix on the leader (docs/cluster.md
// "Quotas"): the admin RPCs that set, clear and list them, the namespace-creation
// check, and the heartbeat exchange (nodes report bytes under quota prefixes; the
// reply gives every byte quota with its use, from which the primaries refuse writes
// that would pass it). The logic is internal/quota's; this file wires it to etcd and RPCs.
package server

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/auth"
	"rpmp.io/proxy/internal/nsname"
	"rpmp.io/proxy/internal/quota"
	pb "rpmp.io/proxy/internal/rpmpv1"
	"rpmp.io/proxy/internal/store"
)

func quotaToPB(u quota.Usage) *pb.Quota {
	return &pb.Quota{Prefix: u.Prefix, MaxBytes: u.Bytes, MaxNamespaces: u.Namespaces, UsedBytes: u.UsedBytes,
		Namespaces: u.UsedNamespaces, SetBy: u.SetBy, SetUnixMs: u.SetMs, MaxSessions: u.Sessions}
}

// SetQuota sets (replaces) a prefix's quota. Admin only (auth.Interceptor).
func (l *Leader) SetQuota(req *pb.SetQuotaRequest, caller auth.Identity) (*pb.Quota, error) {
	if err := quota.ValidatePrefix(req.Prefix); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if req.MaxBytes == 0 && req.MaxNamespaces == 0 && req.MaxSessions == 0 {
		return nil, status.Error(codes.InvalidArgument,
			"a quota needs max_bytes, max_namespaces or max_sessions (ClearQuota removes one)")
	}
	lim := quota.Limit{Prefix: req.Prefix, Bytes: req.MaxBytes, Namespaces: req.MaxNamespaces,
		Sessions: req.MaxSessions, SetBy: caller.Name, SetMs: l.now().UnixMilli()}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	var b store.Batch
	l.st.PutQuota(&b, lim)
	if err := l.commit(&b); err != nil {
		return nil, err
	}
	l.quotas.Set(lim)
	l.cfg.Logf("quota of %q set by %q: bytes=%d namespaces=%d sessions=%d", lim.Prefix, caller.Name, lim.Bytes,
		lim.Namespaces, lim.Sessions)
	return l.quotaReply(lim.Prefix), nil
}

// ClearQuota removes a prefix's quota. Admin only.
func (l *Leader) ClearQuota(req *pb.ClearQuotaRequest, caller auth.Identity) (*pb.ClearQuotaReply, error) {
	if err := quota.ValidatePrefix(req.Prefix); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.quotas.Get(req.Prefix); !ok {
		return nil, status.Errorf(codes.NotFound, "prefix %q has no quota", req.Prefix)
	}
	reply := &pb.ClearQuotaReply{Quota: l.quotaReply(req.Prefix)}
	var b store.Batch
	l.st.DeleteQuota(&b, req.Prefix)
	if err := l.commit(&b); err != nil {
		return nil, err
	}
	l.quotas.Remove(req.Prefix)
	l.cfg.Logf("quota of %q cleared by %q", req.Prefix, caller.Name)
	return reply, nil
}

// ListQuotas returns every quota with its use.
func (l *Leader) ListQuotas() *pb.ListQuotasReply {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := &pb.ListQuotasReply{}
	for _, u := range l.quotas.All(l.cat.Names) {
		out.Quotas = append(out.Quotas, quotaToPB(u))
	}
	return out
}

// quotaReply is prefix's quota with its use. Caller holds l.mu; the quota exists.
func (l *Leader) quotaReply(prefix string) *pb.Quota {
	for _, u := range l.quotas.All(l.cat.Names) {
		if u.Prefix == prefix {
			return quotaToPB(u)
		}
	}
	return &pb.Quota{Prefix: prefix}
}

// checkCreateQuota refuses (RESOURCE_EXHAUSTED) a new namespace that a covering
// quota does not allow, before it is placed; an existing or malformed name passes
// (creation is idempotent; PlanCreate reports bad names). Caller holds l.mu (and
// wmu, so the count is exact).
func (l *Leader) checkCreateQuota(name string) error {
	if _, exists := l.cat.Get(name); exists || nsname.Validate(name) != nil {
		return nil
	}
	err := l.quotas.CheckCreate(name, l.cat.Names)
	var ex *quota.Exceeded
	if errors.As(err, &ex) {
		l.cfg.Logf("refused namespace %q: %v", name, err)
		return status.Error(codes.ResourceExhausted, err.Error())
	}
	return err
}

// quotaHeartbeat records a node's byte report and fills the reply's quota fields.
// Caller holds l.mu.
func (l *Leader) quotaHeartbeat(req *pb.HeartbeatRequest, reply *pb.HeartbeatReply) {
	if l.quotas.Len() == 0 && len(req.NamespaceBytes) == 0 {
		return
	}
	bytes := make(map[string]uint64, len(req.NamespaceBytes))
	for _, nb := range req.NamespaceBytes {
		bytes[nb.Name] = nb.Bytes
	}
	l.quotas.Report(req.NodeId, bytes)
	for _, u := range l.quotas.All(l.cat.Names) {
		if u.Bytes > 0 {
			reply.ByteQuotas = append(reply.ByteQuotas, &pb.ByteQuota{Prefix: u.Prefix, MaxBytes: u.Bytes, UsedBytes: u.UsedBytes})
		}
		if u.Sessions > 0 {
			reply.SessionQuotas = append(reply.SessionQuotas, &pb.SessionQuota{Prefix: u.Prefix, MaxSessions: u.Sessions})
		}
	}
}
