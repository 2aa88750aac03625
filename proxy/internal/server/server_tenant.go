// server_tenant.go: the credential RPCs of pb.ProxyServer (leader_tenant.go).
// Both are leader-only (claims are serialized there); a proxy started without
// --token-secret-file answers FAILED_PRECONDITION before any redirect.
package server

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/auth"
	pb "rpmp.io/proxy/internal/rpmpv1"
)

// NoIssuance is the message of a proxy that issues no credentials.
const NoIssuance = "this proxy issues no credentials: start it with --token-secret-file"

// IssueCredential implements pb.ProxyServer.
func (s *Server) IssueCredential(ctx context.Context, req *pb.IssueCredentialRequest) (*pb.Credential, error) {
	if s.cfg.TokenKey == nil {
		return nil, status.Error(codes.FailedPrecondition, NoIssuance)
	}
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	return l.IssueCredential(req, auth.Caller(ctx))
}

// RenewCredential implements pb.ProxyServer.
func (s *Server) RenewCredential(ctx context.Context, req *pb.RenewCredentialRequest) (*pb.Credential, error) {
	if s.cfg.TokenKey == nil {
		return nil, status.Error(codes.FailedPrecondition, NoIssuance)
	}
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	return l.RenewCredential(req)
}
