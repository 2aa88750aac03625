// Implementation of DiagnoseTls (tls_diagnose.h) with OpenSSL.
#include "proto/tls_diagnose.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>

#include "common/config_util.h"
#include "common/tcp_connect.h"

namespace rpmp {
namespace {

struct SslCtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;
using SslPtr = std::unique_ptr<SSL, SslFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;

// Closes the socket (after the SSL that uses it is freed: declare it first).
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string Name(X509_NAME* name) {
  BIO* b = BIO_new(BIO_s_mem());
  X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  std::string out(data, n > 0 ? static_cast<size_t>(n) : 0);
  BIO_free(b);
  return out.empty() ? "(empty)" : out;
}

std::string Sans(X509* cert) {
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  std::string out;
  for (int i = 0; names != nullptr && i < sk_GENERAL_NAME_num(names); i++) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(names, i);
    std::string one;
    if (g->type == GEN_DNS) {
      one = "DNS:" + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(g->d.dNSName)),
                                 ASN1_STRING_length(g->d.dNSName));
    } else if (g->type == GEN_IPADD) {
      char buf[INET6_ADDRSTRLEN] = "?";
      int len = ASN1_STRING_length(g->d.iPAddress);
      const unsigned char* p = ASN1_STRING_get0_data(g->d.iPAddress);
      if (len == 4 || len == 16) inet_ntop(len == 4 ? AF_INET : AF_INET6, p, buf, sizeof(buf));
      one = std::string("IP:") + buf;
    } else {
      continue;
    }
    out += (out.empty() ? "" : ", ") + one;
  }
  GENERAL_NAMES_free(names);
  return out.empty() ? "none" : out;
}

// "subject CN=rpmp-proxy; SANs DNS:proxy1.example, IP:10.0.0.10"
std::string Describe(X509* cert) {
  return "subject " + Name(X509_get_subject_name(cert)) + "; SANs " + Sans(cert);
}

// The reason of the oldest queued OpenSSL error ("tlsv1 alert unknown ca"); clears the queue.
std::string OpenSslReason() {
  unsigned long e = ERR_peek_error();
  const char* r = ERR_reason_error_string(e);
  ERR_clear_error();
  return r != nullptr ? r : "unknown TLS error";
}

// True for an alert the peer sent (e.g. about our certificate), as opposed to a lost
// connection.
bool IsAlert(const std::string& reason) { return reason.find("alert") != std::string::npos; }

// The first certificate verification error of the handshake (the callback lets the
// handshake go on, so that the certificate can be described).
int FirstVerifyError(X509_STORE_CTX* store, int* first) {
  int err = X509_STORE_CTX_get_error(store);
  if (err != X509_V_OK && *first == X509_V_OK) *first = err;
  return 1;
}

int VerifyCallback(int ok, X509_STORE_CTX* store) {
  SSL* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  auto* first = static_cast<int*>(SSL_get_app_data(ssl));
  return ok ? 1 : FirstVerifyError(store, first);
}

void SetTimeouts(int fd, std::chrono::milliseconds left) {
  if (left.count() < 1) left = std::chrono::milliseconds(1);
  timeval tv{static_cast<time_t>(left.count() / 1000), static_cast<suseconds_t>(left.count() % 1000 * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

// The context with the client's files, verifying the peer against `host` as gRPC does.
SslCtxPtr MakeContext(const TlsFiles& files) {
  SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return nullptr;
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  if (SSL_CTX_load_verify_locations(ctx.get(), files.ca_file.c_str(), nullptr) != 1 ||
      SSL_CTX_use_certificate_chain_file(ctx.get(), files.cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx.get(), files.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    ERR_clear_error();
    return nullptr;  // unreadable files: the credentials already say so
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, VerifyCallback);
  static const unsigned char kAlpn[] = {2, 'h', '2'};  // gRPC servers require ALPN h2
  SSL_CTX_set_alpn_protos(ctx.get(), kAlpn, sizeof(kAlpn));
  return ctx;
}

std::string OurCertificate(const TlsFiles& files, SSL_CTX* ctx) {
  X509* mine = SSL_CTX_get0_certificate(ctx);
  return mine == nullptr ? files.cert_file : Describe(mine) + ", from " + files.cert_file;
}

Status ClientCertificateRefused(const std::string& addr, const TlsFiles& files, SSL_CTX* ctx, const std::string& why) {
  return Status::FailedPrecondition("proxy " + addr + " refused this client's TLS certificate (" +
                                    OurCertificate(files, ctx) + "): " + why +
                                    ": it must be signed by the CA the proxies trust (their --tls-ca)");
}

Status PeerCertificateProblem(const std::string& addr, const std::string& host, const TlsFiles& files, X509* peer,
                              int error) {
  std::string cert = "a TLS certificate (" + Describe(peer) + ")";
  if (error == X509_V_ERR_HOSTNAME_MISMATCH || error == X509_V_ERR_IP_ADDRESS_MISMATCH)
    return Status::FailedPrecondition(
        "proxy " + addr + " presents " + cert + " that does not name " + host +
        ", the address it was dialled with: name the proxy by one of the certificate's SANs (--proxy, "
        "RPMP_PROXIES, the servers' proxies), or reissue its certificate with " + host + " among the SANs");
  return Status::FailedPrecondition("proxy " + addr + " presents " + cert + ", issuer " +
                                    Name(X509_get_issuer_name(peer)) + ", that does not verify against " +
                                    files.ca_file + ": " + X509_verify_cert_error_string(error));
}

}  // namespace

Status DiagnoseTls(const std::string& host_port, const TlsFiles& files, std::chrono::milliseconds timeout) {
  StatusOr<HostPort> hp = ParseHostPort(host_port);
  if (!hp.ok() || files.empty()) return Status::Ok();
  const auto until = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
  };
  SslCtxPtr ctx = MakeContext(files);
  if (!ctx) return Status::Ok();
  Fd sock;  // destroyed after ssl
  sock.fd = ConnectTcp(hp->host, hp->port, timeout).fd;
  if (sock.fd < 0) return Status::Ok();
  fcntl(sock.fd, F_SETFL, fcntl(sock.fd, F_GETFL) & ~O_NONBLOCK);
  SetTimeouts(sock.fd, left());
  SslPtr ssl(SSL_new(ctx.get()));
  int first_error = X509_V_OK;
  SSL_set_app_data(ssl.get(), &first_error);
  in6_addr ip;
  bool is_ip = inet_pton(AF_INET, hp->host.c_str(), &ip) == 1 || inet_pton(AF_INET6, hp->host.c_str(), &ip) == 1;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl.get());
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, hp->host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, hp->host.c_str(), 0);
    SSL_set_tlsext_host_name(ssl.get(), hp->host.c_str());
  }
  SSL_set_fd(ssl.get(), sock.fd);
  int rc = SSL_connect(ssl.get());
  if (rc != 1) {
    if (SSL_get_error(ssl.get(), rc) != SSL_ERROR_SSL) return Status::Ok();  // lost, timed out: nothing to say
    std::string why = OpenSslReason();
    if (first_error != X509_V_OK || !IsAlert(why)) return Status::Ok();
    return ClientCertificateRefused(host_port, files, ctx.get(), why);
  }
  X509Ptr peer(SSL_get1_peer_certificate(ssl.get()));
  if (peer && first_error != X509_V_OK) return PeerCertificateProblem(host_port, hp->host, files, peer.get(), first_error);
  // TLS 1.3: a refused client certificate arrives as an alert after our side of the
  // handshake completed. Wait briefly for it; anything else (data, silence) is fine.
  SetTimeouts(sock.fd, std::min(left(), std::chrono::milliseconds(200)));
  char byte;
  rc = SSL_read(ssl.get(), &byte, 1);
  if (rc <= 0 && SSL_get_error(ssl.get(), rc) == SSL_ERROR_SSL) {
    std::string why = OpenSslReason();
    if (IsAlert(why)) return ClientCertificateRefused(host_port, files, ctx.get(), why);
  }
  ERR_clear_error();
  return Status::Ok();
}

}  // namespace rpmp
