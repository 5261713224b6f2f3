#include "image/platform.h"

#include "image/media_types.h"
#include "support/error.h"

namespace trainpack::image {
using nlohmann::json;

Platform Platform::parse(std::string_view text) {
  Platform p;
  std::vector<std::string> parts;
  std::string cur;
  for (char c : text) {
    if (c == '/') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || parts[1].empty())
    throw Error("invalid platform \"" + std::string(text) + "\"", "use OS/ARCH[/VARIANT], e.g. linux/amd64");
  p.os = parts[0];
  p.architecture = parts[1];
  if (parts.size() == 3) p.variant = parts[2];
  // Normalise like containerd/platforms so "x86_64" and "aarch64" work.
  if (p.architecture == "x86_64" || p.architecture == "x86-64") p.architecture = "amd64";
  if (p.architecture == "aarch64") p.architecture = "arm64";
  if (p.architecture == "amd64" && p.variant == "v1") p.variant.clear();
  if (p.architecture == "arm64" && (p.variant == "v8" || p.variant == "8")) p.variant.clear();
  return p;
}

std::string Platform::str() const { return os + "/" + architecture + (variant.empty() ? "" : "/" + variant); }

bool Platform::matches(const json& dp) const {
  if (!dp.is_object()) return false;
  if (string_member(dp, "os") != os || string_member(dp, "architecture") != architecture) return false;
  std::string v = string_member(dp, "variant");
  if (architecture == "arm64" && (v == "v8" || v == "8")) v.clear();
  if (architecture == "amd64" && v == "v1") v.clear();
  return v == variant || (variant.empty() && architecture == "arm" && v == "v7");
}

const Descriptor& select_platform(const Index& index, const Platform& platform, std::string_view what) {
  for (const auto& m : index.manifests)
    if (media::is_manifest(m.media_type) && platform.matches(m.platform)) return m;
  std::string offered;
  for (const auto& m : index.manifests) {
    if (!m.platform.is_object()) continue;
    std::string s = string_member(m.platform, "os", "?") + "/" + string_member(m.platform, "architecture", "?");
    if (s == "unknown/unknown") continue;  // attestation manifests
    if (m.platform.contains("variant")) s += "/" + string_member(m.platform, "variant");
    offered += (offered.empty() ? "" : ", ") + s;
  }
  throw Error(std::string(what) + " has no image for platform " + platform.str(),
              offered.empty() ? "the index lists no platforms" : "it offers: " + offered + " (use --platform)");
}

}  // namespace trainpack::image
