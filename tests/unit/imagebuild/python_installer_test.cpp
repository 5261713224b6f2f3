// PythonInstaller end to end, in-process: a Debian 12 base made of tar layers (testdata/python/base_facts/debian12,
// the tree collected from a bookworm host: system python3.11, Debian's pip 23.0.1, EXTERNALLY-MANAGED), wheels made
// here served from a find-links directory or a file:// PEP 503 index, and the layers of each step read back as
// entries. No network, no docker, no registry; --no-compile unless a host python3.11 compiles the bytecode.
#include "imagebuild/python_installer.h"

#include <deque>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/config.h"
#include "image/digest.h"
#include "layers/layer_writer.h"
#include "python/interpreter.h"
#include "python/records.h"
#include "store/cache_dir.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/paths.h"
#include "tests/unit/image_test_support.h"
#include "tests/unit/wheel_test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using trainpack::Error;
using trainpack::gcloud::ExtraPackageSource;
using trainpack::imagebuild::Phase;
using trainpack::gcloud::PipInstallStep;
using trainpack::imagebuild::PipStepResult;
using trainpack::imagebuild::PythonInstaller;
using trainpack::imagebuild::PythonOptions;
using trainpack::gcloud::RequirementSource;
using trainpack::gcloud::RequirementsFileSource;
using trainpack::imagebuild::Timings;
using trainpack::layers::FileEntries;
using trainpack::layers::FileEntry;
using trainpack::test_support::TarMember;
using trainpack::test_support::WheelSpec;

namespace {

const std::string kDebian12 = std::string(TRAINPACK_TESTDATA_DIR) + "/python/base_facts/debian12/";
// Debian's pip installs into the deb_posix_local scheme (python_base_facts_test checks it against the collected one).
const std::string kSitePackages = "usr/local/lib/python3.11/dist-packages/";
const std::string kBin = "usr/local/bin/";
const std::vector<std::string> kPath{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"};

// The collected Debian 12 tree as one layer: every file and symlink of its manifest, their parent directories, and
// the directories bookworm has that the collection left out (root's home, /usr/local's pip targets).
std::vector<TarMember> debian12_layer() {
  json manifest = json::parse(trainpack::read_file(kDebian12 + "manifest.json"));
  std::map<std::string, unsigned> dirs{{"root", 0700}, {"usr/local/bin", 0755}, {"usr/local/lib/python3.11", 0755},
                                       {"usr/local/lib/python3.11/dist-packages", 02775}};
  auto add_parents = [&dirs](std::string path) {
    for (auto slash = path.rfind('/'); slash != std::string::npos && slash > 0; slash = path.rfind('/')) {
      path.resize(slash);
      dirs.emplace(path, 0755);
    }
  };
  for (const auto& [path, mode] : manifest.at("files").items()) add_parents(path);
  for (const auto& [path, target] : manifest.at("symlinks").items()) add_parents(path);
  for (const auto& [dir, mode] : std::map(dirs)) add_parents(dir);
  std::vector<TarMember> members;
  for (const auto& [dir, mode] : dirs) members.push_back({dir + "/", "", "", true, "", mode});
  for (const auto& [path, mode] : manifest.at("files").items())
    members.push_back({path, trainpack::read_file(kDebian12 + "rootfs/" + path), "", false, "", mode.get<unsigned>()});
  for (const auto& [path, target] : manifest.at("symlinks").items())
    members.push_back({path, "", target.get<std::string>()});
  return members;
}

const FileEntry* find(const FileEntries& entries, const std::string& path) {
  for (const FileEntry& e : entries)
    if (e.path == path) return &e;
  return nullptr;
}

std::string content_of(const FileEntry& e) {
  trainpack::layers::EntryContentReader reader;
  return reader.read(e, 1u << 20);
}

// The whiteouts of a layer (".wh.<name>", ".wh..wh..opq"), sorted.
std::vector<std::string> whiteouts(const FileEntries& entries) {
  std::vector<std::string> out;
  for (const FileEntry& e : entries)
    if (trainpack::path_base(e.path).starts_with(".wh.")) out.push_back(e.path);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> installed(const PipStepResult& outcome) {
  std::vector<std::string> out;
  for (const auto& a : outcome.installed) out.push_back(a.name + " " + a.version);
  return out;
}

PipInstallStep requirement(const std::string& r) { return PipInstallStep{RequirementSource{r}}; }

class PythonStepsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const fs::path& d : {wheels_, files_, simple_, empty_index_}) fs::create_directories(d);
    set_base({});
  }

  // The Debian 12 base with `extra` layers on top.
  void set_base(const std::vector<std::vector<TarMember>>& extra) {
    std::vector<std::vector<TarMember>> layers{debian12_layer()};
    layers.insert(layers.end(), extra.begin(), extra.end());
    auto built = trainpack::test_support::make_image_of_layers(dir_.path() / ("image-" + std::to_string(++images_)),
                                                               "amd64", layers, true, "debian12-python");
    base_ = std::shared_ptr<const trainpack::image::Image>(std::move(built.image));
  }

  // Find-links for the wheels, and an index (file://, so nothing leaves the host) with no projects.
  PythonOptions options() const {
    PythonOptions o;
    o.index_url = "file://" + empty_index_.string();
    o.find_links = {wheels_.string()};
    o.no_compile = true;
    o.break_system_packages = true;  // the base is Debian's system Python; one test checks the refusal
    o.jobs = 2;
    return o;
  }

  std::unique_ptr<PythonInstaller> installer(PythonOptions o) {
    o.http = &http_;  // the pip steps need one; file:// sources never use it
    return std::make_unique<PythonInstaller>(
        base_, cache_, std::move(o), 0,
        [this](const std::string& line) {
          std::lock_guard lock(log_mutex_);
          log_.push_back(line);
        },
        timings_);
  }
  std::unique_ptr<PythonInstaller> installer() { return installer(options()); }

  static trainpack::image::ImageConfig config(std::vector<std::string> env = kPath) {
    return trainpack::image::ImageConfig::from_json({{"architecture", "amd64"}, {"os", "linux"},
                                                     {"config", {{"Env", env}}}});
  }

  fs::path wheel(const WheelSpec& spec, const fs::path& dir) { return trainpack::test_support::write_wheel(dir, spec); }
  fs::path wheel(const WheelSpec& spec) { return wheel(spec, wheels_); }

  // `file` (a wheel in files_) listed on the file:// simple index: a PEP 503 page per project, each file linked by
  // URL with its sha256 and, when given, data-requires-python (HTML-escaped, as indexes write it).
  void publish(const fs::path& file, const std::string& requires_python = "") {
    std::string filename = file.filename().string();
    std::string project = filename.substr(0, filename.find('-'));  // the test's names are canonical already
    std::string& links = pages_[project];
    links += "<a href=\"file://" + file.string() + "#sha256=" + trainpack::image::sha256_of_file(file).hex() + "\"";
    if (!requires_python.empty()) {
      std::string escaped;
      for (char c : requires_python) escaped += c == '>' ? "&gt;" : c == '<' ? "&lt;" : std::string(1, c);
      links += " data-requires-python=\"" + escaped + "\"";
    }
    links += ">" + filename + "</a><br/>\n";
    fs::create_directories(simple_ / project);
    trainpack::write_file_atomic(simple_ / project / "index.html",
                                 "<!DOCTYPE html>\n<html><body>\n" + links + "</body></html>\n");
  }

  // What the work dir holds at a pip step: a requirements file COPY put there.
  std::vector<const FileEntries*> requirements_file(const std::string& text) {
    return below({{FileEntry::directory("usr/app", 0777), FileEntry::inline_file("usr/app/requirements.txt", text)}});
  }

  // Layers made before a pip step, as the step reads them; the fixture keeps them for the test's length.
  std::vector<const FileEntries*> below(std::vector<FileEntries> layers) {
    std::vector<const FileEntries*> out;
    for (FileEntries& layer : layers) out.push_back(&layers_below_.emplace_back(std::move(layer)));
    return out;
  }

  bool logged(const std::string& part) {
    std::lock_guard lock(log_mutex_);
    return std::any_of(log_.begin(), log_.end(),
                       [&](const std::string& l) { return l.find(part) != std::string::npos; });
  }

  trainpack::ScopedDir dir_{trainpack::make_temp_dir({}, "pysteps-")};
  fs::path wheels_ = dir_.path() / "find-links";
  fs::path files_ = dir_.path() / "index-files";
  fs::path simple_ = dir_.path() / "simple";
  std::deque<FileEntries> layers_below_;
  fs::path empty_index_ = dir_.path() / "empty-index";
  trainpack::store::CacheDir cache_{dir_.path() / "cache"};
  trainpack::net::HttpClient http_;
  Timings timings_;
  std::shared_ptr<const trainpack::image::Image> base_;
  int images_ = 0;
  std::map<std::string, std::string> pages_;
  std::mutex log_mutex_;
  std::vector<std::string> log_;
};

WheelSpec alpha(const std::string& version) {
  return {"alpha", version, {}, {{"alpha/__init__.py", "VERSION = '" + version + "'\n"},
                                 {"alpha/cli.py", "def main():\n    return 0\n"}},
          "[console_scripts]\nalpha-cli = alpha.cli:main\n"};
}

}  // namespace

TEST_F(PythonStepsTest, InstallsAWheelIntoTheImagesSchemeWithRecordInstallerAndScripts) {
  fs::path whl = wheel(alpha("1.0"));
  auto pip = installer();
  PipStepResult out = pip->install(requirement("alpha"), config(), {});

  ASSERT_EQ(out.layers.size(), 1u);
  EXPECT_EQ(out.layers[0].what, "");
  const FileEntries& entries = out.layers[0].entries;
  const FileEntry* init = find(entries, kSitePackages + "alpha/__init__.py");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(content_of(*init), "VERSION = '1.0'\n");
  const FileEntry* installer_file = find(entries, kSitePackages + "alpha-1.0.dist-info/INSTALLER");
  ASSERT_NE(installer_file, nullptr);
  EXPECT_EQ(content_of(*installer_file), "pip\n");
  EXPECT_NE(find(entries, kSitePackages + "alpha-1.0.dist-info/REQUESTED"), nullptr) << "the user asked for it";
  const FileEntry* record = find(entries, kSitePackages + "alpha-1.0.dist-info/RECORD");
  ASSERT_NE(record, nullptr);
  std::string record_text = content_of(*record);
  for (const std::string row : {"alpha/__init__.py,sha256=", "alpha-1.0.dist-info/INSTALLER,sha256=",
                                "../../../bin/alpha-cli,sha256=", "alpha-1.0.dist-info/RECORD,,"})
    EXPECT_NE(record_text.find(row), std::string::npos) << row << " in\n" << record_text;

  // The console script runs the image's interpreter, not the host's.
  const FileEntry* script = find(entries, kBin + "alpha-cli");
  ASSERT_NE(script, nullptr);
  EXPECT_EQ(script->mode, 0755u);
  std::string launcher = content_of(*script);
  EXPECT_TRUE(launcher.starts_with("#!/usr/bin/python3\n")) << launcher;
  EXPECT_NE(launcher.find("from alpha.cli import main"), std::string::npos) << launcher;

  // Only pip's scheme directories are written; a directory the image has keeps its attributes.
  for (const FileEntry& e : entries)
    EXPECT_TRUE(e.path == "usr" || e.path == "usr/local" || e.path.starts_with("usr/local/")) << e.path;
  const FileEntry* site = find(entries, kSitePackages.substr(0, kSitePackages.size() - 1));
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->type, FileEntry::Type::kDirectory);
  EXPECT_EQ(site->mode, 02775u);
  EXPECT_EQ(find(entries, kSitePackages + "alpha/__pycache__/__init__.cpython-311.pyc"), nullptr) << "--no-compile";

  ASSERT_EQ(out.installed.size(), 1u);
  EXPECT_EQ(out.installed[0].name, "alpha");
  EXPECT_EQ(out.installed[0].version, "1.0");
  EXPECT_EQ(out.installed[0].filename, "alpha-1.0-py3-none-any.whl");
  EXPECT_EQ(out.installed[0].sha256, trainpack::image::sha256_of_file(whl).hex());
  EXPECT_FALSE(out.installed[0].local);

  // Each phase of the step was charged.
  auto times = timings_.snapshot();
  EXPECT_GT(times[Phase::kFacts], 0.0);
  EXPECT_GT(times[Phase::kResolve], 0.0);
  EXPECT_GT(times[Phase::kInstall], 0.0);
}

TEST_F(PythonStepsTest, ResolvesFromAFileIndexNewestSatisfyingVersionsAndHonoursMarkers) {
  publish(wheel({"a", "1.0",
                 {"b>=2", "c; python_version < \"3.10\"", "d; platform_machine == \"x86_64\""},
                 {{"a/__init__.py", ""}}},
                files_));
  for (const std::string v : {"1.0", "2.0", "2.5"}) publish(wheel({"b", v, {}, {{"b/__init__.py", ""}}}, files_));
  // Newer, but not for the image's Python 3.11.2.
  publish(wheel({"b", "3.0", {}, {{"b/__init__.py", ""}}}, files_), ">=3.12");
  publish(wheel({"c", "1.0", {}, {{"c/__init__.py", ""}}}, files_));
  publish(wheel({"d", "1.0", {}, {{"d/__init__.py", ""}}}, files_));

  PythonOptions o = options();
  o.index_url = "file://" + simple_.string();
  o.find_links.clear();
  auto pip = installer(o);
  PipStepResult out = pip->install(requirement("a"), config(), {});

  // Dependencies first; d and b are equally deep, and pip's installation order then puts the later name first.
  ASSERT_EQ(installed(out), (std::vector<std::string>{"d 1.0", "b 2.5", "a 1.0"}));
  const FileEntries& entries = out.layers.at(0).entries;
  EXPECT_NE(find(entries, kSitePackages + "b-2.5.dist-info/METADATA"), nullptr);
  EXPECT_EQ(find(entries, kSitePackages + "c/__init__.py"), nullptr) << "its marker is false on Python 3.11";
  EXPECT_NE(find(entries, kSitePackages + "a-1.0.dist-info/REQUESTED"), nullptr);
  EXPECT_EQ(find(entries, kSitePackages + "b-2.5.dist-info/REQUESTED"), nullptr) << "only a dependency";
  EXPECT_TRUE(out.installed[1].url.starts_with("file://")) << out.installed[1].url;
  EXPECT_TRUE(out.installed[1].url.ends_with("/b-2.5-py3-none-any.whl")) << out.installed[1].url;
}

TEST_F(PythonStepsTest, ARequirementTheBaseSatisfiesInstallsNothing) {
  wheel({"packaging", "24.0", {}, {{"packaging/__init__.py", ""}}});
  auto pip = installer();
  // A requirements file is installed without --upgrade: Debian's packaging 23.0 stays although 24.0 is offered.
  PipStepResult out = pip->install(PipInstallStep{RequirementsFileSource{"./requirements.txt"}}, config(),
                                    requirements_file("packaging>=22\n"));
  EXPECT_TRUE(out.installed.empty());
  ASSERT_EQ(out.layers.size(), 1u);
  EXPECT_TRUE(out.layers[0].entries.empty());
  EXPECT_TRUE(logged("packaging==23.0 (kept)"));
}

// gcloud's --requirements installs with --upgrade. Debian's pip 23.0.1 keeps its hands off /usr/lib/python3: the
// new version goes to /usr/local and shadows the old one, which is neither uninstalled nor whited out.
TEST_F(PythonStepsTest, UpgradingADebianPackagedDistributionLeavesItsFilesInPlace) {
  wheel({"packaging", "24.0", {}, {{"packaging/__init__.py", ""}}});
  auto pip = installer();
  PipStepResult out = pip->install(requirement("packaging>=22"), config(), {});
  EXPECT_EQ(installed(out), std::vector<std::string>{"packaging 24.0"});
  const FileEntries& entries = out.layers.at(0).entries;
  EXPECT_NE(find(entries, kSitePackages + "packaging-24.0.dist-info/RECORD"), nullptr);
  EXPECT_EQ(whiteouts(entries), std::vector<std::string>{});
  EXPECT_TRUE(logged("Not uninstalling packaging at /usr/lib/python3/dist-packages, outside environment /usr"));
}

// pip uninstalls what it replaces: the old distribution's paths become whiteouts, a directory the new one writes
// again becomes opaque, and a file its RECORD does not list (keep-me) stays.
TEST_F(PythonStepsTest, UpgradingABaseInstalledDistributionWhitesOutItsOldFiles) {
  std::string init = "VERSION = 1\n";
  std::string record = "oldpkg/__init__.py," + trainpack::python::record_hash(init) + ",12\n"
                       "oldpkg/legacy.py,,\n"
                       "oldpkg-1.0.dist-info/METADATA,,\n"
                       "oldpkg-1.0.dist-info/INSTALLER,,\n"
                       "oldpkg-1.0.dist-info/RECORD,,\n"
                       "../../../bin/oldpkg-tool,,\n";
  // Files only, as some image tools write a layer: the engines make oldpkg/ and its dist-info when they unpack it.
  set_base({{{kSitePackages + "oldpkg/__init__.py", init},
             {kSitePackages + "oldpkg/legacy.py", "X = 1\n"},
             {kSitePackages + "oldpkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: oldpkg\nVersion: 1.0\n"},
             {kSitePackages + "oldpkg-1.0.dist-info/INSTALLER", "pip\n"},
             {kSitePackages + "oldpkg-1.0.dist-info/RECORD", record},
             {kBin + "oldpkg-tool", "#!/usr/bin/python3\n", "", false, "", 0755},
             {kBin + "keep-me", "#!/bin/sh\n", "", false, "", 0755}}});
  wheel({"oldpkg", "2.0", {}, {{"oldpkg/__init__.py", "VERSION = 2\n"}, {"oldpkg/fresh.py", ""}}});

  auto pip = installer();
  PipStepResult out = pip->install(requirement("oldpkg>=2"), config(), {});
  EXPECT_EQ(installed(out), std::vector<std::string>{"oldpkg 2.0"});
  const FileEntries& entries = out.layers.at(0).entries;
  EXPECT_EQ(whiteouts(entries), (std::vector<std::string>{kBin + ".wh.oldpkg-tool", kSitePackages + ".wh.oldpkg-1.0.dist-info",
                                                          kSitePackages + "oldpkg/.wh..wh..opq"}));
  EXPECT_NE(find(entries, kSitePackages + "oldpkg/fresh.py"), nullptr);
  EXPECT_NE(find(entries, kSitePackages + "oldpkg-2.0.dist-info/RECORD"), nullptr);
  EXPECT_EQ(find(entries, kSitePackages + "oldpkg/legacy.py"), nullptr) << "hidden by the opaque directory";
}

// A step sees what earlier steps wrote through the layers the build passes it; the base is scanned once.
TEST_F(PythonStepsTest, ALaterStepSeesWhatAnEarlierStepInstalled) {
  wheel(alpha("1.0"));
  wheel(alpha("2.0"));
  auto pip = installer();
  PipStepResult first = pip->install(requirement("alpha==1.0"), config(), {});
  EXPECT_EQ(installed(first), std::vector<std::string>{"alpha 1.0"});
  std::vector<FileEntries> own{first.layers.at(0).entries};

  PipStepResult again = pip->install(requirement("alpha==1.0"), config(), below(own));
  EXPECT_TRUE(again.installed.empty());
  EXPECT_TRUE(again.layers.at(0).entries.empty());
  EXPECT_EQ(installed(pip->install(requirement("alpha==1.0"), config(), {})), std::vector<std::string>{"alpha 1.0"})
      << "without the earlier layer, nothing is installed yet";

  PipStepResult upgrade = pip->install(requirement("alpha"), config(), below(own));
  EXPECT_EQ(installed(upgrade), std::vector<std::string>{"alpha 2.0"});
  const FileEntries& entries = upgrade.layers.at(0).entries;
  // The old alpha-cli was all /usr/local/bin held: pip's compress_for_rename takes the whole directory, and the new
  // script makes it again.
  EXPECT_EQ(whiteouts(entries), (std::vector<std::string>{kBin + ".wh..wh..opq", kSitePackages + ".wh.alpha-1.0.dist-info",
                                                          kSitePackages + "alpha/.wh..wh..opq"}));
  const FileEntry* init = find(entries, kSitePackages + "alpha/__init__.py");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(content_of(*init), "VERSION = '2.0'\n");
  EXPECT_NE(find(entries, kBin + "alpha-cli"), nullptr);

  std::lock_guard lock(log_mutex_);
  EXPECT_EQ(std::count_if(log_.begin(), log_.end(),
                          [](const std::string& l) { return l.starts_with("reading the base's Python installation"); }),
            1);
}

TEST_F(PythonStepsTest, ARequirementThatCannotBeSatisfiedIsAOneLineErrorNamingIt) {
  wheel(alpha("1.0"));
  wheel(alpha("2.0"));
  auto pip = installer();
  for (const std::string r : {"alpha>=3", "nosuch"}) {
    try {
      pip->install(requirement(r), config(), {});
      ADD_FAILURE() << r << " was installed";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "No matching distribution found for " + r);
      if (r == "alpha>=3") {
        EXPECT_NE(e.hint().find("(from versions: 1.0, 2.0)"), std::string::npos) << e.hint();
      }
    }
  }
}

TEST_F(PythonStepsTest, AnExternallyManagedBaseIsRefusedUnlessBreakingSystemPackagesIsAllowed) {
  wheel(alpha("1.0"));
  PythonOptions o = options();
  o.break_system_packages = false;
  auto pip = installer(o);
  try {
    pip->install(requirement("alpha"), config(), {});
    ADD_FAILURE() << "installed into an EXTERNALLY-MANAGED Python";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("externally managed (/usr/lib/python3.11/EXTERNALLY-MANAGED)"), std::string::npos) << what;
    EXPECT_NE(what.find("--requirements alpha"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(e.hint().find("--break-system-packages"), std::string::npos) << e.hint();
  }
  EXPECT_EQ(timings_.snapshot()[Phase::kInstall], 0.0) << "refused before anything was fetched";

  // The image's own pip configuration may allow it, as the pip in the image would honour it.
  std::vector<std::string> env = kPath;
  env.push_back("PIP_BREAK_SYSTEM_PACKAGES=1");
  EXPECT_EQ(installed(pip->install(requirement("alpha"), config(env), {})), std::vector<std::string>{"alpha 1.0"});
}

TEST_F(PythonStepsTest, ALargeDistributionGetsALayerOfItsOwn) {
  wheel({"small", "1.0", {"big"}, {{"small/__init__.py", "import big\n"}}});
  wheel({"big", "1.0", {}, {{"big/__init__.py", ""}, {"big/weights.bin", std::string(64 << 10, 'w')}}});
  PythonOptions o = options();
  o.separate_layer_bytes = 32 << 10;
  auto pip = installer(o);
  PipStepResult out = pip->install(requirement("small"), config(), {});

  EXPECT_EQ(installed(out), (std::vector<std::string>{"big 1.0", "small 1.0"}));
  ASSERT_EQ(out.layers.size(), 2u);
  EXPECT_EQ(out.layers[0].what, "");
  EXPECT_EQ(out.layers[1].what, "big 1.0");
  const FileEntries& step = out.layers[0].entries;
  const FileEntries& own = out.layers[1].entries;
  EXPECT_NE(find(step, kSitePackages + "small/__init__.py"), nullptr);
  for (const FileEntry& e : step) EXPECT_FALSE(e.path.starts_with(kSitePackages + "big")) << e.path;
  const FileEntry* weights = find(own, kSitePackages + "big/weights.bin");
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(weights->size, 64u << 10);
  EXPECT_NE(find(own, kSitePackages + "big-1.0.dist-info/RECORD"), nullptr);
  for (const FileEntry& e : own) EXPECT_FALSE(e.path.starts_with(kSitePackages + "small")) << e.path;
  // A layer of its own carries its parent directories, with the image's attributes.
  const FileEntry* site = find(own, kSitePackages.substr(0, kSitePackages.size() - 1));
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->mode, 02775u);
}

// --hash in a requirements file turns on hash-checking mode: a file no hash matches is refused before it is installed.
TEST_F(PythonStepsTest, HashCheckingModeRefusesAFileWithoutAMatchingHash) {
  std::string sha = trainpack::image::sha256_of_file(wheel(alpha("1.0"))).hex();
  std::string wrong(64, '0');
  auto pip = installer();
  try {
    pip->install(PipInstallStep{RequirementsFileSource{"./requirements.txt"}}, config(),
                 requirements_file("alpha==1.0 --hash=sha256:" + wrong + "\n"));
    ADD_FAILURE() << "a file with another hash was installed";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("alpha-1.0-py3-none-any.whl does not match the hashes in "), std::string::npos) << what;
    EXPECT_NE(what.find("requirements.txt:1: got sha256:" + sha), std::string::npos) << what;
  }
  PipStepResult out = pip->install(PipInstallStep{RequirementsFileSource{"./requirements.txt"}}, config(),
                                    requirements_file("alpha==1.0 --hash=sha256:" + sha + "\n"));
  EXPECT_EQ(installed(out), std::vector<std::string>{"alpha 1.0"});
}

// --extra-packages: the wheel COPY put into /usr/app is the only candidate of its project; its dependencies come
// from the index, and direct_url.json says where it was installed from (pip 23.0.1 records no hash of it yet).
TEST_F(PythonStepsTest, ALocalWheelIsInstalledWithItsDirectUrlAndItsDependencies) {
  wheel(alpha("1.0"));
  fs::path local_dir = dir_.path() / "context";
  fs::create_directories(local_dir);
  fs::path local = wheel({"trainer", "0.1", {"alpha"}, {{"trainer/task.py", "print('train')\n"}}}, local_dir);
  FileEntry copied;
  copied.path = "usr/app/" + local.filename().string();
  copied.source = local.string();
  copied.size = fs::file_size(local);
  std::vector<FileEntries> own{{FileEntry::directory("usr/app", 0777), copied}};

  auto pip = installer();
  PipStepResult out = pip->install(
      PipInstallStep{ExtraPackageSource{"dist/" + local.filename().string(), local.filename().string()}}, config(),
      below(own));
  ASSERT_EQ(installed(out), (std::vector<std::string>{"alpha 1.0", "trainer 0.1"}));
  EXPECT_TRUE(out.installed[1].local);
  EXPECT_EQ(out.installed[1].url, "");
  const FileEntry* direct_url = find(out.layers.at(0).entries, kSitePackages + "trainer-0.1.dist-info/direct_url.json");
  ASSERT_NE(direct_url, nullptr);
  EXPECT_EQ(json::parse(content_of(*direct_url)),
            json({{"archive_info", json::object()}, {"url", "file:///usr/app/trainer-0.1-py3-none-any.whl"}}));
}

// Without --no-compile pip writes .pyc files and lists them in RECORD; a host python3.11 compiles them.
TEST_F(PythonStepsTest, CompilesBytecodeWithAHostPythonOfTheImagesVersion) {
  trainpack::ScopedDir scratch(trainpack::make_temp_dir({}, "pysteps-python-"));
  if (!trainpack::python::find_host_python("3.11", "", scratch.path() / "probe"))
    GTEST_SKIP() << "no host python3.11";
  wheel(alpha("1.0"));
  PythonOptions o = options();
  o.no_compile = false;
  o.build_python = trainpack::imagebuild::BuildPython::kHost;
  auto pip = installer(o);
  PipStepResult out = pip->install(requirement("alpha"), config(), {});

  const FileEntries& entries = out.layers.at(0).entries;
  const FileEntry* pyc = find(entries, kSitePackages + "alpha/__pycache__/cli.cpython-311.pyc");
  ASSERT_NE(pyc, nullptr);
  std::string bytes = content_of(*pyc);
  ASSERT_GT(bytes.size(), 16u);
  EXPECT_EQ(bytes.substr(2, 2), "\r\n") << "a .pyc's magic number ends in \\r\\n";
  const FileEntry* record_file = find(entries, kSitePackages + "alpha-1.0.dist-info/RECORD");
  ASSERT_NE(record_file, nullptr);
  std::string record = content_of(*record_file);
  EXPECT_NE(record.find("alpha/__pycache__/__init__.cpython-311.pyc,,"), std::string::npos) << record;
  EXPECT_NE(record.find("alpha/__pycache__/cli.cpython-311.pyc,,"), std::string::npos) << record;
}
