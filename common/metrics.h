// Metrics: a small registry of counters, gauges and histograms, rendered in Prometheus'
// text exposition format (version 0.0.4) by Render(). The HTTP side is metrics_http.h.
//
// Instruments are created once at setup (AddCounter/AddGauge/AddHistogram, under the
// registry's mutex) and then updated from any thread with relaxed atomics only: the
// fast path never takes a lock and never allocates. Render() runs on the scrape thread
// and takes the registry mutex (which no fast path touches); it runs the registered
// samplers first, so values that live elsewhere (a store's pool usage) are read once
// per scrape instead of being pushed on every request.
// Instruments live as long as the registry. Who calls it: server/, client-cpp/ (none yet).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rpmp {

class Counter {
 public:
  void Add(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

class Gauge {
 public:
  void Set(double v) { v_.store(v, std::memory_order_relaxed); }
  void Add(double d);
  double Value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

// Cumulative buckets with fixed upper bounds (ascending), plus count and sum.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);
  const std::vector<double>& bounds() const { return bounds_; }
  // Per-bucket (not cumulative) counts; the last is the +Inf bucket.
  std::vector<uint64_t> BucketCounts() const;
  uint64_t Count() const { return count_.load(std::memory_order_relaxed); }
  double Sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

// Latency buckets in seconds, 50 us .. 10 s.
std::vector<double> LatencyBuckets();

class MetricsRegistry {
 public:
  MetricsRegistry();
  ~MetricsRegistry();
  // `name` must be a valid metric name; `labels` is empty or preformatted pairs such as
  // op="put",status="ok" (values escaped with LabelValue). A (name, labels) pair may be
  // added once; a name keeps the type and help it was first added with.
  Counter* AddCounter(const std::string& name, const std::string& help,
                      const std::string& labels = "");
  Gauge* AddGauge(const std::string& name, const std::string& help,
                  const std::string& labels = "");
  Histogram* AddHistogram(const std::string& name, const std::string& help,
                          const std::string& labels, std::vector<double> bounds);
  // A counter or gauge whose value `read` returns at scrape time (values kept elsewhere,
  // e.g. an existing atomic). `read` runs on the scrape thread.
  void AddCounterFunc(const std::string& name, const std::string& help,
                      const std::string& labels, std::function<double()> read);
  void AddGaugeFunc(const std::string& name, const std::string& help,
                    const std::string& labels, std::function<double()> read);
  // Runs before every Render() (on the scrape thread), typically to Set() gauges.
  void AddSampler(std::function<void()> sampler);

  // The whole registry in Prometheus' text format.
  std::string Render() const;

  // Escapes a label value (backslash, double quote, newline).
  static std::string LabelValue(const std::string& v);

 private:
  struct Family;
  Family* FamilyFor(const std::string& name, const std::string& help, int type);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Family>> families_;  // in registration order
  std::vector<std::function<void()>> samplers_;
};

}  // namespace rpmp
