#pragma once
// Message digests (SHA-256 for content addresses, and whatever else an index page lists: sha512 ... md5) through
// OpenSSL's EVP interface: the one hasher behind layers' Digest, the Python index client's hash checks and the
// registry token cache's keys.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace trainpack {

class Hasher {
 public:
  // An OpenSSL digest name ("sha256", "sha512", "md5", ...); Error when OpenSSL does not know it.
  explicit Hasher(std::string algorithm = "sha256");
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void update(const void* data, std::size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  // The digest of everything since the start (or the last finish or reset) in lower-case hex; starts over.
  std::string finish_hex();
  // The same, as the raw digest bytes (RECORD's urlsafe-base64 hashes are of these).
  std::string finish_bytes();
  // Forgets what was hashed so far (a download that starts again).
  void reset();
  const std::string& algorithm() const { return algorithm_; }

 private:
  struct Context;
  std::string algorithm_;
  std::unique_ptr<Context> context_;
};

// The lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace trainpack
