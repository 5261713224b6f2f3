#pragma once
// A push begun while its image is still being built. docker and BuildKit push only once the build is done; here,
// as the base is read, the target's push token is fetched, its tag asked for (the manifest there may vouch for the
// blobs: registry/blob_pusher.h) and upload sessions opened (POST), all at once, and every layer the build finishes
// is pushed at once, while later layers are still being written. push_image() (registry/pusher.h) then
// waits for these and does only the rest: the config, what was not offered, the manifest, last.
//
// Nothing is left behind: the sessions a push did not use are cancelled, and when the build fails, uploads in
// progress stop and their sessions are cancelled too. Blobs already uploaded stay as unreferenced blobs (the
// registry's garbage collection removes them); no tag ever names a manifest whose blobs are missing.
#include <atomic>
#include <cstddef>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <set>
#include <vector>

#include "image/digest.h"
#include "image/image.h"
#include "registry/blob_locations.h"
#include "registry/blob_pusher.h"
#include "registry/pusher.h"
#include "registry/reference.h"
#include "registry/registry_client.h"
#include "store/blob_store.h"

namespace trainpack::registry {

struct PushAheadOptions {
  int jobs = 4;                             // uploads at once, shared with the push that takes this over
  const BlobLocations* locations = nullptr;  // mount sources for offered blobs
  const store::BlobStore* store = nullptr;  // required: offered blobs' bytes, and the manifests that vouch for a tag
  std::function<void(const BlobEvent&)> on_blob;  // progress of offered blobs, serialised
  // Opened ahead: a code-only rebuild uploads its code layer and config, and the SBOM and provenance documents when
  // they are attached (registry/referrers.h takes sessions from here too).
  std::size_t sessions = 2;
  // Blobs the push will need that an earlier one may have left in the target (the referrers' shared empty config):
  // asked about (HEAD) beside the tag, so that no later round trip does; under_tag() includes those found.
  std::vector<image::Digest> ask_about;
};

class PushAhead {
 public:
  // Starts at once, in the background; errors here are not the build's (the push meets them again itself).
  PushAhead(RegistryClient& client, Reference target, PushAheadOptions options);
  ~PushAhead();
  PushAhead(const PushAhead&) = delete;
  PushAhead& operator=(const PushAhead&) = delete;

  const Reference& target() const { return target_; }
  // A finished blob of the image: pushed in the background if it is in the store (else left to the push). Each
  // digest once.
  void offer(const image::Descriptor& blob);
  // The build failed: uploads in progress stop. (Also done when this goes away without a push.)
  void abandon();

  // For push_image: what was done with an offered blob (nullopt if it was not offered; rethrows its failure).
  std::optional<BlobEvent> offered_result(const image::Digest& digest);
  std::optional<UploadSession> take_session();
  // The blobs the target holds for sure: those the tag's manifest names, and those of ask_about found there.
  std::shared_future<std::set<image::Digest>> under_tag() const { return under_tag_; }
  std::counting_semaphore<>& upload_slots() { return upload_slots_; }
  // on_blob, serialised with the offered blobs' events.
  void report(const BlobEvent& event);
  // The push is done with sessions: the unused ones are cancelled in the background (joined when this goes away).
  void release_sessions();

 private:
  void ask_tag(std::promise<std::set<image::Digest>>& answer);
  void open_sessions();
  static void forget(std::future<std::optional<UploadSession>>& session);
  BlobPusher pusher();

  RegistryClient& client_;
  const Reference target_;
  const PushAheadOptions options_;
  std::counting_semaphore<> upload_slots_;
  std::atomic<bool> abandoned_{false};
  std::mutex mutex_;  // guards sessions_, offered_
  std::mutex reporting_;
  std::deque<std::future<std::optional<UploadSession>>> sessions_;  // POSTs sent (or answered), oldest first
  std::map<image::Digest, std::shared_future<BlobEvent>> offered_;
  std::shared_future<std::set<image::Digest>> under_tag_;
  std::future<void> asking_tag_;  // the tag HEAD
  std::future<void> releasing_;   // cancelling the unused sessions
};

}  // namespace trainpack::registry
