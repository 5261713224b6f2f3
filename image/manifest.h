#pragma once
// Descriptors, image manifests and image indexes (OCI image-spec descriptor.md, manifest.md, image-index.md; Docker's
// manifest v2 schema 2). Pulled JSON is never re-serialised (a manifest's digest is over its exact bytes), only
// JSON we author is.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/digest.h"

namespace trainpack::image {

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

// A layer made here, as a manifest and a config name it: its blob (digest, size) and its uncompressed tar (diff_id).
struct LayerBlob {
  Digest diff_id;          // sha256 of the uncompressed tar
  Digest digest;           // sha256 of the compressed stream (the blob)
  std::uint64_t size = 0;  // compressed byte count
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

// A string member of a JSON object read from an image's metadata: `fallback` when `object` is not an object, or the
// member is absent or not a string. Never throws the JSON library's type_error on a malformed document.
std::string string_member(const nlohmann::json& object, const std::string& key, std::string fallback = {});

}  // namespace trainpack::image
