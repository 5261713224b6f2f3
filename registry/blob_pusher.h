#pragma once
// How one blob gets into a repository (OCI distribution-spec, pushing blobs): HEAD first unless it is small and not
// known there, then a cross-repository mount, else a monolithic upload (POST, one PUT with the bytes). Shared by
// push_image (registry/pusher.h) and the blobs a build offers ahead of its push (registry/push_ahead.h).
#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <semaphore>
#include <set>
#include <string>
#include <vector>

#include "image/digest.h"
#include "image/image.h"
#include "registry/blob_locations.h"
#include "registry/pusher.h"
#include "registry/reference.h"
#include "registry/registry_client.h"
#include "store/blob_store.h"

namespace trainpack::registry {

// An upload session the registry opened (the Location of a 202). Until completed(), going away cancels it, so a
// failed or aborted push leaves no session behind (OCI distribution-spec, "Canceling an upload": DELETE
// <location>). Best effort: with the push's credentials and a short deadline, its result ignored, nothing thrown.
class UploadSession {
 public:
  UploadSession(RegistryClient& client, std::vector<std::string> scopes, std::string location)
      : client_(client), scopes_(std::move(scopes)), location_(std::move(location)) {}
  UploadSession(UploadSession&& other) noexcept;
  UploadSession& operator=(UploadSession&&) = delete;
  UploadSession(const UploadSession&) = delete;
  UploadSession& operator=(const UploadSession&) = delete;
  ~UploadSession();

  const std::string& location() const { return location_; }
  void moved_to(std::string location) { location_ = std::move(location); }  // a PATCH answered a new Location
  void completed() { location_.clear(); }

 private:
  void cancel() noexcept;

  RegistryClient& client_;
  std::vector<std::string> scopes_;
  std::string location_;
};

// POST .../blobs/uploads/: a new upload session in the target repository (Error when the registry opens none).
UploadSession open_upload_session(RegistryClient& client, const Reference& target);

// Whether the target repository holds `blob` (HEAD; a redirect to where it is stored counts).
bool blob_exists(RegistryClient& client, const Reference& target, const image::Digest& blob);

// A blob to push, and whether the target repository is known to hold it already (an earlier push put it there, or
// it is the base's own repository).
struct PlannedBlob {
  image::Descriptor descriptor;
  bool known_there = false;
};

// The blobs named by the image manifest the target's tag points at now, when that manifest is one this cache made
// (an earlier push of this image): the registry holds them, since it accepted that manifest and keeps what a tagged
// manifest references. One HEAD of the tag (no GET, which Docker Hub counts as a pull) instead of a HEAD for each
// blob an earlier push left there. Empty when the tag is new, or names a manifest made elsewhere or an index; an
// Error when the registry cannot be reached (the push would fail on its next request anyway).
std::set<image::Digest> blobs_under_tag(RegistryClient& client, const Reference& target,
                                        const store::BlobStore& store);

struct BlobPusher {
  const image::Image* image;        // the image pushed; null for a blob offered ahead of it (no origin)
  const store::BlobStore* store;   // where a blob without an image is read from
  Reference target;
  std::function<RegistryClient&(const std::string&)> clients;
  const BlobLocations* locations;
  std::function<void(const BlobEvent&)> emit;
  std::counting_semaphore<>& upload_slots;  // --jobs: uploads at once (the HEADs and mounts around them are not)
  std::shared_future<std::set<image::Digest>> under_tag = {};  // blobs_under_tag(), when asked
  std::function<std::optional<UploadSession>()> opened_session = {};  // a session opened ahead of the push, if any
  const std::atomic<bool>* stop = nullptr;  // when it becomes true, uploads stop (the build or another blob failed)

  RegistryClient& dst() const { return clients(target.registry); }
  bool known_there(const image::Descriptor& d) const;
  // Returns the event describing what was done.
  BlobEvent push(const PlannedBlob& planned);

 private:
  std::string blobs_url() const { return "/v2/" + target.repository + "/blobs/"; }
  std::string where(const image::Digest& d) const { return d.str() + " to " + target.name(); }
  std::vector<std::string> push_scopes() const { return {push_scope(target.repository)}; }
  std::optional<image::RemoteOrigin> origin_of(const image::Digest& d) const;
  std::function<void(std::uint64_t)> progress_reporter(const image::Descriptor& d) const;
  bool exists(const image::Descriptor& d) const;
  std::vector<BlobLocation> mount_sources(const image::Descriptor& d) const;
  std::optional<std::string> mount(const image::Descriptor& d, std::optional<UploadSession>& session) const;
  std::optional<std::string> mount_from(const image::Descriptor& d, const BlobLocation& source,
                                        std::optional<UploadSession>& session) const;
  std::function<void(net::HttpRequest&)> body_of(const image::Descriptor& d) const;
  void upload(const image::Descriptor& d, const std::function<void(net::HttpRequest&)>& set_body,
              std::optional<UploadSession>& session);
  net::HttpResponse patch_then_put(const image::Descriptor& d, const std::function<void(net::HttpRequest&)>& set_body,
                                   UploadSession& session);
};

// One of the --jobs uploads that may run at once, held while a blob's bytes are sent.
class UploadSlot {
 public:
  explicit UploadSlot(std::counting_semaphore<>& slots) : slots_(slots) { slots_.acquire(); }
  ~UploadSlot() { slots_.release(); }
  UploadSlot(const UploadSlot&) = delete;
  UploadSlot& operator=(const UploadSlot&) = delete;

 private:
  std::counting_semaphore<>& slots_;
};

}  // namespace trainpack::registry
