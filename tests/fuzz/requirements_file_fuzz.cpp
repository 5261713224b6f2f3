// pip requirements files (python/requirements_file), read as a build reads them (parse_requirements_file: bytes
// decoded first). The input is requirements.txt, "%%", then the bytes of "nested.txt", which either may include
// with -r/-c (any directory); no other file exists and nothing is read from disk or the network. Every named
// requirement it accepts prints (str()) text that parses to itself (see marker_literals.h).
#include "python/requirements_file.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/marker_literals.h"

using trainpack::fuzz::require;
using namespace trainpack::python;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto parts = trainpack::fuzz::split_parts(trainpack::fuzz::as_text(data, size), 2);
  RequirementsEnv env;
  env.vars = {{"INDEX", "https://example.org/simple"}, {"VERSION", "1.0"}};
  env.read_file = [&parts](const std::string& path) -> std::optional<std::string> {
    if (path == "requirements.txt") return std::string(parts[0]);
    // Bounded: each level of "-r dir/nested.txt" lengthens the path.
    if (path.ends_with("nested.txt") && path.size() < 256) return std::string(parts[1]);
    return std::nullopt;
  };
  env.path_exists = [](const std::string&) { return false; };
  RequirementsFile file;
  try {
    file = parse_requirements_file("requirements.txt", env);
  } catch (const trainpack::Error&) {
    return 0;
  }
  for (const RequirementLine& line : file.lines) {
    if (!line.requirement) continue;
    const std::optional<Marker>& marker = line.requirement->marker;
    if (marker && !trainpack::fuzz::prints_back(marker->list())) continue;
    require(Requirement::parse(line.requirement->str()).str() == line.requirement->str());
    is_pinned(line);
  }
  file.hash_checking_mode();
  file.options.effective_index_urls({"https://pypi.org/simple"});
  return 0;
}
