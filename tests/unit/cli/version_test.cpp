#include "cli/version.h"

#include <gtest/gtest.h>

#include <regex>

namespace trainpack::cli {
namespace {

TEST(Version, NamesTheVersionTheCommitAndTheLibraries) {
  std::string text = version_text();
  EXPECT_TRUE(std::regex_search(text, std::regex("^trainpack " TRAINPACK_VERSION " \\(commit [0-9a-z.-]+\\)\n")))
      << text;
  for (const char* library : {"libcurl ", "libarchive ", "OpenSSL ", "zlib ", "libzip ", "nlohmann_json ", "CLI11 ",
                              "toml++ "}) {
    EXPECT_NE(text.find(library), std::string::npos) << library << " missing from:\n" << text;
  }
}

}  // namespace
}  // namespace trainpack::cli
