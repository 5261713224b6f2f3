#pragma once
// Content digests ("sha256:<64 hex>") and the streaming hasher behind them.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace trainpack::image {

class Digest {
 public:
  Digest() = default;
  // Accepts "sha256:<64 lower hex>" and "sha512:<128 lower hex>"; anything else is nullopt.
  static std::optional<Digest> parse(std::string_view text);
  // Like parse(), but throws Error("<what>: invalid digest ...") on bad input.
  static Digest parse_or_throw(std::string_view text, std::string_view what);
  static Digest sha256_from_hex(std::string hex);

  const std::string& algorithm() const { return algorithm_; }
  const std::string& hex() const { return hex_; }
  std::string str() const { return algorithm_ + ":" + hex_; }
  // The first 12 hex digits (as docker shows an image ID), alone or after the algorithm: for progress lines.
  std::string short_hex() const { return hex_.substr(0, 12); }
  std::string short_str() const { return algorithm_ + ":" + short_hex(); }
  bool empty() const { return hex_.empty(); }

  friend bool operator==(const Digest&, const Digest&) = default;
  friend auto operator<=>(const Digest&, const Digest&) = default;

 private:
  std::string algorithm_;
  std::string hex_;
};

// Incremental SHA-256 (OpenSSL EVP).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  // One field of a fingerprint, prefixed by its length ("5:hello"), so that different fields never run together
  // into the same bytes.
  void update_field(std::string_view field) {
    update(std::to_string(field.size()) + ":");
    update(field);
  }
  Digest finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

Digest sha256_of(std::string_view bytes);
Digest sha256_of_file(const std::filesystem::path& path);

}  // namespace trainpack::image
