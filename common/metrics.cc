// See metrics.h. Render() is the only writer of the text format.
#include "common/metrics.h"

#include <cmath>
#include <cstdio>

namespace rpmp {
namespace {

enum Type { kCounter = 0, kGauge = 1, kHistogram = 2 };
const char* kTypeNames[] = {"counter", "gauge", "histogram"};

void AtomicAdd(std::atomic<double>* a, double d) {
  double cur = a->load(std::memory_order_relaxed);
  while (!a->compare_exchange_weak(cur, cur + d, std::memory_order_relaxed)) {
  }
}

std::string Num(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.9g", v);
  }
  return buf;
}

std::string Braced(const std::string& labels, const std::string& extra = "") {
  std::string all = labels;
  if (!extra.empty()) all += (all.empty() ? "" : ",") + extra;
  return all.empty() ? "" : "{" + all + "}";
}

}  // namespace

void Gauge::Add(double d) { AtomicAdd(&v_, d); }

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); i++) buckets_[i].store(0);
}

void Histogram::Observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) i++;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(&sum_, v);
}

std::vector<uint64_t> Histogram::BucketCounts() const {
  std::vector<uint64_t> out(bounds_.size() + 1);
  for (size_t i = 0; i < out.size(); i++) out[i] = buckets_[i].load(std::memory_order_relaxed);
  return out;
}

std::vector<double> LatencyBuckets() {
  return {50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3,
          25e-3, 50e-3,  100e-3, 250e-3, 500e-3, 1,    2.5,    10};
}

struct MetricsRegistry::Family {
  std::string name, help;
  int type;
  struct Series {
    std::string labels;
    std::unique_ptr<Counter> counter;
    std::unique_ptr<Gauge> gauge;
    std::unique_ptr<Histogram> histogram;
    std::function<double()> read;
  };
  std::vector<Series> series;
};

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

MetricsRegistry::Family* MetricsRegistry::FamilyFor(const std::string& name,
                                                    const std::string& help, int type) {
  for (auto& f : families_)
    if (f->name == name) return f.get();
  families_.push_back(std::make_unique<Family>());
  Family* f = families_.back().get();
  f->name = name;
  f->help = help;
  f->type = type;
  return f;
}

Counter* MetricsRegistry::AddCounter(const std::string& name, const std::string& help,
                                     const std::string& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  Family* f = FamilyFor(name, help, kCounter);
  f->series.push_back({labels, std::make_unique<Counter>(), nullptr, nullptr, nullptr});
  return f->series.back().counter.get();
}

Gauge* MetricsRegistry::AddGauge(const std::string& name, const std::string& help,
                                 const std::string& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  Family* f = FamilyFor(name, help, kGauge);
  f->series.push_back({labels, nullptr, std::make_unique<Gauge>(), nullptr, nullptr});
  return f->series.back().gauge.get();
}

Histogram* MetricsRegistry::AddHistogram(const std::string& name, const std::string& help,
                                         const std::string& labels, std::vector<double> bounds) {
  std::lock_guard<std::mutex> lock(mu_);
  Family* f = FamilyFor(name, help, kHistogram);
  f->series.push_back({labels, nullptr, nullptr, std::make_unique<Histogram>(std::move(bounds)), nullptr});
  return f->series.back().histogram.get();
}

void MetricsRegistry::AddCounterFunc(const std::string& name, const std::string& help,
                                     const std::string& labels, std::function<double()> read) {
  std::lock_guard<std::mutex> lock(mu_);
  FamilyFor(name, help, kCounter)->series.push_back({labels, nullptr, nullptr, nullptr, std::move(read)});
}

void MetricsRegistry::AddGaugeFunc(const std::string& name, const std::string& help,
                                   const std::string& labels, std::function<double()> read) {
  std::lock_guard<std::mutex> lock(mu_);
  FamilyFor(name, help, kGauge)->series.push_back({labels, nullptr, nullptr, nullptr, std::move(read)});
}

void MetricsRegistry::AddSampler(std::function<void()> sampler) {
  std::lock_guard<std::mutex> lock(mu_);
  samplers_.push_back(std::move(sampler));
}

std::string MetricsRegistry::Render() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : samplers_) s();
  std::string out;
  for (const auto& f : families_) {
    out += "# HELP " + f->name + " " + f->help + "\n";
    out += "# TYPE " + f->name + " " + kTypeNames[f->type] + "\n";
    for (const auto& s : f->series) {
      if (s.read) {
        out += f->name + Braced(s.labels) + " " + Num(s.read()) + "\n";
      } else if (s.counter) {
        out += f->name + Braced(s.labels) + " " + Num(static_cast<double>(s.counter->Value())) + "\n";
      } else if (s.gauge) {
        out += f->name + Braced(s.labels) + " " + Num(s.gauge->Value()) + "\n";
      } else {
        const Histogram& h = *s.histogram;
        std::vector<uint64_t> counts = h.BucketCounts();
        uint64_t cum = 0;
        for (size_t i = 0; i < counts.size(); i++) {
          cum += counts[i];
          std::string le = i < h.bounds().size() ? Num(h.bounds()[i]) : "+Inf";
          out += f->name + "_bucket" + Braced(s.labels, "le=\"" + le + "\"") + " " +
                 Num(static_cast<double>(cum)) + "\n";
        }
        // Count as the sum of the buckets read above, so the +Inf bucket equals _count.
        out += f->name + "_sum" + Braced(s.labels) + " " + Num(h.Sum()) + "\n";
        out += f->name + "_count" + Braced(s.labels) + " " + Num(static_cast<double>(cum)) + "\n";
      }
    }
  }
  return out;
}

std::string MetricsRegistry::LabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace rpmp
