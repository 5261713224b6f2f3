#pragma once
// A blob copied from one registry to another without touching the disk: a thread downloads it from the source
// into a bounded buffer while the upload to the target reads from that buffer (what crane copy does for a
// blob the target cannot mount). Memory stays at the buffer size whatever the blob's.
//
// Nothing unverified is committed: the upload carries a Content-Length, so the target finalises the blob when it
// has the last byte. The relay holds that byte back until the download has ended with exactly the descriptor's size
// and sha256; a short, long or corrupt source fails the upload instead (the target then discards the session).
#include <cstddef>
#include <memory>
#include <string>

#include "image/image.h"
#include "net/http_client.h"
#include "registry/registry_client.h"
#include "support/error.h"

namespace trainpack::registry {

// The source failed in a way another try may not (connection broken mid-blob, truncated body): the upload that
// read from the relay may be started again with a new relay.
class RelayInterrupted : public Error {
 public:
  using Error::Error;
};

// Opens a stream of blob `descriptor` from `repository` on `source`. The download starts at once on its own thread;
// destroying the stream cancels it.
std::unique_ptr<net::HttpRequest::BodyStream> open_blob_relay(RegistryClient& source, const std::string& repository,
                                                         const image::Descriptor& descriptor,
                                                         std::size_t buffer_bytes = 8u << 20);

}  // namespace trainpack::registry
