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
#include "registry/push_ahead.h"
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
      listing_(std::async(std::launch::async, [this] { return list(); }).share()),
      blobs_(std::async(std::launch::async, [this] { push_blobs(); }).share()) {}

ReferrerPush::~ReferrerPush() {
  blobs_.wait();
  listing_.wait();
  if (early_.valid()) early_.wait();
}

// Only the fallback index is read ahead: whether the registry lists referrers itself is what it answers to their
// manifests' PUT (OCI-Subject), so no request asks it beforehand.
nlohmann::json ReferrerPush::list() const { return fallback_index(client_, repository_, subject_); }

std::vector<const image::Image*> ReferrerPush::unlisted(const json& listing) const {
  std::set<std::string> listed;
  for (const json& d : listing["manifests"]) listed.insert(image::string_member(d, "digest"));
  std::vector<const image::Image*> out;
  for (const auto& referrer : referrers_)
    if (!listed.count(referrer->manifest_digest().str())) out.push_back(referrer.get());
  return out;
}

// The referrers' blobs, all at once, each once: they share their empty config. Sessions opened ahead for this
// repository are used first.
void ReferrerPush::push_blobs() const {
  std::vector<std::pair<const image::Image*, Descriptor>> blobs;
  std::set<Digest> seen;
  for (const auto& referrer : referrers_) {
    image::Manifest manifest = referrer->manifest();
    manifest.layers.push_back(manifest.config);
    for (const Descriptor& d : manifest.layers)
      if (seen.insert(d.digest).second) blobs.push_back({referrer.get(), d});
  }
  std::counting_semaphore<> slots(std::max(1, options_.jobs));
  const Reference target{client_.registry(), repository_, "", ""};
  PushAhead* ahead = options_.ahead && options_.ahead->target().registry == target.registry &&
                             options_.ahead->target().repository == target.repository
                         ? options_.ahead
                         : nullptr;
  parallel_for(blobs.size(), blobs.size(), [&](std::size_t i) {
    BlobPusher pusher{.image = blobs[i].first,
                      .store = options_.store,
                      .target = target,
                      .clients = [this](const std::string&) -> RegistryClient& { return client_; },
                      .locations = options_.locations,
                      .emit = [](const BlobEvent&) {},
                      .upload_slots = slots};
    if (ahead) {  // its sessions, and its answer about the empty config
      pusher.under_tag = ahead->under_tag();
      pusher.opened_session = [ahead] { return ahead->take_session(); };
    }
    pusher.push({blobs[i].second, pusher.known_there(blobs[i].second)});
    if (options_.locations) options_.locations->remember(blobs[i].second.digest, {target.registry, target.repository});
  });
}

// A registry with the referrers API names the subject in its answer (distribution-spec 1.1 "Pushing Manifests with
// Subject": OCI-Subject); one without it needs the fallback index.
void ReferrerPush::put_manifest_of(const image::Image& referrer) const {
  const std::string digest = referrer.manifest_digest().str();
  net::HttpResponse r = put_manifest(client_, {client_.registry(), repository_, "", digest}, referrer, digest);
  if (!r.header("oci-subject").empty()) lists_referrers_ = true;
}

// Puts each manifest, all at once; returns those the registry refused.
std::vector<const image::Image*> ReferrerPush::put_manifests(const std::vector<const image::Image*>& referrers) const {
  std::vector<char> refused(referrers.size(), 0);
  parallel_for(referrers.size(), referrers.size(), [&](std::size_t i) {
    try {
      put_manifest_of(*referrers[i]);
    } catch (const Error&) {
      refused[i] = 1;
    }
  });
  std::vector<const image::Image*> out;
  for (std::size_t i = 0; i < referrers.size(); ++i)
    if (refused[i]) out.push_back(referrers[i]);
  return out;
}

// Waits for the blobs only (they hold sessions of the push begun ahead, which the subject's push cancels next); the
// listing is waited for in the background, so the subject's manifest never waits on it.
void ReferrerPush::subject_blobs_pushed() {
  blobs_.wait();
  early_ = std::async(std::launch::async, [this]() -> std::vector<const image::Image*> {
    try {
      blobs_.get();
      return put_manifests(unlisted(listing_.get()));
    } catch (const Error&) {  // finish() meets it again
      return {};
    }
  });
}

std::size_t ReferrerPush::finish() {
  json listing = listing_.get();
  blobs_.get();
  std::vector<const image::Image*> pushed = unlisted(listing);
  // Those refused beside the subject's manifest (or all, when it did not wait for this) go up now that it is in.
  std::vector<const image::Image*> left = early_.valid() ? early_.get() : pushed;
  parallel_for(left.size(), left.size(), [&](std::size_t i) { put_manifest_of(*left[i]); });
  if (lists_referrers_ || pushed.empty()) return pushed.size();
  for (const image::Image* referrer : pushed) listing["manifests"].push_back(referrer_descriptor(*referrer));
  put_fallback_index(client_, repository_, subject_, listing);
  return pushed.size();
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
