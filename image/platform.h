#pragma once
// Platforms (OCI image-spec image-index.md "platform") and picking one image out of an index.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "image/manifest.h"

namespace trainpack::image {

struct Platform {
  std::string os = "linux";
  std::string architecture = "amd64";
  std::string variant;
  static Platform parse(std::string_view text);  // "linux/amd64", "linux/arm64/v8"
  std::string str() const;
  bool matches(const nlohmann::json& descriptor_platform) const;
};

// Picks the manifest for `platform` from an index; throws Error listing what the index offers.
const Descriptor& select_platform(const Index& index, const Platform& platform, std::string_view what);

}  // namespace trainpack::image
