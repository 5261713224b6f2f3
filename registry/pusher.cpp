#include "registry/pusher.h"

#include <algorithm>
#include <atomic>
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
#include "support/parallel.h"

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

// One push_image call: the blobs, pushed by a few workers, then the manifest.
class ImagePush {
 public:
  ImagePush(const image::Image& image, const Reference& target,
            const std::function<RegistryClient&(const std::string&)>& clients, const PushOptions& options)
      : image_(image), manifest_(image.manifest()), target_(target), clients_(clients), options_(options),
        ahead_(options.ahead && options.ahead->target().str() == target.str() ? options.ahead : nullptr),
        jobs_(std::max(1, options.jobs)), own_slots_(jobs_) {}

  PushResult run() {
    BlobPusher pusher = make_pusher();
    std::vector<PlannedBlob> blobs = plan_blobs(manifest_, pusher);
    std::exception_ptr failure = push_blobs(blobs, pusher);
    if (!failure && options_.on_blobs_pushed) options_.on_blobs_pushed();
    if (ahead_) ahead_->release_sessions();  // cancelled while the manifest goes up
    if (failure) std::rethrow_exception(failure);
    result_.manifest_digest = image_.manifest_digest();
    result_.reference = target_.with_digest(result_.manifest_digest.str());
    put_manifests();
    if (options_.locations)
      for (const PlannedBlob& b : blobs)
        options_.locations->remember(b.descriptor.digest, {target_.registry, target_.repository});
    return result_;
  }

 private:
  // Counts an outcome and shows it (through the push begun ahead, if any, which reports its own blobs too).
  void emit(const BlobEvent& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    count(result_, e);
    if (ahead_) ahead_->report(e);
    else if (options_.on_blob) options_.on_blob(e);
  }

  BlobPusher make_pusher() {
    BlobPusher pusher{.image = &image_,
                      .store = options_.store,
                      .target = target_,
                      .clients = clients_,
                      .locations = options_.locations,
                      .emit = [this](const BlobEvent& e) { emit(e); },
                      .upload_slots = ahead_ ? ahead_->upload_slots() : own_slots_,
                      .stop = &failed_};
    if (ahead_) {
      pusher.under_tag = ahead_->under_tag();
      pusher.opened_session = [ahead = ahead_] { return ahead->take_session(); };
    }
    return pusher;
  }

  // Twice as many workers as uploads, so HEADs and mounts go on while --jobs uploads run. Without a push begun
  // ahead, the tag is asked on a thread of its own (when it can vouch for more than one blob) while the workers
  // start on the blobs not known there. The first failure is the push's: no blob starts after it, and the uploads
  // under way stop (BlobPusher::stop).
  std::exception_ptr push_blobs(const std::vector<PlannedBlob>& blobs, BlobPusher& pusher) {
    auto is_known_there = [](const PlannedBlob& b) { return b.known_there; };
    std::size_t known_there = std::count_if(blobs.begin(), blobs.end(), is_known_there);
    std::jthread asking_tag;  // joined on return, however the blobs went
    if (!ahead_ && options_.store && !target_.tag.empty() && target_.digest.empty() && known_there > 1) {
      std::packaged_task<std::set<Digest>()> ask(
          [&] { return blobs_under_tag(pusher.dst(), target_, *options_.store); });
      pusher.under_tag = ask.get_future().share();
      asking_tag = std::jthread(std::move(ask));
    }
    try {
      std::size_t workers = 2 * static_cast<std::size_t>(jobs_);
      parallel_for(blobs.size(), workers, [&](std::size_t i) { push_blob(blobs[i], pusher); });
    } catch (...) {
      return std::current_exception();
    }
    return nullptr;
  }

  // A failure after the first is not reported: the push failed with the first, and most later ones are uploads it
  // stopped.
  void push_blob(const PlannedBlob& planned, BlobPusher& pusher) {
    try {
      // A blob offered ahead was pushed (or is being pushed) already: its outcome is counted, not reported again.
      std::optional<BlobEvent> done = ahead_ ? ahead_->offered_result(planned.descriptor.digest) : std::nullopt;
      if (!done) return emit(pusher.push(planned));
      std::lock_guard<std::mutex> lock(mutex_);
      count(result_, *done);
    } catch (...) {
      if (!failed_.exchange(true)) throw;
    }
  }

  // Every blob is there: now the manifest under the target's reference (a tag, or the digest for a digest
  // reference), then under each extra tag, those at once (the same bytes: their order does not matter).
  void put_manifests() {
    RegistryClient& client = clients_(target_.registry);
    put_manifest(client, target_, image_, target_.digest.empty() ? target_.tag : result_.manifest_digest.str());
    if (target_.digest.empty()) result_.tags.push_back(target_.str());
    std::vector<std::string> extra;
    for (const std::string& tag : options_.extra_tags) {
      std::string tagged = target_.name() + ":" + tag;
      if (std::find(result_.tags.begin(), result_.tags.end(), tagged) != result_.tags.end()) continue;
      extra.push_back(tag);
      result_.tags.push_back(tagged);
    }
    parallel_for(extra.size(), static_cast<std::size_t>(jobs_),
                 [&](std::size_t i) { put_manifest(client, target_, image_, extra[i]); });
  }

  const image::Image& image_;
  const image::Manifest manifest_;
  const Reference& target_;
  const std::function<RegistryClient&(const std::string&)>& clients_;
  const PushOptions& options_;
  PushAhead* const ahead_;
  const int jobs_;
  std::counting_semaphore<> own_slots_;
  std::mutex mutex_;  // guards result_
  PushResult result_;
  std::atomic<bool> failed_{false};  // a blob failed: so has the push, and the uploads under way stop
};

}  // namespace

PushResult push_image(const image::Image& image, const Reference& target,
                      const std::function<RegistryClient&(const std::string&)>& clients, const PushOptions& options) {
  return ImagePush(image, target, clients, options).run();
}

net::HttpResponse put_manifest(RegistryClient& client, const Reference& target, const image::Image& image,
                               const std::string& identifier) {
  // A tag has no ':' in its grammar; a digest always has one.
  std::string where = target.name() + (identifier.find(':') == std::string::npos ? ":" : "@") + identifier;
  net::HttpRequest put;
  put.method = "PUT";
  put.url = "/v2/" + target.repository + "/manifests/" + identifier;
  put.headers = {{"Content-Type", image.manifest().media_type}};
  put.body = image.raw_manifest();
  net::HttpResponse r = client.send(put, {push_scope(target.repository)});
  if (r.status != 200 && r.status != 201 && r.status != 202 && r.status != 204)
    throw Error("cannot push the manifest to " + where + ": " + describe_registry_error(r));
  std::string echoed = r.header("docker-content-digest");
  if (!echoed.empty() && echoed != image.manifest_digest().str())
    throw Error(where + ": the registry stored the manifest as " + echoed + ", not " + image.manifest_digest().str(),
                "the registry rewrote the manifest; pin the pushed image by the digest the registry reports");
  return r;
}

}  // namespace trainpack::registry
