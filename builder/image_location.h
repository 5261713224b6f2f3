#pragma once
// Where an image is read from or written to, in skopeo's transport syntax: "oci:DIR[:TAG]" and
// "docker-archive:FILE[:REF]". (Registry references come with the registry module.)
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace trainpack::builder {

struct ImageLocation {
  enum class Kind { kOciLayout, kDockerArchive };
  Kind kind;
  std::filesystem::path path;
  std::string ref;  // oci: the tag; docker-archive: "name:tag" (empty = unspecified)

  std::string str() const;
};

// Parses "oci:..." or "docker-archive:..."; nullopt when the text names no local transport.
std::optional<ImageLocation> parse_image_location(std::string_view text);
// Like parse_image_location, but throws Error with a hint listing the supported kinds.
ImageLocation parse_image_location_or_throw(std::string_view text, std::string_view flag);

}  // namespace trainpack::builder
