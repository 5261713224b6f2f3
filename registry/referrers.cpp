#include "registry/referrers.h"

#include <algorithm>
#include <optional>
#include <semaphore>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "image/manifest.h"
#include "image/media_types.h"
#include "registry/blob_pusher.h"
#include "registry/remote_image.h"
#include "support/error.h"
#include "support/parallel.h"

namespace trainpack::registry {
using image::Descriptor;
using image::Digest;
using nlohmann::json;

namespace {

// The referrers API's answer (an image index), or nullopt when the registry has no such API (404, 405, 400: what
// registries without it answer for the unknown route).
std::optional<json> referrers_api(RegistryClient& client, const std::string& repository, const Digest& subject) {
  net::HttpRequest get;
  get.url = "/v2/" + repository + "/referrers/" + subject.str();
  get.headers = {{"Accept", std::string(image::media::kOciIndex)}};
  net::HttpResponse r = client.send(get, {pull_scope(repository)});
  if (r.status != 200) return std::nullopt;
  json index = json::parse(r.body, nullptr, false);
  if (index.is_discarded() || !index.is_object() || !index.contains("manifests")) return std::nullopt;
  return index;
}

// The fallback index under the subject's tag; an empty index when the tag is absent. HEAD first: a new image has
// none, and Docker Hub counts a manifest GET, not a HEAD, as a pull.
json fallback_index(RegistryClient& client, const std::string& repository, const Digest& subject) {
  net::HttpRequest get;
  get.method = "HEAD";
  get.url = "/v2/" + repository + "/manifests/" + referrers_tag(subject);
  get.headers = {{"Accept", std::string(image::media::kOciIndex)}};
  json empty{{"schemaVersion", 2}, {"mediaType", image::media::kOciIndex}, {"manifests", json::array()}};
  if (client.send(get, {pull_scope(repository)}).status == 404) return empty;
  get.method = "GET";
  net::HttpResponse r = client.send(get, {pull_scope(repository)});
  if (r.status == 404) return empty;
  if (r.status != 200)
    throw Error("cannot read the referrers of " + subject.str() + " in " + client.registry() + "/" + repository +
                ": " + describe_registry_error(r));
  json index = json::parse(r.body, nullptr, false);
  if (index.is_discarded() || !index.is_object() || !index.contains("manifests") || !index["manifests"].is_array())
    return empty;  // not an index: the spec has the client replace it
  return index;
}

json referrer_descriptor(const image::Image& referrer) {
  json manifest = json::parse(referrer.raw_manifest());
  json d{{"mediaType", image::string_member(manifest, "mediaType", std::string(image::media::kOciManifest))},
         {"digest", referrer.manifest_digest().str()},
         {"size", referrer.raw_manifest().size()}};
  if (manifest.contains("artifactType")) d["artifactType"] = manifest["artifactType"];
  if (manifest.contains("annotations")) d["annotations"] = manifest["annotations"];
  return d;
}

void put_fallback_index(RegistryClient& client, const std::string& repository, const Digest& subject,
                        const json& index) {
  net::HttpRequest put;
  put.method = "PUT";
  put.url = "/v2/" + repository + "/manifests/" + referrers_tag(subject);
  put.headers = {{"Content-Type", std::string(image::media::kOciIndex)}};
  put.body = index.dump();
  net::HttpResponse r = client.send(put, {push_scope(repository)});
  if (r.status != 200 && r.status != 201 && r.status != 202 && r.status != 204)
    throw Error("cannot list the referrers of " + subject.str() + " under the tag " + referrers_tag(subject) +
                " of " + client.registry() + "/" + repository + ": " + describe_registry_error(r));
}

// A referrer's document: at most 64 MiB, checked against its digest.
std::string read_small_blob(RegistryClient& client, const std::string& repository, const Digest& blob) {
  net::HttpRequest get;
  get.url = "/v2/" + repository + "/blobs/" + blob.str();
  get.max_response_bytes = 64u << 20;
  net::HttpResponse r = client.send(get, {pull_scope(repository)});
  if (r.status != 200)
    throw Error("cannot read " + blob.str() + " of " + client.registry() + "/" + repository + ": " +
                describe_registry_error(r));
  if (image::sha256_of(r.body) != blob)
    throw Error(client.registry() + "/" + repository + ": the blob " + blob.str() + " does not match its digest",
                "the registry or a proxy altered it");
  return std::move(r.body);
}

}  // namespace

std::string referrers_tag(const Digest& subject) { return subject.algorithm() + "-" + subject.hex(); }

ReferrerPush::ReferrerPush(RegistryClient& client, std::string repository,
                           std::vector<std::shared_ptr<const image::Image>> referrers, Digest subject,
                           PushOptions options)
    : client_(client), repository_(std::move(repository)), referrers_(std::move(referrers)),
      subject_(std::move(subject)), options_(std::move(options)),
      prepared_(std::async(std::launch::async, [this] { return list_and_push_blobs(); })) {}

ReferrerPush::~ReferrerPush() {
  if (!prepared_.valid()) return;
  try {
    prepared_.get();
  } catch (...) {  // the subject's push failed first; this one's failure is not news
  }
}

ReferrerPush::Listing ReferrerPush::list_and_push_blobs() {
  Listing listing;
  std::optional<json> api = referrers_api(client_, repository_, subject_);
  listing.api = api.has_value();
  listing.index = api ? *api : fallback_index(client_, repository_, subject_);
  std::set<std::string> listed;
  for (const json& d : listing.index["manifests"]) listed.insert(image::string_member(d, "digest"));
  for (const auto& referrer : referrers_)
    if (!listed.count(referrer->manifest_digest().str())) listing.unlisted.push_back(referrer.get());
  push_blobs(listing.unlisted);
  return listing;
}

// The referrers' blobs, all at once, each once: they share their empty config.
void ReferrerPush::push_blobs(const std::vector<const image::Image*>& referrers) const {
  std::vector<std::pair<const image::Image*, Descriptor>> blobs;
  std::set<Digest> seen;
  for (const image::Image* referrer : referrers) {
    image::Manifest manifest = referrer->manifest();
    manifest.layers.push_back(manifest.config);
    for (const Descriptor& d : manifest.layers)
      if (seen.insert(d.digest).second) blobs.push_back({referrer, d});
  }
  std::counting_semaphore<> slots(std::max(1, options_.jobs));
  const Reference target{client_.registry(), repository_, "", ""};
  parallel_for(blobs.size(), blobs.size(), [&](std::size_t i) {
    BlobPusher pusher{.image = blobs[i].first,
                      .store = options_.store,
                      .target = target,
                      .clients = [this](const std::string&) -> RegistryClient& { return client_; },
                      .locations = options_.locations,
                      .emit = [](const BlobEvent&) {},
                      .upload_slots = slots};
    pusher.push({blobs[i].second, pusher.known_there(blobs[i].second)});
    if (options_.locations) options_.locations->remember(blobs[i].second.digest, {target.registry, target.repository});
  });
}

std::size_t ReferrerPush::finish() {
  Listing listing = prepared_.get();
  parallel_for(listing.unlisted.size(), listing.unlisted.size(), [&](std::size_t i) {
    const image::Image& referrer = *listing.unlisted[i];
    put_manifest(client_, {client_.registry(), repository_, "", referrer.manifest_digest().str()}, referrer,
                 referrer.manifest_digest().str());
  });
  if (listing.api || listing.unlisted.empty()) return listing.unlisted.size();
  for (const image::Image* referrer : listing.unlisted)
    listing.index["manifests"].push_back(referrer_descriptor(*referrer));
  put_fallback_index(client_, repository_, subject_, listing.index);
  return listing.unlisted.size();
}

std::vector<Descriptor> list_referrers(RegistryClient& client, const std::string& repository, const Digest& subject) {
  std::optional<json> index = referrers_api(client, repository, subject);
  if (!index) index = fallback_index(client, repository, subject);
  std::vector<Descriptor> out;
  const std::string what = "the referrers of " + subject.str();
  for (const json& d : (*index)["manifests"])
    if (d.is_object()) out.push_back(Descriptor::from_json(d, what));
  return out;
}

std::vector<image::AttachedDocument> read_attached(RegistryClient& client, const std::string& repository,
                                                   const Digest& subject, const std::vector<std::string>& types) {
  std::vector<image::AttachedDocument> found;
  for (const Descriptor& d : list_referrers(client, repository, subject)) {
    std::string type = image::string_member(d.extra, "artifactType");
    if (std::find(types.begin(), types.end(), type) == types.end()) continue;
    FetchedManifest fetched = fetch_manifest(client, repository, d.digest.str());
    image::Manifest manifest = image::Manifest::parse(fetched.body, "the referrer " + d.digest.str());
    std::string content;
    if (manifest.layers.size() == 1) content = read_small_blob(client, repository, manifest.layers.front().digest);
    found.push_back({type, d.digest, std::move(fetched.body), std::move(content)});
  }
  return found;
}

}  // namespace trainpack::registry
