// Contract tests of write ids in the Store (docs/append-path.md section 1): a write or
// delete whose id is committed is not applied again, the answer is the first outcome,
// ids survive a reopen (the table is rebuilt from the records) and the table is
// bounded. Run against the DRAM store and a libpmemobj pool; plus WriteIdTable alone.
#include <catch2/catch.hpp>

#include "server/store/testing/store_test_util.h"
#include "server/store/write_id_table.h"

namespace rpmp {
namespace {

using namespace store_test;  // NOLINT

#define WRITE_ID_TEST(name) TEMPLATE_TEST_CASE(name, "[contract][write-id]", MemBackend, PmemBackend)

constexpr uint64_t kWriter = 0xA11CEull;

WriteSpec Spec(const std::string& key, const std::string& value, WriteKind kind, WriteId id) {
  return WriteSpec{"ns", key, kind, 7, value.size(), Crc32c(value.data(), value.size()), id};
}

// Reserve + copy + commit of a repair's installed copy (wire::kFlagInstallId).
Status Install(Store* store, const std::string& key, const std::string& value, WriteKind kind, WriteId id) {
  WriteSpec spec = Spec(key, value, kind, id);
  spec.install_id = true;
  StatusOr<Reservation> r = store->Reserve(spec);
  if (!r.ok()) return r.status();
  if (r->duplicate()) return Status::Internal("an installed copy was taken for a duplicate");
  std::memcpy(r->payload(), value.data(), value.size());
  return store->Commit(&r.value());
}

// The member of a repair (server/cluster/repair.cc) whose copy of a key diverged: it holds
// A (id 1) and X (id 9, never acknowledged: the primary has B, id 2, after A). The
// repair rewrites the key, installed: put A, append B. Afterwards the member, serving as
// primary, must treat a client's retry of B as its duplicate (before installed copies,
// B came without its id and a retry stored it a second time: chaos seed 2010 in CI), a
// retry of A (appended by the client, a put here) too, and a retry of X as new.
WRITE_ID_TEST("a repair's installed copy of a diverged key: its ids are known, the discarded ones forgotten") {
  TestType backend;
  auto store = backend.Open();
  REQUIRE(Write(store.get(), "ns", "log", "A", WriteKind::kAppend, 7, {kWriter, 1}).ok());
  REQUIRE(Write(store.get(), "ns", "log", "X", WriteKind::kAppend, 7, {kWriter, 9}).ok());
  // The rewrite: record 0 goes as the put that replaces the diverged copy, though its
  // id is known here; then B.
  REQUIRE(Install(store.get(), "log", "A", WriteKind::kPut, {kWriter, 1}).ok());
  REQUIRE(Install(store.get(), "log", "B", WriteKind::kAppend, {kWriter, 2}).ok());
  CHECK(ReadAll(store.get(), "ns", "log") == "AB");
  // Retries, as the member would see them as the new primary.
  REQUIRE(Write(store.get(), "ns", "log", "B", WriteKind::kAppend, 7, {kWriter, 2}).ok());
  REQUIRE(Write(store.get(), "ns", "log", "A", WriteKind::kAppend, 7, {kWriter, 1}).ok());
  CHECK(ReadAll(store.get(), "ns", "log") == "AB");
  CHECK(store->FindWrite("ns", {kWriter, 9}).state == WriteState::kUnknown);
  REQUIRE(Write(store.get(), "ns", "log", "X", WriteKind::kAppend, 7, {kWriter, 9}).ok());
  CHECK(ReadAll(store.get(), "ns", "log") == "ABX");
  // Without the install flag, a known id is still a duplicate (the normal path).
  REQUIRE(Write(store.get(), "ns", "log", "X", WriteKind::kAppend, 7, {kWriter, 9}).ok());
  CHECK(ReadAll(store.get(), "ns", "log") == "ABX");
}

WRITE_ID_TEST("a retried append or put with a committed id is not applied twice") {
  TestType backend;
  auto store = backend.Open();
  REQUIRE(Write(store.get(), "ns", "log", "one", WriteKind::kAppend, 1, {kWriter, 1}).ok());
  REQUIRE(Write(store.get(), "ns", "log", "two", WriteKind::kAppend, 2, {kWriter, 2}).ok());
  // The retry of seq 1 is answered OK and changes nothing.
  auto r = store->Reserve(Spec("log", "one", WriteKind::kAppend, {kWriter, 1}));
  REQUIRE(r.ok());
  CHECK(r->duplicate());
  CHECK(r->payload() == nullptr);
  CHECK(store->Commit(&r.value()).ok());
  REQUIRE(Write(store.get(), "ns", "log", "one", WriteKind::kAppend, 1, {kWriter, 1}).ok());
  CHECK(ReadAll(store.get(), "ns", "log") == "onetwo");

  // An old put retried after a newer put must not bring the old value back.
  REQUIRE(Write(store.get(), "ns", "k", "old", WriteKind::kPut, 0, {kWriter, 3}).ok());
  REQUIRE(Write(store.get(), "ns", "k", "new", WriteKind::kPut, 0, {kWriter, 4}).ok());
  REQUIRE(Write(store.get(), "ns", "k", "old", WriteKind::kPut, 0, {kWriter, 3}).ok());
  CHECK(ReadAll(store.get(), "ns", "k") == "new");

  // Records carry their id and commit order.
  auto view = store->Get("ns", "log");
  REQUIRE(view.ok());
  REQUIRE(view->records.size() == 2);
  CHECK(view->records[0].write_id == WriteId{kWriter, 1});
  CHECK(view->records[1].write_id == WriteId{kWriter, 2});
  CHECK(view->records[0].commit_seq < view->records[1].commit_seq);
  // Payloads, and so record headers, sit on 64-byte lines (also on PMDK).
  CHECK(view->records[0].offset % 64 == 0);
  CHECK(view->records[1].offset % 64 == 0);

  // FindWrite says where the first outcome is.
  WriteOutcome o = store->FindWrite("ns", {kWriter, 2});
  CHECK(o.state == WriteState::kCommitted);
  CHECK(o.kind == WriteIdKind::kAppend);
  CHECK(o.key == "log");
  CHECK(o.commit_seq == view->records[1].commit_seq);
  CHECK(o.pool == view->records[1].pool);
  CHECK(o.offset == view->records[1].offset);
  CHECK(store->FindWrite("ns", {kWriter, 99}).state == WriteState::kUnknown);
  CHECK(store->FindWrite("other", {kWriter, 2}).state == WriteState::kUnknown);
  // Writes without an id keep at-least-once behaviour.
  REQUIRE(Write(store.get(), "ns", "plain", "a", WriteKind::kAppend).ok());
  REQUIRE(Write(store.get(), "ns", "plain", "a", WriteKind::kAppend).ok());
  CHECK(ReadAll(store.get(), "ns", "plain") == "aa");
}

WRITE_ID_TEST("an id in flight, reused for another write, or aborted is handled") {
  TestType backend;
  auto store = backend.Open();
  auto first = store->Reserve(Spec("log", "abc", WriteKind::kAppend, {kWriter, 5}));
  REQUIRE(first.ok());
  CHECK(!first->duplicate());
  // A retry while the first attempt is still in flight: come back later.
  auto again = store->Reserve(Spec("log", "abc", WriteKind::kAppend, {kWriter, 5}));
  CHECK(again.status().code() == StatusCode::kUnavailable);
  CHECK(store->FindWrite("ns", {kWriter, 5}).state == WriteState::kInFlight);
  // The same id for another key or kind is a client bug.
  CHECK(store->Reserve(Spec("other", "abc", WriteKind::kAppend, {kWriter, 5})).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(store->Reserve(Spec("log", "abc", WriteKind::kPut, {kWriter, 5})).status().code() ==
        StatusCode::kInvalidArgument);
  // Aborted: the id is free again and the retry applies once.
  store->Abort(&first.value());
  CHECK(store->FindWrite("ns", {kWriter, 5}).state == WriteState::kUnknown);
  REQUIRE(Write(store.get(), "ns", "log", "abc", WriteKind::kAppend, 0, {kWriter, 5}).ok());
  REQUIRE(Write(store.get(), "ns", "log", "abc", WriteKind::kAppend, 0, {kWriter, 5}).ok());
  CHECK(ReadAll(store.get(), "ns", "log") == "abc");
}

WRITE_ID_TEST("a retried delete is answered OK and does not delete a later put") {
  TestType backend;
  auto store = backend.Open();
  REQUIRE(Write(store.get(), "ns", "k", "v1", WriteKind::kPut, 0, {kWriter, 1}).ok());
  REQUIRE(store->Delete("ns", "k", {kWriter, 2}).ok());
  REQUIRE(Write(store.get(), "ns", "k", "v2", WriteKind::kPut, 0, {kWriter, 3}).ok());
  CHECK(store->Delete("ns", "k", {kWriter, 2}).ok());  // the retry
  CHECK(ReadAll(store.get(), "ns", "k") == "v2");
  CHECK(store->FindWrite("ns", {kWriter, 2}).kind == WriteIdKind::kDelete);
  // A delete that found nothing leaves no id behind.
  CHECK(store->Delete("ns", "missing", {kWriter, 4}).IsNotFound());
  CHECK(store->FindWrite("ns", {kWriter, 4}).state == WriteState::kUnknown);
}

WRITE_ID_TEST("ids survive a reopen, also of overwritten records and deletes") {
  TestType backend;
  {
    auto store = backend.Open();
    for (uint64_t i = 1; i <= 50; i++) {
      REQUIRE(Write(store.get(), "ns", "log", MakeValue(i, 100), WriteKind::kAppend, i,
                    {kWriter, i}).ok());
    }
    REQUIRE(Write(store.get(), "ns", "k", "old", WriteKind::kPut, 0, {kWriter, 51}).ok());
    REQUIRE(Write(store.get(), "ns", "k", "new", WriteKind::kPut, 0, {kWriter, 52}).ok());
    REQUIRE(Write(store.get(), "ns", "gone", "x", WriteKind::kPut, 0, {kWriter, 53}).ok());
    REQUIRE(store->Delete("ns", "gone", {kWriter, 54}).ok());
    REQUIRE(Write(store.get(), "ns", "keep", "y", WriteKind::kPut, 0).ok());  // keeps segments
  }
  auto store = backend.Open();
  auto before = store->Get("ns", "log");
  REQUIRE(before.ok());
  uint64_t seq7 = before->records[6].commit_seq;
  for (uint64_t i = 1; i <= 50; i++) {
    REQUIRE(Write(store.get(), "ns", "log", MakeValue(i, 100), WriteKind::kAppend, i,
                  {kWriter, i}).ok());
  }
  auto view = store->Get("ns", "log");
  REQUIRE(view.ok());
  CHECK(view->records.size() == 50);
  CHECK(view->records[6].write_id == WriteId{kWriter, 7});
  CHECK(store->FindWrite("ns", {kWriter, 7}).commit_seq == seq7);
  REQUIRE(Write(store.get(), "ns", "k", "old", WriteKind::kPut, 0, {kWriter, 51}).ok());
  CHECK(ReadAll(store.get(), "ns", "k") == "new");
  REQUIRE(Write(store.get(), "ns", "gone", "x", WriteKind::kPut, 0, {kWriter, 53}).ok());
  bool found = true;
  ReadAll(store.get(), "ns", "gone", &found);
  CHECK(!found);
  CHECK(store->Delete("ns", "gone", {kWriter, 54}).ok());
  // New writes continue after the recovered commit order.
  REQUIRE(Write(store.get(), "ns", "log", "more", WriteKind::kAppend, 0, {kWriter, 55}).ok());
  view = store->Get("ns", "log");
  REQUIRE(view.ok());
  CHECK(view->records.back().commit_seq > view->records[49].commit_seq);
}

WRITE_ID_TEST("the table keeps a bounded window per writer and goes with the namespace") {
  TestType backend;
  auto store = backend.Open();
  const uint64_t n = kWriteIdWindow + 100;
  for (uint64_t i = 1; i <= n; i++) {
    REQUIRE(Write(store.get(), "ns", "log", "r", WriteKind::kAppend, 0, {kWriter, i}).ok());
  }
  // The oldest seqs fell out of the window: refused, not re-applied, with the refusal
  // repair recognises (it then resends the record without its id).
  Status too_old = store->Reserve(Spec("log", "r", WriteKind::kAppend, {kWriter, 1})).status();
  CHECK(too_old.code() == StatusCode::kFailedPrecondition);
  CHECK(IsWriteIdTooOld(too_old));
  CHECK(IsWriteIdTooOld(too_old.Annotate("replica x")));
  CHECK_FALSE(IsWriteIdTooOld(Status(StatusCode::kFailedPrecondition, "no longer the primary")));
  CHECK(store->FindWrite("ns", {kWriter, 100}).state == WriteState::kUnknown);
  CHECK(store->FindWrite("ns", {kWriter, 101}).state == WriteState::kCommitted);
  REQUIRE(Write(store.get(), "ns", "log", "r", WriteKind::kAppend, 0, {kWriter, n}).ok());
  CHECK(store->Get("ns", "log")->records.size() == n);
  // The window is the same after a reopen.
  store.reset();
  store = backend.Open();
  CHECK(store->FindWrite("ns", {kWriter, 100}).state == WriteState::kUnknown);
  CHECK(store->FindWrite("ns", {kWriter, 101}).state == WriteState::kCommitted);
  // Deleting the namespace forgets its ids.
  REQUIRE(store->DeleteNamespace("ns").ok());
  CHECK(store->FindWrite("ns", {kWriter, n}).state == WriteState::kUnknown);
  REQUIRE(Write(store.get(), "ns", "log", "r", WriteKind::kAppend, 0, {kWriter, n}).ok());
  CHECK(store->Get("ns", "log")->records.size() == 1);
}

TEST_CASE("WriteIdTable forgets the least recently used writers beyond its bound", "[write-id]") {
  WriteIdTable table(/*max_seqs=*/4, /*max_writers=*/16);
  WriteOutcome o;
  o.kind = WriteIdKind::kAppend;
  o.key = "k";
  for (uint64_t w = 1; w <= 16; w++) table.Committed({w, 1}, o);
  table.Committed({1, 2}, o);  // writer 1 is now the most recently used
  table.Committed({17, 1}, o);
  CHECK(table.writers() <= 16);
  CHECK(table.Find({1, 1}).state == WriteState::kCommitted);
  CHECK(table.Find({17, 1}).state == WriteState::kCommitted);
  CHECK(table.Find({2, 1}).state == WriteState::kUnknown);  // least recently used
  for (uint64_t s = 3; s <= 10; s++) table.Committed({1, s}, o);
  CHECK(table.Find({1, 6}).state == WriteState::kUnknown);
  CHECK(table.Find({1, 7}).state == WriteState::kCommitted);
  CHECK(table.TooOld({1, 2}));
  CHECK(!table.TooOld({1, 11}));
  table.StartInFlight({1, 11}, WriteIdKind::kAppend, "k");
  CHECK(table.Find({1, 11}).state == WriteState::kInFlight);
  table.Forget({1, 11});
  CHECK(table.Find({1, 11}).state == WriteState::kUnknown);
  table.Forget({1, 10});  // committed ids are never forgotten by an abort
  CHECK(table.Find({1, 10}).state == WriteState::kCommitted);
  CHECK(table.entries() <= 4 * 16);
}

}  // namespace
}  // namespace rpmp
