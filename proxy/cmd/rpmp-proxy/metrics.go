// metrics.go: Prometheus metrics of rpmp-proxy on --metrics-listen (off when empty),
// with prometheus/client_golang. gRPC calls are counted and timed by a unary
// interceptor; cluster state (leadership, nodes by state, namespaces, epochs) is read
// at scrape time through the proxy's own gRPC methods, so a follower reports what it
// would answer a client. docs/operations.md lists every metric.
package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	pb "rpmp.io/proxy/internal/rpmpv1"
)

// grpcMetrics counts and times every unary call by method and status code.
type grpcMetrics struct {
	calls   *prometheus.CounterVec
	seconds *prometheus.HistogramVec
}

func newGRPCMetrics(reg prometheus.Registerer) *grpcMetrics {
	m := &grpcMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rpmp_proxy_grpc_requests_total",
			Help: "gRPC calls answered, by method and status code."}, []string{"method", "code"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rpmp_proxy_grpc_seconds",
			Help:    "gRPC call latency, by method.",
			Buckets: []float64{100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1, 5}},
			[]string{"method"}),
	}
	reg.MustRegister(m.calls, m.seconds)
	return m
}

func (m *grpcMetrics) interceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo,
	handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := handler(ctx, req)
	method := info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:]
	m.seconds.WithLabelValues(method).Observe(time.Since(start).Seconds())
	m.calls.WithLabelValues(method, status.Code(err).String()).Inc()
	return resp, err
}

// clusterCollector reads the cluster state at scrape time.
type clusterCollector struct {
	srv       pb.ProxyServer
	advertise string
	timeout   time.Duration

	isLeader, leaderKnown, nodes, epoch, namespaces, degraded, nsEpoch, capacity, free *prometheus.Desc
}

func newClusterCollector(srv pb.ProxyServer, advertise string, timeout time.Duration) *clusterCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &clusterCollector{srv: srv, advertise: advertise, timeout: timeout,
		isLeader:    d("rpmp_proxy_is_leader", "1 when this proxy is the leader."),
		leaderKnown: d("rpmp_proxy_leader_known", "1 when some proxy is known to lead."),
		nodes:       d("rpmp_proxy_nodes", "Storage nodes in the ActiveNodeMap, by state.", "state"),
		epoch:       d("rpmp_proxy_nodemap_epoch", "Epoch of the ActiveNodeMap."),
		namespaces:  d("rpmp_proxy_namespaces", "Namespaces."),
		degraded:    d("rpmp_proxy_namespaces_degraded", "Namespaces with fewer usable members than required."),
		nsEpoch:     d("rpmp_proxy_namespace_epoch_max", "Highest epoch at which a namespace or its placement changed."),
		capacity:    d("rpmp_proxy_cluster_capacity_bytes", "Pool capacity of the nodes not DEAD."),
		free:        d("rpmp_proxy_cluster_free_bytes", "Free pool bytes of the nodes not DEAD."),
	}
}

func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.isLeader, c.leaderKnown, c.nodes, c.epoch, c.namespaces,
		c.degraded, c.nsEpoch, c.capacity, c.free} {
		ch <- d
	}
}

func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	b := func(x bool) float64 {
		if x {
			return 1
		}
		return 0
	}
	if nm, err := c.srv.GetNodeMap(ctx, &pb.GetNodeMapRequest{}); err == nil {
		gauge(c.isLeader, b(nm.Leader == c.advertise))
		gauge(c.leaderKnown, b(nm.Leader != ""))
		gauge(c.epoch, float64(nm.Epoch))
		counts := map[string]float64{"live": 0, "suspect": 0, "dead": 0, "draining": 0}
		var capacity, free float64
		for _, n := range nm.Nodes {
			state := strings.ToLower(strings.TrimPrefix(n.State.String(), "NODE_STATE_"))
			counts[state]++
			if n.State != pb.NodeState_NODE_STATE_DEAD {
				capacity += float64(n.Capacity)
				free += float64(n.Free)
			}
		}
		for state, n := range counts {
			gauge(c.nodes, n, state)
		}
		gauge(c.capacity, capacity)
		gauge(c.free, free)
	}
	if list, err := c.srv.ListNamespaces(ctx, &pb.ListNamespacesRequest{}); err == nil {
		var degraded, maxEpoch float64
		for _, ns := range list.Namespaces {
			degraded += b(ns.Degraded)
			maxEpoch = max(maxEpoch, float64(ns.Epoch))
		}
		gauge(c.namespaces, float64(len(list.Namespaces)))
		gauge(c.degraded, degraded)
		gauge(c.nsEpoch, maxEpoch)
	}
}

// serveMetrics serves reg on http://listen/metrics until the process ends; it returns
// the bound address (listen may use port 0).
func serveMetrics(listen string, reg *prometheus.Registry) (net.Addr, error) {
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	reg.MustRegister(collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	go func() { _ = http.Serve(lis, mux) }()
	return lis.Addr(), nil
}
