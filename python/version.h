#pragma once
// PEP 440 versions exactly as packaging.version.Version parses, normalises and orders them.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace trainpack::python {

class Version {
 public:
  struct Pre {
    std::string letter;  // "a", "b" or "rc"
    std::uint64_t number = 0;
    bool operator==(const Pre&) const = default;
  };
  // A local segment: a number (leading zeros dropped) or a lower-cased alphanumeric string.
  using LocalSegment = std::variant<std::uint64_t, std::string>;

  // Invalid (packaging raises InvalidVersion; pip skips the candidate) -> nullopt.
  // Known deviations: numbers above 2^64-1 and non-ASCII look-alikes that Python's
  // re.IGNORECASE folds to ASCII (U+017F, U+212A, U+0131) are rejected.
  static std::optional<Version> try_parse(std::string_view text);
  // Throws trainpack::Error on an invalid version.
  static Version parse(std::string_view text);

  std::string str() const;              // normalised, e.g. "1!2.0rc1.post2.dev3+ubuntu.1"
  std::string public_version() const;   // str() without "+local"
  std::string base_version() const;     // "[N!]release"
  std::string local_str() const;        // "" when there is no local label

  std::uint64_t epoch() const { return epoch_; }
  const std::vector<std::uint64_t>& release() const { return release_; }
  const std::optional<Pre>& pre() const { return pre_; }
  const std::optional<std::uint64_t>& post() const { return post_; }
  const std::optional<std::uint64_t>& dev() const { return dev_; }
  const std::vector<LocalSegment>& local() const { return local_; }
  bool has_local() const { return !local_.empty(); }
  std::uint64_t major() const { return release_.size() > 0 ? release_[0] : 0; }
  std::uint64_t minor() const { return release_.size() > 1 ? release_[1] : 0; }
  std::uint64_t micro() const { return release_.size() > 2 ? release_[2] : 0; }

  bool is_prerelease() const { return pre_.has_value() || dev_.has_value(); }
  bool is_postrelease() const { return post_.has_value(); }
  bool is_devrelease() const { return dev_.has_value(); }

  // The same version without its local label / with only epoch and release.
  Version without_local() const;
  Version base() const;

  // packaging's _cmpkey ordering; equality ignores trailing release zeros ("1.0" == "1.0.0").
  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const { return (*this <=> other) == 0; }

 private:
  std::uint64_t epoch_ = 0;
  std::vector<std::uint64_t> release_;
  std::optional<Pre> pre_;
  std::optional<std::uint64_t> post_;
  std::optional<std::uint64_t> dev_;
  std::vector<LocalSegment> local_;
};

}  // namespace trainpack::python
