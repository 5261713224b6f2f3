#include "layers/zstd_encoder.h"

#include <zstd.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "support/error.h"

namespace trainpack::layers {

class ZstdEncoder::Impl {
 public:
  Impl(ZstdOptions options, ByteSink sink) : cctx_(ZSTD_createCCtx()), sink_(std::move(sink)) {
    if (!cctx_) throw Error("cannot start zstd compression: out of memory");
    unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, options.level));
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1));  // as the zstd tool writes it
    // Always the multi-threaded format (workers >= 1): its bytes do not depend on how many workers there are.
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_nbWorkers, static_cast<int>(threads)));
    out_.resize(ZSTD_CStreamOutSize());
  }
  ~Impl() { ZSTD_freeCCtx(cctx_); }

  void write(const void* data, std::size_t size) {
    ZSTD_inBuffer in{data, size, 0};
    while (in.pos < in.size) drain(&in, ZSTD_e_continue);
  }

  void finish() {
    ZSTD_inBuffer in{nullptr, 0, 0};
    while (drain(&in, ZSTD_e_end) != 0) {
    }
  }

 private:
  // One call to libzstd; what it produced goes to the sink. Returns what ZSTD_e_end still has to flush.
  std::size_t drain(ZSTD_inBuffer* in, ZSTD_EndDirective mode) {
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    std::size_t left = check(ZSTD_compressStream2(cctx_, &out, in, mode));
    if (out.pos) sink_(out_.data(), out.pos);
    return left;
  }

  static std::size_t check(std::size_t rc) {
    if (ZSTD_isError(rc)) throw Error(std::string("zstd compression failed: ") + ZSTD_getErrorName(rc));
    return rc;
  }

  ZSTD_CCtx* cctx_;
  ByteSink sink_;
  std::vector<char> out_;
};

ZstdEncoder::ZstdEncoder(ZstdOptions options, ByteSink sink)
    : impl_(std::make_unique<Impl>(options, std::move(sink))) {}
ZstdEncoder::~ZstdEncoder() = default;
void ZstdEncoder::write(const void* data, std::size_t size) { impl_->write(data, size); }
void ZstdEncoder::finish() { impl_->finish(); }

}  // namespace trainpack::layers
