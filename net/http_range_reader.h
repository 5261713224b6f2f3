#pragma once
// An HTTP resource read at offsets with Range requests (RFC 9110 §14): how a wheel's METADATA is read from the end
// of the zip without the whole file, as pip's network/lazy_wheel.py and uv do for indexes without PEP 658 metadata.
// The first request asks for the last kTail bytes (a suffix range). A server that answers it with the whole file
// is cut off after kTail bytes and asked with a HEAD whether it takes ranges by offset (Accept-Ranges: bytes, as
// busybox httpd does); if not, the reader reports that it cannot be used. Bytes received are kept, and a read
// that misses asks for everything up to the next bytes held, so libzip's reads of the end records, the central
// directory and one member take a request each at most. Nothing is verified here: the caller checks what it read
// against the file once downloaded.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "net/http_client.h"
#include "support/zip_archive.h"

namespace trainpack::net {

class HttpRangeReader : public ZipByteSource {
 public:
  // Smallest range asked for: a zip's end records and a typical METADATA with its local header fit in one.
  static constexpr std::uint64_t kMinFetch = 64u << 10;
  // The first request: libzip looks for the end of central directory record in the last 65,557 bytes (APPNOTE 4.3.16;
  // a comment of up to 65,535 bytes), and most central directories fit besides.
  static constexpr std::uint64_t kTail = 128u << 10;
  // Largest gap filled in one range: a central directory of about 80,000 members.
  static constexpr std::uint64_t kMaxGap = 8u << 20;

  // How the tail is asked for: a suffix range, or (after a server answered that with the whole file) a HEAD for the
  // size and a range by offsets.
  enum class TailBy { suffix, size };

  // Reads the tail of `request`'s URL, first as `first_try` says. nullopt when the server does not answer with a
  // range (it ignored Range or refused it with 416); throws Error for any other failure (a 4xx/5xx, the network).
  static std::optional<HttpRangeReader> open(HttpClient& http, HttpRequest request, TailBy first_try = TailBy::suffix);
  // The way the tail came: what to try first for the next file of the same server.
  TailBy tail_by() const { return tail_by_; }

  std::uint64_t size() const override { return size_; }
  // Bytes [offset, offset + size): from what was received, else one more Range request (at least kMinFetch bytes,
  // up to the next bytes held when they are within kMaxGap). Throws Error when the server answers other than with
  // exactly that range.
  void read_at(std::uint64_t offset, char* out, std::size_t size) override;
  // The whole file, when what was received covers it (a file no larger than the first range): null otherwise.
  const std::string* whole() const;
  // Range requests sent so far, the first included.
  int requests() const { return requests_; }

 private:
  HttpRangeReader(HttpClient& http, HttpRequest request) : http_(&http), request_(std::move(request)) {}
  // GET of bytes [first, last] (or the last `suffix` bytes when first is empty): the range the server sent, or
  // nullopt when it sent the whole file past `limit` bytes or answered 416.
  struct Range {
    std::uint64_t first = 0;
    std::string bytes;
    std::uint64_t total = 0;
  };
  std::optional<Range> get(const std::string& range, std::uint64_t limit);
  std::optional<Range> get_tail_by_size();
  // Asks for the bytes at `offset` that are not held (`next`: the first span held after it) and keeps them.
  void fetch(std::uint64_t offset, std::size_t size, std::map<std::uint64_t, std::string>::iterator next);

  HttpClient* http_;
  HttpRequest request_;
  std::uint64_t size_ = 0;
  TailBy tail_by_ = TailBy::suffix;
  std::map<std::uint64_t, std::string> received_;  // first offset → bytes
  int requests_ = 0;
};

// "bytes FIRST-LAST/TOTAL" (RFC 9110 §14.4); nullopt when malformed or the total is unknown ("*").
struct ContentRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t total = 0;
};
std::optional<ContentRange> parse_content_range(const std::string& value);

}  // namespace trainpack::net
