#include "builder/image_location.h"

#include "registry/reference.h"
#include "support/error.h"

namespace trainpack::builder {

std::string ImageLocation::str() const {
  if (kind == Kind::kRegistry) return "docker://" + ref;
  std::string s = (kind == Kind::kOciLayout ? "oci:" : "docker-archive:") + path.string();
  return ref.empty() ? s : s + ":" + ref;
}

std::optional<ImageLocation> parse_image_location(std::string_view text) {
  ImageLocation loc;
  std::string_view rest;
  if (text.starts_with("oci:")) {
    loc.kind = ImageLocation::Kind::kOciLayout;
    rest = text.substr(4);
  } else if (text.starts_with("docker-archive:")) {
    loc.kind = ImageLocation::Kind::kDockerArchive;
    rest = text.substr(15);
  } else if (text.starts_with("docker://")) {
    loc.kind = ImageLocation::Kind::kRegistry;
    loc.ref = std::string(text.substr(9));
    return loc;
  } else {
    return std::nullopt;
  }
  // Like skopeo: the path ends at the first ':', the rest is the tag or reference.
  auto colon = rest.find(':');
  loc.path = std::string(rest.substr(0, colon));
  if (colon != std::string_view::npos) loc.ref = std::string(rest.substr(colon + 1));
  return loc;
}

ImageLocation parse_image_location_or_throw(std::string_view text, std::string_view flag, bool bare_is_registry) {
  auto loc = parse_image_location(text);
  if (!loc && bare_is_registry && text.find("://") == std::string_view::npos) loc = parse_image_location("docker://" + std::string(text));
  if (!loc)
    throw Error(std::string(flag) + ": unknown image location \"" + std::string(text) + "\"",
                "use oci:DIR[:TAG], docker-archive:FILE[:NAME:TAG] or docker://REGISTRY/REPOSITORY[:TAG]");
  if (loc->kind == ImageLocation::Kind::kRegistry) {
    registry::Reference::parse(loc->ref);  // a one-line error for a malformed reference, before any work
    return *loc;
  }
  if (loc->path.empty()) throw Error(std::string(flag) + ": \"" + std::string(text) + "\" names no path");
  if (loc->kind == ImageLocation::Kind::kDockerArchive && !loc->ref.empty()) {
    auto last_slash = loc->ref.rfind('/');
    std::string_view name_part = std::string_view(loc->ref).substr(last_slash == std::string::npos ? 0 : last_slash);
    if (name_part.find(':') == std::string_view::npos && name_part.find('@') == std::string_view::npos)
      loc->ref += ":latest";  // docker load needs name:tag
  }
  return *loc;
}

}  // namespace trainpack::builder
