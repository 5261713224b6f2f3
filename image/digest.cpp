#include "image/digest.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "support/error.h"

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
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  if (!impl_->ctx || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1)
    throw Error("OpenSSL could not initialise SHA-256");
}

Sha256::~Sha256() { EVP_MD_CTX_free(impl_->ctx); }

void Sha256::update(const void* data, std::size_t size) {
  if (size && EVP_DigestUpdate(impl_->ctx, data, size) != 1) throw Error("OpenSSL SHA-256 update failed");
}

Digest Sha256::finish() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(impl_->ctx, out, &len) != 1) throw Error("OpenSSL SHA-256 final failed");
  static const char* hexd = "0123456789abcdef";
  std::string hex(len * 2, '0');
  for (unsigned i = 0; i < len; ++i) {
    hex[2 * i] = hexd[out[i] >> 4];
    hex[2 * i + 1] = hexd[out[i] & 15];
  }
  EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr);  // reusable after finish
  return Digest::sha256_from_hex(std::move(hex));
}

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
