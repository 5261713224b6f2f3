// The names of OCI whiteouts (image-spec layer.md, "Whiteouts"): ".wh.<name>" hides <name> of the lower layers in
// its directory, ".wh..wh..opq" hides all of the directory's lower content; other ".wh..wh." names are aufs metadata.
#pragma once

#include <string_view>

namespace trainpack::layers {

inline constexpr std::string_view kWhiteoutPrefix = ".wh.";
inline constexpr std::string_view kWhiteoutMeta = ".wh..wh.";
inline constexpr std::string_view kOpaque = ".wh..wh..opq";

}  // namespace trainpack::layers
