#include "image/digest.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "support/error.h"
#include "support/hash.h"

namespace trainpack::image {

namespace {
bool is_lower_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}
}  // namespace

std::optional<Digest> Digest::parse(std::string_view text) {
  auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view alg = text.substr(0, colon), hex = text.substr(colon + 1);
  std::size_t want = alg == "sha256" ? 64 : alg == "sha512" ? 128 : 0;
  if (want == 0 || hex.size() != want || !is_lower_hex(hex)) return std::nullopt;
  Digest d;
  d.algorithm_ = alg;
  d.hex_ = hex;
  return d;
}

Digest Digest::parse_or_throw(std::string_view text, std::string_view what) {
  if (auto d = parse(text)) return *d;
  throw Error(std::string(what) + ": invalid digest \"" + std::string(text.substr(0, 80)) + "\"",
              "digests look like sha256:<64 lowercase hex digits>");
}

Digest Digest::sha256_from_hex(std::string hex) {
  auto d = parse("sha256:" + hex);
  if (!d) throw Error("invalid sha256 hex \"" + hex + "\"");
  return *d;
}

struct Sha256::Impl {
  Hasher hasher{"sha256"};
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) { impl_->hasher.update(data, size); }

Digest Sha256::finish() { return Digest::sha256_from_hex(impl_->hasher.finish_hex()); }  // and starts over

Digest sha256_of(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.finish();
}

Digest sha256_of_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
  Sha256 h;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.update(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw Error("cannot read " + path.string());
  return h.finish();
}

}  // namespace trainpack::image
