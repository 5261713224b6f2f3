#include "cli/version.h"

#include <archive.h>
#include <curl/curl.h>
#include <openssl/crypto.h>
#include <zip.h>
#include <zlib.h>

#include <CLI/Version.hpp>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "imagebuild/identity.h"

namespace trainpack::cli {
namespace {

std::string dotted(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string compiler() {
#if defined(__clang__)
  return "clang " + dotted(__clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return "gcc " + dotted(__GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "an unknown compiler";
#endif
}

}  // namespace

std::string version_text() {
  std::string text = std::string("trainpack ") + TRAINPACK_VERSION + " (commit ";
  text += std::string(imagebuild::trainpack_commit()) + ")\n";
  text += std::string("libcurl ") + curl_version_info(CURLVERSION_NOW)->version;
  text += std::string(", ") + archive_version_string();  // "libarchive 3.6.2"
  text += std::string(", ") + OpenSSL_version(OPENSSL_VERSION);  // "OpenSSL 3.0.x 1 Nov 2022"
  text += std::string(", zlib ") + zlibVersion();
  text += std::string(", libzip ") + zip_libzip_version();
  text += ", nlohmann_json " + dotted(NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR,
                                      NLOHMANN_JSON_VERSION_PATCH);
  text += ", CLI11 " CLI11_VERSION;
  text += ", toml++ " + dotted(TOML_LIB_MAJOR, TOML_LIB_MINOR, TOML_LIB_PATCH);
  text += "\nbuilt with " + compiler();
  return text;
}

}  // namespace trainpack::cli
