#pragma once
// SilentListener: a TCP port on 127.0.0.1 that never answers, for deadline tests.
//   SilentListener silent;                    // connections complete in the kernel; requests are never read
//   SilentListener dropped(SilentListener::kDropSyns);  // its accept queue is full, so new SYNs get no answer at all,
//                                             // as from a host behind a firewall that drops them
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace trainpack::testing {

class SilentListener {
 public:
  enum Mode { kAcceptInKernel, kDropSyns };

  explicit SilentListener(Mode mode = kAcceptInKernel) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd_, mode == kDropSyns ? 0 : 16) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("SilentListener: cannot listen on 127.0.0.1");
    port_ = ntohs(a.sin_port);
    // Linux drops a SYN while the listener's accept queue is full (backlog 0: one connection fills it).
    for (int i = 0; mode == kDropSyns && i < 3; ++i) {
      int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      (void)::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
      fillers_.push_back(c);
    }
    if (mode == kDropSyns) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ~SilentListener() {
    for (int c : fillers_) ::close(c);
    ::close(fd_);
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::vector<int> fillers_;
};

}  // namespace trainpack::testing
