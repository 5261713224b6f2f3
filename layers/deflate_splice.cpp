#include "layers/deflate_splice.h"

#include <zlib.h>

#include <optional>

#include "support/error.h"

namespace trainpack::layers {

namespace {
constexpr std::size_t kPlainChunk = 256 * 1024;
// data_type bits on every inflate() return (zlib.h, Z_BLOCK and Z_TREES).
constexpr int kUnusedBitsMask = 63;
constexpr int kInLastBlock = 64;
constexpr int kAtBlockBoundary = 128;
constexpr int kAfterBlockHeader = 256;
}  // namespace

class DeflateSplicer::Impl {
 public:
  Impl(Sink plain, Sink spliceable) : plain_(std::move(plain)), spliceable_(std::move(spliceable)) {
    if (inflateInit2(&z_, -15) != Z_OK) throw Error("zlib could not initialise inflate");
    buffer_.resize(kPlainChunk);
  }
  ~Impl() { inflateEnd(&z_); }

  void write(const char* data, std::size_t size) {
    if (ended_ && size > 0) throw Error("compressed data goes on after the end of its deflate stream");
    drop_passed();
    held_.append(data, size);
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z_.avail_in = static_cast<uInt>(size);
    while (!ended_) {
      z_.next_out = reinterpret_cast<Bytef*>(buffer_.data());
      z_.avail_out = static_cast<uInt>(buffer_.size());
      int rc = inflate(&z_, Z_TREES);
      std::size_t produced = buffer_.size() - z_.avail_out;
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
        throw Error(std::string("not valid deflate data (") + (z_.msg ? z_.msg : "zlib error") + ")");
      pass_plain(produced);
      if (rc == Z_STREAM_END) ended_ = true;
      track_blocks();
      // Z_TREES returns at every block boundary and after every header, possibly with input left or with bits
      // still in inflate's buffer, and then says Z_BUF_ERROR when nothing was consumed or produced in that call.
      // Call again until a call that is not such a stop makes no progress with all input consumed.
      bool stopped_at_block = (z_.data_type & (kAtBlockBoundary | kAfterBlockHeader)) != 0;
      if (rc == Z_BUF_ERROR && z_.avail_in == 0 && !stopped_at_block) break;
    }
    if (ended_ && z_.avail_in > 0) throw Error("compressed data goes on after the end of its deflate stream");
  }

  void finish() {
    if (!ended_ || !end_bit_) throw Error("the deflate stream ends before its last block does");
    drop_passed();
    // Drop anything past the end bit, then an empty stored block (3 header bits, padding, LEN 0, NLEN 0xffff).
    std::uint64_t end_bit = *end_bit_;
    std::uint64_t aligned_end = (end_bit + 3 + 7) / 8;
    held_.resize(static_cast<std::size_t>(aligned_end - held_start_), '\0');
    std::size_t last_byte = static_cast<std::size_t>(end_bit / 8 - held_start_);
    if (end_bit % 8 != 0) held_[last_byte] = static_cast<char>(held_[last_byte] & ((1 << (end_bit % 8)) - 1));
    for (std::size_t i = last_byte + (end_bit % 8 != 0 ? 1 : 0); i < held_.size(); ++i) held_[i] = '\0';
    held_.append("\0\0\xff\xff", 4);
    spliceable_(held_.data(), held_.size());
    held_start_ += held_.size();
    passed_ = held_start_;
    held_.clear();
  }

  std::uint64_t plain_size = 0;
  std::uint32_t crc = 0;

 private:
  void pass_plain(std::size_t produced) {
    if (produced == 0) return;
    crc = static_cast<std::uint32_t>(crc32(crc, reinterpret_cast<const Bytef*>(buffer_.data()),
                                           static_cast<uInt>(produced)));
    plain_size += produced;
    plain_(buffer_.data(), produced);
  }

  // Bits of input decoded so far (inflate may hold more in its bit buffer: data_type says how many).
  std::uint64_t decoded_bit() const {
    return static_cast<std::uint64_t>(z_.total_in) * 8 - static_cast<std::uint64_t>(z_.data_type & kUnusedBitsMask);
  }

  // A block header's first bit is BFINAL (RFC 1951 §3.2.3). Its byte is held until the header is decoded; in the
  // last block the bit is cleared. Bytes before the earliest undecided header go on.
  void track_blocks() {
    int type = z_.data_type;
    if ((type & kAtBlockBoundary) && (type & kInLastBlock)) {
      // The last block's end-of-block code: the exact end (inflate then skips to a byte boundary).
      end_bit_ = decoded_bit();
    } else if ((type & kAtBlockBoundary) && !ended_) {
      open_header_ = decoded_bit();
    }
    if ((type & kAfterBlockHeader) && open_header_) {
      if (type & kInLastBlock) {
        std::size_t at = static_cast<std::size_t>(*open_header_ / 8 - held_start_);
        held_[at] = static_cast<char>(held_[at] & ~(1 << (*open_header_ % 8)));
      }
      open_header_.reset();
    }
    if (end_bit_) return;  // finish() writes the tail
    std::uint64_t safe_end = open_header_ ? *open_header_ / 8 : decoded_bit() / 8;
    if (safe_end > passed_) {
      spliceable_(held_.data() + (passed_ - held_start_), static_cast<std::size_t>(safe_end - passed_));
      passed_ = safe_end;
    }
  }

  // Forgets the bytes passed on, once per write: erasing them at every block boundary would move the rest of the
  // buffer each time.
  void drop_passed() {
    held_.erase(0, static_cast<std::size_t>(passed_ - held_start_));
    held_start_ = passed_;
  }

  Sink plain_;
  Sink spliceable_;
  z_stream z_{};
  std::string buffer_;
  std::string held_;                       // compressed bytes not passed on yet, from held_start_
  std::uint64_t held_start_ = 0;
  std::uint64_t passed_ = 0;                // compressed bytes passed on so far (held_ keeps them until drop_passed)
  std::optional<std::uint64_t> open_header_ = 0;  // bit where a header whose BFINAL is unknown starts
  std::optional<std::uint64_t> end_bit_;          // bit after the last block's end-of-block code
  bool ended_ = false;
};

DeflateSplicer::DeflateSplicer(Sink plain, Sink spliceable)
    : impl_(std::make_unique<Impl>(std::move(plain), std::move(spliceable))) {}
DeflateSplicer::~DeflateSplicer() = default;
void DeflateSplicer::write(const char* data, std::size_t size) { impl_->write(data, size); }
void DeflateSplicer::finish() { impl_->finish(); }
std::uint64_t DeflateSplicer::plain_size() const { return impl_->plain_size; }
std::uint32_t DeflateSplicer::plain_crc32() const { return impl_->crc; }

}  // namespace trainpack::layers
