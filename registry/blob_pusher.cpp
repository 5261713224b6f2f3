#include "registry/blob_pusher.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include <nlohmann/json.hpp>

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

}  // namespace

UploadSession::UploadSession(UploadSession&& other) noexcept
    : client_(other.client_), scopes_(std::move(other.scopes_)), location_(std::move(other.location_)) {
  other.location_.clear();
}

UploadSession::~UploadSession() {
  if (!location_.empty()) cancel();
}

void UploadSession::cancel() noexcept {
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

UploadSession open_upload_session(RegistryClient& client, const Reference& target) {
  net::HttpRequest post;
  post.method = "POST";
  post.url = "/v2/" + target.repository + "/blobs/uploads/";
  net::HttpResponse r = client.send(post, {push_scope(target.repository)});
  if (r.status != 202 || r.header("location").empty())
    throw Error("cannot start an upload to " + target.name() + ": " + describe_registry_error(r));
  return UploadSession(client, {push_scope(target.repository)}, net::resolve_url(r.url, r.header("location")));
}

std::set<Digest> blobs_under_tag(RegistryClient& client, const Reference& target, const store::BlobStore& store) {
  std::set<Digest> present;
  net::HttpRequest head;
  head.method = "HEAD";
  head.url = "/v2/" + target.repository + "/manifests/" + target.tag;
  head.headers = {{"Accept", kManifestAccept}};
  net::HttpResponse r = client.send(head, {push_scope(target.repository)});  // the push's token, no other
  try {
    std::optional<Digest> digest = Digest::parse(r.header("docker-content-digest"));
    if (r.status != 200 || !digest || !store.has(*digest)) return present;
    std::string body = read_file(store.path_of(*digest), 4u << 20);
    if (image::sha256_of(body) != *digest) return present;
    nlohmann::json document = nlohmann::json::parse(body, nullptr, false);
    if (!document.is_object() || document.contains("manifests")) return present;  // an index names no layers
    image::Manifest current = image::Manifest::parse(body, target.str());
    present.insert(current.config.digest);
    for (const Descriptor& layer : current.layers) present.insert(layer.digest);
  } catch (const std::exception&) {
    // Not readable: each blob is asked about on its own.
  }
  return present;
}

std::optional<image::RemoteOrigin> BlobPusher::origin_of(const Digest& d) const {
  return image ? image->remote_origin(d) : std::nullopt;
}

// Reports the bytes sent of `d`, at most every 200 ms (libcurl calls far more often).
std::function<void(std::uint64_t)> BlobPusher::progress_reporter(const Descriptor& d) const {
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [this, d, last](std::uint64_t sent) {
    auto now = std::chrono::steady_clock::now();
    if (sent == 0 || now - *last < std::chrono::milliseconds(200)) return;
    *last = now;
    emit({BlobEvent::Kind::kUploadProgress, d.digest, d.size, {}, sent});
  };
}

bool BlobPusher::known_there(const Descriptor& d) const {
  if (auto origin = origin_of(d.digest))
    if (origin->registry == target.registry && origin->repository == target.repository) return true;
  if (!locations) return false;
  for (const BlobLocation& seen : locations->known(d.digest))
    if (seen.registry == target.registry && seen.repository == target.repository) return true;
  return false;
}

BlobEvent BlobPusher::push(const PlannedBlob& planned) {
  const Descriptor& d = planned.descriptor;
  if (planned.known_there && under_tag.valid() && under_tag.get().count(d.digest))
    return {BlobEvent::Kind::kExists, d.digest, d.size, {}};
  bool ask_first = planned.known_there || d.size > kUploadWithoutAskingBytes;
  if (ask_first && exists(d)) return {BlobEvent::Kind::kExists, d.digest, d.size, {}};
  std::optional<UploadSession> session;  // a refused mount may open one
  if (auto from = mount(d, session)) return {BlobEvent::Kind::kMounted, d.digest, d.size, *from};
  UploadSlot slot(upload_slots);
  if (stop && *stop) throw Error("upload of " + d.digest.str() + " not started: the build failed");
  emit({BlobEvent::Kind::kUploading, d.digest, d.size, {}});
  std::function<void(net::HttpRequest&)> set_body = body_of(d);
  if (!session && opened_session)
    if (std::optional<UploadSession> opened = opened_session()) session.emplace(std::move(*opened));
  for (int attempt = 1;; ++attempt) {
    try {
      upload(d, set_body, session);
      return {BlobEvent::Kind::kUploaded, d.digest, d.size, {}};
    } catch (const RelayInterrupted&) {
      // The source of a relayed blob broke off: cancel the unfinished session and start over.
      if (attempt >= 3) throw;
    } catch (const Error& e) {
      // A lost or expired upload session (one opened ahead may have expired): start over from POST, a couple of
      // times.
      if (attempt >= 3 || std::string(e.what()).find("BLOB_UPLOAD_UNKNOWN") == std::string::npos) throw;
    }
    session.reset();
  }
}

bool blob_exists(RegistryClient& client, const Reference& target, const Digest& blob) {
  net::HttpRequest head;
  head.method = "HEAD";
  head.url = "/v2/" + target.repository + "/blobs/" + blob.str();
  head.follow_redirects = false;
  net::HttpResponse h = client.send(head, {push_scope(target.repository)});
  return h.status == 200 || (h.status >= 300 && h.status < 400);
}

// Present means nothing to move.
bool BlobPusher::exists(const Descriptor& d) const { return blob_exists(dst(), target, d.digest); }

// Repositories to mount `d` from, best first: its origin (the base image it came from), then the repositories of
// this registry an earlier push put it in (BlobLocations); never the target itself, at most three.
std::vector<BlobLocation> BlobPusher::mount_sources(const Descriptor& d) const {
  std::vector<BlobLocation> sources;
  auto add = [&](const BlobLocation& from) {
    bool is_target = from.registry == target.registry && from.repository == target.repository;
    if (!is_target && std::find(sources.begin(), sources.end(), from) == sources.end() && sources.size() < 3)
      sources.push_back(from);
  };
  if (auto origin = origin_of(d.digest)) add({origin->registry, origin->repository});
  if (locations)
    for (const BlobLocation& seen : locations->known(d.digest))
      if (seen.registry == target.registry) add(seen);
  return sources;
}

// A cross-repository mount (OCI distribution-spec) from the first source that has the blob: the source
// repository, or nullopt. A registry that answers a refused mount with an upload session (202) leaves it in
// `session`, which the upload then uses (no further mounts are tried: the session would be left open).
std::optional<std::string> BlobPusher::mount(const Descriptor& d, std::optional<UploadSession>& session) const {
  for (const BlobLocation& from : mount_sources(d)) {
    if (auto mounted = mount_from(d, from, session)) return mounted;
    if (session) break;
  }
  return {};
}

// Between Google registries (gcr.io, pkg.dev) a mount may also cross hosts, named by origin=.
std::optional<std::string> BlobPusher::mount_from(const Descriptor& d, const BlobLocation& source,
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
std::function<void(net::HttpRequest&)> BlobPusher::body_of(const Descriptor& d) const {
  auto from = origin_of(d.digest);
  if (from && d.size > 0 && image && !image->has_local_blob(d.digest)) {
    RegistryClient& source = clients(from->registry);
    return [&source, from, d, stop = stop](net::HttpRequest& r) {
      r.body_stream = [&source, from, d] { return open_blob_relay(source, from->repository, d); };
      r.body_stream_size = d.size;
      r.stop = stop;
    };
  }
  std::filesystem::path file = image ? image->blob_path(d.digest) : store->path_of(d.digest);
  return [file, stop = stop](net::HttpRequest& r) {
    r.body_file = file;
    r.stop = stop;
  };
}

// POST (unless a session is open), then one PUT with the bytes; the session is completed by a 201/204.
void BlobPusher::upload(const Descriptor& d, const std::function<void(net::HttpRequest&)>& set_body,
                        std::optional<UploadSession>& session) {
  RegistryClient& client = dst();
  if (!session) session.emplace(open_upload_session(client, target));
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
net::HttpResponse BlobPusher::patch_then_put(const Descriptor& d, const std::function<void(net::HttpRequest&)>& set_body,
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

}  // namespace trainpack::registry
