// .dockerignore patterns (context/dockerignore): the input is the file, "%%", then one context-relative path per
// line to match. The context root is never excluded, path cleaning is idempotent, and the per-step walk (match()
// with each parent's state) agrees with excluded(): a path below a directory the walk does not enter is excluded.
#include <optional>

#include "context/dockerignore.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using trainpack::fuzz::require;
using trainpack::context::DockerIgnore;

// excluded() for `path`, computed one component at a time the way the context walker does; nullopt when a parent
// is excluded and not walked into (excluded() then answers for the whole subtree).
std::optional<bool> walk(const DockerIgnore& ignore, std::string_view path) {
  DockerIgnore::MatchState parent, self;
  bool have_parent = false;
  std::size_t start = 0;
  while (true) {
    std::size_t slash = path.find('/', start);
    std::string_view prefix = path.substr(0, slash);
    bool out = ignore.match(prefix, have_parent ? &parent : nullptr, &self);
    if (slash == std::string_view::npos) return out;
    if (out && !ignore.may_include_below(prefix)) return std::nullopt;
    parent = self;
    have_parent = true;
    start = slash + 1;
  }
}

bool plain_path(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.back() == '/') return false;
  return trainpack::context::go_clean_path(path) == path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto parts = trainpack::fuzz::split_parts(trainpack::fuzz::as_text(data, size), 2);
  DockerIgnore ignore;
  try {
    ignore = DockerIgnore::parse(parts[0]);
  } catch (const trainpack::Error&) {
    return 0;
  }
  require(!ignore.excluded("") && !ignore.excluded("."));
  for (const std::string& p : ignore.patterns()) {
    std::string cleaned = trainpack::context::go_clean_path(p);
    require(trainpack::context::go_clean_path(cleaned) == cleaned);
  }
  for (std::string_view path : trainpack::fuzz::split_lines(parts[1])) {
    bool excluded = ignore.excluded(path);
    ignore.deciding_pattern(path);
    if (!plain_path(path) || path == ".") continue;
    std::optional<bool> walked = walk(ignore, path);
    require(walked ? *walked == excluded : excluded);
  }
  return 0;
}
