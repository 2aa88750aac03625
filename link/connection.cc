// Connection set-up, request submission, the progress thread and timeouts.
#include "link/connection.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <future>

#include "common/log.h"
#include "common/thread_name.h"
#include "transport/peer_probe.h"

namespace rpmp {

struct Connection::Call {
  OpContext send_op;  // first member: the fabric hands it back
  uint32_t index = 0;
  uint32_t gen = 1;
  uint32_t session = 0;  // the session the request names (0 for a HELLO)
  uint64_t tag = 0;      // the session tag the request carries (its reply echoes it)
  uint64_t epoch = 0;  // the session it was sent in
  char* frame = nullptr;
  ResponseFn done;
  std::shared_ptr<void> keepalive;
  std::chrono::steady_clock::time_point deadline;
  bool in_use = false, send_done = false, finished = false, timed_out = false;
  bool probe = false;  // a boot probe (ProbeBoot): its failure says nothing of the session
};

struct Connection::RecvSlot {
  OpContext op;
  char* buf = nullptr;
};

struct Connection::ReadOp {
  OpContext op;
  std::function<void(Status)> done;  // null once answered (completion or deadline)
  std::shared_ptr<void> keepalive;
  std::chrono::steady_clock::time_point deadline;
};

namespace {

// The local address the kernel would use to reach host:port (so the server can
// answer us on that interface). Falls back to letting the provider choose.
std::string LocalAddressToward(const HostPort& hp) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_DGRAM;
  if (getaddrinfo(hp.host.c_str(), hp.port.c_str(), &hints, &res) != 0 || res == nullptr) return "";
  std::string out;
  int fd = socket(res->ai_family, SOCK_DGRAM, 0);
  if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    char buf[INET6_ADDRSTRLEN] = {0};
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 &&
        getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, buf, sizeof(buf), nullptr, 0,
                    NI_NUMERICHOST) == 0)
      out = buf;
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(res);
  return out;
}

}  // namespace

Connection::Connection(const std::string& server, const LinkOptions& options)
    : server_(server), options_(options) {}

StatusOr<std::unique_ptr<Connection>> Connection::OpenOn(const std::string& server,
                                                         const LinkOptions& options) {
  std::unique_ptr<Connection> c(new Connection(server, options));
  RPMP_RETURN_IF_ERROR(c->Setup());
  if (c->PeerIsGone())  // fail at once: the provider would only time out
    return Status::Unavailable("cannot reach rpmp-server at " + server + ": connection refused");
  Status st = c->StartProgressAndHello();
  if (!st.ok()) return st.Annotate("cannot reach rpmp-server at " + server);
  return c;
}

Status Connection::StartProgressAndHello() {
  progress_ = std::thread([this] {
    NameThisThread("rpmp-progress");
    progress_id_.store(std::this_thread::get_id());
    ProgressLoop();
  });
  std::lock_guard<std::mutex> lock(hello_mu_);
  return Hello();
}

StatusOr<HostPort> Connection::ShardHostPort(const std::string& shard_address) {
  sockaddr_storage ss{};
  if (shard_address.size() > sizeof(ss)) return Status::InvalidArgument("shard address too long");
  std::memcpy(&ss, shard_address.data(), shard_address.size());
  char host[INET6_ADDRSTRLEN] = {0}, port[16] = {0};
  if (getnameinfo(reinterpret_cast<sockaddr*>(&ss), static_cast<socklen_t>(shard_address.size()), host,
                  sizeof(host), port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return Status::InvalidArgument("data shard address is not a socket address");
  return HostPort{host, port};
}

StatusOr<std::unique_ptr<Connection>> Connection::OpenShard(Connection* primary,
                                                            const std::string& shard_address,
                                                            uint32_t shard) {
  std::unique_ptr<Connection> c(
      new Connection(primary->server_ + " (data shard " + std::to_string(shard) + ")", primary->options_));
  c->options_.first_hello_timeout = std::chrono::milliseconds(0);  // the provider is known
  // The shard's host and port, for PeerIsGone's probe.
  RPMP_ASSIGN_OR_RETURN(c->peer_host_, ShardHostPort(shard_address));
  c->is_shard_ = true;
  c->primary_ = primary;
  c->shard_index_ = shard;
  c->shard_address_ = shard_address;
  RPMP_ASSIGN_OR_RETURN(c->fabric_, primary->fabric_->OpenSibling(0));
  RPMP_ASSIGN_OR_RETURN(PeerAddr peer, c->fabric_->InsertPeer(shard_address));
  c->peer_.store(peer);
  c->pool_ = primary->pool_;
  RPMP_RETURN_IF_ERROR(c->SetupFrames());
  Status st = c->StartProgressAndHello();
  if (!st.ok()) return st.Annotate("cannot reach data shard " + std::to_string(shard));
  return c;
}

bool Connection::PeerIsGone() const {
  if (!fabric_->traits().tcp_listener) return false;
  HostPort hp;
  {
    std::lock_guard<std::mutex> lock(peer_host_mu_);
    hp = peer_host_;
  }
  return PeerRefusesConnections(hp.host, hp.port, std::chrono::milliseconds(200));
}

Status Connection::Setup() {
  RPMP_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(server_));
  peer_host_ = hp;
  FabricOptions fo;
  fo.provider = options_.provider;
  fo.node = LocalAddressToward(hp);
  RPMP_ASSIGN_OR_RETURN(fabric_, Fabric::Open(fo));
  RPMP_ASSIGN_OR_RETURN(peer_, fabric_->InsertPeer(hp.host, hp.port));
  pool_ = std::make_shared<BufferPool>(fabric_.get(), options_.buffer_cache_bytes);
  return SetupFrames();
}

Status Connection::SetupFrames() {
  // One call more than the window: a boot probe (ProbeBoot) finds a slot even when
  // every call of the window is stuck.
  size_t ncalls = (options_.max_inflight == 0 ? 1 : options_.max_inflight) + 1;
  window_ = ncalls - 1;
  size_t nrecv = ncalls + 8;
  frame_memory_.resize((ncalls + nrecv) * wire::kMaxFrame);
  RPMP_ASSIGN_OR_RETURN(frame_mr_, fabric_->Register(frame_memory_.data(), frame_memory_.size()));
  for (size_t i = 0; i < ncalls; i++) {
    auto call = std::make_unique<Call>();
    call->index = static_cast<uint32_t>(i);
    call->frame = frame_memory_.data() + i * wire::kMaxFrame;
    free_calls_.push_back(call.get());
    calls_.push_back(std::move(call));
  }
  for (size_t i = 0; i < nrecv; i++) {
    auto r = std::make_unique<RecvSlot>();
    r->buf = frame_memory_.data() + (ncalls + i) * wire::kMaxFrame;
    RPMP_RETURN_IF_ERROR(fabric_->PostRecv(&r->op, r->buf, wire::kMaxFrame, frame_mr_->desc()));
    recvs_.push_back(std::move(r));
  }
  return Status::Ok();
}

Connection::~Connection() {
  // Best effort: lets the server forget the session (skipped when it may be lost already:
  // the server may be gone, and closing must not wait for it).
  if (progress_.joinable() && !needs_hello_.load()) SayBye();
  stop_.store(true);
  work_cv_.notify_all();
  if (progress_.joinable()) progress_.join();
  quarantine_.clear();
}

void Connection::SayBye() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (session_ == 0) return;
  }
  if (server_ended_.load()) return;  // nothing left to close
  wire::Request bye;
  bye.h.op = wire::Op::kBye;
  auto p = std::make_shared<std::promise<void>>();
  Submit(bye, [p](const Status&, const wire::Response&) { p->set_value(); });
  p->get_future().wait_for(std::min<std::chrono::milliseconds>(options_.timeout, std::chrono::seconds(1)));
}

Connection::Call* Connection::AcquireCall(ResponseFn* done, std::shared_ptr<void>* keepalive, bool probe,
                                          bool hello) {
  std::unique_lock<std::mutex> lock(mu_);
  if (probe) {
    if (free_calls_.empty()) return nullptr;  // never waits: the progress thread asks
  } else if (!free_cv_.wait_for(lock, options_.timeout,
                                [this] { return !free_calls_.empty() && active_ < window_; })) {
    return nullptr;
  }
  Call* c = free_calls_.back();
  free_calls_.pop_back();
  c->in_use = true;
  c->send_done = c->finished = c->timed_out = false;
  c->probe = probe;
  c->done = std::move(*done);
  c->keepalive = std::move(*keepalive);
  c->deadline = std::chrono::steady_clock::now() + (probe ? 2 * kProbeAfter : options_.timeout);
  // A HELLO names no session; its reply is taken whatever its tag. Set here, under mu_,
  // so FailCallsOf never takes a HELLO for a call of the lost session.
  c->session = hello ? 0 : session_;  // id and tag of one session, read together
  c->tag = hello ? 0 : session_tag_;
  c->epoch = epoch_;
  active_++;
  return c;
}

bool Connection::Submit(wire::Request& req, ResponseFn done, std::shared_ptr<void> keepalive,
                        PollingScope* polling) {
  Call* c = AcquireCall(&done, &keepalive, /*probe=*/false, req.h.op == wire::Op::kHello);
  if (c == nullptr) {
    done(Status::DeadlineExceeded("too many requests in flight to " + server_), wire::Response());
    return false;
  }
  if (polling != nullptr) polling->Begin();
  return Send(c, req);
}

bool Connection::Send(Call* c, wire::Request& req) {
  req.h.request_id = (static_cast<uint64_t>(c->gen) << 32) | c->index;
  if (req.h.op == wire::Op::kHello && options_.first_hello_timeout.count() > 0 && opened_.load() == 0) {
    std::lock_guard<std::mutex> lock(mu_);
    c->deadline = std::min(c->deadline, std::chrono::steady_clock::now() + options_.first_hello_timeout);
  }
  req.h.session = c->session;
  req.h.session_tag = c->tag;
  size_t len = wire::EncodeRequest(req, c->frame, wire::kMaxFrame);
  if (pollers_.load() == 0) work_cv_.notify_one();  // a polling caller takes the reply itself
  Status st = len == 0 ? Status::InvalidArgument("request does not fit in one frame")
                       : fabric_->Send(&c->send_op, peer_, c->frame, len, frame_mr_->desc());
  if (!st.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      c->send_done = true;
    }
    Finish(c, st, wire::Response());
    return false;
  }
  return true;
}

void Connection::ProbeBoot() {
  uint64_t boot = boot_.load();
  if (boot == 0 || probing_.exchange(true)) return;  // a server without boot ids, or one out
  uint64_t epoch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    epoch = epoch_;
  }
  ResponseFn done = [this, boot, epoch](const Status& st, const wire::Response& r) {
    probing_.store(false);
    if (!st.ok() || !(r.h.flags & wire::kFlagBoot) || r.boot == boot) return;  // the same process, or no answer
    FailCallsOf(epoch, Status::Unavailable("rpmp-server at " + server_ +
                                           " restarted (its boot id changed): the session and the calls "
                                           "sent in it are gone"));
  };
  std::shared_ptr<void> none;
  Call* c = AcquireCall(&done, &none, /*probe=*/true, /*hello=*/true);
  if (c == nullptr) {
    probing_.store(false);
    return;
  }
  wire::Request req;
  req.h.op = wire::Op::kHello;
  req.h.flags = wire::kFlagBoot | wire::kFlagProbe;
  std::string address = fabric_->LocalAddress();
  req.fabric_address = address;
  req.client_name = options_.name;
  Send(c, req);
}

void Connection::FailCallsOf(uint64_t epoch, const Status& why) {
  std::vector<std::pair<Call*, uint32_t>> calls;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A HELLO names no session (session 0, AcquireCall): one in flight re-establishes the
    // session with the restarted server and is answered by it. Ending it too failed that
    // re-opening (seen once in a chaos run: "cannot re-establish the session ...
    // restarted").
    for (auto& c : calls_)
      if (c->in_use && !c->finished && !c->probe && c->epoch == epoch && c->session != 0)
        calls.emplace_back(c.get(), c->gen);
  }
  AbandonCalls(calls, why);
}

void Connection::AbandonCalls(const std::vector<std::pair<Call*, uint32_t>>& calls, const Status& why) {
  for (auto [c, gen] : calls) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!c->in_use || c->finished || c->gen != gen) continue;  // answered meanwhile
      c->timed_out = true;  // the server may have run it: its buffers are quarantined
    }
    Finish(c, why, wire::Response(), gen);
  }
}

void Connection::ReadRemote(uint64_t raddr, uint64_t rkey, char* dst, size_t len,
                            const MemoryRegion& region, std::function<void(Status)> done,
                            std::shared_ptr<void> keepalive) {
  auto* op = new ReadOp();
  op->done = std::move(done);
  op->keepalive = std::move(keepalive);
  op->deadline = std::chrono::steady_clock::now() + options_.timeout;
  {
    std::lock_guard<std::mutex> lock(mu_);
    reads_.push_back(op);
  }
  reads_in_flight_.fetch_add(1);
  if (pollers_.load() == 0) work_cv_.notify_one();
  Status st = fabric_->Read(&op->op, peer_, dst, len, region.desc(), raddr, rkey);
  if (!st.ok()) {
    std::function<void(Status)> fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      reads_.erase(std::find(reads_.begin(), reads_.end(), op));
      fn = std::move(op->done);
    }
    reads_in_flight_.fetch_sub(1);
    fn(st);
    delete op;
  }
}

// Answers one-sided reads past their deadline. The op itself stays until its
// completion arrives (the fabric owns its context); its buffer is quarantined.
void Connection::ExpireReads(std::chrono::steady_clock::time_point now) {
  std::vector<std::function<void(Status)>> expired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (ReadOp* op : reads_) {
      if (!op->done || op->deadline >= now) continue;
      expired.push_back(std::move(op->done));
      op->done = nullptr;
      if (op->keepalive) quarantine_.push_back(op->keepalive);
    }
  }
  for (auto& fn : expired)
    fn(Status::DeadlineExceeded("one-sided read from " + server_ + " did not complete within " +
                                std::to_string(options_.timeout.count()) + " ms"));
}

// One round of the progress thread's work: sleeps until there is work for it (or
// `woken()`, or at most `nap`), takes the completion queue unless a caller holds it,
// and answers calls and reads past their deadline every 10 ms. Progress thread only.
void Connection::ProgressRound(std::chrono::milliseconds nap, const std::function<bool()>& woken) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    work_cv_.wait_for(lock, nap, [&] {
      return stop_.load() || woken() ||
             (pollers_.load() == 0 && (active_ > 0 || reads_in_flight_.load() > 0));
    });
  }
  // Else a polling or leading caller handles every completion. A caller that took
  // the queue between the check and TryDrive leads: back to the condition variable.
  if (pollers_.load() == 0 && TryDrive()) {
    Completion comps[32];
    int n = fabric_->Wait(comps, 32, 2);
    StopDriving();
    for (int i = 0; i < n; i++) OnCompletion(comps[i]);
  }
  auto now = std::chrono::steady_clock::now();
  if (now - last_expire_ > std::chrono::milliseconds(10)) {
    ExpireCalls();
    ExpireReads(now);
    last_expire_ = now;
  }
}

void Connection::ProgressLoop() {
  while (!stop_.load()) ProgressRound(std::chrono::milliseconds(50), [] { return false; });
  FailAllInFlight();
}

void Connection::ProgressUntil(const std::function<bool()>& done) {
  // Naps of 2 ms: a leading caller that completes this call sets `done` without
  // waking the condition variable.
  while (!done() && !stop_.load()) ProgressRound(std::chrono::milliseconds(2), done);
  if (!done()) FailAllInFlight();  // closing: the progress loop's end would come too late
}

// Fails whatever is left so no caller waits forever (the client is closing).
void Connection::FailAllInFlight() {
  for (auto& c : calls_) {
    bool pending;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending = c->in_use && !c->finished;
      c->send_done = true;
    }
    if (pending) Finish(c.get(), Status::Cancelled("client closed"), wire::Response());
  }
  std::vector<ReadOp*> reads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    reads.swap(reads_);
  }
  for (ReadOp* op : reads) {  // no completion can arrive any more
    if (op->done) op->done(Status::Cancelled("client closed"));
    delete op;
  }
}

void Connection::PollingScope::Begin() {
  if (c_ == nullptr || begun_) return;
  if (mode_ == Mode::kLead) {
    if (c_->driver_.load() == std::this_thread::get_id()) {
      nested_ = true;  // a completion callback's own call: this thread drives already
    } else if (!c_->TryDrive()) {
      c_ = nullptr;  // another thread drives the queue: wait on the latch
      return;
    }
  }
  if (!nested_) c_->pollers_.fetch_add(1);
  begun_ = true;
}

void Connection::PollingScope::End() {
  if (c_ == nullptr || !begun_) return;
  Connection* c = c_;
  c_ = nullptr;
  begun_ = false;
  if (nested_) return;  // the outer call still drives
  // Driving is handed back before the count drops, so a progress thread that sees no
  // pollers can take it at once.
  if (mode_ == Mode::kLead) c->StopDriving();
  bool work;
  {
    std::lock_guard<std::mutex> lock(c->mu_);  // no lost wake-up: the progress thread checks under mu_
    c->pollers_.fetch_sub(1);
    work = c->active_ > 0 || c->reads_in_flight_.load() > 0;
  }
  if (work) c->work_cv_.notify_one();
}

void Connection::DriveUntil(const std::function<bool()>& done) {
  Completion comps[16];
  // Wakes at least every 2 ms: a deadline the progress thread enforces (ExpireCalls)
  // finishes this caller's call without a completion to wake it.
  // After the first round this caller has handled what the queue held and waits for
  // something new: Wait may clear its signal before reading the queue (idle_expected).
  bool handled = false;
  while (!done() && !stop_.load()) {
    int n = fabric_->Wait(comps, 16, 2, handled);
    for (int i = 0; i < n; i++) OnCompletion(comps[i]);
    handled = true;
  }
}

int Connection::PollOnce() {
  Completion comps[16];
  int n = fabric_->Poll(comps, 16);
  for (int i = 0; i < n; i++) OnCompletion(comps[i]);
  return n;
}

void Connection::OnCompletion(const Completion& c) {
  switch (c.ctx->kind) {
    case OpKind::kSend: {
      Call* call = reinterpret_cast<Call*>(c.ctx);
      bool fail;
      uint32_t gen;
      {
        std::lock_guard<std::mutex> lock(mu_);
        call->send_done = true;
        gen = call->gen;
        fail = !c.status.ok() && !call->finished;
        if (!fail) MaybeFree(call);
      }
      if (fail) Finish(call, Status::Unavailable("request not delivered to " + server_ + ": " + c.status.message()), wire::Response(), gen);
      return;
    }
    case OpKind::kRecv: {
      RecvSlot* r = reinterpret_cast<RecvSlot*>(c.ctx);
      if (c.status.ok()) OnResponse(r, c.length, c.src);
      if (!stop_.load()) fabric_->PostRecv(&r->op, r->buf, wire::kMaxFrame, frame_mr_->desc());
      return;
    }
    case OpKind::kRead:
    case OpKind::kWrite: {
      ReadOp* op = reinterpret_cast<ReadOp*>(c.ctx);
      std::function<void(Status)> fn;
      {
        std::lock_guard<std::mutex> lock(mu_);
        reads_.erase(std::find(reads_.begin(), reads_.end(), op));
        fn = std::move(op->done);  // null when the deadline answered it already
      }
      reads_in_flight_.fetch_sub(1);
      if (fn) fn(c.status.ok() ? Status::Ok() : Status::Unavailable("one-sided read from " + server_ + " failed: " + c.status.message()));
      delete op;
      return;
    }
  }
}

void Connection::OnResponse(RecvSlot* r, size_t len, PeerAddr src) {
  wire::Response resp;
  Status st = wire::DecodeResponse(r->buf, len, &resp);
  if (!st.ok()) {
    RPMP_LOG_WARN("malformed response from %s dropped: %s", server_.c_str(), st.ToString().c_str());
    return;
  }
  if (fabric_->reports_source() && src != peer_) {  // not from our server: forged
    RPMP_LOG_WARN("response not from %s dropped (forged?)", server_.c_str());
    return;
  }
  uint32_t index = static_cast<uint32_t>(resp.h.request_id);
  uint32_t gen = static_cast<uint32_t>(resp.h.request_id >> 32);
  if (index >= calls_.size()) return;
  Call* c = calls_[index].get();
  uint64_t epoch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!c->in_use || c->finished || c->gen != gen) return;  // late reply to a timed-out call
    if (resp.h.op != wire::Op::kHello && resp.h.session_tag != c->tag) {
      RPMP_LOG_WARN("response from %s with another session's tag dropped", server_.c_str());
      return;
    }
    epoch = c->epoch;
  }
  Status result = resp.h.status == 0 ? Status::Ok()
                                     : Status(static_cast<StatusCode>(resp.h.status), resp.message);
  if ((resp.h.flags & wire::kFlagSessionEnded) && resp.h.op != wire::Op::kHello) {
    refused_.fetch_add(1);
    result = Status::Unavailable("session with rpmp-server at " + server_ + " lost: " + resp.message);
    bool current;
    {
      std::lock_guard<std::mutex> lock(mu_);
      current = epoch == epoch_;
    }
    if (current && !server_ended_.exchange(true)) {
      needs_hello_.store(true);
      RPMP_LOG_WARN("%s; the next call opens a new session", result.message().c_str());
    }
  }
  Finish(c, result, resp, gen, /*server_answered=*/true);
}

void Connection::ExpireCalls() {
  // (call, generation): a call answered and reused meanwhile is left alone.
  std::vector<std::pair<Call*, uint32_t>> expired, stuck;
  auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& c : calls_) {
      if (!c->in_use || c->finished) continue;
      if (c->deadline < now) {
        c->timed_out = true;
        expired.emplace_back(c.get(), c->gen);
      } else if (!c->probe && now - (c->deadline - options_.timeout) > kProbeAfter) {
        stuck.emplace_back(c.get(), c->gen);
      }
    }
  }
  for (auto [c, gen] : expired)
    Finish(c, Status::DeadlineExceeded("no reply from rpmp-server at " + server_ + " within " +
                                       std::to_string(options_.timeout.count()) + " ms"),
           wire::Response(), gen);
  // Calls waiting long: if the server's port now refuses connections, it is gone and
  // waiting for the timeout would only delay failover. (The server may have run them:
  // the buffers stay quarantined as for a timeout.)
  if (stuck.empty() || now - last_probe_ < kProbeAfter) return;
  last_probe_ = now;
  if (!PeerIsGone()) {
    // Something listens there: the server, or one restarted on the same port that will
    // never answer these calls (it drops frames of senders it does not know). Its boot
    // id tells.
    ProbeBoot();
    return;
  }
  AbandonCalls(stuck, Status::Unavailable("rpmp-server at " + server_ + " is gone (connection refused)"));
}

void Connection::Finish(Call* c, const Status& st, const wire::Response& resp, int64_t gen,
                        bool server_answered) {
  ResponseFn fn;
  std::shared_ptr<void> release;  // dropped before `done` unless it must be quarantined
  bool current, probe;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (c->finished || !c->in_use) return;
    if (gen >= 0 && c->gen != static_cast<uint32_t>(gen)) return;  // a reply to its previous request
    c->finished = true;
    probe = c->probe;
    fn = std::move(c->done);
    if (!c->timed_out) release = std::move(c->keepalive);
    current = c->epoch == epoch_;
  }
  release.reset();
  // The session may be lost (server gone, restarted or silent): the next call opens a
  // new one. A call of an older session says nothing about the current one, and an
  // answer of the server's own (e.g. "no primary lease", "shutting down") says the
  // session is fine: a server that ends one says so (kFlagSessionEnded, above). Before,
  // every such answer cost a new session, one per retry while a namespace waited.
  if (current && !server_answered && !probe &&
      (st.code() == StatusCode::kUnavailable || st.code() == StatusCode::kDeadlineExceeded) &&
      !needs_hello_.exchange(true))
    RPMP_LOG_DEBUG("%s; the next call to %s opens a new session", st.ToString().c_str(), server_.c_str());
  if (fn) fn(st, resp);
  std::lock_guard<std::mutex> lock(mu_);
  MaybeFree(c);
}

void Connection::MaybeFree(Call* c) {  // mu_ held
  if (!c->in_use || !c->send_done || !c->finished) return;
  if (c->timed_out && c->keepalive) quarantine_.push_back(std::move(c->keepalive));
  c->keepalive.reset();
  c->gen++;
  c->in_use = false;
  free_calls_.push_back(c);
  active_--;
  free_cv_.notify_one();
}

}  // namespace rpmp
