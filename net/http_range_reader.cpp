#include "net/http_range_reader.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>

#include "net/url.h"
#include "support/error.h"
#include "support/text.h"

namespace trainpack::net {
namespace {

// Thrown from the sink when a server answers a range request with more bytes than asked for (it ignored Range).
struct WholeFileSent {};

bool parse_u64(std::string_view s, std::uint64_t& out) {
  auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && error == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::optional<ContentRange> parse_content_range(const std::string& value) {
  std::string_view v(value);
  if (!v.starts_with("bytes ")) return std::nullopt;
  v.remove_prefix(6);
  auto dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
  ContentRange r;
  if (!parse_u64(v.substr(0, dash), r.first) || !parse_u64(v.substr(dash + 1, slash - dash - 1), r.last) ||
      !parse_u64(v.substr(slash + 1), r.total) || r.first > r.last || r.last >= r.total)
    return std::nullopt;
  return r;
}

std::optional<HttpRangeReader::Range> HttpRangeReader::get(const std::string& range, std::uint64_t limit) {
  HttpRequest req = request_;
  req.headers.emplace_back("Range", "bytes=" + range);
  std::string body;
  req.sink = [&](const char* data, std::size_t n) {
    if (body.size() + n > limit) throw WholeFileSent{};
    body.append(data, n);
  };
  req.on_restart = [&] { body.clear(); };
  ++requests_;
  HttpResponse resp;
  try {
    resp = http_->send(req);
  } catch (const WholeFileSent&) {
    return std::nullopt;
  }
  if (resp.status == 416) return std::nullopt;
  if (resp.status == 200) {  // the whole file, small enough to have come within the limit
    Range whole;
    whole.total = body.size();
    whole.bytes = std::move(body);
    return whole;
  }
  std::string where = "GET " + url_for_display(request_.url) + " (bytes " + range + ")";
  if (resp.status != 206)
    throw Error(where + ": HTTP " + std::to_string(resp.status), "the index refused a range of a wheel; try again");
  std::optional<ContentRange> cr = parse_content_range(resp.header("content-range"));
  if (!cr || cr->last - cr->first + 1 != body.size())
    throw Error(where + ": the answer's Content-Range does not describe its body",
                "the index or a proxy answers range requests wrongly");
  return Range{cr->first, std::move(body), cr->total};
}

// Some servers (busybox httpd) answer ranges but not suffix ranges: their size and Accept-Ranges from a HEAD, then
// the tail by offsets, as pip's lazy_wheel.py asks.
std::optional<HttpRangeReader::Range> HttpRangeReader::get_tail_by_size() {
  HttpRequest head = request_;
  head.method = "HEAD";
  ++requests_;
  HttpResponse resp = http_->send(head);
  std::uint64_t size = 0;
  if (resp.status != 200 || ascii_lower(resp.header("accept-ranges")) != "bytes" ||
      !parse_u64(resp.header("content-length"), size) || size == 0)
    return std::nullopt;
  std::uint64_t first = size > kTail ? size - kTail : 0;
  std::optional<Range> tail = get(std::to_string(first) + "-" + std::to_string(size - 1), size - first);
  if (tail && (tail->first != first || tail->total != size)) return std::nullopt;
  return tail;
}

std::optional<HttpRangeReader> HttpRangeReader::open(HttpClient& http, HttpRequest request, TailBy first_try) {
  request.method = "GET";
  HttpRangeReader reader(http, std::move(request));
  std::optional<Range> tail;
  if (first_try == TailBy::suffix) tail = reader.get("-" + std::to_string(kTail), kTail);
  if (!tail) {
    reader.tail_by_ = TailBy::size;
    tail = reader.get_tail_by_size();
  }
  if (!tail) return std::nullopt;
  reader.size_ = tail->total;
  if (!tail->bytes.empty()) reader.received_.emplace(tail->first, std::move(tail->bytes));
  return reader;
}

const std::string* HttpRangeReader::whole() const {
  auto first = received_.find(0);
  return first != received_.end() && first->second.size() == size_ ? &first->second : nullptr;
}

void HttpRangeReader::read_at(std::uint64_t offset, char* out, std::size_t size) {
  if (offset > size_ || size > size_ - offset)
    throw Error("GET " + url_for_display(request_.url) + ": read past the end of the file");
  while (size > 0) {
    auto next = received_.upper_bound(offset);
    if (next != received_.begin()) {
      auto held = std::prev(next);
      std::uint64_t held_end = held->first + held->second.size();
      if (offset < held_end) {
        std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, held_end - offset));
        std::memcpy(out, held->second.data() + (offset - held->first), n);
        out += n;
        offset += n;
        size -= n;
        continue;
      }
    }
    fetch(offset, size, next);
  }
}

void HttpRangeReader::fetch(std::uint64_t offset, std::size_t size, std::map<std::uint64_t, std::string>::iterator next) {
  // libzip reads the central directory entry by entry, up to the end records already held: a gap of up to kMaxGap
  // before the next bytes held is asked for whole; what is held is not asked for again.
  std::uint64_t end = std::min(size_, offset + std::max<std::uint64_t>(size, kMinFetch));
  if (next != received_.end()) end = next->first - offset <= kMaxGap ? next->first : std::min(end, next->first);
  std::optional<Range> got = get(std::to_string(offset) + "-" + std::to_string(end - 1), end - offset);
  if (!got || got->first != offset || got->bytes.size() != end - offset || got->total != size_)
    throw Error("GET " + url_for_display(request_.url) + ": the server did not answer with the range asked for",
                "the file changed on the index during the build, or a proxy mangles range requests; try again");
  // Held bytes stay in disjoint, merged spans, so that a read across two fetches is served whole.
  auto at = received_.emplace_hint(next, offset, std::move(got->bytes));
  if (next != received_.end() && next->first == end) {
    at->second += next->second;
    received_.erase(next);
  }
  if (at != received_.begin()) {
    auto before = std::prev(at);
    if (before->first + before->second.size() == offset) {
      before->second += at->second;
      received_.erase(at);
    }
  }
}

}  // namespace trainpack::net
