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
#include "net/url.h"
#include "registry/blob_relay.h"
#include "registry/remote_image.h"
#include "support/error.h"
#include "support/fs.h"

namespace trainpack::registry {
using image::Descriptor;
using image::Digest;

namespace {

std::string with_query(const std::string& url, const std::string& param) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + param;
}

std::string digest_param(const Digest& d) { return "digest=" + d.algorithm() + "%3A" + d.hex(); }

// How long cancelling an upload may take: it is a courtesy to the registry, and the push has failed already.
constexpr std::chrono::seconds kCancelTimeout{10};

// A blob the registry is not known to hold and no larger than this is uploaded without asking first: sending it
// costs no more than the HEAD would (a config, a code layer), and a registry that had it already just keeps one copy.
constexpr std::uint64_t kUploadWithoutAskingBytes = 64u << 10;

// An upload session the registry opened (the Location of a 202). Until completed(), going away cancels it, so a
// failed or aborted push leaves no session behind (OCI distribution-spec, "Canceling an upload": DELETE
// <location>). Best effort: with the push's credentials and a short deadline, its result ignored, nothing thrown.
class UploadSession {
 public:
  UploadSession(RegistryClient& client, const std::vector<std::string>& scopes, std::string location)
      : client_(client), scopes_(scopes), location_(std::move(location)) {}
  ~UploadSession() {
    if (!location_.empty()) cancel();
  }
  UploadSession(const UploadSession&) = delete;
  UploadSession& operator=(const UploadSession&) = delete;

  const std::string& location() const { return location_; }
  void moved_to(std::string location) { location_ = std::move(location); }  // a PATCH answered a new Location
  void completed() { location_.clear(); }

 private:
  void cancel() noexcept {
    try {
      net::HttpRequest del;
      del.method = "DELETE";
      del.url = location_;
      del.timeout = kCancelTimeout;
      client_.send(del, scopes_);
    } catch (...) {
      // The push's own error is the one that counts.
    }
  }

  RegistryClient& client_;
  const std::vector<std::string> scopes_;
  std::string location_;
};

// A blob to push, and whether the target repository is known to hold it already (an earlier push put it there, or
// it is the base's own repository).
struct PlannedBlob {
  Descriptor descriptor;
  bool known_there = false;
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

struct BlobPusher {
  const image::Image& image;
  const Reference& target;
  const std::function<RegistryClient&(const std::string&)>& clients;
  const BlobLocations* locations;
  std::function<void(const BlobEvent&)> emit;
  std::counting_semaphore<>& upload_slots;  // --jobs: uploads at once (the HEADs and mounts around them are not)
  std::shared_future<std::set<Digest>> under_tag;  // blobs_under_tag(), when asked

  RegistryClient& dst() const { return clients(target.registry); }
  std::string blobs_url() const { return "/v2/" + target.repository + "/blobs/"; }
  std::string where(const Digest& d) const { return d.str() + " to " + target.name(); }
  std::vector<std::string> push_scopes() const { return {push_scope(target.repository)}; }

  // Reports the bytes sent of `d`, at most every 200 ms (libcurl calls far more often).
  std::function<void(std::uint64_t)> progress_reporter(const Descriptor& d) const {
    auto last = std::make_shared<std::chrono::steady_clock::time_point>();
    return [this, d, last](std::uint64_t sent) {
      auto now = std::chrono::steady_clock::now();
      if (sent == 0 || now - *last < std::chrono::milliseconds(200)) return;
      *last = now;
      emit({BlobEvent::Kind::kUploadProgress, d.digest, d.size, {}, sent});
    };
  }

  bool known_there(const Descriptor& d) const {
    if (auto origin = image.remote_origin(d.digest))
      if (origin->registry == target.registry && origin->repository == target.repository) return true;
    if (!locations) return false;
    for (const BlobLocation& seen : locations->known(d.digest))
      if (seen.registry == target.registry && seen.repository == target.repository) return true;
    return false;
  }

  // Returns the event describing what was done.
  BlobEvent push(const PlannedBlob& planned) {
    const Descriptor& d = planned.descriptor;
    if (planned.known_there && under_tag.valid() && under_tag.get().count(d.digest))
      return {BlobEvent::Kind::kExists, d.digest, d.size, {}};
    bool ask_first = planned.known_there || d.size > kUploadWithoutAskingBytes;
    if (ask_first && exists(d)) return {BlobEvent::Kind::kExists, d.digest, d.size, {}};
    std::optional<UploadSession> session;  // a refused mount may open one
    if (auto from = mount(d, session)) return {BlobEvent::Kind::kMounted, d.digest, d.size, *from};
    UploadSlot slot(upload_slots);
    emit({BlobEvent::Kind::kUploading, d.digest, d.size, {}});
    std::function<void(net::HttpRequest&)> set_body = body_of(d);
    for (int attempt = 1;; ++attempt) {
      try {
        upload(d, set_body, session);
        return {BlobEvent::Kind::kUploaded, d.digest, d.size, {}};
      } catch (const RelayInterrupted&) {
        // The source of a relayed blob broke off: cancel the unfinished session and start over.
        if (attempt >= 3) throw;
      } catch (const Error& e) {
        // A lost or expired upload session: start over from POST, a couple of times.
        if (attempt >= 3 || std::string(e.what()).find("BLOB_UPLOAD_UNKNOWN") == std::string::npos) throw;
      }
      session.reset();
    }
  }

  // HEAD: present (or a redirect to where it is stored) means nothing to move.
  bool exists(const Descriptor& d) const {
    net::HttpRequest head;
    head.method = "HEAD";
    head.url = blobs_url() + d.digest.str();
    head.follow_redirects = false;
    net::HttpResponse h = dst().send(head, push_scopes());
    return h.status == 200 || (h.status >= 300 && h.status < 400);
  }

  // Repositories to mount `d` from, best first: its origin (the base image it came from), then the repositories of
  // this registry an earlier push put it in (BlobLocations); never the target itself, at most three.
  std::vector<BlobLocation> mount_sources(const Descriptor& d) const {
    std::vector<BlobLocation> sources;
    auto add = [&](const BlobLocation& from) {
      bool is_target = from.registry == target.registry && from.repository == target.repository;
      if (!is_target && std::find(sources.begin(), sources.end(), from) == sources.end() && sources.size() < 3)
        sources.push_back(from);
    };
    if (auto origin = image.remote_origin(d.digest)) add({origin->registry, origin->repository});
    if (locations)
      for (const BlobLocation& seen : locations->known(d.digest))
        if (seen.registry == target.registry) add(seen);
    return sources;
  }

  // A cross-repository mount (OCI distribution-spec) from the first source that has the blob: the source
  // repository, or nullopt. A registry that answers a refused mount with an upload session (202) leaves it in
  // `session`, which the upload then uses (no further mounts are tried: the session would be left open).
  std::optional<std::string> mount(const Descriptor& d, std::optional<UploadSession>& session) const {
    for (const BlobLocation& from : mount_sources(d)) {
      if (auto mounted = mount_from(d, from, session)) return mounted;
      if (session) break;
    }
    return {};
  }

  // Between Google registries (gcr.io, pkg.dev) a mount may also cross hosts, named by origin=.
  std::optional<std::string> mount_from(const Descriptor& d, const BlobLocation& source,
                                        std::optional<UploadSession>& session) const {
    Reference from{source.registry, source.repository, "", ""};
    bool same_registry = source.registry == target.registry;
    bool google_cross_host = !same_registry && from.is_google() && target.is_google();
    if (!same_registry && !google_cross_host) return {};
    net::HttpRequest req;
    req.method = "POST";
    req.url = blobs_url() + "uploads/?mount=" + d.digest.algorithm() + "%3A" + d.digest.hex() + "&from=" +
              source.repository;
    if (google_cross_host) req.url += "&origin=" + source.registry;
    req.idempotent = false;  // a failed mount is answered by uploading, not by asking again
    std::vector<std::string> scopes = push_scopes();
    if (same_registry) scopes.push_back(pull_scope(source.repository));
    net::HttpResponse r;
    try {
      r = dst().send(req, scopes);
    } catch (const Error&) {
      return {};  // a refused mount (even an auth refusal for the source) just means: upload it
    }
    if (r.status == 201) return source.repository;
    if (r.status == 202 && !r.header("location").empty())
      session.emplace(dst(), push_scopes(), net::resolve_url(r.url, r.header("location")));
    return {};
  }

  // Where an upload's bytes come from: the local store, or, for a remote base blob not in it, a relay straight
  // from its registry (never to disk).
  std::function<void(net::HttpRequest&)> body_of(const Descriptor& d) const {
    auto origin = image.remote_origin(d.digest);
    if (origin && d.size > 0 && !image.has_local_blob(d.digest)) {
      RegistryClient& source = clients(origin->registry);
      return [&source, origin, d](net::HttpRequest& r) {
        r.body_stream = [&source, origin, d] { return open_blob_relay(source, origin->repository, d); };
        r.body_stream_size = d.size;
      };
    }
    std::filesystem::path file = image.blob_path(d.digest);
    return [file](net::HttpRequest& r) { r.body_file = file; };
  }

  // POST (unless a session is open), then one PUT with the bytes; the session is completed by a 201/204.
  void upload(const Descriptor& d, const std::function<void(net::HttpRequest&)>& set_body,
              std::optional<UploadSession>& session) {
    RegistryClient& client = dst();
    if (!session) {
      net::HttpRequest post;
      post.method = "POST";
      post.url = blobs_url() + "uploads/";
      net::HttpResponse r = client.send(post, push_scopes());
      if (r.status != 202 || r.header("location").empty())
        throw Error("cannot start the upload of " + where(d.digest) + ": " + describe_registry_error(r));
      session.emplace(client, push_scopes(), net::resolve_url(r.url, r.header("location")));
    }
    net::HttpRequest put;
    put.method = "PUT";
    put.url = with_query(session->location(), digest_param(d.digest));
    put.headers = {{"Content-Type", "application/octet-stream"}};
    set_body(put);
    put.on_upload_progress = progress_reporter(d);
    net::HttpResponse r = client.send(put, push_scopes());
    if (r.status == 405 || r.status == 415 || r.status == 501) r = patch_then_put(d, set_body, *session);
    if (r.status != 201 && r.status != 204)
      throw Error("cannot upload " + where(d.digest) + ": " + describe_registry_error(r));
    session->completed();
    std::string echoed = r.header("docker-content-digest");
    if (!echoed.empty() && echoed != d.digest.str())
      throw Error("the registry stored " + where(d.digest) + " under digest " + echoed,
                  "the upload was corrupted on the way; try again");
  }

  // For registries that want the bytes in a PATCH (Artifactory and the like): one streamed PATCH, then an empty PUT.
  net::HttpResponse patch_then_put(const Descriptor& d, const std::function<void(net::HttpRequest&)>& set_body,
                              UploadSession& session) {
    RegistryClient& client = dst();
    net::HttpRequest patch;
    patch.method = "PATCH";
    patch.url = session.location();
    patch.headers = {{"Content-Type", "application/octet-stream"}};
    set_body(patch);
    patch.on_upload_progress = progress_reporter(d);
    net::HttpResponse p = client.send(patch, push_scopes());
    if (p.status != 202 && p.status != 204)
      throw Error("cannot upload " + where(d.digest) + ": " + describe_registry_error(p));
    if (!p.header("location").empty()) session.moved_to(net::resolve_url(p.url, p.header("location")));
    net::HttpRequest finish;
    finish.method = "PUT";
    finish.url = with_query(session.location(), digest_param(d.digest));
    return client.send(finish, push_scopes());
  }
};

// The blobs named by the image manifest the target's tag points at now, when that manifest is one this cache made
// (an earlier push of this image): the registry holds them, since it accepted that manifest and keeps what a tagged
// manifest references. One HEAD of the tag (no GET, which Docker Hub counts as a pull) instead of a HEAD for each
// blob an earlier push left there. Empty when the tag is new, or names a manifest made elsewhere or an index.
std::set<Digest> blobs_under_tag(RegistryClient& client, const Reference& target, const layers::BlobStore& store) {
  std::set<Digest> present;
  net::HttpRequest head;
  head.method = "HEAD";
  head.url = "/v2/" + target.repository + "/manifests/" + target.tag;
  head.headers = {{"Accept", kManifestAccept}};
  try {
    net::HttpResponse r = client.send(head, {push_scope(target.repository)});  // the push's token, no other
    std::optional<Digest> digest = Digest::parse(r.header("docker-content-digest"));
    if (r.status != 200 || !digest || !store.has(*digest)) return present;
    std::string body = read_file(store.path_of(*digest), 4u << 20);
    if (image::sha256_of(body) != *digest || body.find("\"manifests\"") != std::string::npos) return present;
    image::Manifest current = image::Manifest::parse(body, target.str());
    present.insert(current.config.digest);
    for (const Descriptor& layer : current.layers) present.insert(layer.digest);
  } catch (const std::exception&) {
    // Not readable: each blob is asked about on its own.
  }
  return present;
}

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

}  // namespace

PushResult push_image(const image::Image& image, const Reference& target,
                      const std::function<RegistryClient&(const std::string&)>& clients, const PushOptions& options) {
  image::Manifest manifest = image.manifest();
  PushResult result;
  std::mutex mutex;
  std::size_t next = 0;
  std::exception_ptr failure;
  auto emit = [&](const BlobEvent& e) {
    std::lock_guard<std::mutex> lock(mutex);
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
    if (options.on_blob) options.on_blob(e);
  };
  std::ptrdiff_t jobs = std::max(1, options.jobs);
  std::counting_semaphore<> upload_slots(jobs);
  BlobPusher pusher{image, target, clients, options.locations, emit, upload_slots, {}};
  std::vector<PlannedBlob> blobs = plan_blobs(manifest, pusher);
  auto is_known_there = [](const PlannedBlob& b) { return b.known_there; };
  std::size_t known_there = std::count_if(blobs.begin(), blobs.end(), is_known_there);
  std::packaged_task<std::set<Digest>()> asking_tag(
      [&] { return blobs_under_tag(pusher.dst(), target, *options.store); });
  if (options.store && !target.tag.empty() && target.digest.empty() && known_there > 1)
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
        emit(pusher.push(planned));
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
  if (pusher.under_tag.valid()) asking_tag();  // meanwhile the workers start on the blobs not known there
  for (auto& t : threads) t.join();
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
