#pragma once
// Where an image is read from or written to, in skopeo's transport syntax: "oci:DIR[:TAG]",
// "docker-archive:FILE[:REF]" and "docker://REF" (a registry; a bare reference means the same where a registry is
// the natural reading, e.g. --executor-image-uri). The transports are listed in transports/table.cpp.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "registry/reference.h"

namespace trainpack::transports {

struct ImageLocation {
  std::string transport;       // the transport's name: "oci", "docker-archive", "docker"
  std::filesystem::path path;  // empty for a registry
  std::string ref;  // oci: the tag; docker-archive: "name:tag" (empty = unspecified); registry: the reference
  std::optional<registry::Reference> reference;  // a registry's `ref`, parsed when the location is read

  std::string str() const;
  bool is_registry() const { return transport == "docker"; }
  // A registry location's reference: the one parsed with it, else `ref` parsed now (Error when malformed).
  registry::Reference registry_reference() const { return reference ? *reference : registry::Reference::parse(ref); }
};

// Parses "oci:...", "docker-archive:..." or "docker://..."; nullopt when the text names no transport.
std::optional<ImageLocation> parse_image_location(std::string_view text);
// Like parse_image_location, but throws Error with a hint listing the supported kinds. With `bare_is_registry`, text
// without a transport is a registry reference.
ImageLocation parse_image_location_or_throw(std::string_view text, std::string_view flag,
                                            bool bare_is_registry = false);

}  // namespace trainpack::transports
