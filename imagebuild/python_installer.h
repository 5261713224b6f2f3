#pragma once
// gcloud's `RUN pip install …` steps, carried out without running the image: the base's Python facts are read from
// its layers (python/base_facts.h over layers/scanned_image.h), requirements are resolved against the index for
// the image's interpreter and platform (python/resolver.h), wheels are installed straight into layer entries
// (python/wheel_installer.h), replaced distributions become whiteouts (python/uninstall.h), what has no wheel is
// built as the image's pip would build it (imagebuild/source_builds.h) and bytecode is compiled by a CPython of the
// image's X.Y (python/bytecode.h); python/pip_behaviour.h says what the image's pip version changes. Nothing from
// the image is executed except, where such an interpreter is needed and the host has none, the image's own Python,
// extracted into the cache and started through the image's own loader (python/image_interpreter.h).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gcloud/build_plan.h"
#include "imagebuild/installed_artifact.h"
#include "imagebuild/pip_layer.h"
#include "imagebuild/source_builds.h"
#include "imagebuild/timings.h"
#include "image/image.h"
#include "layers/file_entry.h"
#include "layers/scanned_image.h"
#include "net/google_credentials.h"
#include "net/http_client.h"
#include "python/base_facts.h"
#include "python/index_client.h"
#include "store/cache_dir.h"

namespace trainpack::imagebuild {

// Command-line settings of the pip steps; they take precedence over the image's pip configuration.
struct PythonOptions {
  std::optional<std::string> index_url;       // --index-url: replaces the image's index
  std::vector<std::string> extra_index_urls;  // --extra-index-url: replaces the image's extra indexes when given
  std::vector<std::string> find_links;        // --find-links: replaces the image's find-links when given
  bool no_compile = false;                    // --no-compile: no .pyc, whatever the image's pip says
  bool break_system_packages = false;         // install into an EXTERNALLY-MANAGED Python anyway
  BuildPython build_python = BuildPython::kAuto;  // which CPython of the image's X.Y builds and compiles
  std::chrono::seconds build_timeout = python::kDefaultBuildTimeout;  // --build-timeout: each setup.py/backend call
  std::uint64_t separate_layer_bytes = 100u << 20;  // a distribution this large gets a layer of its own
  int jobs = 4;                               // parallel downloads
  // The run's HTTP client (--http-timeout, --ca-file, ...) and Google credentials, shared with registry access;
  // made by the CLI, they outlive the build.
  net::HttpClient* http = nullptr;
  std::shared_ptr<net::DefaultGoogleCredentials> google;
};

// The name of what the pip steps keep of a base scan (layers::ScanSelection::name): with the base's layer digests and
// diff_ids, it says where the scans are (layers::ScannedImage::scan_dir).
std::string python_scan_name();
// What that scan keeps of each base layer (its name is python_scan_name()).
layers::ScanSelection python_scan_selection();

class PythonInstaller {
 public:
  // `base` stays alive with the installer; `cache` (outliving it) holds downloads, layer scans and interpreters;
  // `timings` (outliving the installer) is charged the facts, resolve and install phases of every step.
  PythonInstaller(std::shared_ptr<const image::Image> base, const store::CacheDir& cache, PythonOptions options,
                  std::int64_t mtime,
                  std::function<void(const std::string&)> log, Timings& timings,
                  python::DownloadReporter on_download = {});
  ~PythonInstaller();
  PythonInstaller(const PythonInstaller&) = delete;
  PythonInstaller& operator=(const PythonInstaller&) = delete;

  // The layers of one pip step. `config` is the image config at that step (Env, User; gcloud's ENV lines
  // included), `own_layers` the layers this build added before it (their entries name the host files COPY put
  // into /usr/app). Throws Error with a one-line cause and a hint.
  PipStepResult install(const gcloud::PipInstallStep& step, const image::ImageConfig& config,
                        const std::vector<const layers::FileEntries*>& own_layers);
  // The base's filesystem as the pip steps read it (scanned once, then cached).
  const layers::ScannedImage& base_filesystem();
  // The base's Python under `config`, as a step with that config reads it (read once per config).
  python::PythonFacts python_facts(const image::ImageConfig& config);

 private:
  struct State;  // what lasts for the whole build: the base's scan, the work directory, the source builder
  class Step;    // one step, phase by phase
  std::unique_ptr<State> state_;
};

}  // namespace trainpack::imagebuild
