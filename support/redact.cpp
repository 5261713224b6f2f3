#include "support/redact.h"

#include <re2/re2.h>

#include "support/byte_regex.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

namespace trainpack {

namespace {

constexpr std::string_view kMask = "***";

// What ends a word of a message: URLs and references never hold these unencoded (RFC 3986 §2), while a password may
// hold any sub-delim (",;()'…"), so those do not end one.
constexpr std::string_view kWordEnds = " \t\r\n\v\f\"<>`";

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// "sha256:<32 or more characters>" at the start of `s`: a digest (OCI image-spec), as after '@' in a reference.
bool starts_with_digest(std::string_view s) {
  std::size_t colon = s.find(':');
  if (colon == 0 || colon == std::string_view::npos || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  auto algorithm_char = [](char c) { return is_alnum(c) || c == '+' || c == '.' || c == '_' || c == '-'; };
  if (!std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(colon), algorithm_char)) return false;
  std::string_view encoded = s.substr(colon + 1);
  auto end = std::find_if(encoded.begin(), encoded.end(),
                          [](char c) { return !(is_alnum(c) || c == '=' || c == '_' || c == '-'); });
  return end - encoded.begin() >= 32;
}

// Masks the password of the authority that starts at `start` of `word` (RFC 3986 §3.2: it ends at '/', '?' or '#';
// its userinfo ends at the last '@', as urllib splits it). After "scheme://" a user alone is masked too (pip takes
// it for a token); elsewhere only "user:password@" counts, so an e-mail address is not mangled.
void mask_authority(std::string& word, std::size_t start, bool after_scheme) {
  std::size_t end = word.find_first_of("/?#", start);
  if (end == std::string::npos) end = word.size();
  if (end == start) return;
  std::size_t at = word.rfind('@', end - 1);
  if (at == std::string::npos || at <= start) return;
  std::size_t colon = word.find(':', start);
  bool has_password = colon < at;
  if (!after_scheme && (!has_password || starts_with_digest(std::string_view(word).substr(at + 1)))) return;
  std::size_t from = has_password ? colon + 1 : start;
  word.replace(from, at - from, kMask);
}

std::string mask_word(std::string_view text) {
  std::string word(text);
  std::vector<std::size_t> authorities;  // where each "scheme://" ends
  for (std::size_t sep = word.find("://"); sep != std::string::npos; sep = word.find("://", sep + 3))
    if (sep > 0 && is_alnum(word[sep - 1])) authorities.push_back(sep + 3);
  if (authorities.empty()) mask_authority(word, 0, false);
  std::for_each(authorities.rbegin(), authorities.rend(), [&](std::size_t start) { mask_authority(word, start, true); });
  return word;
}

// Words of 20 or more token characters that mix upper case, lower case and digits: access tokens, keys and base64
// secrets. Hex digests and paths have no upper case, so they stay.
std::string mask_opaque_words(std::string_view text) {
  auto token_char = [](char c) { return is_alnum(c) || std::strchr("+/=_.~-", c) != nullptr; };
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (!token_char(text[i])) {
      out += text[i++];
      continue;
    }
    std::size_t j = i;
    bool upper = false, lower = false, digit = false;
    for (; j < text.size() && token_char(text[j]); ++j) {
      upper |= std::isupper(static_cast<unsigned char>(text[j])) != 0;
      lower |= std::islower(static_cast<unsigned char>(text[j])) != 0;
      digit |= std::isdigit(static_cast<unsigned char>(text[j])) != 0;
    }
    bool opaque = j - i >= 20 && upper && lower && digit;
    out += opaque ? kMask : text.substr(i, j - i);
    i = j;
  }
  return out;
}

// A flag whose value is a secret: --password, --token, --client-secret, --api-key, ...
const RE2& secret_flag() {
  static const RE2 re(R"re((?i)-{1,2}[a-z0-9_-]*(?:password|passwd|secret|token|api[_-]?key)[a-z0-9_-]*)re");
  return re;
}

}  // namespace

std::string mask_userinfo(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = text.find_first_of(kWordEnds, i);
    if (end == std::string_view::npos) end = text.size();
    out += mask_word(text.substr(i, end - i));
    if (end < text.size()) out += text[end];
    i = end + 1;
  }
  return out;
}

namespace {

// mask_userinfo, values after a secret's name, and the credentials after "Basic"/"Bearer".
std::string mask_named_secrets(std::string_view text) {
  static const RE2 named(
      R"re((?i)(\b(?:[a-z0-9_-]*(?:password|passwd|secret|token|api[_-]?key)[a-z0-9_-]*|auth)["']?\s*[:=]\s*["']?)[^\s"',;&]+)re");
  static const RE2 scheme(R"re((?i)\b(basic|bearer)\s+[a-z0-9._~+/=-]+)re");
  std::string out = mask_userinfo(text);
  RE2::GlobalReplace(&out, named, "\\1***");
  RE2::GlobalReplace(&out, scheme, "\\1 ***");
  return out;
}

}  // namespace

std::string mask_secrets(std::string_view text) { return mask_opaque_words(mask_named_secrets(text)); }

void blank_secret_arguments(int argc, char** argv) {
  bool value_of_secret_flag = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    // No guessing at opaque words here: paths and names of our own flags would go too.
    std::string masked = value_of_secret_flag ? std::string(kMask) : mask_named_secrets(arg);
    value_of_secret_flag = RE2::FullMatch(regex_text(arg), secret_flag());
    if (masked == arg) continue;
    std::size_t kept = std::min(masked.size(), arg.size());
    std::memcpy(argv[i], masked.data(), kept);
    std::memset(argv[i] + kept, 0, arg.size() - kept);
  }
}

}  // namespace trainpack
