#include "support/hash.h"

#include <openssl/evp.h>

#include "support/error.h"

namespace trainpack {

struct Hasher::Context {
  const EVP_MD* md = nullptr;
  EVP_MD_CTX* ctx = nullptr;
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Hasher::Hasher(std::string algorithm) : algorithm_(std::move(algorithm)), context_(std::make_unique<Context>()) {
  context_->md = EVP_get_digestbyname(algorithm_.c_str());
  if (context_->md == nullptr) throw Error("unsupported hash algorithm " + algorithm_);
  context_->ctx = EVP_MD_CTX_new();
  if (context_->ctx == nullptr) throw Error("out of memory creating a hash context");
  reset();
}

Hasher::~Hasher() = default;

void Hasher::reset() {
  if (EVP_DigestInit_ex(context_->ctx, context_->md, nullptr) != 1)
    throw Error("OpenSSL could not initialise " + algorithm_);
}

void Hasher::update(const void* data, std::size_t size) {
  if (size && EVP_DigestUpdate(context_->ctx, data, size) != 1) throw Error("OpenSSL " + algorithm_ + " update failed");
}

std::string Hasher::finish_bytes() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(context_->ctx, out, &len) != 1) throw Error("OpenSSL " + algorithm_ + " final failed");
  reset();
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string Hasher::finish_hex() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string bytes = finish_bytes();
  std::string hex(bytes.size() * 2, '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    auto b = static_cast<unsigned char>(bytes[i]);
    hex[2 * i] = kHex[b >> 4];
    hex[2 * i + 1] = kHex[b & 15];
  }
  return hex;
}

std::string sha256_hex(std::string_view bytes) {
  Hasher h;
  h.update(bytes);
  return h.finish_hex();
}

}  // namespace trainpack
