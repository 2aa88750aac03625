// Crash tests: a forked child writes to a pool on /dev/shm and dies (by _exit in the
// middle of a write, or by SIGKILL from the parent); the parent reopens the pool and
// checks that every acknowledged write is there byte for byte and nothing torn is.
// One case runs compaction steps beside the writes, so SIGKILL lands inside them.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <thread>

#include "server/store/testing/store_test_util.h"

namespace rpmp {
namespace {

using namespace store_test;  // NOLINT

// Record i: key, kind and bytes are functions of i alone, so the parent can check.
std::string KeyOf(uint32_t i) { return "k" + std::to_string(i % 37); }
std::string ValueOf(uint32_t i) { return MakeValue(i, (i * 7919) % 20000); }
WriteKind KindOf(uint32_t i) { return i % 5 == 0 ? WriteKind::kPut : WriteKind::kAppend; }

// Child body: writes records 0.. forever (or `count`), acking each index on `fd`
// after Commit returned OK; then starts one more write and exits without committing.
// With compact_fd >= 0 a second thread runs compaction steps without pause and
// writes one byte to compact_fd after every step that moved records.
[[noreturn]] void ChildWriter(const std::string& path, int fd, uint32_t count, int compact_fd = -1) {
  auto opened = OpenPmemStore(OptionsFor(path));
  if (!opened.ok()) _exit(2);
  Store* store = opened->get();
  if (compact_fd >= 0) {
    std::thread([store, compact_fd] {
      CompactOptions o;
      o.min_dead_fraction = 0.3;
      o.max_bytes = 256 << 10;
      o.batch_bytes = 16 << 10;
      o.grace = std::chrono::milliseconds(0);
      while (true) {
        StatusOr<uint64_t> moved = store->Compact(o);
        if (!moved.ok()) _exit(7);
        if (*moved > 0 && write(compact_fd, "c", 1) != 1) _exit(8);
      }
    }).detach();
  }
  for (uint32_t i = 0; count == 0 || i < count; i++) {
    if (!Write(store, "crash", KeyOf(i), ValueOf(i), KindOf(i), i).ok()) _exit(3);
    if (i % 50 == 49 && !store->Delete("crash", KeyOf(i)).ok()) _exit(4);
    if (write(fd, &i, sizeof(i)) != sizeof(i)) _exit(5);
  }
  auto torn = store->Reserve(WriteSpec{"crash", "torn", WriteKind::kPut, 0, 10000, 0, {}});
  if (!torn.ok()) _exit(6);
  std::memset(torn->payload(), 't', 5000);
  _exit(0);  // no destructors, no commit
}

// What the store holds for `key` after records 0..upto: the records since the last
// put or delete of that key. `last_delete` says whether the delete that may follow
// record `upto` happened.
std::vector<uint64_t> Expected(const std::string& key, int64_t upto, bool last_delete) {
  std::vector<uint64_t> recs;
  for (int64_t i = 0; i <= upto; i++) {
    uint32_t n = static_cast<uint32_t>(i);
    if (KeyOf(n) != key) continue;
    if (KindOf(n) == WriteKind::kPut) recs.clear();
    recs.push_back(n);
    if (n % 50 == 49 && (i < upto || last_delete)) recs.clear();
  }
  return recs;
}

// Every acknowledged write must be there byte for byte. The write after the last ack
// may or may not have happened (the child died between Commit and the ack), but its
// effect is all or nothing; nothing uncommitted is visible.
void VerifyAfterCrash(const std::string& path, int64_t last_acked) {
  auto store = OpenOrDie(OptionsFor(path));
  CHECK(store->Get("crash", "torn").status().IsNotFound());
  for (uint32_t k = 0; k < 37; k++) {
    std::string key = "k" + std::to_string(k);
    std::vector<uint64_t> tags;
    auto view = store->Get("crash", key);
    if (view.ok()) {
      for (const RecordInfo& rec : view->records) {
        tags.push_back(rec.tag);
        REQUIRE(std::string(rec.data, rec.length) == ValueOf(static_cast<uint32_t>(rec.tag)));
        REQUIRE(Crc32c(rec.data, rec.length) == rec.crc);
      }
    }
    bool matches = tags == Expected(key, last_acked, true) ||
                   tags == Expected(key, last_acked + 1, false) ||
                   tags == Expected(key, last_acked + 1, true);
    INFO("key " << key << " last acked " << last_acked);
    CHECK(matches);
  }
}

TEST_CASE("a child that dies mid-write loses nothing it acknowledged", "[pmem][crash]") {
  TempPath path("crash-exit");
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  constexpr uint32_t kCount = 400;
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    ChildWriter(path.path(), fds[1], kCount);
  }
  close(fds[1]);
  int64_t last = -1;
  uint32_t index;
  while (read(fds[0], &index, sizeof(index)) == sizeof(index)) last = index;
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(last == kCount - 1);
  VerifyAfterCrash(path.path(), last);
}

TEST_CASE("a child killed with SIGKILL loses nothing it acknowledged", "[pmem][crash]") {
  for (uint32_t kill_after : {1u, 97u, 333u}) {
    TempPath path("crash-kill");
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      close(fds[0]);
      ChildWriter(path.path(), fds[1], 0);
    }
    close(fds[1]);
    int64_t last = -1;
    uint32_t index;
    while (last + 1 < kill_after && read(fds[0], &index, sizeof(index)) == sizeof(index)) {
      last = index;
    }
    kill(child, SIGKILL);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    while (read(fds[0], &index, sizeof(index)) == sizeof(index)) last = index;  // in flight
    close(fds[0]);
    REQUIRE(last + 1 >= kill_after);
    VerifyAfterCrash(path.path(), last);
    // The store stays writable after recovery, and what it writes then (after the
    // torn reservation in the same segment) survives the next reopen.
    {
      auto store = OpenOrDie(OptionsFor(path.path()));
      CHECK(Write(store.get(), "crash", "after", "ok", WriteKind::kAppend).ok());
    }
    auto store = OpenOrDie(OptionsFor(path.path()));
    CHECK(ReadAll(store.get(), "crash", "after") == "ok");
    CHECK(Write(store.get(), "crash", "after", "more", WriteKind::kAppend).ok());
    CHECK(ReadAll(store.get(), "crash", "after") == "okmore");
  }
}

TEST_CASE("SIGKILL during background compaction steps loses nothing and resurrects nothing",
          "[pmem][crash][compact]") {
  uint64_t steps_seen = 0;
  for (uint32_t kill_after : {150u, 400u, 900u}) {
    TempPath path("crash-compact");
    int fds[2], cfds[2];
    REQUIRE(pipe(fds) == 0);
    REQUIRE(pipe(cfds) == 0);
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      close(fds[0]);
      close(cfds[0]);
      ChildWriter(path.path(), fds[1], 0, cfds[1]);
    }
    close(fds[1]);
    close(cfds[1]);
    REQUIRE(fcntl(cfds[0], F_SETFL, O_NONBLOCK) == 0);
    char buf[4096];
    int64_t last = -1;
    uint32_t index;
    while (last + 1 < kill_after && read(fds[0], &index, sizeof(index)) == sizeof(index)) {
      last = index;
      ssize_t n = read(cfds[0], buf, sizeof(buf));  // drained so the child never blocks
      if (n > 0) steps_seen += static_cast<uint64_t>(n);
    }
    kill(child, SIGKILL);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFSIGNALED(status));
    while (read(fds[0], &index, sizeof(index)) == sizeof(index)) last = index;
    for (ssize_t n; (n = read(cfds[0], buf, sizeof(buf))) > 0;) steps_seen += static_cast<uint64_t>(n);
    close(fds[0]);
    close(cfds[0]);
    VerifyAfterCrash(path.path(), last);
    auto store = OpenOrDie(OptionsFor(path.path()));
    CHECK(store->Stats().dead_bytes <= UsedBytes(store.get()));
  }
  CHECK(steps_seen > 0);  // compaction really ran beside the writes
}

}  // namespace
}  // namespace rpmp
