#pragma once
// A zstd frame (RFC 8878) for layers of media type application/vnd.oci.image.layer.v1.tar+zstd (OCI image-spec
// layer.md), compressed by libzstd on its own worker threads. With one worker or more, libzstd cuts the input into
// jobs whose size depends only on the parameters, so the bytes are the same for any number of threads (tested).
// Unlike gzip, nothing is spliced: wheel members are inflated and compressed again.
#include <cstddef>
#include <memory>

#include "layers/gzip_encoder.h"

namespace trainpack::layers {

struct ZstdOptions {
  int level = 3;         // zstd's default: about zlib -6's ratio at several times its speed
  unsigned threads = 0;  // 0: one per core
};

class ZstdEncoder {
 public:
  ZstdEncoder(ZstdOptions options, ByteSink sink);
  ~ZstdEncoder();
  ZstdEncoder(const ZstdEncoder&) = delete;
  ZstdEncoder& operator=(const ZstdEncoder&) = delete;

  void write(const void* data, std::size_t size);
  // Compresses what is left and ends the frame. Call once.
  void finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainpack::layers
