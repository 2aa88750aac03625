// Tests of the metrics registry's text exposition (common/metrics.h).
#include "common/metrics.h"

#include <catch2/catch.hpp>

#include <thread>
#include <vector>

namespace rpmp {

TEST_CASE("metrics render Prometheus text with one HELP/TYPE per family", "[metrics]") {
  MetricsRegistry r;
  Counter* ok = r.AddCounter("x_requests_total", "Requests.", "op=\"put\",status=\"ok\"");
  Counter* nf = r.AddCounter("x_requests_total", "Requests.", "op=\"get\",status=\"not_found\"");
  Gauge* g = r.AddGauge("x_sessions", "Sessions.");
  r.AddGaugeFunc("x_slots", "Slots.", "", [] { return 256.0; });
  ok->Add(3);
  nf->Add();
  g->Set(2);
  std::string t = r.Render();
  CHECK(t.find("# HELP x_requests_total Requests.\n# TYPE x_requests_total counter\n") != std::string::npos);
  CHECK(t.find("x_requests_total{op=\"put\",status=\"ok\"} 3\n") != std::string::npos);
  CHECK(t.find("x_requests_total{op=\"get\",status=\"not_found\"} 1\n") != std::string::npos);
  CHECK(t.find("# TYPE x_sessions gauge\nx_sessions 2\n") != std::string::npos);
  CHECK(t.find("x_slots 256\n") != std::string::npos);
  size_t first = t.find("# TYPE x_requests_total");
  CHECK(t.find("# TYPE x_requests_total", first + 1) == std::string::npos);
}

TEST_CASE("histograms are cumulative with +Inf equal to the count", "[metrics]") {
  MetricsRegistry r;
  Histogram* h = r.AddHistogram("x_seconds", "Latency.", "op=\"get\"", {0.001, 0.01});
  h->Observe(0.0005);
  h->Observe(0.005);
  h->Observe(0.005);
  h->Observe(5);
  std::string t = r.Render();
  CHECK(t.find("x_seconds_bucket{op=\"get\",le=\"0.001\"} 1\n") != std::string::npos);
  CHECK(t.find("x_seconds_bucket{op=\"get\",le=\"0.01\"} 3\n") != std::string::npos);
  CHECK(t.find("x_seconds_bucket{op=\"get\",le=\"+Inf\"} 4\n") != std::string::npos);
  CHECK(t.find("x_seconds_count{op=\"get\"} 4\n") != std::string::npos);
  CHECK(t.find("x_seconds_sum{op=\"get\"} 5.0105\n") != std::string::npos);
}

TEST_CASE("counters and histograms lose no update under concurrent writers", "[metrics]") {
  MetricsRegistry r;
  Counter* c = r.AddCounter("x_total", "X.");
  Histogram* h = r.AddHistogram("x_seconds", "X.", "", LatencyBuckets());
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([&] {
      for (int i = 0; i < 100000; i++) {
        c->Add();
        h->Observe(0.001);
      }
    });
  for (auto& t : ts) t.join();
  CHECK(c->Value() == 400000);
  CHECK(h->Count() == 400000);
}

TEST_CASE("label values are escaped", "[metrics]") {
  CHECK(MetricsRegistry::LabelValue("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
}

}  // namespace rpmp
