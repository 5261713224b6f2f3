#include "transports/image_location.h"

#include "support/error.h"
#include "support/redact.h"
#include "transports/transport.h"

namespace trainpack::transports {

std::string ImageLocation::str() const {
  const Transport& t = transport_of(*this);
  if (!t.local) return std::string(t.prefix) + ref;
  std::string s = std::string(t.prefix) + path.string();
  return ref.empty() ? s : s + ":" + ref;
}

std::optional<ImageLocation> parse_image_location(std::string_view text) {
  for (const Transport* t : transport_table()) {
    if (!text.starts_with(t->prefix)) continue;
    ImageLocation loc;
    loc.transport = std::string(t->name);
    std::string_view rest = text.substr(t->prefix.size());
    if (!t->local) {
      loc.ref = std::string(rest);
      return loc;
    }
    // Like skopeo: the path ends at the first ':', the rest is the tag or reference.
    auto colon = rest.find(':');
    loc.path = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) loc.ref = std::string(rest.substr(colon + 1));
    return loc;
  }
  return std::nullopt;
}

ImageLocation parse_image_location_or_throw(std::string_view text, std::string_view flag, bool bare_is_registry) {
  auto loc = parse_image_location(text);
  if (!loc && bare_is_registry && text.find("://") == std::string_view::npos)
    loc = parse_image_location("docker://" + std::string(text));
  if (!loc)
    throw Error(std::string(flag) + ": unknown image location \"" + mask_userinfo(text) + "\"",
                "use oci:DIR[:TAG], docker-archive:FILE[:NAME:TAG] or docker://REGISTRY/REPOSITORY[:TAG]");
  const Transport& t = transport_of(*loc);
  if (t.local && loc->path.empty())
    throw Error(std::string(flag) + ": \"" + mask_userinfo(text) + "\" names no path");
  try {
    if (t.complete) t.complete(*loc);
  } catch (const Error& e) {
    throw Error(std::string(flag) + ": " + e.what(), e.hint());
  }
  return *loc;
}

}  // namespace trainpack::transports
