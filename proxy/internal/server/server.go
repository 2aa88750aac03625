// server.go: the gRPC service. Writes and heartbeats go to the leader state
// when this proxy leads and are otherwise rejected with UNAVAILABLE naming
// the leader (message + "rpmp-leader" trailer); reads are served by every
// proxy, by followers straight from etcd.
package server

import (
	"context"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"rpmp.io/proxy/internal/auth"
	"rpmp.io/proxy/internal/election"
	"rpmp.io/proxy/internal/nsname"
	pb "rpmp.io/proxy/internal/rpmpv1"
	"rpmp.io/proxy/internal/store"
)

// LeaderMetadataKey is the trailer carrying the leader's address on redirects.
const LeaderMetadataKey = "rpmp-leader"

// Server implements pb.ProxyServer.
type Server struct {
	pb.UnimplementedProxyServer
	cfg Config
	st  *store.Store
	el  *election.Elector
	cur atomic.Pointer[Leader]
}

// New returns a Server; pass its Lead method to the elector's Run.
func New(cfg Config, st *store.Store, el *election.Elector) *Server {
	return &Server{cfg: cfg, st: st, el: el}
}

// Lead is the election.LeadFunc: load state, serve as leader until ctx ends.
func (s *Server) Lead(ctx context.Context, f store.Fence) {
	lctx, abdicate := context.WithCancel(ctx)
	defer abdicate()
	l, err := newLeader(lctx, s.cfg, s.st, f, abdicate)
	if err != nil {
		s.cfg.Logf("could not take over as leader: %v", err)
		select { // avoid a hot campaign/resign loop while etcd is sick
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
		return
	}
	s.cur.Store(l)
	defer s.cur.Store(nil)
	l.run(lctx)
}

// leader returns the leader state or the redirect error.
func (s *Server) leader(ctx context.Context) (*Leader, error) {
	if l := s.cur.Load(); l != nil {
		return l, nil
	}
	addr := s.el.Leader()
	_ = grpc.SetTrailer(ctx, metadata.Pairs(LeaderMetadataKey, addr))
	switch addr {
	case "":
		return nil, status.Error(codes.Unavailable, "not the leader, and no leader is known right now; retry shortly")
	case s.cfg.Advertise:
		return nil, status.Errorf(codes.Unavailable, "this proxy (%s) is taking over as leader; retry shortly", addr)
	}
	return nil, status.Errorf(codes.Unavailable, "not the leader; the leader is %s", addr)
}

// readCtx bounds a follower's etcd read.
func (s *Server) readCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.OpTimeout)
}

func etcdErr(err error) error {
	return status.Errorf(codes.Unavailable, "reading cluster state from etcd failed: %v", err)
}

// Heartbeat implements pb.ProxyServer.
func (s *Server) Heartbeat(ctx context.Context, req *pb.HeartbeatRequest) (*pb.HeartbeatReply, error) {
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	return l.Heartbeat(req, auth.Caller(ctx))
}

// GetNodeMap implements pb.ProxyServer.
func (s *Server) GetNodeMap(ctx context.Context, _ *pb.GetNodeMapRequest) (*pb.NodeMap, error) {
	if l := s.cur.Load(); l != nil {
		return l.NodeMap(), nil
	}
	rctx, cancel := s.readCtx(ctx)
	defer cancel()
	epoch, nodes, err := s.st.Nodes(rctx)
	if err != nil {
		return nil, etcdErr(err)
	}
	return nodeMapToPB(epoch, s.el.Leader(), nodes), nil
}

// CreateNamespace implements pb.ProxyServer.
func (s *Server) CreateNamespace(ctx context.Context, req *pb.CreateNamespaceRequest) (*pb.Namespace, error) {
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := s.tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	return l.CreateNamespace(req, auth.Caller(ctx), tok)
}

// GetPlacement implements pb.ProxyServer.
func (s *Server) GetPlacement(ctx context.Context, req *pb.GetPlacementRequest) (*pb.Namespace, error) {
	if l := s.cur.Load(); l != nil {
		return l.GetPlacement(req.Name)
	}
	if err := nsname.Validate(req.Name); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	rctx, cancel := s.readCtx(ctx)
	defer cancel()
	ns, ok, err := s.st.Namespace(rctx, req.Name)
	if err != nil {
		return nil, etcdErr(err)
	}
	if !ok {
		return nil, status.Errorf(codes.NotFound, "namespace %q not found", req.Name)
	}
	_, nodes, err := s.st.Nodes(rctx)
	if err != nil {
		return nil, etcdErr(err)
	}
	return nsToPB(ns, lookupIn(nodes)), nil
}

// ListNamespaces implements pb.ProxyServer.
func (s *Server) ListNamespaces(ctx context.Context, req *pb.ListNamespacesRequest) (*pb.ListNamespacesReply, error) {
	if l := s.cur.Load(); l != nil {
		return l.ListNamespaces(req.Prefix)
	}
	if err := nsname.ValidatePrefix(req.Prefix); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	rctx, cancel := s.readCtx(ctx)
	defer cancel()
	list, err := s.st.Namespaces(rctx, req.Prefix)
	if err != nil {
		return nil, etcdErr(err)
	}
	_, nodes, err := s.st.Nodes(rctx)
	if err != nil {
		return nil, etcdErr(err)
	}
	out := &pb.ListNamespacesReply{}
	for _, ns := range list {
		out.Namespaces = append(out.Namespaces, nsToPB(ns, lookupIn(nodes)))
	}
	return out, nil
}

// DeleteNamespace implements pb.ProxyServer.
func (s *Server) DeleteNamespace(ctx context.Context, req *pb.DeleteNamespaceRequest) (*pb.DeleteNamespaceReply, error) {
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := s.tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	return l.DeleteNamespace(req, auth.Caller(ctx), tok)
}

// TouchNamespace implements pb.ProxyServer.
func (s *Server) TouchNamespace(ctx context.Context, req *pb.TouchNamespaceRequest) (*pb.Namespace, error) {
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := s.tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	return l.TouchNamespace(req.Name, auth.Caller(ctx), tok)
}

// Drain implements pb.ProxyServer.
func (s *Server) Drain(ctx context.Context, req *pb.DrainRequest) (*pb.DrainReply, error) {
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	return l.Drain(req)
}

// SetInSync implements pb.ProxyServer.
func (s *Server) SetInSync(ctx context.Context, req *pb.SetInSyncRequest) (*pb.Namespace, error) {
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	return l.SetInSync(req, auth.Caller(ctx))
}

// RemoveNode implements pb.ProxyServer.
func (s *Server) RemoveNode(ctx context.Context, req *pb.RemoveNodeRequest) (*pb.RemoveNodeReply, error) {
	l, err := s.leader(ctx)
	if err != nil {
		return nil, err
	}
	return l.RemoveNode(req.NodeId)
}
