#pragma once
// The image model: descriptors, manifests, and the read-only Image view that every source (OCI layout,
// docker-archive, later a registry) provides and every sink consumes. Raw manifest and config bytes are kept
// verbatim: pulled JSON is never re-serialised (a manifest's digest is over its exact bytes: OCI image-spec descriptor.md), only JSON we author is.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layers/digest.h"

namespace trainpack::layers {

struct Descriptor {
  std::string media_type;
  Digest digest;
  std::uint64_t size = 0;
  nlohmann::json annotations;  // object or null
  nlohmann::json platform;     // object or null (index entries)
  nlohmann::json extra;        // any other fields, passed through untouched (urls, artifactType, ...)

  nlohmann::json to_json() const;
  // `what` names the document for error messages ("manifest of oci:/x:tag").
  static Descriptor from_json(const nlohmann::json& j, std::string_view what);
};

// A parsed image manifest (OCI or Docker schema2).
struct Manifest {
  std::string media_type;
  Descriptor config;
  std::vector<Descriptor> layers;
  nlohmann::json annotations;  // object or null

  static Manifest parse(std::string_view raw, std::string_view what);
  // Canonical bytes for a manifest we author (sorted keys, no whitespace).
  std::string serialize() const;
};

// A parsed image index (OCI index or Docker manifest list).
struct Index {
  std::string media_type;
  std::vector<Descriptor> manifests;
  nlohmann::json annotations;

  static Index parse(std::string_view raw, std::string_view what);
  std::string serialize() const;
};

struct Platform {
  std::string os = "linux";
  std::string architecture = "amd64";
  std::string variant;
  static Platform parse(std::string_view text);  // "linux/amd64", "linux/arm64/v8"
  std::string str() const;
  bool matches(const nlohmann::json& descriptor_platform) const;
};

// A string member of a JSON object read from an image's metadata: `fallback` when `object` is not an object, or the
// member is absent or not a string. Never throws the JSON library's type_error on a malformed document.
std::string string_member(const nlohmann::json& object, const std::string& key, std::string fallback = {});

// Picks the manifest for `platform` from an index; throws Error listing what the index offers.
const Descriptor& select_platform(const Index& index, const Platform& platform, std::string_view what);

// Where a blob can be had remotely without moving its bytes through us: a registry push to the same registry can
// mount it from this repository instead of uploading it.
struct RemoteOrigin {
  std::string registry;    // "127.0.0.1:5000", "us-docker.pkg.dev"
  std::string repository;  // "base/python"
};

// One image, read-only. Sources implement it; sinks only read through it.
class Image {
 public:
  virtual ~Image() = default;
  // The registry repository that holds `digest`, when the image came from one (lets a push mount it).
  virtual std::optional<RemoteOrigin> remote_origin(const Digest& digest) const { return std::nullopt; }
  virtual const std::string& raw_manifest() const = 0;
  virtual const std::string& raw_config() const = 0;
  // A local file holding the blob's exact bytes. Sources may materialise it lazily.
  virtual std::filesystem::path blob_path(const Digest& digest) const = 0;
  // Whether blob_path() can answer without downloading (a push relays a remote blob instead of storing it).
  virtual bool has_local_blob(const Digest& digest) const { return true; }
  // A human name for messages ("oci:/tmp/base:3.11").
  virtual std::string describe() const = 0;

  Digest manifest_digest() const { return sha256_of(raw_manifest()); }
  Manifest manifest() const { return Manifest::parse(raw_manifest(), describe()); }
  nlohmann::json config() const;
};

}  // namespace trainpack::layers
