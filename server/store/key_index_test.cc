// Unit tests of KeyIndex (key_index.h): its hash lookups and its sorted listing agree with
// a plain std::map through random inserts and erases, and erasing leaves no dangling view.
#include "server/store/key_index.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>

namespace rpmp {
namespace {

TEST_CASE("key index: finds, adds and erases keys, and lists them in byte order") {
  KeyIndex<int> index;
  CHECK(index.empty());
  CHECK(index.Find("a") == nullptr);
  index["b"] = 2;
  index["a"] = 1;
  index["a"] += 10;  // the same entry again
  REQUIRE(index.Find("a") != nullptr);
  CHECK(*index.Find("a") == 11);
  CHECK(index.size() == 2);
  auto it = index.UpperBound("");
  REQUIRE(it != index.End());
  CHECK(it->first == "a");
  CHECK((++it)->first == "b");
  CHECK(++it == index.End());
  CHECK(index.UpperBound("a")->first == "b");
  CHECK(index.Erase("a"));
  CHECK_FALSE(index.Erase("a"));
  CHECK(index.Find("a") == nullptr);
  index["a"] = 5;  // back after its erase: a fresh entry
  CHECK(*index.Find("a") == 5);
  index.clear();
  CHECK(index.empty());
  CHECK(index.Find("b") == nullptr);
}

TEST_CASE("key index: agrees with std::map through 20,000 random inserts and erases") {
  KeyIndex<int> index;
  std::map<std::string, int> model;
  std::mt19937 rng(20261205);
  // Long keys sharing a prefix (not held inline by std::string), as YCSB's are.
  auto key = [&] { return "user-with-a-long-prefix-" + std::to_string(rng() % 500); };
  for (int i = 0; i < 20000; i++) {
    std::string k = key();
    if (rng() % 3 == 0) {
      CHECK(index.Erase(k) == (model.erase(k) == 1));
    } else {
      index[k] = i;
      model[k] = i;
    }
    std::string probe = key();
    auto m = model.find(probe);
    int* e = index.Find(probe);
    REQUIRE((e != nullptr) == (m != model.end()));
    if (e != nullptr) CHECK(*e == m->second);
  }
  REQUIRE(index.size() == model.size());
  auto it = index.UpperBound("");
  for (const auto& [k, v] : model) {
    REQUIRE(it != index.End());
    CHECK(it->first == k);
    CHECK(it->second == v);
    ++it;
  }
  CHECK(it == index.End());
}

}  // namespace
}  // namespace rpmp
