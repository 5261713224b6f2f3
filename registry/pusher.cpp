#include "registry/pusher.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "registry/blob_relay.h"
#include "support/error.h"

namespace trainpack::registry {
using layers::Descriptor;
using layers::Digest;

namespace {

std::string with_query(const std::string& url, const std::string& param) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + param;
}

std::string digest_param(const Digest& d) { return "digest=" + d.algorithm() + "%3A" + d.hex(); }

struct BlobPusher {
  const layers::Image& image;
  const Reference& target;
  const std::function<RegistryClient&(const std::string&)>& clients;
  std::function<void(const BlobEvent&)> emit;

  RegistryClient& dst() const { return clients(target.registry); }
  std::string blobs_url() const { return "/v2/" + target.repository + "/blobs/"; }
  std::string where(const Digest& d) const { return d.str() + " to " + target.name(); }

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

  // Returns the event describing what was done.
  BlobEvent push(const Descriptor& d) {
    RegistryClient& client = dst();
    const std::vector<std::string> push_scopes{push_scope(target.repository)};

    HttpRequest head;
    head.method = "HEAD";
    head.url = blobs_url() + d.digest.str();
    head.follow_redirects = false;  // a redirect means "exists" (registry.md §3)
    HttpResponse h = client.send(head, push_scopes);
    if (h.status == 200 || (h.status >= 300 && h.status < 400)) return {BlobEvent::Kind::kExists, d.digest, d.size, {}};

    std::string location;
    if (auto origin = image.remote_origin(d.digest); origin && !(origin->registry == target.registry &&
                                                                   origin->repository == target.repository)) {
      Reference from{origin->registry, origin->repository, "", ""};
      bool same_registry = origin->registry == target.registry;
      bool google_cross_host = !same_registry && from.is_google() && target.is_google();
      if (same_registry || google_cross_host) {
        HttpRequest mount;
        mount.method = "POST";
        mount.url = blobs_url() + "uploads/?mount=" + d.digest.algorithm() + "%3A" + d.digest.hex() +
                    "&from=" + origin->repository;
        if (google_cross_host) mount.url += "&origin=" + origin->registry;
        mount.idempotent = false;  // a failed mount is answered by uploading, not by asking again
        std::vector<std::string> scopes = push_scopes;
        if (same_registry) scopes.push_back(pull_scope(origin->repository));
        HttpResponse r;
        try {
          r = client.send(mount, scopes);
        } catch (const Error&) {
          r.status = 0;  // a refused mount (even an auth refusal for the source) just means: upload it
        }
        if (r.status == 201) return {BlobEvent::Kind::kMounted, d.digest, d.size, origin->repository};
        if (r.status == 202 && !r.header("location").empty()) location = resolve_url(r.url, r.header("location"));
      }
    }

    emit({BlobEvent::Kind::kUploading, d.digest, d.size, {}});
    // A remote base blob the target cannot mount goes straight from registry to registry, never to disk.
    std::function<void(HttpRequest&)> set_body;
    auto origin = image.remote_origin(d.digest);
    if (origin && d.size > 0 && !image.has_local_blob(d.digest)) {
      RegistryClient& source = clients(origin->registry);
      set_body = [&source, origin, d](HttpRequest& r) {
        r.body_stream = [&source, origin, d] { return open_blob_relay(source, origin->repository, d); };
        r.body_stream_size = d.size;
      };
    } else {
      std::filesystem::path file = image.blob_path(d.digest);
      set_body = [file](HttpRequest& r) { r.body_file = file; };
    }
    for (int attempt = 1;; ++attempt) {
      try {
        upload(client, push_scopes, d, set_body, location);
        return {BlobEvent::Kind::kUploaded, d.digest, d.size, {}};
      } catch (const RelayInterrupted&) {
        // The source of a relayed blob broke off: the target discards the unfinished session; start over.
        if (attempt >= 3) throw;
        location.clear();
      } catch (const Error& e) {
        // A lost or expired upload session: start over from POST, a couple of times.
        if (attempt >= 3 || std::string(e.what()).find("BLOB_UPLOAD_UNKNOWN") == std::string::npos) throw;
        location.clear();
      }
    }
  }

  void upload(RegistryClient& client, const std::vector<std::string>& scopes, const Descriptor& d,
              const std::function<void(HttpRequest&)>& set_body, std::string location) {
    if (location.empty()) {
      HttpRequest post;
      post.method = "POST";
      post.url = blobs_url() + "uploads/";
      HttpResponse r = client.send(post, scopes);
      if (r.status != 202 || r.header("location").empty())
        throw Error("cannot start the upload of " + where(d.digest) + ": " + describe_registry_error(r));
      location = resolve_url(r.url, r.header("location"));
    }
    HttpRequest put;
    put.method = "PUT";
    put.url = with_query(location, digest_param(d.digest));
    put.headers = {{"Content-Type", "application/octet-stream"}};
    set_body(put);
    put.on_upload_progress = progress_reporter(d);
    HttpResponse r = client.send(put, scopes);
    if (r.status == 405 || r.status == 415 || r.status == 501) {
      // This registry wants the bytes in a PATCH (Artifactory and the like): one streamed PATCH, then an empty PUT.
      HttpRequest patch;
      patch.method = "PATCH";
      patch.url = location;
      patch.headers = {{"Content-Type", "application/octet-stream"}};
      set_body(patch);
      patch.on_upload_progress = progress_reporter(d);
      HttpResponse p = client.send(patch, scopes);
      if (p.status != 202 && p.status != 204)
        throw Error("cannot upload " + where(d.digest) + ": " + describe_registry_error(p));
      std::string next = p.header("location").empty() ? location : resolve_url(p.url, p.header("location"));
      HttpRequest finish;
      finish.method = "PUT";
      finish.url = with_query(next, digest_param(d.digest));
      r = client.send(finish, scopes);
    }
    if (r.status != 201 && r.status != 204)
      throw Error("cannot upload " + where(d.digest) + ": " + describe_registry_error(r));
    std::string echoed = r.header("docker-content-digest");
    if (!echoed.empty() && echoed != d.digest.str())
      throw Error("the registry stored " + where(d.digest) + " under digest " + echoed,
                  "the upload was corrupted on the way; try again");
  }
};

}  // namespace

PushResult push_image(const layers::Image& image, const Reference& target,
                      const std::function<RegistryClient&(const std::string&)>& clients, const PushOptions& options) {
  layers::Manifest manifest = image.manifest();
  std::vector<Descriptor> blobs;
  std::set<Digest> seen;
  // Layers first (the big ones benefit most from starting early), the config last among the blobs.
  std::vector<Descriptor> all = manifest.layers;
  std::stable_sort(all.begin(), all.end(), [](const Descriptor& a, const Descriptor& b) { return a.size > b.size; });
  all.push_back(manifest.config);
  for (const auto& d : all)
    if (seen.insert(d.digest).second) blobs.push_back(d);

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
  BlobPusher pusher{image, target, clients, emit};
  auto worker = [&] {
    for (;;) {
      Descriptor d;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (failure || next >= blobs.size()) return;
        d = blobs[next++];
      }
      try {
        emit(pusher.push(d));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::size_t workers = std::min<std::size_t>(std::max(1, options.jobs), blobs.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < workers; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);

  // Every blob is there: now the manifest, by tag (or by digest for a digest reference).
  result.manifest_digest = image.manifest_digest();
  HttpRequest put;
  put.method = "PUT";
  put.url = "/v2/" + target.repository + "/manifests/" +
            (target.digest.empty() ? target.tag : result.manifest_digest.str());
  put.headers = {{"Content-Type", manifest.media_type}};
  put.body = image.raw_manifest();
  HttpResponse r = clients(target.registry).send(put, {push_scope(target.repository)});
  if (r.status != 200 && r.status != 201 && r.status != 202 && r.status != 204)
    throw Error("cannot push the manifest to " + target.str() + ": " + describe_registry_error(r));
  std::string echoed = r.header("docker-content-digest");
  if (!echoed.empty() && echoed != result.manifest_digest.str())
    throw Error(target.str() + ": the registry stored the manifest as " + echoed + ", not " +
                    result.manifest_digest.str(),
                "the registry rewrote the manifest; pin the pushed image by the digest the registry reports");
  result.reference = target.with_digest(result.manifest_digest.str());
  return result;
}

}  // namespace trainpack::registry
