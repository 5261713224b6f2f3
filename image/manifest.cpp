#include "image/manifest.h"

#include "image/media_types.h"
#include "support/error.h"

namespace trainpack::image {
using nlohmann::json;

json Descriptor::to_json() const {
  json j = extra.is_object() ? extra : json::object();
  j["mediaType"] = media_type;
  j["digest"] = digest.str();
  j["size"] = size;
  if (annotations.is_object() && !annotations.empty()) j["annotations"] = annotations;
  if (platform.is_object()) j["platform"] = platform;
  return j;
}

Descriptor Descriptor::from_json(const json& j, std::string_view what) {
  auto bad = [&](const std::string& why) {
    return Error(std::string(what) + ": malformed descriptor (" + why + ")", "the image metadata is corrupt");
  };
  if (!j.is_object()) throw bad("not an object");
  Descriptor d;
  auto mt = j.find("mediaType");
  if (mt == j.end() || !mt->is_string()) throw bad("no mediaType");
  d.media_type = *mt;
  auto dg = j.find("digest");
  if (dg == j.end() || !dg->is_string()) throw bad("no digest");
  d.digest = Digest::parse_or_throw(dg->get<std::string>(), what);
  auto sz = j.find("size");
  if (sz == j.end() || !sz->is_number_integer() || sz->get<std::int64_t>() < 0) throw bad("no valid size");
  d.size = sz->get<std::uint64_t>();
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "annotations") d.annotations = it.value();
    else if (it.key() == "platform") d.platform = it.value();
    else if (it.key() != "mediaType" && it.key() != "digest" && it.key() != "size") d.extra[it.key()] = it.value();
  }
  return d;
}

std::string string_member(const json& object, const std::string& key, std::string fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

namespace {
json parse_json(std::string_view raw, std::string_view what, std::string_view kind) {
  json j = json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw Error(std::string(what) + ": " + std::string(kind) + " is not valid JSON", "the image metadata is corrupt");
  return j;
}

// mediaType, `fallback` when absent. Another type makes the document malformed, as for Go's encoding/json, with which
// Docker and containerd read it.
std::string media_type_of(const json& j, std::string_view fallback, std::string_view what, std::string_view kind) {
  auto it = j.find("mediaType");
  if (it == j.end()) return std::string(fallback);
  if (!it->is_string())
    throw Error(std::string(what) + ": " + std::string(kind) + " mediaType is not a string",
                "the image metadata is corrupt");
  return it->get<std::string>();
}

bool schema_version_2(const json& j) {
  auto it = j.find("schemaVersion");
  return it != j.end() && it->is_number_integer() && it->get<std::int64_t>() == 2;
}

// The descriptors listed under `key` of a `kind` document; none when the key is absent.
std::vector<Descriptor> descriptors_of(const json& j, const std::string& key, std::string_view what,
                                       std::string_view kind) {
  std::vector<Descriptor> out;
  auto it = j.find(key);
  if (it == j.end()) return out;
  if (!it->is_array()) throw Error(std::string(what) + ": " + std::string(kind) + " " + key + " is not a list");
  for (const auto& d : *it) out.push_back(Descriptor::from_json(d, what));
  return out;
}

json descriptors_json(const std::vector<Descriptor>& descriptors) {
  json out = json::array();
  for (const auto& d : descriptors) out.push_back(d.to_json());
  return out;
}

// The members a manifest and an index serialize alike.
json document_json(const std::string& media_type, const json& annotations) {
  json j;
  j["schemaVersion"] = 2;
  j["mediaType"] = media_type;
  if (annotations.is_object() && !annotations.empty()) j["annotations"] = annotations;
  return j;
}
}  // namespace

Manifest Manifest::parse(std::string_view raw, std::string_view what) {
  json j = parse_json(raw, what, "manifest");
  Manifest m;
  m.media_type = media_type_of(j, media::kOciManifest, what, "manifest");
  if (!media::is_manifest(m.media_type))
    throw Error(std::string(what) + ": unsupported manifest type " + m.media_type,
                "only OCI and Docker schema2 image manifests are supported");
  if (!schema_version_2(j))
    throw Error(std::string(what) + ": manifest schemaVersion is not 2", "schema1 images are not supported");
  if (!j.contains("config")) throw Error(std::string(what) + ": manifest has no config");
  m.config = Descriptor::from_json(j["config"], what);
  m.layers = descriptors_of(j, "layers", what, "manifest");
  if (j.contains("annotations")) m.annotations = j["annotations"];
  return m;
}

std::string Manifest::serialize() const {
  json j = document_json(media_type, annotations);
  j["config"] = config.to_json();
  j["layers"] = descriptors_json(layers);
  return j.dump();
}

Index Index::parse(std::string_view raw, std::string_view what) {
  json j = parse_json(raw, what, "index");
  Index ix;
  ix.media_type = media_type_of(j, media::kOciIndex, what, "index");
  if (!schema_version_2(j)) throw Error(std::string(what) + ": index schemaVersion is not 2");
  ix.manifests = descriptors_of(j, "manifests", what, "index");
  if (j.contains("annotations")) ix.annotations = j["annotations"];
  return ix;
}

std::string Index::serialize() const {
  json j = document_json(media_type, annotations);
  j["manifests"] = descriptors_json(manifests);
  return j.dump();
}

}  // namespace trainpack::image
