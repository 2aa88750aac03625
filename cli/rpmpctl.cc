// rpmpctl: the command-line tool for people and scripts. Each command is one call of
// librpmp against one server; output goes to stdout, a one-line reason to stderr.
// Exit status: 0 success, 1 the operation failed (e.g. a missing key), 2 bad usage.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "cli/cluster_commands.h"
#include "cli/stat_command.h"
#include "cli/token_command.h"
#include "common/config_util.h"
#include "proto/proxy_client.h"
#include "rpmp/client.h"
#include "rpmp/cluster.h"
#include "transport/fast_start/short_lived.h"

namespace rpmp {
namespace {

using cli::Bad;
using cli::Fail;

constexpr const char* kUsage =
    "usage: rpmpctl (--server HOST:PORT | --proxy HOST:PORT[,HOST:PORT]) [--timeout DURATION]\n"
    "               [--provider P] COMMAND ...\n"
    "  without --server and --proxy, RPMP_PROXIES (HOST:PORT,...) names the proxies;\n"
    "  with proxies, data commands go to the right servers of the cluster.\n"
    "  credentials come from the environment, never the command line: RPMP_SECRET_FILE\n"
    "  (the cluster secret), or RPMP_TOKEN_FILE (a tenant token: only namespaces under its\n"
    "  prefix), and RPMP_TLS_DIR (ca.crt, client.crt, client.key: mutual TLS\n"
    "  to the proxies; drain, nodes rm and deleting others' namespaces need an admin\n"
    "  certificate).\n"
    "commands:\n"
    "  put NS KEY FILE [--tag N]     store FILE ('-' = stdin) as the only record of KEY\n"
    "  append NS KEY FILE [--tag N]  add FILE as one more record of KEY\n"
    "  get NS KEY FILE               write KEY's bytes to FILE ('-' = stdout)\n"
    "  meta NS KEY                   list KEY's records: index, tag, length, crc\n"
    "  del NS KEY                    delete KEY\n"
    "  ls NS                         list keys of NS with sizes and record counts\n"
    "  rmns NS                       delete namespace NS and everything in it\n"
    "  stat                          node id, pools, space, counts; with proxies the\n"
    "                                cluster's totals, then one line per node\n"
    "  alloc SIZE                    allocate raw memory; prints its global address\n"
    "  write ADDR FILE | read ADDR LEN FILE | free ADDR   raw memory\n"
    "cluster commands (proxies only):\n"
    "  nodes                         node map: id, endpoint, state, used/free, per tier; the leader\n"
    "  nodes rm NODE                 remove a DEAD node for good (admin certificate; refused\n"
    "                                while a namespace still places a copy on it)\n"
    "  ns create NAME [--replicas R] [--min-replicas M] [--ttl DURATION]\n"
    "  ns ls [PREFIX] | ns show NAME | ns rm NAME [--recursive]\n"
    "  drain NODE [--cancel]         move a node's namespaces elsewhere\n"
    "  quota set PREFIX [--bytes SIZE] [--namespaces N] [--sessions N]   quota of PREFIX and\n"
    "                                PREFIX/... (sessions: of tenant credentials, per server)\n"
    "                                (admin certificate); writes over it are refused\n"
    "  quota rm PREFIX | quota ls    remove one (admin) | every quota with its use\n"
    "  token issue --prefix P --app A [--ttl DURATION]   a credential for namespaces under P\n"
    "                                from the proxies (stdout; ttl default 24h; an application\n"
    "                                certificate claims P, an admin one may name any P or *)\n"
    "local commands:\n"
    "  token mint --prefix P --app A [--ttl DURATION]   print a tenant token for namespaces\n"
    "                                under P (default ttl 24h; needs RPMP_SECRET_FILE)\n";

struct Args {
  std::string server, proxy, provider = "auto", timeout = "30s";
  std::vector<std::string> words;
  std::map<std::string, std::string> opts;  // --tag
};

int Usage(const std::string& why) {
  if (!why.empty()) std::fprintf(stderr, "rpmpctl: %s\n", why.c_str());
  std::fputs(kUsage, stderr);
  return 2;
}

StatusOr<std::string> ReadInput(const std::string& path) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("cannot read '" + path + "': " + std::strerror(errno));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Status WriteOutput(const std::string& path, const std::string& data) {
  if (path == "-") {
    std::fwrite(data.data(), 1, data.size(), stdout);
    return std::fflush(stdout) == 0 ? Status::Ok() : Status::IOError("stdout");
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) return Status::InvalidArgument("cannot write '" + path + "': " + std::strerror(errno));
  return Status::Ok();
}

StatusOr<uint64_t> ParseTag(const Args& a) {
  auto it = a.opts.find("--tag");
  if (it == a.opts.end()) return uint64_t{0};
  char* end = nullptr;
  errno = 0;
  uint64_t v = std::strtoull(it->second.c_str(), &end, 0);
  if (errno != 0 || end == it->second.c_str() || *end != '\0')
    return Status::InvalidArgument("--tag '" + it->second + "' is not a number");
  return v;
}

int RunCommand(Client& c, const Args& a) {
  const std::vector<std::string>& w = a.words;
  const std::string& cmd = w[0];
  auto need = [&](size_t n) { return w.size() == n + 1; };
  if ((cmd == "put" || cmd == "append") && need(3)) {
    StatusOr<uint64_t> tag = ParseTag(a);
    if (!tag.ok()) return Usage(tag.status().message());
    StatusOr<std::string> data = ReadInput(w[3]);
    if (!data.ok()) return Fail(data.status());
    Status st = cmd == "put" ? c.Put(w[1], w[2], data->data(), data->size(), *tag)
                             : c.Append(w[1], w[2], data->data(), data->size(), *tag);
    return st.ok() ? 0 : Fail(st);
  }
  if (cmd == "get" && need(3)) {
    StatusOr<std::string> v = c.Get(w[1], w[2]);
    if (!v.ok()) return Fail(v.status());
    Status st = WriteOutput(w[3], *v);
    return st.ok() ? 0 : Fail(st);
  }
  if (cmd == "meta" && need(2)) {
    StatusOr<ObjectMeta> m = c.GetMeta(w[1], w[2]);
    if (!m.ok()) return Fail(m.status());
    std::printf("total_length=%llu records=%zu\n", static_cast<unsigned long long>(m->total_length), m->records.size());
    for (size_t i = 0; i < m->records.size(); i++)
      std::printf("%zu\ttag=%llu\tlength=%llu\tcrc=%08x\n", i, static_cast<unsigned long long>(m->records[i].tag),
                  static_cast<unsigned long long>(m->records[i].length), m->records[i].crc);
    return 0;
  }
  if (cmd == "del" && need(2)) {
    Status st = c.Delete(w[1], w[2]);
    return st.ok() ? 0 : Fail(st);
  }
  if (cmd == "ls" && need(1)) {
    StatusOr<std::vector<KeyInfo>> keys = c.List(w[1]);
    if (!keys.ok()) return Fail(keys.status());
    for (const KeyInfo& k : *keys)
      std::printf("%s\t%llu\t%u\n", k.key.c_str(), static_cast<unsigned long long>(k.total_length), k.records);
    return 0;
  }
  if (cmd == "rmns" && need(1)) {
    Status st = c.DeleteNamespace(w[1]);
    return st.ok() ? 0 : Fail(st);
  }
  if (cmd == "stat" && need(0)) return RunStat(c);
  if (cmd == "alloc" && need(1)) {
    StatusOr<uint64_t> size = ParseSize(w[1]);
    if (!size.ok()) return Usage(size.status().message());
    StatusOr<GlobalAddress> a = c.Alloc(*size);
    if (!a.ok()) return Fail(a.status());
    std::printf("%s\n", a->ToString().c_str());
    return 0;
  }
  if ((cmd == "write" && need(2)) || (cmd == "read" && need(3)) || (cmd == "free" && need(1))) {
    StatusOr<GlobalAddress> a = GlobalAddress::Parse(w[1]);
    if (!a.ok()) return Usage(a.status().message());
    if (cmd == "free") {
      Status st = c.Free(*a);
      return st.ok() ? 0 : Fail(st);
    }
    if (cmd == "write") {
      StatusOr<std::string> data = ReadInput(w[2]);
      if (!data.ok()) return Fail(data.status());
      Status st = c.Write(*a, data->data(), data->size());
      return st.ok() ? 0 : Fail(st);
    }
    StatusOr<uint64_t> len = ParseSize(w[2]);
    if (!len.ok()) return Usage(len.status().message());
    std::string out(*len, '\0');
    Status st = c.Read(*a, out.data(), out.size());
    if (st.ok()) st = WriteOutput(w[3], out);
    return st.ok() ? 0 : Fail(st);
  }
  return Usage("bad arguments for '" + cmd + "'");
}

int Main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; i++) {
    std::string s = argv[i];
    if (s == "--help" || s == "-h") { std::fputs(kUsage, stdout); return 0; }
    if (s == "--recursive" || s == "--cancel") {
      a.opts[s] = "1";
      continue;
    }
    if (s.rfind("--", 0) == 0 && s.size() > 2) {
      if (i + 1 >= argc) return Usage("flag " + s + " needs a value");
      std::string v = argv[++i];
      if (s == "--server") a.server = v;
      else if (s == "--provider") a.provider = v;
      else if (s == "--timeout") a.timeout = v;
      else if (s == "--proxy") a.proxy = v;
      else if (s == "--tag" || s == "--replicas" || s == "--min-replicas" || s == "--ttl" || s == "--bytes" ||
               s == "--namespaces" || s == "--sessions" || s == "--prefix" || s == "--app")
        a.opts[s] = v;
      else return Usage("unknown flag " + s);
    } else {
      a.words.push_back(s);
    }
  }
  if (a.words.empty()) return Usage("no command given");
  // token issue asks the proxies (a cluster command); token mint is local.
  if (a.words[0] == "token" && !(a.words.size() > 1 && a.words[1] == "issue")) return RunTokenCommand(a.words, a.opts);
  std::vector<std::string> proxies = a.server.empty() ? ProxiesFromFlagOrEnv(a.proxy) : SplitProxyList(a.proxy);
  if (IsClusterCommand(a.words[0])) return RunClusterCommand(proxies, a.words, a.opts);
  if (a.server.empty() && proxies.empty())
    return Usage("no server given: use --server HOST:PORT, --proxy HOST:PORT or RPMP_PROXIES");
  StatusOr<std::chrono::milliseconds> timeout = ParseDuration(a.timeout);
  if (!timeout.ok()) return Usage(timeout.status().message());
  // Before the first libfabric call; RPMP_FAST_START=0 keeps libfabric's defaults (for
  // measurements: bench/rpmpctl_latency.sh, and diagnosis).
  const char* fast = std::getenv("RPMP_FAST_START");
  if (fast == nullptr || std::string(fast) != "0") PrepareShortLivedFabric(a.provider);
  ClientOptions o;
  o.provider = a.provider;
  o.timeout = *timeout;
  o.name = "rpmpctl";
  o.max_inflight = 4;
  StatusOr<std::unique_ptr<Client>> c = Status::Ok();
  if (a.server.empty()) {
    ClusterOptions co;
    co.client = o;
    co.retry_for = *timeout;
    c = Client::ConnectCluster(proxies, co);
  } else {
    c = Client::Connect(a.server, o);
  }
  if (!c.ok()) return Fail(c.status());
  return RunCommand(**c, a);
}

}  // namespace
}  // namespace rpmp

int main(int argc, char** argv) { return rpmp::Main(argc, argv); }
