#include "registry/remote_image.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "image/media_types.h"
#include "support/error.h"
#include "support/fs.h"

namespace trainpack::registry {
using image::Descriptor;
using image::Digest;
using nlohmann::json;

const char* const kManifestAccept =
    "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.docker.distribution.manifest.v2+json";

namespace {

std::string strip_parameters(std::string type) {
  auto semi = type.find(';');
  if (semi != std::string::npos) type.resize(semi);
  while (!type.empty() && type.back() == ' ') type.pop_back();
  return type;
}

}  // namespace

FetchedManifest fetch_manifest(RegistryClient& client, const std::string& repository, const std::string& reference) {
  net::HttpRequest req;
  req.url = "/v2/" + repository + "/manifests/" + reference;
  req.headers = {{"Accept", kManifestAccept}};
  req.max_response_bytes = 4u << 20;
  net::HttpResponse resp = client.send(req, {pull_scope(repository)});
  const std::string where = client.registry() + "/" + repository + (reference.starts_with("sha256:") ? "@" : ":") + reference;
  if (resp.status == 404)
    throw Error(where + " not found (" + describe_registry_error(resp) + ")",
                "check the image name and tag, e.g. with: skopeo inspect docker://" + where);
  if (resp.status != 200) throw Error("cannot fetch " + where + ": " + describe_registry_error(resp));

  FetchedManifest out;
  out.body = std::move(resp.body);
  out.digest = image::sha256_of(out.body);
  if (reference.find(':') != std::string::npos) {
    Digest want = Digest::parse_or_throw(reference, where);
    if (want.algorithm() == "sha256" && want != out.digest)
      throw Error(where + ": the registry returned a manifest whose digest is " + out.digest.str(),
                  "the registry or a proxy altered the manifest");
  }
  json j = json::parse(out.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(where + ": manifest is not valid JSON");
  std::string body_type = image::string_member(j, "mediaType");
  std::string header_type = strip_parameters(resp.header("content-type"));
  if (!body_type.empty() && !header_type.empty() && header_type != body_type &&
      header_type != "application/json" && header_type != "application/octet-stream")
    throw Error(where + ": Content-Type " + header_type + " contradicts the manifest's mediaType " + body_type);
  out.media_type = !body_type.empty() ? body_type : header_type;
  if (out.media_type.find("+prettyjws") != std::string::npos ||
      out.media_type == "application/vnd.docker.distribution.manifest.v1+json")
    throw Error(where + " is a schema1 image", "schema1 images are not supported; re-push it with a current client");
  if (out.media_type.empty()) out.media_type = j.contains("manifests") ? std::string(image::media::kOciIndex)
                                                                        : std::string(image::media::kOciManifest);
  return out;
}

namespace {

// A manifest or index already in the store (fetched earlier by digest): no request needed.
std::optional<FetchedManifest> cached_manifest(const store::BlobStore& store, const Digest& digest) {
  if (!store.has(digest)) return std::nullopt;
  FetchedManifest m;
  m.body = read_file(store.path_of(digest), 4u << 20);
  if (Digest actual = image::sha256_of(m.body); actual != digest) {
    store.discard(digest, actual);  // damaged in the cache: fetched again
    return std::nullopt;
  }
  json j = json::parse(m.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  std::string implied = j.contains("manifests") ? std::string(image::media::kOciIndex)
                                                : std::string(image::media::kOciManifest);
  m.media_type = image::string_member(j, "mediaType", implied);
  m.digest = digest;
  return m;
}

// By tag: HEAD for the digest (cheap, and not counted by Docker Hub's pull limit), then the store or a GET by digest.
// Registries that answer HEAD without a digest (or not at all) get a GET by tag.
FetchedManifest resolve_manifest(RegistryClient& client, const store::BlobStore& store, const std::string& repository,
                                 const std::string& reference) {
  if (auto digest = Digest::parse(reference)) {
    if (auto cached = cached_manifest(store, *digest)) return *cached;
    FetchedManifest m = fetch_manifest(client, repository, reference);
    store.put(m.body);
    return m;
  }
  net::HttpRequest head;
  head.method = "HEAD";
  head.url = "/v2/" + repository + "/manifests/" + reference;
  head.headers = {{"Accept", kManifestAccept}};
  net::HttpResponse h = client.send(head, {pull_scope(repository)});
  if (h.status == 200) {
    if (auto digest = Digest::parse(h.header("docker-content-digest"))) {
      if (auto cached = cached_manifest(store, *digest)) return *cached;
      FetchedManifest m = fetch_manifest(client, repository, digest->str());
      store.put(m.body);
      return m;
    }
  }
  FetchedManifest m = fetch_manifest(client, repository, reference);
  store.put(m.body);
  return m;
}

}  // namespace

std::shared_ptr<RemoteImage> RemoteImage::open(RegistryClient& client, const Reference& ref,
                                               const image::Platform& platform, const store::BlobStore& store,
                                               BlobFetchProgress on_fetch) {
  std::shared_ptr<RemoteImage> img(new RemoteImage(client, ref, store));
  img->on_fetch_ = std::move(on_fetch);
  FetchedManifest top = resolve_manifest(client, store, ref.repository, ref.identifier());
  img->resolved_digest_ = top.digest;
  FetchedManifest m = std::move(top);
  // Nested indexes are allowed; a few levels is plenty.
  for (int depth = 0; image::media::is_index(m.media_type); ++depth) {
    if (depth > 4) throw Error(ref.str() + ": index nesting is too deep");
    image::Index index = image::Index::parse(m.body, ref.str());
    const Descriptor& chosen = image::select_platform(index, platform, ref.str());
    m = resolve_manifest(client, store, ref.repository, chosen.digest.str());
  }
  img->manifest_ = std::move(m.body);
  image::Manifest manifest = img->manifest();
  img->blobs_[manifest.config.digest] = manifest.config;
  for (const auto& l : manifest.layers) img->blobs_[l.digest] = l;

  img->config_ = img->read_config(manifest.config);
  return img;
}

// The config is small: fetched now (into the store, verified) and its bytes kept. A copy already in the store is
// checked too (the cache is input, not truth): a damaged one is a miss, fetched again.
std::string RemoteImage::read_config(const Descriptor& config) const {
  fetch_blob(config);
  std::string bytes = read_file(store_.path_of(config.digest), 8u << 20);
  if (config.digest.algorithm() != "sha256") return bytes;
  if (Digest actual = image::sha256_of(bytes); actual != config.digest) {
    store_.discard(config.digest, actual);
    fetch_blob(config);
    bytes = read_file(store_.path_of(config.digest), 8u << 20);
  }
  return bytes;
}

bool RemoteImage::refetch_blob(const Digest& digest, const Digest& actual) const {
  if (!blobs_.count(digest)) return false;
  if (store_.has(digest)) store_.discard(digest, actual);
  return true;
}

std::optional<image::RemoteOrigin> RemoteImage::remote_origin(const Digest& digest) const {
  if (!blobs_.count(digest)) return std::nullopt;
  return image::RemoteOrigin{reference_.registry, reference_.repository};
}

std::filesystem::path RemoteImage::blob_path(const Digest& digest) const {
  auto it = blobs_.find(digest);
  if (it == blobs_.end()) throw Error(reference_.str() + " has no blob " + digest.str());
  if (!store_.has(digest)) fetch_blob(it->second);
  return store_.path_of(digest);
}

void RemoteImage::fetch_blob(const Descriptor& d) const {
  {
    std::unique_lock<std::mutex> lock(fetch_mutex_);
    fetch_done_.wait(lock, [&] { return !fetching_.count(d.digest); });
    if (store_.has(d.digest)) return;
    fetching_.insert(d.digest);
  }
  std::uint64_t received = 0;
  struct Finished {  // however the download ends, the digest is free again for the next caller
    const RemoteImage* self;
    const Descriptor& d;
    const std::uint64_t& received;
    ~Finished() {
      if (self->on_fetch_) self->on_fetch_(d.digest, received, d.size, true);
      std::lock_guard<std::mutex> lock(self->fetch_mutex_);
      self->fetching_.erase(d.digest);
      self->fetch_done_.notify_all();
    }
  } finished{this, d, received};
  if (d.digest.algorithm() != "sha256")
    throw Error(reference_.str() + ": blob " + d.digest.str() + " uses an unsupported digest algorithm");
  auto writer = std::make_unique<store::BlobStore::Writer>(store_.begin_write());
  net::HttpRequest req;
  req.url = "/v2/" + reference_.repository + "/blobs/" + d.digest.str();
  req.sink = [&](const char* data, std::size_t size) {
    writer->write(data, size);
    received += size;
    if (on_fetch_) on_fetch_(d.digest, received, d.size, false);
  };
  req.on_restart = [&] {
    writer = std::make_unique<store::BlobStore::Writer>(store_.begin_write());
    received = 0;
  };
  net::HttpResponse resp = client_.send(req, {pull_scope(reference_.repository)});
  if (resp.status != 200)
    throw Error("cannot download " + d.digest.str() + " from " + reference_.name() + ": " + describe_registry_error(resp));
  if (writer->size() != d.size)
    throw Error("download of " + d.digest.str() + " from " + reference_.name() + " has " +
                    std::to_string(writer->size()) + " bytes, expected " + std::to_string(d.size),
                "the registry sent a truncated or different blob; try again");
  // commit() names the blob by its real digest; a mismatch is detected right after and the file removed.
  store::StoredBlob stored = writer->commit();
  if (stored.digest != d.digest) {
    std::error_code ec;
    std::filesystem::remove(store_.path_of(stored.digest), ec);
    throw Error("download of " + d.digest.str() + " from " + reference_.name() + " hashes to " + stored.digest.str(),
                "the registry sent corrupt data; try again");
  }
}

}  // namespace trainpack::registry
