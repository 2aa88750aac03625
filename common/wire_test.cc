// Tests of the wire codec: round trips of every op, and rejection of malformed frames.
#include "common/wire.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <string>

namespace rpmp::wire {
namespace {

std::string Encode(const Request& r) {
  std::string buf(kMaxFrame, '\0');
  size_t n = EncodeRequest(r, buf.data(), buf.size());
  REQUIRE(n > 0);
  buf.resize(n);
  return buf;
}

Request PutInline(std::string_view data) {
  Request r;
  r.h.op = Op::kPut;
  r.h.flags = kFlagInline;
  r.h.request_id = 77;
  r.h.session = 5;
  r.ns = "spark/app/1";
  r.key = "17";
  r.tag = 0xDEADBEEFCAFEull;
  r.length = data.size();
  r.crc = 1234;
  r.inline_data = data;
  return r;
}

TEST_CASE("put with inline payload round-trips") {
  std::string frame = Encode(PutInline("hello"));
  Request d;
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(d.h.op == Op::kPut);
  CHECK(d.h.request_id == 77);
  CHECK(d.h.session == 5);
  CHECK(d.ns == "spark/app/1");
  CHECK(d.key == "17");
  CHECK(d.tag == 0xDEADBEEFCAFEull);
  CHECK(d.inline_data == "hello");
  CHECK(d.crc == 1234);
}

TEST_CASE("the replica flag (cluster mode) round-trips with inline and RMA payloads") {
  Request r = PutInline("copy");
  r.h.flags = kFlagInline | kFlagReplica;
  std::string frame = Encode(r);
  Request d;
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK((d.h.flags & kFlagReplica) != 0);
  CHECK(d.inline_data == "copy");
  Request del;
  del.h.op = Op::kDel;
  del.h.flags = kFlagReplica;
  del.ns = "n";
  del.key = "k";
  frame = Encode(del);
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(d.h.flags == kFlagReplica);
  CHECK(d.key == "k");
}

TEST_CASE("a write id rides at the end of put, append (inline and RMA) and del") {
  Request r = PutInline("idem");
  r.h.flags = kFlagInline | kFlagWriteId;
  r.write_id = {0x1122334455667788ull, 42};
  std::string frame = Encode(r);
  Request d;
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(d.write_id == r.write_id);
  CHECK(d.inline_data == "idem");
  // The id is the last 16 bytes of the frame, after the inline blob.
  std::string tail = frame.substr(frame.size() - 16);
  CHECK(static_cast<uint8_t>(tail[0]) == 0x88);
  CHECK(static_cast<uint8_t>(tail[8]) == 42);

  r.h.op = Op::kAppend;
  r.h.flags = kFlagRma | kFlagWriteId | kFlagReplica;
  r.length = 4096;
  r.rma = {0x2000, 7, 4096};
  frame = Encode(r);
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(d.write_id == r.write_id);
  CHECK(d.rma.key == 7);

  Request del;
  del.h.op = Op::kDel;
  del.h.flags = kFlagWriteId;
  del.ns = "n";
  del.key = "k";
  del.write_id = {9, 1};
  frame = Encode(del);
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(d.write_id == WriteId{9, 1});

  // Without the flag a decoded request has no id, even when the struct is reused.
  frame = Encode(PutInline("x"));
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(!d.write_id.valid());
}

TEST_CASE("a fence (epoch, primary) rides after the write id on replica frames") {
  Request r = PutInline("fenced");
  r.h.flags = kFlagInline | kFlagWriteId | kFlagReplica | kFlagFence;
  r.write_id = {3, 4};
  r.fence_epoch = 77;
  r.fence_primary = 0xabcdef;
  std::string frame = Encode(r);
  Request d;
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(d.write_id == r.write_id);
  CHECK(d.fence_epoch == 77);
  CHECK(d.fence_primary == 0xabcdef);
  CHECK(d.inline_data == "fenced");
  Request ns;
  ns.h.op = Op::kDeleteNs;
  ns.h.flags = kFlagReplica | kFlagFence;
  ns.ns = "n";
  ns.fence_epoch = 5;
  ns.fence_primary = 6;
  frame = Encode(ns);
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(d.fence_epoch == 5);
  Request get;
  get.h.op = Op::kGet;
  get.h.flags = kFlagFence;
  get.ns = "n";
  get.key = "k";
  std::string buf(kMaxFrame, '\0');
  CHECK(EncodeRequest(get, buf.data(), buf.size()) == 0);  // only writes carry a fence
}

TEST_CASE("an installed write id (repair's copy) is a replica put or append with an id, nothing else") {
  Request r = PutInline("copy");
  r.h.flags = kFlagInline | kFlagWriteId | kFlagReplica | kFlagFence | kFlagInstallId;
  r.write_id = {3, 4};
  r.fence_epoch = 1;
  r.fence_primary = 2;
  std::string frame = Encode(r);
  Request d;
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK((d.h.flags & kFlagInstallId) != 0);
  CHECK(d.write_id == r.write_id);
  CHECK(d.inline_data == "copy");
  // From a client (no replica flag), without an id, or on a delete: malformed.
  Request client = r;
  client.h.flags = kFlagInline | kFlagWriteId | kFlagInstallId;
  Request no_id = r;
  no_id.h.flags = kFlagInline | kFlagReplica | kFlagFence | kFlagInstallId;
  Request del;
  del.h.op = Op::kDel;
  del.h.flags = kFlagReplica | kFlagWriteId | kFlagInstallId;
  del.ns = "n";
  del.key = "k";
  del.write_id = {9, 1};
  for (const Request* bad : {&client, &no_id, &del}) {
    std::string buf(kMaxFrame, '\0');
    size_t n = EncodeRequest(*bad, buf.data(), buf.size());  // the encoder does not check it
    REQUIRE(n > 0);
    Status st = DecodeRequest(buf.data(), n, &d);
    CHECK(st.code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("a tag filter rides at the end of get_meta, and its reply carries next_start") {
  Request r;
  r.h.op = Op::kGetMeta;
  r.h.flags = kFlagTagFilter;
  r.ns = "spark/a/0";
  r.key = "3";
  r.start = 10;
  r.max = 1000;
  r.tag_filter = {7, 0xFFFFFFFFFFFFull, 1};
  std::string frame = Encode(r);
  Request d;
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(d.tag_filter == r.tag_filter);
  CHECK(d.start == 10);
  REQUIRE(DecodeRequest(Encode(PutInline("x")).data(), Encode(PutInline("x")).size(), &d).ok());
  CHECK(d.tag_filter.empty());  // a reused Request forgets the last filter

  std::string buf(kMaxFrame, '\0');
  Request bad = r;
  bad.tag_filter.clear();  // a filter with no tags cannot be encoded...
  CHECK(EncodeRequest(bad, buf.data(), buf.size()) == 0);
  bad.tag_filter.assign(kMaxFilterTags + 1, 1);  // ...nor one over the limit
  CHECK(EncodeRequest(bad, buf.data(), buf.size()) == 0);
  Request put = PutInline("p");
  put.h.flags |= kFlagTagFilter;
  put.tag_filter = {1};
  CHECK(EncodeRequest(put, buf.data(), buf.size()) == 0);  // get_meta only
  size_t count_at = frame.size() - 3 * 8 - 4;  // and a decoder refuses a count of 0
  std::string zero = frame.substr(0, count_at + 4);
  std::memset(&zero[count_at], 0, 4);
  uint32_t len = static_cast<uint32_t>(zero.size());  // the header's frame length (LE)
  std::memcpy(&zero[8], &len, 4);
  Status z = DecodeRequest(zero.data(), zero.size(), &d);
  CHECK(z.code() == StatusCode::kInvalidArgument);
  CHECK(z.message().find("tag filter") != std::string::npos);

  Response resp;
  resp.h.op = Op::kGetMeta;
  resp.h.flags = kFlagTagFilter;
  resp.more = true;
  resp.next_start = 1234;
  resp.records = {{7, 100, 1, 0, 64, 2, 1233}};
  size_t n = EncodeResponse(resp, buf.data(), buf.size());
  Response dr;
  REQUIRE(DecodeResponse(buf.data(), n, &dr).ok());
  CHECK(dr.next_start == 1234);
  REQUIRE(dr.records.size() == 1);
  CHECK(dr.records[0].tag == 7);
  CHECK(dr.records[0].index == 1233);
}

TEST_CASE("malformed write ids are rejected and cannot be encoded") {
  Request r = PutInline("idem");
  r.h.flags = kFlagInline | kFlagWriteId;
  r.write_id = {0, 5};
  std::string buf(kMaxFrame, '\0');
  CHECK(EncodeRequest(r, buf.data(), buf.size()) == 0);  // zero writer
  r.write_id = {5, 0};
  CHECK(EncodeRequest(r, buf.data(), buf.size()) == 0);  // zero seq
  Request get;
  get.h.op = Op::kGet;
  get.h.flags = kFlagWriteId;
  get.ns = "n";
  get.key = "k";
  get.write_id = {1, 1};
  CHECK(EncodeRequest(get, buf.data(), buf.size()) == 0);  // op without ids

  Request d;
  auto reject = [&](std::string f, const char* why) {
    Status s = DecodeRequest(f.data(), f.size(), &d);
    INFO(why << ": " << s.ToString());
    CHECK(s.code() == StatusCode::kInvalidArgument);
  };
  r.write_id = {5, 6};
  std::string good = Encode(r);
  std::string f = good.substr(0, good.size() - 8);
  f[8] = static_cast<char>(f.size());
  reject(f, "id truncated");
  f = good;
  for (int i = 0; i < 8; i++) f[f.size() - 16 + i] = 0;
  reject(f, "zero writer");
  f = good;
  for (int i = 0; i < 8; i++) f[f.size() - 8 + i] = 0;
  reject(f, "zero seq");
  f = good;
  f[6] = kFlagInline;  // the id's bytes are now trailing garbage
  reject(f, "id without the flag");
  // A get frame carrying the flag (and 16 more bytes) is refused.
  get.h.flags = 0;
  std::string g = Encode(get) + std::string(16, '\1');
  g[8] = static_cast<char>(g.size());
  g[6] = kFlagWriteId;
  reject(g, "id on get");
}

TEST_CASE("append by RMA and read requests round-trip") {
  Request r;
  r.h.op = Op::kAppend;
  r.h.flags = kFlagRma;
  r.ns = "n";
  r.key = "k";
  r.length = 1 << 20;
  r.rma = {0x1000, 42, 1 << 20};
  std::string frame = Encode(r);
  Request d;
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(d.rma.addr == 0x1000);
  CHECK(d.rma.key == 42);
  CHECK(d.length == (1u << 20));

  Request rd;
  rd.h.op = Op::kRead;
  rd.pool = 2;
  rd.offset = 4096;
  rd.length = 10;
  frame = Encode(rd);
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(d.pool == 2);
  CHECK(d.offset == 4096);
}

TEST_CASE("responses round-trip for meta, list, stat and errors") {
  Response r;
  r.h.op = Op::kGetMeta;
  r.h.request_id = 9;
  r.total_length = 300;
  r.record_count = 2;
  r.more = true;
  r.records = {{1, 100, 7, 0, 4096, 3}, {2, 200, 8, 1, 8192, 4}};
  std::string buf(kMaxFrame, '\0');
  size_t n = EncodeResponse(r, buf.data(), buf.size());
  Response d;
  REQUIRE(DecodeResponse(buf.data(), n, &d).ok());
  REQUIRE(d.records.size() == 2);
  CHECK(d.records[1].rma_addr == 8192);
  CHECK(d.more);
  CHECK((d.h.flags & kFlagResponse) != 0);

  Response e;
  e.h.op = Op::kGet;
  e.h.status = static_cast<uint16_t>(StatusCode::kNotFound);
  e.message = "key 'x' not found";
  n = EncodeResponse(e, buf.data(), buf.size());
  Response de;
  REQUIRE(DecodeResponse(buf.data(), n, &de).ok());
  CHECK(de.h.status == 5);
  CHECK(de.message == "key 'x' not found");

  Response s;
  s.h.op = Op::kStat;
  s.node_id = 11;
  s.pools = {{"/dev/shm/a", "tmpfs", 100, 40, 60}};
  n = EncodeResponse(s, buf.data(), buf.size());
  Response ds;
  REQUIRE(DecodeResponse(buf.data(), n, &ds).ok());
  REQUIRE(ds.pools.size() == 1);
  CHECK(ds.pools[0].free == 60);
  CHECK(ds.compaction.segments == 0);  // no block without the flag

  s.h.flags = kFlagStatCompaction;
  s.compaction = {1000, 3, 40, 5000, 7, 1700000000000ull, true, true};
  n = EncodeResponse(s, buf.data(), buf.size());
  Response dc;
  REQUIRE(DecodeResponse(buf.data(), n, &dc).ok());
  CHECK(dc.pools.size() == 1);
  CHECK(dc.compaction.dead_bytes == 1000);
  CHECK(dc.compaction.segments == 3);
  CHECK(dc.compaction.records == 40);
  CHECK(dc.compaction.bytes == 5000);
  CHECK(dc.compaction.steps == 7);
  CHECK(dc.compaction.last_run_unix_ms == 1700000000000ull);
  CHECK(dc.compaction.enabled);
  CHECK(dc.compaction.running);
  for (size_t len = 0; len < n; len++) CHECK(!DecodeResponse(buf.data(), len, &dc).ok());
}

TEST_CASE("every truncation of a valid frame is rejected") {
  std::string frame = Encode(PutInline("payload bytes"));
  for (size_t len = 0; len < frame.size(); len++) {
    Request d;
    Status s = DecodeRequest(frame.data(), len, &d);
    CHECK(s.code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("bad magic, version, op, length field and flags are rejected with a reason") {
  std::string good = Encode(PutInline("abc"));
  Request d;
  auto reject = [&](std::string f, const char* why) {
    Status s = DecodeRequest(f.data(), f.size(), &d);
    INFO(why << ": " << s.ToString());
    CHECK(s.code() == StatusCode::kInvalidArgument);
    return s;
  };
  std::string f = good; f[0] = 'X'; reject(f, "magic");
  f = good; f[4] = 9; CHECK(reject(f, "version").message().find("version 9") != std::string::npos);
  f = good; f[5] = 99; CHECK(reject(f, "op").message().find("unknown op 99") != std::string::npos);
  f = good; f[8] = static_cast<char>(f[8] + 1); reject(f, "length field");
  f = good; f[6] = kFlagInline | kFlagRma; reject(f, "both inline and rma");
  f = good; f[6] = 0; reject(f, "no payload");
  f = good; f[6] = kFlagInline | kFlagResponse; reject(f, "response flag on a request");
  f = good + "x"; f[8] = static_cast<char>(f.size()); reject(f, "trailing byte");
  std::string huge(kMaxFrame + 1, '\0');
  std::memcpy(huge.data(), good.data(), good.size());
  reject(huge, "oversized");
}

TEST_CASE("inline payload whose length disagrees with the length field is rejected") {
  Request r = PutInline("abcd");
  r.length = 3;
  std::string frame = Encode(r);
  Request d;
  CHECK(DecodeRequest(frame.data(), frame.size(), &d).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("oversized key and namespace fields are rejected") {
  std::string long_key(kMaxKey + 1, 'k');
  Request r = PutInline("a");
  r.key = long_key;
  std::string frame = Encode(r);
  Request d;
  CHECK(DecodeRequest(frame.data(), frame.size(), &d).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("random mutations never crash the decoders") {
  std::mt19937 rng(12345);
  std::string base = Encode(PutInline(std::string(100, 'z')));
  int accepted = 0;
  for (int i = 0; i < 20000; i++) {
    std::string f = base;
    int flips = 1 + rng() % 4;
    for (int k = 0; k < flips; k++) f[rng() % f.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) f.resize(rng() % f.size());
    Request d;
    Response dr;
    Status s = DecodeRequest(f.data(), f.size(), &d);
    if (s.ok()) accepted++;
    else CHECK(s.code() == StatusCode::kInvalidArgument);
    Status s2 = DecodeResponse(f.data(), f.size(), &dr);
    if (!s2.ok()) CHECK(s2.code() == StatusCode::kInvalidArgument);
  }
  // Mutations inside the payload bytes leave a valid frame: some must be accepted.
  CHECK(accepted > 0);
}

}  // namespace
}  // namespace rpmp::wire

namespace rpmp {
TEST_CASE("session tag (header bytes 26..31) and HELLO auth fields round-trip") {
  wire::Request r;
  r.h.op = wire::Op::kHello;
  r.h.flags = wire::kFlagAuth;
  r.h.session_tag = wire::kMaxTag;
  r.client_name = "c";
  r.fabric_address = "addr";
  std::string sn(32, 's'), cn(32, 'c'), pr(32, 'p');
  r.server_nonce = sn;
  r.client_nonce = cn;
  r.proof = pr;
  char buf[wire::kMaxFrame];
  size_t n = wire::EncodeRequest(r, buf, sizeof(buf));
  REQUIRE(n > 0);
  wire::Request d;
  REQUIRE(wire::DecodeRequest(buf, n, &d).ok());
  CHECK(d.h.session_tag == wire::kMaxTag);
  CHECK(d.server_nonce == sn);
  CHECK(d.client_nonce == cn);
  CHECK(d.proof == pr);
  wire::Response resp;
  resp.h.op = wire::Op::kHello;
  resp.h.flags = wire::kFlagAuth;
  resp.h.session_tag = 0x123456789ABCull;
  resp.session = 9;
  resp.challenge = sn;
  resp.server_proof = pr;
  n = wire::EncodeResponse(resp, buf, sizeof(buf));
  wire::Response dr;
  REQUIRE(wire::DecodeResponse(buf, n, &dr).ok());
  CHECK(dr.h.session_tag == 0x123456789ABCull);
  CHECK(dr.challenge == sn);
  CHECK(dr.server_proof == pr);
  // Without the flag the auth fields are trailing bytes: refused.
  n = wire::EncodeRequest(r, buf, sizeof(buf));
  buf[6] = 0;
  CHECK_FALSE(wire::DecodeRequest(buf, n, &d).ok());
}
}  // namespace rpmp

namespace rpmp {
TEST_CASE("hello reply with kFlagShards carries the shard addresses, and 0 or too many are refused") {
  char buf[wire::kMaxFrame];
  wire::Response resp;
  resp.h.op = wire::Op::kHello;
  resp.h.flags = wire::kFlagAuth | wire::kFlagShards;
  resp.session = 3;
  resp.challenge = "c";
  resp.server_proof = "p";
  resp.shard_addresses = {std::string("\x02\x00\x1c\x84", 4), "bb", "ccc"};
  size_t n = wire::EncodeResponse(resp, buf, sizeof(buf));
  wire::Response dr;
  REQUIRE(wire::DecodeResponse(buf, n, &dr).ok());
  CHECK(dr.shard_addresses == resp.shard_addresses);
  CHECK(dr.server_proof == "p");
  resp.shard_addresses.clear();
  n = wire::EncodeResponse(resp, buf, sizeof(buf));
  CHECK_FALSE(wire::DecodeResponse(buf, n, &dr).ok());
  resp.shard_addresses.assign(wire::kMaxShards + 1, "a");
  n = wire::EncodeResponse(resp, buf, sizeof(buf));
  CHECK_FALSE(wire::DecodeResponse(buf, n, &dr).ok());
}

TEST_CASE("a hello reply with kFlagBoot ends with the boot id and without the flag there is none") {
  char buf[wire::kMaxFrame];
  wire::Response resp;
  resp.h.op = wire::Op::kHello;
  resp.h.flags = wire::kFlagBoot | wire::kFlagProbe;  // a probe's answer: no session
  resp.node_id = 7;
  resp.provider = "net";
  resp.boot = 0x1234567890abcdefull;
  size_t n = wire::EncodeResponse(resp, buf, sizeof(buf));
  wire::Response dr;
  REQUIRE(wire::DecodeResponse(buf, n, &dr).ok());
  CHECK(dr.boot == resp.boot);
  CHECK(dr.node_id == 7);
  CHECK(dr.provider == "net");
  CHECK(dr.session == 0);
  // An old client's decoder (no kFlagBoot asked, none sent) sees the old body.
  resp.h.flags = 0;
  size_t old = wire::EncodeResponse(resp, buf, sizeof(buf));
  CHECK(old == n - 8);
  wire::Response plain;
  REQUIRE(wire::DecodeResponse(buf, old, &plain).ok());
  CHECK(plain.boot == 0);
  // A reply that claims the flag and lacks the id is refused.
  resp.h.flags = wire::kFlagBoot;
  n = wire::EncodeResponse(resp, buf, sizeof(buf));
  std::string cut(buf, n - 8);
  cut[8] = static_cast<char>(cut.size());  // frame length (little-endian u32 at byte 8)
  CHECK_FALSE(wire::DecodeResponse(cut.data(), cut.size(), &dr).ok());
}
}  // namespace rpmp

namespace rpmp::wire {

TEST_CASE("a tenant token rides at the end of an authenticated hello, and only there") {
  Request r;
  r.h.op = Op::kHello;
  r.h.flags = kFlagAuth | kFlagToken;
  r.client_name = "app";
  r.fabric_address = "addr";
  r.client_nonce = "cn";
  r.token = "v1.YQ.Yg.123";
  std::string frame = Encode(r);
  Request d;
  REQUIRE(DecodeRequest(frame.data(), frame.size(), &d).ok());
  CHECK(d.token == "v1.YQ.Yg.123");
  CHECK(d.client_nonce == "cn");
  r.h.flags = kFlagToken;  // without the authentication fields: malformed
  frame = Encode(r);
  CHECK(DecodeRequest(frame.data(), frame.size(), &d).code() == StatusCode::kInvalidArgument);
  r.h.flags = kFlagAuth;  // a server that predates the flag sees trailing bytes
  std::string old = Encode(r);
  r.h.flags = kFlagAuth | kFlagToken;
  std::string with = Encode(r);
  CHECK(with.size() > old.size());
}

}  // namespace rpmp::wire
