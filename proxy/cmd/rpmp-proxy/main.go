// Command rpmp-proxy is the RPMP control-plane proxy: it elects a leader
// among its peers through etcd, tracks storage-node liveness from
// heartbeats, and decides namespace placement. See docs/proxy.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"rpmp.io/proxy/internal/auth"
	"rpmp.io/proxy/internal/election"
	pb "rpmp.io/proxy/internal/rpmpv1"
	"rpmp.io/proxy/internal/server"
	"rpmp.io/proxy/internal/store"
	"rpmp.io/proxy/internal/tenant"
)

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("rpmp-proxy: ")
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rpmp-proxy: %v (see -h)\n", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		log.Printf("fatal: %v", err)
		os.Exit(1)
	}
}

// run starts everything and blocks until SIGTERM/SIGINT.
func run(o options) error {
	sopts, err := grpcSecurity(o)
	if err != nil {
		return err
	}
	tokenKey, err := loadTokenKey(o.tokenSecretFile)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", o.listen, err)
	}
	defer lis.Close()
	if o.advertise == "" {
		o.advertise = lis.Addr().String()
	}
	cli, err := connectEtcd(o)
	if err != nil {
		return err
	}
	defer cli.Close()

	st := store.New(cli, o.cluster)
	el := election.New(election.Config{Client: cli, Prefix: st.LeaderPrefix(), Value: o.advertise,
		SessionTTL: o.sessionTTL, Logf: log.Printf})
	srv := server.New(server.Config{Advertise: o.advertise, SuspectAfter: o.suspectAfter,
		DeadAfter: o.heartbeatTimeout, HeartbeatInterval: o.heartbeatInterval, TTLCheck: o.ttlCheck,
		VNodes: o.vnodes, OpTimeout: o.opTimeout, Logf: log.Printf,
		TokenKey: tokenKey, ClaimGrace: o.claimGrace}, st, el)
	var interceptors []grpc.UnaryServerInterceptor
	if o.metricsListen != "" {
		reg := prometheus.NewRegistry()
		gm := newGRPCMetrics(reg)
		reg.MustRegister(newClusterCollector(srv, o.advertise, o.opTimeout))
		reg.MustRegister(newSpaceCollector(srv, o.opTimeout))
		addr, err := serveMetrics(o.metricsListen, reg)
		if err != nil {
			return fmt.Errorf("cannot serve metrics on %s: %w", o.metricsListen, err)
		}
		log.Printf("metrics on http://%s/metrics", addr)
		interceptors = append(interceptors, gm.interceptor) // first: refused calls are counted too
	}
	if o.tls.empty() {
		mode := "protected mode: loopback only"
		if o.insecure {
			mode = "--insecure"
		}
		log.Printf("WARNING: no TLS configured (--tls-cert/--tls-key/--tls-ca): anyone who reaches %s may "+
			"administer the cluster (%s)", lis.Addr(), mode)
	} else {
		interceptors = append(interceptors, auth.Interceptor)
		log.Printf("mutual TLS on: client certificates must chain to %s", o.tls.ca)
	}
	gs := grpc.NewServer(append(sopts, grpc.ChainUnaryInterceptor(interceptors...))...)
	pb.RegisterProxyServer(gs, srv)
	serveErr := make(chan error, 1)
	go func() { serveErr <- gs.Serve(lis) }()
	log.Printf("listening on %s (advertised as %s), cluster %q, etcd %v", lis.Addr(), o.advertise, o.cluster, o.etcd)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	elected := make(chan struct{})
	go func() { el.Run(ctx, srv.Lead); close(elected) }()
	select {
	case <-ctx.Done():
		log.Printf("signal received: resigning and stopping")
	case err := <-serveErr:
		stop()
		<-elected
		return fmt.Errorf("grpc server: %w", err)
	}
	<-elected // Run resigns leadership and revokes its lease before returning
	stopGRPC(gs, 3*time.Second)
	log.Printf("stopped")
	return nil
}

// loadTokenKey reads --token-secret-file (nil without it).
func loadTokenKey(path string) (tenant.Key, error) {
	if path == "" {
		log.Printf("no --token-secret-file: this proxy issues no per-application credentials")
		return nil, nil
	}
	secret, err := tenant.ReadSecretFile(path)
	if err != nil {
		return nil, fmt.Errorf("--token-secret-file: %w", err)
	}
	log.Printf("issuing per-application credentials (secret from %s)", path)
	return tenant.DeriveKey(secret)
}

// grpcSecurity returns the gRPC server's TLS option (none without --tls-cert).
func grpcSecurity(o options) ([]grpc.ServerOption, error) {
	if o.tls.empty() {
		return nil, nil
	}
	creds, err := serverCredentials(o.tls)
	if err != nil {
		return nil, err
	}
	return []grpc.ServerOption{grpc.Creds(creds)}, nil
}

// connectEtcd creates the client and waits (bounded) until etcd answers.
func connectEtcd(o options) (*clientv3.Client, error) {
	tc, err := etcdTLS(o.etcdTLS)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: o.etcd, DialTimeout: o.opTimeout, TLS: tc,
		Logger: zap.NewNop(), DialKeepAliveTime: 2 * time.Second, DialKeepAliveTimeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("etcd client for %v: %w", o.etcd, err)
	}
	deadline := time.Now().Add(o.etcdTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), min(o.opTimeout, time.Until(deadline)))
		_, err = cli.Get(ctx, "/rpmp/"+o.cluster+"/epoch")
		cancel()
		if err == nil {
			return cli, nil
		}
		if time.Now().After(deadline) {
			cli.Close()
			return nil, fmt.Errorf("etcd at %v unreachable after trying for %v: %v", o.etcd, o.etcdTimeout, err)
		}
		log.Printf("waiting for etcd at %v: %v", o.etcd, err)
		time.Sleep(300 * time.Millisecond)
	}
}

// stopGRPC drains in-flight RPCs, forcing the stop after timeout.
func stopGRPC(gs *grpc.Server, timeout time.Duration) {
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		gs.Stop()
	}
}
