// metrics_space.go: Prometheus metrics of space per tier and of quota use, read at
// scrape time through the proxy's own gRPC methods like clusterCollector. Quotas are
// reported by the leader only (their use is in its memory); a follower has none.
package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	pb "rpmp.io/proxy/internal/rpmpv1"
)

type spaceCollector struct {
	srv     pb.ProxyServer
	timeout time.Duration

	tierCapacity, tierFree, quotaMaxBytes, quotaUsedBytes, quotaMaxNS, quotaNS *prometheus.Desc
}

func newSpaceCollector(srv pb.ProxyServer, timeout time.Duration) *spaceCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &spaceCollector{srv: srv, timeout: timeout,
		tierCapacity:   d("rpmp_proxy_cluster_tier_capacity_bytes", "Pool capacity of the nodes not DEAD, by tier (fast, capacity).", "tier"),
		tierFree:       d("rpmp_proxy_cluster_tier_free_bytes", "Free pool bytes of the nodes not DEAD, by tier (fast, capacity).", "tier"),
		quotaMaxBytes:  d("rpmp_proxy_quota_max_bytes", "Byte quota of a namespace prefix (0: none). Leader only.", "prefix"),
		quotaUsedBytes: d("rpmp_proxy_quota_used_bytes", "Bytes used under a quota prefix (largest copy of each namespace, from heartbeats). Leader only.", "prefix"),
		quotaMaxNS:     d("rpmp_proxy_quota_max_namespaces", "Namespace quota of a prefix (0: none). Leader only.", "prefix"),
		quotaNS:        d("rpmp_proxy_quota_namespaces", "Namespaces under a quota prefix. Leader only.", "prefix"),
	}
}

func (c *spaceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.tierCapacity, c.tierFree, c.quotaMaxBytes, c.quotaUsedBytes, c.quotaMaxNS, c.quotaNS} {
		ch <- d
	}
}

func (c *spaceCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	gauge := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	if nm, err := c.srv.GetNodeMap(ctx, &pb.GetNodeMapRequest{}); err == nil {
		var fastCap, fastFree, capCap, capFree uint64
		for _, n := range nm.Nodes {
			if n.State != pb.NodeState_NODE_STATE_DEAD {
				fastCap += n.FastCapacity
				fastFree += n.FastFree
				capCap += n.CapacityTierCapacity
				capFree += n.CapacityTierFree
			}
		}
		gauge(c.tierCapacity, fastCap, "fast")
		gauge(c.tierFree, fastFree, "fast")
		gauge(c.tierCapacity, capCap, "capacity")
		gauge(c.tierFree, capFree, "capacity")
	}
	if list, err := c.srv.ListQuotas(ctx, &pb.ListQuotasRequest{}); err == nil {
		for _, q := range list.Quotas {
			gauge(c.quotaMaxBytes, q.MaxBytes, q.Prefix)
			gauge(c.quotaUsedBytes, q.UsedBytes, q.Prefix)
			gauge(c.quotaMaxNS, q.MaxNamespaces, q.Prefix)
			gauge(c.quotaNS, q.Namespaces, q.Prefix)
		}
	}
}
