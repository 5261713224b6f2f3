#include "imagebuild/outputs.h"

#include <algorithm>
#include <functional>

#include "image/artifact_image.h"
#include "imagebuild/image_attestations.h"
#include "net/http_client.h"
#include "registry/pusher.h"
#include "registry/registries.h"
#include "transports/transport.h"
#include "support/error.h"
#include "support/human.h"

namespace trainpack::imagebuild {

namespace {

// One progress row per blob of a push (or of a push begun during the build).
std::function<void(const registry::BlobEvent&)> blob_rows(Progress& progress) {
  return [&progress](const registry::BlobEvent& e) {
    using K = registry::BlobEvent::Kind;
    std::string key = e.digest.str();
    std::string size = human_bytes(e.size);
    switch (e.kind) {
      case K::kExists: progress.row(key, "exists    " + e.digest.short_hex() + "  " + size, true); break;
      case K::kMounted:
        progress.row(key, "mounted   " + e.digest.short_hex() + "  " + size + "  from " + e.from, true);
        break;
      case K::kUploading: progress.row(key, "uploading " + e.digest.short_hex() + "  " + size, false); break;
      case K::kUploadProgress:
        progress.row(key, "uploading " + e.digest.short_hex() + "  " + human_bytes(e.sent) + " / " + size, false);
        break;
      case K::kUploaded: progress.row(key, "uploaded  " + e.digest.short_hex() + "  " + size, true); break;
    }
  };
}

}  // namespace

Outputs::Outputs(const BuildRequest& request, const store::BlobStore& blobs, const registry::BlobLocations& locations,
                 Progress& progress, BuildResult& result)
    : req_(request), blobs_(blobs), locations_(locations), progress_(progress), result_(result) {}

void Outputs::begin_pushes() {
  if (req_.dry_run || !req_.registries) return;
  for (const transports::ImageLocation& out : req_.outputs) {
    if (!out.is_registry() || ahead_.count(out.str())) continue;
    registry::Reference target = out.registry_reference();
    registry::PushAheadOptions options;
    options.jobs = req_.jobs;
    options.locations = &locations_;
    options.store = &blobs_;
    options.on_blob = blob_rows(progress_);
    // The SBOM's and the provenance's documents go up beside the layers; their shared empty config is asked about
    // with the tag.
    int documents = (req_.sbom != SbomFormat::kNone) + req_.provenance;
    if (documents > 0 && !req_.outputs_without_attachments.count(out.str())) {
      options.sessions += documents;
      options.ask_about.push_back(image::sha256_of(image::kEmptyConfig));
    }
    ahead_[out.str()] = std::make_unique<registry::PushAhead>(req_.registries->client(target.registry), target,
                                                              std::move(options));
  }
}

void Outputs::offer(const layers::LayerBlob& blob) {
  image::Descriptor layer{std::string(layers::layer_media_type(req_.compression)), blob.digest, blob.size, {}, {}, {}};
  for (auto& [output, push] : ahead_) push->offer(layer);
}

// A registry that cannot be asked counts as not having the blob; the dry run goes on.
bool Outputs::registries_have(const image::Digest& digest) {
  bool any = false;
  for (const transports::ImageLocation& out : req_.outputs) {
    if (!out.is_registry() || !req_.registries) continue;
    registry::Reference target = out.registry_reference();
    net::HttpRequest head;
    head.method = "HEAD";
    head.url = "/v2/" + target.repository + "/blobs/" + digest.str();
    head.follow_redirects = false;
    try {
      net::HttpResponse r =
          req_.registries->client(target.registry).send(head, {registry::pull_scope(target.repository)});
      if (r.status != 200 && (r.status < 300 || r.status >= 400)) return false;
    } catch (const Error& e) {
      progress_.line("could not ask " + target.name() + " for " + digest.short_str() + ": " + e.what());
      return false;
    }
    any = true;
  }
  return any;
}

bool Outputs::take_attachments() const {
  return std::any_of(req_.outputs.begin(), req_.outputs.end(), [this](const transports::ImageLocation& out) {
    return transports::transport_of(out).holds_referrers && !req_.outputs_without_attachments.count(out.str());
  });
}

void Outputs::write(const image::Image& image, const std::vector<std::shared_ptr<const image::Image>>& referrers) {
  for (const transports::ImageLocation& out : req_.outputs) write_one(image, out, referrers);
  progress_.line(counted(result_.layers_built, "layer", "layers") + " built, " +
                 std::to_string(result_.layers_cached) + " reused from cache");
}

// Blobs are mounted from where earlier pushes put them, and the manifests this cache made vouch for the blobs of a
// tag they are under.
void Outputs::write_one(const image::Image& image, const transports::ImageLocation& out,
                        const std::vector<std::shared_ptr<const image::Image>>& referrers) {
  transports::WriteContext context{req_.registries, {}, req_.extra_tags, {}};
  context.push.jobs = req_.jobs;
  context.push.locations = &locations_;
  context.push.store = &blobs_;
  context.push.on_blob = blob_rows(progress_);
  if (!req_.outputs_without_attachments.count(out.str())) context.referrers = referrers;
  if (auto ahead = ahead_.find(out.str()); ahead != ahead_.end()) context.push.ahead = ahead->second.get();
  transports::WriteReport report = transports::write_image(image, out, context);
  if (report.push) {
    progress_.finish();
    record_push(*report.push);
  }
  if (report.referrers_attached > 0) record_attached(out, context.referrers);
  else record_not_attached(out);
  result_.outputs.push_back(out.str());
  if (!report.push) progress_.line("wrote " + out.str());
}

// The SBOM and provenance an output holds beside the image: a line, and the result's list (the same for each).
void Outputs::record_attached(const transports::ImageLocation& out,
                              const std::vector<std::shared_ptr<const image::Image>>& referrers) {
  std::string what;
  for (const auto& referrer : referrers) {
    std::string type = image::artifact_type_of(*referrer);
    if (result_.attached.size() < referrers.size()) result_.attached.push_back({type, referrer->manifest_digest()});
    what += std::string(what.empty() ? "" : " and ") + (type == kInTotoType ? "provenance" : "SBOM");
  }
  progress_.line("attached " + what + " to " + out.str() + " as referrers of " + result_.manifest_digest.short_str());
}

// An output that gets neither the SBOM nor the provenance asked for says so, with why: a warning line, and the
// result's list.
void Outputs::record_not_attached(const transports::ImageLocation& out) {
  if (req_.sbom == SbomFormat::kNone && !req_.provenance) return;
  std::string reason = !transports::transport_of(out).holds_referrers
                           ? "a docker-archive has no place for them"
                           : "the OCI layout was named without a tag, so it keeps one manifest (name one: oci:DIR:TAG)";
  std::string what = req_.sbom == SbomFormat::kNone ? "provenance" : req_.provenance ? "SBOM and provenance" : "SBOM";
  result_.not_attached.push_back({out.str(), reason});
  progress_.warning(what + " not attached to " + out.str() + ": " + reason);
}

void Outputs::record_push(const registry::PushResult& pushed) {
  result_.pushed.push_back(pushed.reference);
  result_.tags.insert(result_.tags.end(), pushed.tags.begin(), pushed.tags.end());
  result_.blobs_existing += pushed.blobs_existing;
  result_.blobs_mounted += pushed.blobs_mounted;
  result_.blobs_uploaded += pushed.blobs_uploaded;
  result_.bytes_uploaded += pushed.bytes_uploaded;
  progress_.line("pushed " + pushed.reference + " (" + counted(pushed.blobs_uploaded, "blob", "blobs") +
                 " uploaded, " + human_bytes(pushed.bytes_uploaded) + "; " + std::to_string(pushed.blobs_mounted) +
                 " mounted, " + std::to_string(pushed.blobs_existing) + " already there)");
}

}  // namespace trainpack::imagebuild
