// KvTarget implementations for rpmp-kv-bench: librpmp and hiredis.
#include "bench/kv/kv_target.h"

#include <hiredis/hiredis.h>

#include "common/config_util.h"
#include "rpmp/client.h"
#include "rpmp/cluster.h"

namespace rpmp::bench {
namespace {

class RpmpTarget : public KvTarget {
 public:
  RpmpTarget(std::unique_ptr<Client> c, std::string ns, Buffer buf)
      : client_(std::move(c)), ns_(std::move(ns)), buf_(std::move(buf)) {}

  Status Put(const std::string& key, const std::string& value) override {
    return client_->Put(ns_, key, value.data(), value.size());
  }

  Status Get(const std::string& key, size_t* length) override {
    Status st = client_->Get(ns_, key, &buf_);
    if (st.ok()) *length = buf_.size();
    return st;
  }

 private:
  std::unique_ptr<Client> client_;
  std::string ns_;
  Buffer buf_;
};

class RedisTarget : public KvTarget {
 public:
  explicit RedisTarget(redisContext* c) : c_(c) {}
  ~RedisTarget() override { redisFree(c_); }

  Status Put(const std::string& key, const std::string& value) override {
    return Reply(static_cast<redisReply*>(redisCommand(c_, "SET %b %b", key.data(), key.size(),
                                                       value.data(), value.size())),
                 nullptr);
  }

  Status Get(const std::string& key, size_t* length) override {
    return Reply(static_cast<redisReply*>(redisCommand(c_, "GET %b", key.data(), key.size())), length);
  }

 private:
  Status Reply(redisReply* r, size_t* length) {
    if (r == nullptr) return Status(StatusCode::kUnavailable, std::string("redis: ") + c_->errstr);
    Status st;
    if (r->type == REDIS_REPLY_ERROR) st = Status(StatusCode::kInternal, std::string("redis: ") + r->str);
    else if (r->type == REDIS_REPLY_NIL) st = Status(StatusCode::kNotFound, "redis: no such key");
    else if (length != nullptr) *length = r->len;
    freeReplyObject(r);
    return st;
  }

  redisContext* c_;
};

}  // namespace

StatusOr<std::unique_ptr<KvTarget>> OpenKvTarget(const std::string& spec, const std::string& ns,
                                                 uint32_t replicas, size_t max_value,
                                                 const std::string& provider) {
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon), where = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (kind == "redis") {
    StatusOr<HostPort> hp = ParseHostPort(where);
    if (!hp.ok()) return hp.status();
    redisContext* c = redisConnect(hp->host.c_str(), std::stoi(hp->port));
    if (c == nullptr || c->err) {
      std::string why = c ? c->errstr : "out of memory";
      if (c) redisFree(c);
      return Status(StatusCode::kUnavailable, "cannot connect to redis at " + where + ": " + why);
    }
    return std::unique_ptr<KvTarget>(new RedisTarget(c));
  }
  StatusOr<std::unique_ptr<Client>> c = Status(StatusCode::kInvalidArgument,
      "target '" + spec + "': expected rpmp:HOST:PORT, rpmp-cluster:HOST:PORT[,...] or redis:HOST:PORT");
  if (kind == "rpmp") {
    ClientOptions o;
    o.provider = provider;
    c = Client::Connect(where, o);
  } else if (kind == "rpmp-cluster") {
    ClusterOptions co;
    co.namespace_defaults.replicas = replicas;
    c = Client::ConnectCluster(ProxyList(where), co);
  }
  if (!c.ok()) return c.status();
  StatusOr<Buffer> buf = (*c)->AllocBuffer(max_value);
  if (!buf.ok()) return buf.status();
  return std::unique_ptr<KvTarget>(new RpmpTarget(std::move(c).value(), ns, std::move(buf).value()));
}

}  // namespace rpmp::bench
