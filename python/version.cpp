#include "python/version.h"

#include "support/byte_regex.h"
#include "support/error.h"
#include "python/text.h"
#include "support/text.h"

namespace trainpack::python {

namespace {

bool to_number(std::string_view digits, std::uint64_t& out) {
  std::uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

// packaging.version.VERSION_PATTERN (after strip); groups:
// 1 epoch, 2 release, 3 pre, 4 pre_l, 5 pre_n, 6 post, 7 post_n1, 8 post_l, 9 post_n2,
// 10 dev, 11 dev_l, 12 dev_n, 13 local
constexpr int kVersionGroups = 13;
const RE2& version_regex() {
  static const RE2 re(
      "v?"
      "(?:([0-9]+)!)?"
      "([0-9]+(?:\\.[0-9]+)*)"
      "([-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?([0-9]+)?)?"
      "((?:-([0-9]+))|(?:[-_.]?(post|rev|r)[-_.]?([0-9]+)?))?"
      "([-_.]?(dev)[-_.]?([0-9]+)?)?"
      "(?:\\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?",
      byte_regex_options(RegexCase::ignored));
  return re;
}

// Local segments compare: absent < anything; strings < numbers; numbers numerically.
int compare_local(const std::vector<Version::LocalSegment>& a,
                  const std::vector<Version::LocalSegment>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const bool an = std::holds_alternative<std::uint64_t>(a[i]);
    const bool bn = std::holds_alternative<std::uint64_t>(b[i]);
    if (an != bn) return an ? 1 : -1;
    if (an) {
      auto x = std::get<std::uint64_t>(a[i]), y = std::get<std::uint64_t>(b[i]);
      if (x != y) return x < y ? -1 : 1;
    } else {
      int c = std::get<std::string>(a[i]).compare(std::get<std::string>(b[i]));
      if (c != 0) return c < 0 ? -1 : 1;
    }
  }
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return 0;
}

}  // namespace

std::optional<Version> Version::try_parse(std::string_view text) {
  std::string_view s = py_strip(text);
  if (s.empty()) return std::nullopt;
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80 || c == '\0') return std::nullopt;
  // m[0] is the whole match; a group that did not take part has a null data().
  re2::StringPiece m[kVersionGroups + 1];
  if (!version_regex().Match(regex_text(s), 0, s.size(), RE2::ANCHOR_BOTH, m, kVersionGroups + 1))
    return std::nullopt;

  auto matched = [&](int i) { return m[i].data() != nullptr; };
  auto group = [&](int i) { return std::string_view(m[i].data(), m[i].size()); };  // abseil's own type in Debian 13
  Version v;
  if (matched(1) && !to_number(group(1), v.epoch_)) return std::nullopt;
  {
    std::string_view rel = group(2);
    size_t start = 0;
    while (true) {
      size_t dot = rel.find('.', start);
      std::uint64_t n;
      if (!to_number(rel.substr(start, dot == std::string_view::npos ? rel.npos : dot - start), n))
        return std::nullopt;
      v.release_.push_back(n);
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
  }
  if (matched(3)) {
    std::string l = ascii_lower(group(4));
    Pre p;
    if (l == "alpha" || l == "a") p.letter = "a";
    else if (l == "beta" || l == "b") p.letter = "b";
    else p.letter = "rc";  // c, rc, pre, preview
    if (matched(5) && !to_number(group(5), p.number)) return std::nullopt;
    v.pre_ = p;
  }
  if (matched(6)) {
    std::uint64_t n = 0;
    if (matched(7)) {
      if (!to_number(group(7), n)) return std::nullopt;
    } else if (matched(9)) {
      if (!to_number(group(9), n)) return std::nullopt;
    }
    v.post_ = n;
  }
  if (matched(10)) {
    std::uint64_t n = 0;
    if (matched(12) && !to_number(group(12), n)) return std::nullopt;
    v.dev_ = n;
  }
  if (matched(13)) {
    std::string_view loc = group(13);
    size_t start = 0;
    for (size_t i = 0; i <= loc.size(); ++i) {
      if (i == loc.size() || loc[i] == '.' || loc[i] == '-' || loc[i] == '_') {
        std::string_view part = loc.substr(start, i - start);
        bool digits = true;
        for (char c : part) digits = digits && c >= '0' && c <= '9';
        if (digits) {
          std::uint64_t n;
          if (!to_number(part, n)) return std::nullopt;
          v.local_.emplace_back(n);
        } else {
          v.local_.emplace_back(ascii_lower(part));
        }
        start = i + 1;
      }
    }
  }
  return v;
}

Version Version::parse(std::string_view text) {
  auto v = try_parse(text);
  if (!v)
    throw Error("invalid version '" + std::string(text) + "' (not PEP 440)",
                "versions look like 1.2.3, 1.2.3rc1, 1.2.3.post1, 1!2.0 or 1.2+local");
  return *v;
}

std::string Version::base_version() const {
  std::string out;
  if (epoch_ != 0) out += std::to_string(epoch_) + "!";
  for (size_t i = 0; i < release_.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(release_[i]);
  }
  return out;
}

std::string Version::public_version() const {
  std::string out = base_version();
  if (pre_) out += pre_->letter + std::to_string(pre_->number);
  if (post_) out += ".post" + std::to_string(*post_);
  if (dev_) out += ".dev" + std::to_string(*dev_);
  return out;
}

std::string Version::local_str() const {
  std::string out;
  for (size_t i = 0; i < local_.size(); ++i) {
    if (i) out += '.';
    if (auto* n = std::get_if<std::uint64_t>(&local_[i])) out += std::to_string(*n);
    else out += std::get<std::string>(local_[i]);
  }
  return out;
}

std::string Version::str() const {
  std::string out = public_version();
  if (!local_.empty()) out += "+" + local_str();
  return out;
}

Version Version::without_local() const {
  Version v = *this;
  v.local_.clear();
  return v;
}

Version Version::base() const {
  Version v;
  v.epoch_ = epoch_;
  v.release_ = release_;
  return v;
}

std::strong_ordering Version::operator<=>(const Version& o) const {
  if (auto c = epoch_ <=> o.epoch_; c != 0) return c;
  // Release with trailing zeros removed == compare with implicit zero padding.
  const size_t n = std::max(release_.size(), o.release_.size());
  for (size_t i = 0; i < n; ++i) {
    std::uint64_t a = i < release_.size() ? release_[i] : 0;
    std::uint64_t b = i < o.release_.size() ? o.release_[i] : 0;
    if (auto c = a <=> b; c != 0) return c;
  }
  // pre: -inf when only dev (no pre, no post); +inf when absent; else (letter, number).
  auto pre_rank = [](const Version& v) -> int {
    if (!v.pre_ && !v.post_ && v.dev_) return -1;
    if (!v.pre_) return 1;
    return 0;
  };
  int pa = pre_rank(*this), pb = pre_rank(o);
  if (pa != pb) return pa <=> pb;
  if (pa == 0) {
    if (int c = pre_->letter.compare(o.pre_->letter); c != 0) return c <=> 0;
    if (auto c = pre_->number <=> o.pre_->number; c != 0) return c;
  }
  // post: -inf when absent.
  if (post_.has_value() != o.post_.has_value()) return post_.has_value() ? std::strong_ordering::greater : std::strong_ordering::less;
  if (post_) {
    if (auto c = *post_ <=> *o.post_; c != 0) return c;
  }
  // dev: +inf when absent.
  if (dev_.has_value() != o.dev_.has_value()) return dev_.has_value() ? std::strong_ordering::less : std::strong_ordering::greater;
  if (dev_) {
    if (auto c = *dev_ <=> *o.dev_; c != 0) return c;
  }
  return compare_local(local_, o.local_) <=> 0;
}

}  // namespace trainpack::python
