// Connection's HELLO: opening a session, with the challenge-response of
// docs/security.md when a secret is configured (LinkOptions::secret, or the file
// named by $RPMP_SECRET_FILE), or with a tenant token (LinkOptions::tenant_token, or
// the file named by $RPMP_TOKEN_FILE): then the HELLO carries the token's public part
// and the proof's key is its MAC. Neither the secret nor the MAC crosses the wire; the
// server proves it knows the same key before the client trusts the session.
#include <algorithm>
#include <future>

#include "link/connection.h"
#include "common/auth.h"
#include "common/log.h"
#include "common/tenant_token.h"

namespace rpmp {

StatusOr<wire::Response> Connection::HelloStep(wire::Request& req) {
  auto p = std::make_shared<std::promise<std::pair<Status, wire::Response>>>();
  auto f = p->get_future();
  Submit(req, [p](const Status& st, const wire::Response& r) {
    wire::Response copy = r;  // inline views are not used by HELLO
    p->set_value({st, std::move(copy)});
  });
  auto [st, resp] = f.get();
  if (!st.ok()) return st;
  return resp;
}

Status Connection::EnsureSession() {
  if (!needs_hello_.load()) return Status::Ok();
  uint64_t tries = hello_tries_.load();
  std::lock_guard<std::mutex> lock(hello_mu_);
  if (!needs_hello_.load()) return Status::Ok();  // another caller opened it meanwhile
  // Another caller tried while this one waited, and failed: its outcome is this one's
  // too (a server that is down is not asked once per waiting caller).
  if (hello_tries_.load() != tries) return last_hello_;
  hello_tries_.fetch_add(1);
  SayBye();  // unless the server said it ended: it may only have been slow
  if (is_shard_) RepointShard();
  Status st = Hello();
  last_hello_ = st;
  if (st.ok()) {
    reestablished_.fetch_add(1);
    RPMP_LOG_INFO("new session with rpmp-server at %s (re-established)", server_.c_str());
  } else if (hello_failures_++ == 0) {  // once per outage, not once per attempt
    RPMP_LOG_WARN("cannot re-establish the session with rpmp-server at %s: %s", server_.c_str(),
                  st.ToString().c_str());
  }
  if (st.ok()) hello_failures_ = 0;
  return st;
}

StatusOr<std::vector<std::string>> Connection::ProbeShards() {
  wire::Request req;
  req.h.op = wire::Op::kHello;
  req.h.flags = wire::kFlagBoot | wire::kFlagProbe | wire::kFlagShards;
  std::string address = fabric_->LocalAddress();
  req.fabric_address = address;
  req.client_name = options_.name;
  RPMP_ASSIGN_OR_RETURN(wire::Response r, HelloStep(req));
  if (!(r.h.flags & wire::kFlagShards)) return std::vector<std::string>{};
  return r.shard_addresses;
}

void Connection::RepointShard() {
  StatusOr<std::vector<std::string>> now = primary_->ProbeShards();
  if (!now.ok() || now->empty()) return;  // the HELLO below tells what is wrong
  // A server restarted with fewer shards: take one of those it has.
  const std::string& address = (*now)[shard_index_ % now->size()];
  if (address == shard_address_) return;
  StatusOr<HostPort> hp = ShardHostPort(address);
  StatusOr<PeerAddr> peer = hp.ok() ? fabric_->InsertPeer(address) : StatusOr<PeerAddr>(hp.status());
  if (!peer.ok()) {
    RPMP_LOG_WARN("rpmp-server at %s: data shard %u moved, and its new address is refused: %s",
                  server_.c_str(), shard_index_, peer.status().ToString().c_str());
    return;
  }
  {
    std::lock_guard<std::mutex> lock(peer_host_mu_);
    RPMP_LOG_INFO("rpmp-server at %s now listens on %s:%s (the server restarted): moving there",
                  server_.c_str(), hp->host.c_str(), hp->port.c_str());
    peer_host_ = *hp;
  }
  peer_.store(*peer);
  shard_address_ = address;
}

// The HELLO credential: the key proofs use, and the token's public part (empty when
// the key is the cluster secret). Precedence: LinkOptions::tenant_token, then
// LinkOptions::secret, then $RPMP_TOKEN_FILE, then $RPMP_SECRET_FILE.
Status Connection::HelloKey(std::string* key, std::string* token) const {
  std::string text = options_.tenant_token;
  if (text.empty() && options_.secret.empty()) {
    RPMP_ASSIGN_OR_RETURN(text, tenant::TokenFromEnvironment());
  }
  if (!text.empty()) {
    StatusOr<tenant::Token> t = tenant::Parse(text);
    if (!t.ok()) return t.status();
    if (t->mac.empty())
      return Status::InvalidArgument("the tenant token has no MAC (give the whole token)");
    *key = t->mac;
    *token = tenant::PublicPart(*t);
    return Status::Ok();
  }
  *key = options_.secret;
  if (key->empty()) {
    RPMP_ASSIGN_OR_RETURN(*key, auth::SecretFromEnvironment());
  }
  return Status::Ok();
}

Status Connection::Hello() {  // hello_mu_ held
  std::string secret, token;
  RPMP_RETURN_IF_ERROR(HelloKey(&secret, &token));
  std::string address = fabric_->LocalAddress();
  std::string client_nonce = auth::RandomNonce();
  wire::Request req;
  req.h.op = wire::Op::kHello;
  req.h.flags = wire::kFlagAuth | wire::kFlagBoot;
  // The first HELLO of a client's first connection asks for the data shards.
  bool ask_shards = options_.ask_shards && opened_.load() == 0 && !is_shard_;
  if (ask_shards) req.h.flags |= wire::kFlagShards;
  req.fabric_address = address;
  req.client_name = options_.name;
  req.client_nonce = client_nonce;
  if (!token.empty()) {
    req.h.flags |= wire::kFlagToken;
    req.token = token;
  }
  RPMP_ASSIGN_OR_RETURN(wire::Response r, HelloStep(req));
  std::string challenge = r.challenge;
  if (!challenge.empty()) {  // the server authenticates: prove the secret
    if (secret.empty())
      return Status(StatusCode::kPermissionDenied,
                    "rpmp-server at " + server_ + " requires authentication: set " +
                        auth::kSecretFileEnv + " to the cluster secret file");
    std::string proof = auth::ClientProof(secret, challenge, client_nonce, address);
    req.server_nonce = challenge;
    req.proof = proof;
    RPMP_ASSIGN_OR_RETURN(r, HelloStep(req));
    std::string expected = auth::ServerProof(secret, challenge, client_nonce, r.h.session_tag);
    if (!auth::Equal(r.server_proof, expected))
      return Status(StatusCode::kPermissionDenied,
                    "rpmp-server at " + server_ + " did not prove the cluster secret");
  } else if (!token.empty()) {
    return Status(StatusCode::kPermissionDenied,
                  "rpmp-server at " + server_ +
                      " does not authenticate clients, but a tenant token is configured: "
                      "refusing it (give the server auth_secret_file)");
  } else if (!secret.empty()) {
    return Status(StatusCode::kPermissionDenied,
                  "rpmp-server at " + server_ +
                      " does not authenticate clients, but a cluster secret is configured: "
                      "refusing it (give the server auth_secret_file)");
  }
  if (ask_shards && (r.h.flags & wire::kFlagShards)) shard_addresses_ = r.shard_addresses;
  node_id_ = r.node_id;
  server_provider_ = r.provider;
  boot_.store((r.h.flags & wire::kFlagBoot) ? r.boot : 0);
  max_inline_ = r.max_inline;
  {
    std::lock_guard<std::mutex> lock(mu_);
    session_ = r.session;
    session_tag_ = r.h.session_tag;
    epoch_++;
    size_t calls = calls_.size() - 1;  // the last is the boot probe's (SetupFrames)
    window_ = r.max_inflight == 0 ? calls : std::min<size_t>(calls, r.max_inflight);
  }
  free_cv_.notify_all();
  server_ended_.store(false);
  needs_hello_.store(false);
  opened_.fetch_add(1);
  return Status::Ok();
}

}  // namespace rpmp
