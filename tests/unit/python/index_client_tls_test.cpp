// An index URL written https:// for an index that speaks plain HTTP (a server on this machine that answers every
// request with an empty HTTP page): the TLS handshake fails, and the hint must be one that works.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "net/http_client.h"
#include "python/index_client.h"
#include "store/cache_dir.h"
#include "support/error.h"
#include "support/fs.h"

namespace {

namespace fs = std::filesystem;

// Plain HTTP on 127.0.0.1, a free port: an empty 200 for whatever arrives (a TLS ClientHello too).
class PlainHttpServer {
 public:
  PlainHttpServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("cannot listen on 127.0.0.1");
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~PlainHttpServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }
  std::string authority() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  void serve() {
    while (!stop_) {
      int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      char buf[4096];
      (void)::recv(client, buf, sizeof buf, 0);
      const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 0\r\n"
                                 "Connection: close\r\n\r\n";
      (void)::send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(client);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// --insecure-registry, the registries' switch, cannot change a URL's scheme: the hint says to write the URL with
// http://, and asks for plain HTTP to be allowed only where it is not already (this machine's always is).
TEST(IndexClientTls, AnHttpsUrlOfAPlainHttpIndexIsToldToSayHttp) {
  trainpack::ScopedDir tmp(trainpack::make_temp_dir({}, "index-client-tls-"));
  trainpack::store::CacheDir cache(tmp.path() / "cache");
  trainpack::net::HttpOptions options;
  options.max_attempts = 1;
  options.certs_dirs.clear();
  trainpack::net::HttpClient http(options);
  PlainHttpServer server;
  trainpack::python::IndexClientOptions index;
  index.use_netrc = false;
  index.index_urls = {"https://" + server.authority() + "/simple/"};
  trainpack::python::IndexClient client(http, cache, index);
  try {
    client.project_files("demo");
    FAIL() << "an https:// URL of a plain HTTP index answered";
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("https://" + server.authority() + "/simple/demo/"), std::string::npos)
        << e.what();
    EXPECT_NE(e.hint().find("write its URL with http://" + server.authority() + "/"), std::string::npos) << e.hint();
    EXPECT_EQ(e.hint().find("--insecure-registry"), std::string::npos) << e.hint();
  }
  index.index_urls = {"http://" + server.authority() + "/simple/"};
  trainpack::python::IndexClient plain(http, cache, index);
  EXPECT_TRUE(plain.project_files("demo").empty()) << "the same URL with http:// is read as written";
}

}  // namespace
