// WWW-Authenticate challenges and token scopes (registry/auth_challenge), as a registry's 401 sends them: one header
// value per input line. Scheme and parameter names come back lower-cased, and a parsed scope prints back to itself.
#include <cctype>

#include "registry/auth_challenge.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using trainpack::fuzz::require;

bool lower_case(const std::string& s) {
  for (char c : s)
    if (std::isupper(static_cast<unsigned char>(c))) return false;
  return true;
}

void check_scopes(std::string_view scope_list) {
  std::vector<std::string> scopes = trainpack::registry::split_scopes(scope_list);
  for (const std::string& scope : scopes) {
    auto item = trainpack::registry::parse_scope_item(scope);
    if (!item) continue;
    auto again = trainpack::registry::parse_scope_item(item->str());
    require(again && again->type == item->type && again->name == item->name && again->actions == item->actions);
  }
  std::vector<std::string> merged = trainpack::registry::union_scopes(scopes, scopes);
  for (std::size_t i = 0; i < merged.size(); ++i)
    for (std::size_t j = i + 1; j < merged.size(); ++j) require(merged[i] != merged[j]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> values;
  for (std::string_view line : trainpack::fuzz::split_lines(trainpack::fuzz::as_text(data, size)))
    values.emplace_back(line);
  auto challenges = trainpack::registry::parse_www_authenticate(values);
  for (const auto& c : challenges) {
    require(lower_case(c.scheme));
    for (const auto& [name, value] : c.params) {
      require(lower_case(name));
      require(c.has_param(name));
    }
    check_scopes(c.param("scope"));
  }
  if (const auto* picked = trainpack::registry::pick_challenge(challenges))
    require(picked->scheme == "bearer" || picked->scheme == "basic");
  return 0;
}
