// server_quota.go: the quota RPCs of pb.ProxyServer. All three are leader-only
// (the use is summed in the leader's memory); followers redirect as for writes.
package server

import (
	"context"

	"rpmp.io/proxy/internal/auth"
	pb "rpmp.io/proxy/internal/rpmpv1"
)

// SetQuota implements pb.ProxyServer.
func (s *Server) SetQuota(ctx context.Context, req *pb.SetQuotaRequest) (*pb.Quota, error) {
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	return l.SetQuota(req, auth.Caller(ctx))
}

// ClearQuota implements pb.ProxyServer.
func (s *Server) ClearQuota(ctx context.Context, req *pb.ClearQuotaRequest) (*pb.ClearQuotaReply, error) {
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	return l.ClearQuota(req, auth.Caller(ctx))
}

// ListQuotas implements pb.ProxyServer.
func (s *Server) ListQuotas(ctx context.Context, _ *pb.ListQuotasRequest) (*pb.ListQuotasReply, error) {
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	return l.ListQuotas(), nil
}
