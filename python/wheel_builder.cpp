#include "python/wheel_builder.h"

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <memory>

#include "python/filenames.h"
#include "support/error.h"
#include "support/process.h"

namespace trainpack::python {
namespace fs = std::filesystem;

namespace {

// The last `n` non-empty lines of a build's output: where the reason usually is.
std::string last_lines(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    pos = eol == std::string::npos ? text.size() : eol + 1;
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  }
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += "\n    " + lines[i];
  return out;
}

// Proxy and CA settings that curl, OpenSSL and pip's requests read, in either case.
bool is_network_setting(std::string_view kv) {
  std::string_view key = kv.substr(0, kv.find('='));
  for (std::string_view k : {"http_proxy", "https_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                             "NO_PROXY", "ALL_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"})
    if (key == k) return true;
  return false;
}

}  // namespace

bool is_pure_wheel_filename(std::string_view filename) {
  auto wf = WheelFilename::try_parse(filename);
  if (!wf || wf->tags.empty()) return false;
  for (const Tag& t : wf->tags)
    if (t.abi != "none" || t.platform != "any") return false;
  return true;
}

fs::path build_wheel(const WheelBuildRequest& req) {
  fs::create_directories(req.out_dir);
  std::vector<std::string> argv = req.python.command({"-m", "pip", "wheel", "--no-deps", "--no-cache-dir",
                                                      "--disable-pip-version-check", "--no-input", "--progress-bar",
                                                      "off", "--wheel-dir", req.out_dir.string()});
  argv.push_back(req.source.string());

  ProcessOptions options = req.python.process_options();
  options.cwd = fs::is_directory(req.source) ? req.source : req.out_dir;
  // The interpreter's own environment, plus the user's way to the network (proxies, certificates); the host's pip
  // configuration and user site must not change what is built.
  for (char** e = environ; *e; ++e)
    if (is_network_setting(*e)) options.env.push_back(*e);
  options.env.push_back("PIP_CONFIG_FILE=/dev/null");
  // Index URLs may carry credentials: in the environment, not on a command line every user can read in ps.
  if (req.index_urls.empty()) {
    options.env.push_back("PIP_NO_INDEX=1");
  } else {
    options.env.push_back("PIP_INDEX_URL=" + req.index_urls.front());
    std::string extra;
    for (std::size_t i = 1; i < req.index_urls.size(); ++i) extra += (extra.empty() ? "" : " ") + req.index_urls[i];
    if (!extra.empty()) options.env.push_back("PIP_EXTRA_INDEX_URL=" + extra);
  }
  std::string links;
  for (const auto& f : req.find_links) links += (links.empty() ? "" : " ") + f;
  if (!links.empty()) options.env.push_back("PIP_FIND_LINKS=" + links);
  options.env.push_back("SOURCE_DATE_EPOCH=315532800");
  ProcessResult r = run_process(argv, "", req.timeout, options);
  if (r.timed_out) throw Error("building " + req.display + " into a wheel took longer than " +
                               std::to_string(req.timeout.count()) + " s", "publish a wheel for it instead");
  if (r.exit_code != 0)
    throw Error("building " + req.display + " into a wheel with " + req.python.description + " failed",
                "its build said:" + last_lines(r.err + r.out, 6) +
                    "\ncheck that it builds with `pip wheel`, or publish a wheel for it");
  std::vector<fs::path> wheels;
  for (const auto& entry : fs::directory_iterator(req.out_dir))
    if (entry.path().extension() == ".whl") wheels.push_back(entry.path());
  if (wheels.size() != 1)
    throw Error("building " + req.display + " left " + std::to_string(wheels.size()) + " wheels instead of one");
  if (!is_pure_wheel_filename(wheels.front().filename().string()))
    throw Error(req.display + " has native code (built here as " + wheels.front().filename().string() +
                    "), and a wheel compiled on this host would not match the image",
                "publish a wheel built for the image's platform (manylinux) to the index, or pass one with "
                "--extra-packages");
  return wheels.front();
}

}  // namespace trainpack::python
