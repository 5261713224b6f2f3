#include "registry/blob_relay.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "image/digest.h"
#include "support/error.h"

namespace trainpack::registry {
namespace {

struct Cancelled {};  // thrown from the download's sink to abort it when the upload side is gone

class Relay : public net::HttpRequest::BodyStream {
 public:
  Relay(RegistryClient& source, std::string repository, image::Descriptor d, std::size_t capacity)
      : source_(source), repository_(std::move(repository)), d_(std::move(d)), capacity_(std::max<std::size_t>(capacity, 64u << 10)) {
    thread_ = std::thread([this] { download(); });
  }

  ~Relay() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      cancelled_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  std::size_t read(char* buffer, std::size_t max) override {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (error_) std::rethrow_exception(error_);
      if (delivered_ >= d_.size) return 0;
      // Everything but the final byte may go as soon as it is here; the final byte only once verified.
      std::uint64_t releasable = verified_ ? buffer_.size()
                                           : std::min<std::uint64_t>(buffer_.size(), d_.size - 1 - delivered_);
      if (releasable > 0) {
        std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(max, releasable));
        std::copy_n(buffer_.begin(), n, buffer);
        buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(n));
        delivered_ += n;
        lock.unlock();
        changed_.notify_all();
        return n;
      }
      changed_.wait(lock);
    }
  }

 private:
  std::string where() const { return "blob " + d_.digest.str() + " of " + source_.registry() + "/" + repository_; }

  void fail(std::exception_ptr e) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = e;
    }
    changed_.notify_all();
  }

  void download() {
    try {
      image::Sha256 hash;
      std::uint64_t received = 0;
      net::HttpRequest get;
      get.url = "/v2/" + repository_ + "/blobs/" + d_.digest.str();
      get.sink = [&](const char* data, std::size_t size) {
        received += size;
        if (received > d_.size) throw Error("copying " + where() + ": the source sent more than " + std::to_string(d_.size) + " bytes");
        hash.update(data, size);
        std::unique_lock<std::mutex> lock(mutex_);
        while (size > 0) {
          changed_.wait(lock, [&] { return cancelled_ || buffer_.size() < capacity_; });
          if (cancelled_) throw Cancelled{};
          std::size_t n = std::min(size, capacity_ - buffer_.size());
          buffer_.insert(buffer_.end(), data, data + n);
          data += n;
          size -= n;
          changed_.notify_all();
        }
      };
      // Bytes already handed to the upload cannot be taken back: a download that has to start over fails this
      // upload attempt, and the upload's own retry opens a new relay.
      get.on_restart = [&] {
        throw RelayInterrupted("copying " + where() + ": the source connection broke mid-blob", "try again");
      };
      net::HttpResponse r = source_.send(get, {pull_scope(repository_)});
      if (r.status != 200) throw Error("cannot copy " + where() + ": " + describe_registry_error(r));
      if (received != d_.size)
        throw RelayInterrupted("copying " + where() + ": the source sent " + std::to_string(received) + " bytes, expected " +
                        std::to_string(d_.size),
                    "the source registry sent a truncated blob; try again");
      image::Digest got = hash.finish();
      if (got != d_.digest)
        throw Error("copying " + where() + ": the bytes hash to " + got.str(), "the source registry sent corrupt data");
      {
        std::lock_guard<std::mutex> lock(mutex_);
        verified_ = true;
      }
      changed_.notify_all();
    } catch (const Cancelled&) {
      // the upload side is gone; nobody reads the result
    } catch (...) {
      fail(std::current_exception());
    }
  }

  RegistryClient& source_;
  const std::string repository_;
  const image::Descriptor d_;
  const std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<char> buffer_;
  std::uint64_t delivered_ = 0;
  bool verified_ = false;
  bool cancelled_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<net::HttpRequest::BodyStream> open_blob_relay(RegistryClient& source, const std::string& repository,
                                                         const image::Descriptor& descriptor, std::size_t buffer_bytes) {
  if (descriptor.digest.algorithm() != "sha256")
    throw Error("cannot copy blob " + descriptor.digest.str() + ": unsupported digest algorithm");
  if (descriptor.size == 0) throw Error("cannot copy blob " + descriptor.digest.str() + ": it is empty");
  return std::make_unique<Relay>(source, repository, descriptor, buffer_bytes);
}

}  // namespace trainpack::registry
