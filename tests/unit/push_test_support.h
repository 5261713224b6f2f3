#pragma once
// What the push tests share: a two-layer image in a cache's store (a large layer, asked about before it is sent, and
// a small one), the in-memory registry it goes to (tests/unit/fake_registry.h) and one a base can come from, and
// what push_image is given.
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "image/digest.h"
#include "registry/blob_locations.h"
#include "registry/pusher.h"
#include "registry/registry_client.h"
#include "store/cache_dir.h"
#include "support/fs.h"
#include "tests/unit/fake_registry.h"
#include "tests/unit/image_test_support.h"
#include "tests/unit/sample_bytes.h"

namespace trainpack::test_support {

// Whether `condition` came true within `limit` (a bound, so that a test whose condition never comes fails instead
// of hanging).
inline bool comes_true(const std::function<bool()>& condition, std::chrono::seconds limit = std::chrono::seconds(30)) {
  auto give_up = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Whether `request` sends the bytes of blob `digest` (an upload's PUT, not the empty PUT after a PATCH).
inline bool sends_blob(const net::HttpRequest& request, const image::Digest& digest) {
  return request.method == "PUT" && request.url.find(digest.hex()) != std::string::npos &&
         (request.body_file || request.body_stream);
}

struct PushFixture {
  ScopedDir dir{make_temp_dir({}, "push-")};
  store::CacheDir cache{dir.path() / "cache"};
  BuiltImage built = make_image(cache.blobs().root(), "amd64", {{"large", incompressible(100u << 10)}, {"small", "s"}});
  const image::Digest large = built.layers[0].digest, small = built.layers[1].digest, config = built.config_digest;
  FakeRegistry registry, source;  // reg.test, and src.test
  registry::Keychain keychain{{}};
  registry::RegistryClient client{std::ref(registry), keychain, "reg.test", "http"};
  registry::RegistryClient source_client{std::ref(source), keychain, "src.test", "http"};
  registry::BlobLocations locations{cache.area(store::CacheKind::kBlobLocations)};
  registry::Reference target{"reg.test", "t", "latest", ""};
  std::vector<registry::BlobEvent> events;
  registry::PushOptions options;

  PushFixture() {
    options.locations = &locations;
    options.on_blob = [this](const registry::BlobEvent& e) { events.push_back(e); };
  }

  registry::PushResult push() { return push(*built.image); }
  registry::PushResult push(const image::Image& image) {
    auto clients = [this](const std::string& name) -> registry::RegistryClient& {
      return name == "src.test" ? source_client : client;
    };
    return registry::push_image(image, target, clients, options);
  }
  std::string bytes_of(const image::Digest& digest) const { return read_file(cache.blobs().path_of(digest)); }
  // What was reported of `digest`, in order (progress left out: it depends on timing).
  std::vector<registry::BlobEvent::Kind> events_of(const image::Digest& digest) const {
    std::vector<registry::BlobEvent::Kind> kinds;
    for (const registry::BlobEvent& e : events)
      if (e.digest == digest && e.kind != registry::BlobEvent::Kind::kUploadProgress) kinds.push_back(e.kind);
    return kinds;
  }
  // `repository` of `fake` holds the image, tagged `tag`.
  void hold_image(FakeRegistry& fake, const std::string& repository, const std::string& tag) {
    for (const image::Digest& digest : {large, small, config})
      fake.repositories[repository].blobs[digest.str()] = bytes_of(digest);
    fake.repositories[repository].manifests[tag] = built.image->raw_manifest();
    fake.repositories[repository].manifests[built.image->manifest_digest().str()] = built.image->raw_manifest();
  }
};

}  // namespace trainpack::test_support
