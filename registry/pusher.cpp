#include "registry/pusher.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <set>
#include <thread>
#include <vector>

#include "image/manifest.h"
#include "registry/blob_pusher.h"
#include "registry/push_ahead.h"
#include "support/error.h"

namespace trainpack::registry {
using image::Descriptor;
using image::Digest;

namespace {

// Blobs the repository is not known to hold come first, as they need the most round trips (a mount or an upload),
// the largest first among them; then those it should have, each a HEAD. Every blob once.
std::vector<PlannedBlob> plan_blobs(const image::Manifest& manifest, const BlobPusher& pusher) {
  std::vector<PlannedBlob> planned;
  std::set<Digest> seen;
  std::vector<Descriptor> all = manifest.layers;
  all.push_back(manifest.config);
  for (const Descriptor& d : all)
    if (seen.insert(d.digest).second) planned.push_back({d, pusher.known_there(d)});
  std::stable_sort(planned.begin(), planned.end(), [](const PlannedBlob& a, const PlannedBlob& b) {
    if (a.known_there != b.known_there) return !a.known_there;
    return a.descriptor.size > b.descriptor.size;
  });
  return planned;
}

// A blob's outcome in the push's totals.
void count(PushResult& result, const BlobEvent& e) {
  switch (e.kind) {
    case BlobEvent::Kind::kExists: result.blobs_existing++; break;
    case BlobEvent::Kind::kMounted: result.blobs_mounted++; break;
    case BlobEvent::Kind::kUploaded:
      result.blobs_uploaded++;
      result.bytes_uploaded += e.size;
      break;
    case BlobEvent::Kind::kUploading:
    case BlobEvent::Kind::kUploadProgress: break;
  }
}

}  // namespace

PushResult push_image(const image::Image& image, const Reference& target,
                      const std::function<RegistryClient&(const std::string&)>& clients, const PushOptions& options) {
  image::Manifest manifest = image.manifest();
  PushAhead* ahead = options.ahead && options.ahead->target().str() == target.str() ? options.ahead : nullptr;
  PushResult result;
  std::mutex mutex;
  std::size_t next = 0;
  std::exception_ptr failure;
  auto emit = [&](const BlobEvent& e) {
    std::lock_guard<std::mutex> lock(mutex);
    count(result, e);
    if (ahead) ahead->report(e);
    else if (options.on_blob) options.on_blob(e);
  };
  std::ptrdiff_t jobs = std::max(1, options.jobs);
  std::counting_semaphore<> own_slots(jobs);
  BlobPusher pusher{.image = &image,
                    .store = options.store,
                    .target = target,
                    .clients = clients,
                    .locations = options.locations,
                    .emit = emit,
                    .upload_slots = ahead ? ahead->upload_slots() : own_slots};
  if (ahead) {
    pusher.under_tag = ahead->under_tag();
    pusher.opened_session = [ahead] { return ahead->take_session(); };
  }
  std::vector<PlannedBlob> blobs = plan_blobs(manifest, pusher);
  auto is_known_there = [](const PlannedBlob& b) { return b.known_there; };
  std::size_t known_there = std::count_if(blobs.begin(), blobs.end(), is_known_there);
  std::packaged_task<std::set<Digest>()> asking_tag(
      [&] { return blobs_under_tag(pusher.dst(), target, *options.store); });
  if (!ahead && options.store && !target.tag.empty() && target.digest.empty() && known_there > 1)
    pusher.under_tag = asking_tag.get_future().share();
  auto worker = [&] {
    for (;;) {
      PlannedBlob planned;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (failure || next >= blobs.size()) return;
        planned = blobs[next++];
      }
      try {
        // A blob offered ahead was pushed (or is being pushed) already: its outcome is counted, not reported again.
        if (std::optional<BlobEvent> done = ahead ? ahead->offered_result(planned.descriptor.digest) : std::nullopt) {
          std::lock_guard<std::mutex> lock(mutex);
          count(result, *done);
        } else {
          emit(pusher.push(planned));
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  // Twice as many workers as uploads, so HEADs and mounts go on while --jobs uploads run.
  std::size_t workers = std::min<std::size_t>(2 * static_cast<std::size_t>(jobs), blobs.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < workers; ++i) threads.emplace_back(worker);
  if (!ahead && pusher.under_tag.valid()) asking_tag();  // meanwhile the workers start on the blobs not known there
  for (auto& t : threads) t.join();
  if (ahead) ahead->release_sessions();  // cancelled while the manifest goes up
  if (failure) std::rethrow_exception(failure);

  // Every blob is there: now the manifest, by tag (or by digest for a digest reference).
  result.manifest_digest = image.manifest_digest();
  net::HttpRequest put;
  put.method = "PUT";
  put.url = "/v2/" + target.repository + "/manifests/" +
            (target.digest.empty() ? target.tag : result.manifest_digest.str());
  put.headers = {{"Content-Type", manifest.media_type}};
  put.body = image.raw_manifest();
  net::HttpResponse r = clients(target.registry).send(put, {push_scope(target.repository)});
  if (r.status != 200 && r.status != 201 && r.status != 202 && r.status != 204)
    throw Error("cannot push the manifest to " + target.str() + ": " + describe_registry_error(r));
  std::string echoed = r.header("docker-content-digest");
  if (!echoed.empty() && echoed != result.manifest_digest.str())
    throw Error(target.str() + ": the registry stored the manifest as " + echoed + ", not " +
                    result.manifest_digest.str(),
                "the registry rewrote the manifest; pin the pushed image by the digest the registry reports");
  result.reference = target.with_digest(result.manifest_digest.str());
  if (options.locations)
    for (const PlannedBlob& b : blobs)
      options.locations->remember(b.descriptor.digest, {target.registry, target.repository});
  return result;
}

}  // namespace trainpack::registry
