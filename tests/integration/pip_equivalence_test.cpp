// The pip steps, both ways: docker (BuildKit, --network host) builds the Dockerfile trainpack prints against the
// test's local package index, trainpack builds the same trainer without running anything from the image, and the
// root filesystems must match file for file (tests/integration/image_equivalence.h). Two base flavours: Debian's
// system Python with pip allowed by the image's pip config, and a venv first on PATH. Then the failures: each a
// one-line cause with a hint, a non-zero exit and no output written.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "store/cache_dir.h"
#include "support/fs.h"
#include "tests/integration/image_equivalence.h"
#include "tests/integration/pip_test_support.h"
#include "tests/integration/test_support.h"
#include "tests/integration/timings_check.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {


// Debian's system Python, allowed to install and pointed at the test index by /etc/pip.conf, with tp-delta 1.0
// installed by pip, and tp-beta 0.9 where Debian's own packages live (/usr/lib/python3/dist-packages, which
// Debian's pip never uninstalls from).
std::string debian_pip_base(const fs::path& work, const std::string& tag) {
  return derived_base(work, tag,
                      "FROM " + std::string(kBaseArchiveRef) + "\n"
                      "RUN printf '[global]\\nbreak-system-packages = true\\nindex-url = " + index_url() +
                          "\\n' > /etc/pip.conf\n"
                      "RUN pip install --no-cache-dir tp-delta==1.0\n"
                      "RUN pip install --no-cache-dir --target /usr/lib/python3/dist-packages tp-beta==0.9\n");
}

// A trainer of one script, `task.py`, with a requirements.txt.
fs::path script_with_requirements(const fs::path& work, const std::string& task_py, const std::string& requirements) {
  fs::path pkg = work / "pkg";
  write_file(pkg / "task.py", task_py);
  write_file(pkg / "requirements.txt", requirements);
  return pkg;
}

}  // namespace

// Debian's python3 under /usr with EXTERNALLY-MANAGED, allowed and pointed at the index by /etc/pip.conf; tp-delta
// preinstalled by pip in the base. Covers: extras, markers and transitive deps (tp-alpha[cli] → tp-beta, tp-tool),
// a Requires-Python-driven pick (tp-beta 1.1 needs Python >= 3.99: 1.0), a yanked release skipped (tp-delta 1.1),
// a preinstalled package kept (tp-delta 1.0 satisfies tp-gamma[fast]), console and gui launchers and a .data script
// (tp-tool), namespace packages (tp-ns-one, tp-ns-two), a local wheel in --extra-packages, the upgrade of a
// distribution in Debian's dist-packages by a --requirements item (tp-beta 0.9 stays, 1.0 goes to /usr/local),
// and .pyc compiled on the host.
TEST(PipEquivalence, DebianSystemPythonWithPipConfigNamingTheIndex) {
  TempDir dir("tp-pip-equiv");
  const std::string tag = "trainpack-test/debian-pip:1";
  std::string base = debian_pip_base(dir.path(), tag);
  fs::path pkg = trainer_package(dir.path(), "tp-alpha[cli]\ntp-ns-one\ntp-ns-two\ntp-gamma[fast]\n");
  expect_same_image(dir.path(),
                    {"--executor-image-uri=" + tag, "--local-package-path=" + pkg.string(), "--script=trainer/task.py",
                     "--extra-packages=dist/tp_local-1.0-py3-none-any.whl", "--requirements=tp-beta==1.0"},
                    {}, base, EquivalenceOptions{"host", {}, "trained"});
}

namespace {

// gcloud's setup.py step: `pip install .` in /usr/app, where only setup.py has been copied, builds the project in
// place (leaving build/ and *.egg-info there) and installs it with its install_requires, one of which is published
// only as a pure-Python sdist (built with a CPython of the image's X.Y, as pip builds it in the image). Then
// requirements.txt, then the same sdist again as a local file in --extra-packages: pip reinstalls a local sdist even
// at the installed version (with direct_url.json and REQUESTED this time).
void expect_setup_py_step_like_docker(const std::vector<std::string>& trainpack_flags) {
  TempDir dir("tp-pip-equiv");
  const std::string tag = "trainpack-test/debian-pip:1";
  std::string base = debian_pip_base(dir.path(), tag);
  fs::path pkg = trainer_package(dir.path(), "tp-ns-one\n", "tp_gamma, tp_pure_sdist, tpns.one");
  write_file(pkg / "setup.py",
             "from setuptools import find_packages, setup\n"
             "setup(name='trainer-pkg', version='0.1', packages=find_packages(),\n"
             "      install_requires=['tp-gamma', 'tp-pure-sdist'])\n");
  write_file(pkg / "trainer" / "__init__.py", "");
  fs::copy_file(index_dir() / "files" / "tp-pure-sdist-1.0.tar.gz", pkg / "dist" / "tp-pure-sdist-1.0.tar.gz");
  expect_same_image(dir.path(),
                    {"--executor-image-uri=" + tag, "--local-package-path=" + pkg.string(), "--script=trainer/task.py",
                     "--extra-packages=dist/tp-pure-sdist-1.0.tar.gz"},
                    {}, base, EquivalenceOptions{"host", trainpack_flags, "trained"});
}

}  // namespace

TEST(PipEquivalence, SetupPyWithInstallRequiresAndAnSdistDependency) { expect_setup_py_step_like_docker({}); }

// The same with the base image's own python3.11, pip and setuptools, run from the cache through the image's loader.
TEST(PipEquivalence, SetupPyBuiltByTheBaseImagesOwnPython) {
  expect_setup_py_step_like_docker({"--build-python=image"});
}

// A venv at /opt/venv first on PATH, its pip pointed at the index by ENV PIP_INDEX_URL, tp-beta 0.9 preinstalled
// by that pip. Covers: the venv scheme and shebangs, a preinstalled package kept (requirements.txt's unpinned
// tp-beta), then upgraded by a --requirements item (tp-beta 0.9 → 1.0: its files removed by whiteouts), a yanked
// release skipped (tp-gamma[fast] → tp-delta 1.0, as 1.1 is yanked). Every distribution gets a layer of its own
// (--own-layer-mb=0), after the step's layer with the whiteouts: the filesystem must still be docker's.
TEST(PipEquivalence, VenvPythonWithAPreinstalledPackageKeptThenUpgraded) {
  TempDir dir("tp-pip-equiv");
  const std::string tag = "trainpack-test/venv-pip:1";
  std::string base = venv_base(dir.path(), tag);
  fs::path pkg = trainer_package(dir.path(), "tp-tool\ntp-gamma[fast]\ntp-beta\n", "tp_tool, tp_gamma, tp_beta");
  expect_same_image(dir.path(),
                    {"--executor-image-uri=" + tag, "--local-package-path=" + pkg.string(), "--script=trainer/task.py",
                     "--requirements=tp-beta==1.0"},
                    {}, base, EquivalenceOptions{"host", {"--own-layer-mb=0"}, "trained"});
}

// --- Failures -------------------------------------------------------------------------------------------------------

namespace {

struct Failure {
  int exit_code;
  std::string err;
  bool output_written;
};

// trainpack build of a small trainer with `requirements` on `base`, with `flags`.
Failure build_fails(const TempDir& dir, const std::string& base, const std::string& requirements,
                    std::vector<std::string> flags) {
  fs::path pkg = dir.path() / "pkg";
  fs::create_directories(pkg);
  write_file(pkg / "task.py", "print('x')\n");
  if (!requirements.empty()) write_file(pkg / "requirements.txt", requirements);
  std::vector<std::string> argv{trainpack_bin(), "build", "--executor-image-uri=python:3.11",
                                "--base-source=" + base, "--local-package-path=" + pkg.string(),
                                "--script=task.py", "--output=oci:" + (dir.path() / "out").string() + ":x",
                                "--cache-dir=" + (dir.path() / "cache").string()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto r = run_command(argv);
  return {r.exit_code, r.err, fs::exists(dir.path() / "out")};
}

// The last "trainpack: error:" line and whether a "hint:" follows.
void expect_one_line_cause(const Failure& f, const std::string& cause_part) {
  EXPECT_NE(f.exit_code, 0);
  EXPECT_FALSE(f.output_written) << "a failed build must not write its output";
  auto at = f.err.find("trainpack: error: ");
  ASSERT_NE(at, std::string::npos) << f.err;
  std::string rest = f.err.substr(at + 18);
  std::string cause = rest.substr(0, rest.find('\n'));
  EXPECT_NE(cause.find(cause_part), std::string::npos) << f.err;
  EXPECT_NE(rest.find("\nhint: "), std::string::npos) << "no hint: " << f.err;
}

}  // namespace

TEST(PipFailures, EachFailureHasACauseAHintAndWritesNothing) {
  {
    // The plain test base: Debian's EXTERNALLY-MANAGED, nothing in the image allows pip to install.
    TempDir dir("tp-pip-fail");
    expect_one_line_cause(build_fails(dir, base_oci_ref(), "tp-beta\n", {"--index-url=" + index_url()}),
                          "externally managed");
    // pip's own escape hatch, as a flag: then the same build succeeds.
    TempDir ok_dir("tp-pip-fail");
    Failure ok = build_fails(ok_dir, base_oci_ref(), "tp-beta\n", {"--index-url=" + index_url(), "--break-system-packages"});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_TRUE(ok.output_written);
  }
  struct Case {
    std::string requirements;
    std::vector<std::string> flags;
    std::string cause;
  };
  // The other cases on a base whose /etc/pip.conf allows installing (added with umoci: no container engine needed).
  TempDir base_dir_holder("tp-pip-fail-base");
  fs::path base = base_dir_holder.path() / "oci";
  fs::copy(base_oci_dir(), base, fs::copy_options::recursive);
  fs::create_directories(base_dir_holder.path() / "conf" / "etc");
  write_file(base_dir_holder.path() / "conf" / "etc" / "pip.conf", "[global]\nbreak-system-packages = true\n");
  run_ok({"tar", "-cf", (base_dir_holder.path() / "conf.tar").string(), "--numeric-owner", "--owner=0", "--group=0",
          "-C", (base_dir_holder.path() / "conf").string(), "./etc/pip.conf"});
  run_ok({"umoci", "raw", "add-layer", "--image", base.string() + ":3.11", (base_dir_holder.path() / "conf.tar").string()});
  std::vector<Case> cases{
      {"tp-beta>=5\n", {}, "No matching distribution found for tp-beta>=5"},
      {"tp-beta==1.0\ntp-beta==0.9\n", {}, "conflicting dependencies"},
      {"tp-yanked\n", {}, "tp-yanked"},
      {"tp-native\n", {}, "tp-native 1.0 has native code"},
      {"tp-winonly\n", {}, "No matching distribution found for tp-winonly"},
      {"tp-beta==1.0 --hash=sha256:" + std::string(64, '0') + "\n", {}, "tp_beta-1.0-py3-none-any.whl"},
      {"tp-alpha\n", {"--index-url=http://127.0.0.1:9/simple/"}, "127.0.0.1:9"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.requirements);
    TempDir dir("tp-pip-fail");
    std::vector<std::string> flags = c.flags;
    if (flags.empty()) flags.push_back("--index-url=" + index_url());
    expect_one_line_cause(build_fails(dir, "oci:" + base.string() + ":3.11", c.requirements, flags), c.cause);
  }
  // Nothing pushed either: a failing pip step with a registry output leaves no tag (and no manifest) there.
  TempDir dir("tp-pip-fail");
  const std::string target = env_or_fail("TRAINPACK_TEST_REGISTRY") + "/pip-failure:1";
  expect_one_line_cause(build_fails(dir, "oci:" + base.string() + ":3.11", "tp-yanked\n",
                                    {"--index-url=" + index_url(), "--output=docker://" + target}),
                        "tp-yanked");
  auto inspect = run_command({"skopeo", "inspect", "--raw", "--tls-verify=false", "docker://" + target});
  EXPECT_NE(inspect.exit_code, 0) << "a failed build pushed " << target << ": " << inspect.out;
}

// A large distribution's layer stays cached when another requirement changes (--own-layer-mb=0 makes every
// distribution "large").
TEST(PipLayers, ADistributionInItsOwnLayerIsReusedWhenOtherRequirementsChange) {
  TempDir dir("tp-pip-layers");
  fs::path pkg = dir.path() / "pkg";
  fs::create_directories(pkg);
  write_file(pkg / "task.py", "print('x')\n");
  auto build = [&](const std::string& requirements) {
    write_file(pkg / "requirements.txt", requirements);
    std::vector<std::string> argv{trainpack_bin(), "build", "--executor-image-uri=python:3.11",
                                  "--base-source=" + base_oci_ref(), "--local-package-path=" + pkg.string(),
                                  "--script=task.py", "--output=oci:" + (dir.path() / "out").string() + ":x",
                                  "--cache-dir=" + (dir.path() / "cache").string(), "--index-url=" + index_url(),
                                  "--break-system-packages", "--own-layer-mb=0", "--format=json"};
    return nlohmann::json::parse(run_ok(argv));
  };
  auto origin_of = [](const nlohmann::json& result, const std::string& what) {
    for (const auto& l : result.at("layers"))
      if (l.value("created_by", "").find(what) != std::string::npos) return l.at("origin").get<std::string>();
    return std::string("missing");
  };
  nlohmann::json first = build("tp-tool\n");
  EXPECT_EQ(origin_of(first, "tp-tool 1.0 in a layer of its own"), "built");
  expect_phase_timings(first);
  for (const char* phase : {"facts", "resolve", "install"})  // the base scanned, the index asked, a wheel installed
    EXPECT_GT(first.at("timings").at(phase).get<double>(), 0) << phase << " in " << first.at("timings");
  nlohmann::json second = build("tp-tool\ntp-beta\n");
  EXPECT_EQ(origin_of(second, "tp-tool 1.0 in a layer of its own"), "cached");
  EXPECT_EQ(origin_of(second, "tp-beta 1.1") , "missing");  // Requires-Python rules 1.1 out
  EXPECT_EQ(origin_of(second, "tp-beta 1.0 in a layer of its own"), "built");
}


// A wheel that is ready is installed (unpacked, its bytecode compiled) while one that pip installs before it still
// downloads (imagebuild/python_installer.cpp, install): the image must not depend on the order the wheels arrive in. Here
// the first distribution pip installs comes two seconds after the others; the image is the one built without delay.
TEST(PipDownloads, AWheelThatArrivesLastGivesTheSameImage) {
  TempDir dir("tp-pip-late-wheel");
  fs::path pkg = script_with_requirements(dir.path(), "import tp_alpha\n", "tp-alpha[cli]\ntp-gamma\n");
  auto build = [&](const std::string& index, const std::string& name) {
    fs::create_directories(dir.path() / name);  // the output's parent, which a build does not make
    return run_command({trainpack_bin(), "build", "--executor-image-uri=python:3.11", "--base-source=" + base_oci_ref(),
                        "--local-package-path=" + pkg.string(), "--script=task.py",
                        "--output=oci:" + (dir.path() / name / "out").string() + ":x",
                        "--cache-dir=" + (dir.path() / name / "cache").string(), "--index-url=" + index,
                        "--break-system-packages", "-v"});
  };
  CommandResult prompt = build(index_url(), "prompt");
  ASSERT_EQ(prompt.exit_code, 0) << prompt.err;
  // "requirements.txt: tp-beta==1.0, tp-tool==1.0, ...": what pip installs, in its order.
  std::smatch first;
  ASSERT_TRUE(std::regex_search(prompt.err, first, std::regex(R"(requirements\.txt: ([a-z-]+)==([0-9.]+), )")))
      << prompt.err;
  std::string wheel = std::regex_replace(first[1].str(), std::regex("-"), "_") + "-" +
                      std::regex_replace(first[2].str(), std::regex("\\."), "\\.") + "-";
  OwnIndexServer late_index("^/files/" + wheel + ".*\\.whl$", 2.0);
  auto start = std::chrono::steady_clock::now();
  CommandResult late = build(late_index.url(), "late");
  ASSERT_EQ(late.exit_code, 0) << late.err;
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << "the wheel " << wheel
                                                                              << "* came without delay";
  EXPECT_EQ(late.out, prompt.out) << "the same manifest digest";
}

// An index of plain files without PEP 658 .metadata (busybox httpd, which answers ranges by offset): each wheel's
// METADATA comes from the end of the file (python/index_client.h, read_metadata_by_range), and a wheel that came
// whole in that first answer is not asked for again. The image is the one built from the index with .metadata.
TEST(PipIndexes, AnIndexWithoutMetadataFilesGivesTheSameImageAskingForEachWheelOnce) {
  TempDir dir("tp-pip-no-metadata");
  fs::path pkg = script_with_requirements(dir.path(), "import tp_alpha\n", "tp-alpha[cli]\ntp-gamma[fast]\n");
  fs::path plain = dir.path() / "index";
  ASSERT_EQ(run_command({"cp", "-r", index_dir().string(), plain.string()}).exit_code, 0);
  ASSERT_EQ(run_command({"find", plain.string(), "-name", "*.metadata", "-delete"}).exit_code, 0);
  BusyboxHttpd server(plain, dir.path() / "httpd.log");
  auto build = [&](const std::string& index, const std::string& name) {
    fs::create_directories(dir.path() / name);  // the output's parent, which a build does not make
    return run_command({trainpack_bin(), "build", "--executor-image-uri=python:3.11", "--base-source=" + base_oci_ref(),
                        "--local-package-path=" + pkg.string(), "--script=task.py",
                        "--output=oci:" + (dir.path() / name / "out").string() + ":x",
                        "--cache-dir=" + (dir.path() / name / "cache").string(), "--index-url=" + index,
                        "--break-system-packages"});
  };
  CommandResult with_metadata = build(index_url(), "metadata");
  ASSERT_EQ(with_metadata.exit_code, 0) << with_metadata.err;
  CommandResult without = build(server.url() + "/simple/", "plain");
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(without.out, with_metadata.out) << "the same manifest digest";

  std::map<std::string, int> asked;  // wheel path → requests
  std::istringstream log(read_file(dir.path() / "httpd.log"));
  for (std::string line; std::getline(log, line);)
    if (auto at = line.find(" url:/files/"); at != std::string::npos && line.ends_with(".whl")) ++asked[line.substr(at + 5)];
  EXPECT_GE(asked.size(), 4u) << read_file(dir.path() / "httpd.log");
  for (const auto& [wheel, n] : asked) EXPECT_EQ(n, 1) << wheel << " was asked for " << n << " times";
}

// docker's rule for RUN: a pip step whose inputs are unchanged is reused without asking the index (here: with the
// index stopped), a code edit rebuilds only the code layer, and --refresh-pip-steps or a changed requirements.txt
// asks the index again (and so fails while it is down).
TEST(PipStepCache, AnUnchangedStepIsReusedWithoutAskingTheIndex) {
  TempDir dir("tp-pip-step-cache");
  fs::path pkg = script_with_requirements(dir.path(), "import tp_gamma\n", "tp-gamma[fast]\n");
  OwnIndexServer index;
  auto build = [&](const std::string& extra) {
    std::vector<std::string> argv{trainpack_bin(), "build", "--executor-image-uri=python:3.11",
                                  "--base-source=" + base_oci_ref(), "--local-package-path=" + pkg.string(),
                                  "--script=task.py", "--output=oci:" + (dir.path() / "out").string() + ":x",
                                  "--cache-dir=" + (dir.path() / "cache").string(), "--index-url=" + index.url(),
                                  "--break-system-packages", "--format=json"};
    if (!extra.empty()) argv.push_back(extra);
    return run_command(argv);
  };
  auto pip_layer = [](const CommandResult& r) {
    nlohmann::json result = nlohmann::json::parse(r.out);
    for (const auto& l : result.at("layers"))
      if (l.value("created_by", "").find("pip install") != std::string::npos) return l;
    ADD_FAILURE() << "no pip layer in " << r.out;
    return nlohmann::json::object();
  };
  CommandResult first = build("");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(pip_layer(first).value("origin", ""), "built");
  index.stop();

  write_file(pkg / "task.py", "import tp_gamma\nprint('edited')\n");
  CommandResult second = build("");
  ASSERT_EQ(second.exit_code, 0) << "an unchanged pip step asked the index: " << second.err;
  EXPECT_EQ(pip_layer(second).value("origin", ""), "cached");
  EXPECT_EQ(pip_layer(second).value("digest", ""), pip_layer(first).value("digest", ""));
  EXPECT_NE(nlohmann::json::parse(second.out).value("manifest_digest", ""),
            nlohmann::json::parse(first.out).value("manifest_digest", ""));

  EXPECT_NE(build("--refresh-pip-steps").exit_code, 0) << "--refresh-pip-steps did not ask the index";
  write_file(pkg / "requirements.txt", "tp-gamma[fast]\ntp-alpha\n");
  EXPECT_NE(build("").exit_code, 0) << "a changed requirements.txt did not ask the index";
}

// A build whose trainer code alone changed reuses its pip step without reading that step's listing from the
// pip-step cache, with the SBOM and provenance on (the defaults): the image's packages are kept under what they
// depend on, and its SBOM names the same ones. Without the kept packages the listing is read (and -v says so).
TEST(PipStepCache, ACodeChangeReadsNoPipStepListing) {
  TempDir dir("tp-pip-step-code-change");
  fs::path pkg = script_with_requirements(dir.path(), "import tp_beta\n", "tp-beta==0.9\n");
  const std::string out = "oci:" + (dir.path() / "out").string() + ":x";
  const fs::path cache = dir.path() / "cache";
  auto build = [&]() {
    return run_command({trainpack_bin(), "build", "--executor-image-uri=python:3.11", "--base-source=" + base_oci_ref(),
                        "--local-package-path=" + pkg.string(), "--script=task.py", "--output=" + out,
                        "--cache-dir=" + cache.string(), "--index-url=" + index_url(), "--break-system-packages",
                        "--verbose", "--format=json"});
  };
  auto sbom_packages = [&]() {  // the packages the image holds: not the image itself, whose digest the edit changes
    std::set<std::string> named;
    nlohmann::json spdx = nlohmann::json::parse(run_ok({trainpack_bin(), "sbom", out}));
    std::set<std::string> described;
    for (const auto& r : spdx.at("relationships"))
      if (r.value("relationshipType", "") == "DESCRIBES") described.insert(r.value("relatedSpdxElement", ""));
    for (const auto& p : spdx.at("packages"))
      if (!described.count(p.value("SPDXID", "")))
        named.insert(p.value("name", "") + " " + p.value("versionInfo", ""));
    return named;
  };
  const std::string listing_read = "read the listing of a reused pip layer";
  auto hashed_layers = [](const CommandResult& r) {  // the layers whose files a build hashed for its SBOM
    static const std::string said = "hashed the files of a layer for the SBOM (";
    std::vector<std::string> layers;
    std::istringstream lines(r.err);
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with(said)) layers.push_back(line.substr(line.find("): ") + 3));
    return layers;
  };
  CommandResult first = build();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::set<std::string> cold = sbom_packages();
  EXPECT_TRUE(std::any_of(cold.begin(), cold.end(), [](const std::string& p) {
    return p.find("beta") != std::string::npos && p.ends_with(" 0.9");
  })) << "the SBOM misses what the pip step installed";

  write_file(pkg / "task.py", "import tp_beta\nprint('edited')\n");
  CommandResult warm = build();
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_NE(warm.err.find("pip step unchanged"), std::string::npos) << warm.err;
  EXPECT_EQ(warm.err.find(listing_read), std::string::npos) << warm.err;
  EXPECT_EQ(sbom_packages(), cold);
  // Only the changed layer's files are hashed for the SBOM; the requirements file's layer's list is kept.
  EXPECT_EQ(hashed_layers(first), (std::vector<std::string>{"COPY [\"./requirements.txt\", \"./requirements.txt\"]",
                                                            "COPY [\".\", \".\"]"}))
      << first.err;
  EXPECT_EQ(hashed_layers(warm), std::vector<std::string>{"COPY [\".\", \".\"]"}) << warm.err;

  const fs::path kept = trainpack::store::kind_dir(cache, trainpack::store::CacheKind::kSboms);
  for (const auto& entry : fs::directory_iterator(kept)) fs::remove(entry.path());
  write_file(pkg / "task.py", "import tp_beta\nprint('edited again')\n");
  CommandResult unkept = build();
  ASSERT_EQ(unkept.exit_code, 0) << unkept.err;
  EXPECT_NE(unkept.err.find(listing_read), std::string::npos) << unkept.err;
  EXPECT_EQ(sbom_packages(), cold);
}

// A reused pip step keeps its file listing in the pip-step cache until something needs it (imagebuild/pip_step_cache.h,
// DeferredListing). Here the next step needs it: its --requirements item upgrades tp-beta 0.9, which the reused
// requirements.txt step installed, so it reads that step's RECORD and whites out its files. The image is the one a
// build with an empty cache makes.
TEST(PipStepCache, ALaterStepUpgradingWhatAReusedStepInstalledGivesTheColdImage) {
  TempDir dir("tp-pip-step-deferred");
  fs::path pkg = script_with_requirements(dir.path(), "import tp_beta\n", "tp-beta==0.9\n");
  auto build = [&](const std::string& requirement, const std::string& cache) {
    fs::create_directories(dir.path() / cache);  // the output's parent, which a build does not make
    return run_command({trainpack_bin(), "build", "--executor-image-uri=python:3.11", "--base-source=" + base_oci_ref(),
                        "--local-package-path=" + pkg.string(), "--script=task.py",
                        "--output=oci:" + (dir.path() / cache / "out").string() + ":x",
                        "--cache-dir=" + (dir.path() / cache).string(), "--index-url=" + index_url(),
                        "--break-system-packages", "--requirements=" + requirement, "--format=json"});
  };
  auto pip_layers = [](const CommandResult& r) {
    std::vector<std::string> origins;
    nlohmann::json result = nlohmann::json::parse(r.out);
    for (const auto& l : result.at("layers"))
      if (l.value("created_by", "").find("pip install") != std::string::npos) origins.push_back(l.value("origin", ""));
    return origins;
  };
  CommandResult first = build("tp-gamma", "warm");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  CommandResult warm = build("tp-beta==1.0", "warm");
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_EQ(pip_layers(warm), (std::vector<std::string>{"cached", "built"})) << warm.out;
  CommandResult cold = build("tp-beta==1.0", "cold");
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_EQ(pip_layers(cold), (std::vector<std::string>{"built", "built"})) << cold.out;
  EXPECT_EQ(nlohmann::json::parse(warm.out).value("manifest_digest", "w"),
            nlohmann::json::parse(cold.out).value("manifest_digest", "c"));

  run_ok({"umoci", "unpack", "--image", (dir.path() / "warm" / "out").string() + ":x",
          (dir.path() / "bundle").string()});
  fs::path site = dir.path() / "bundle" / "rootfs" / "usr/local/lib/python3.11/dist-packages";
  EXPECT_TRUE(fs::exists(site / "tp_beta-1.0.dist-info" / "RECORD"));
  EXPECT_FALSE(fs::exists(site / "tp_beta-0.9.dist-info")) << "the upgrade left the reused step's files";
}

// A pip step on a base read from a registry: its layers are downloaded (in parallel) and scanned once; a second build
// with the same cache reads the base's Python from the cached scans and builds the same image.
TEST(PipRegistry, ARegistryBaseIsScannedOnceAndTheBuildIsReproducible) {
  TempDir dir("tp-pip-registry");
  const std::string base = env_or_fail("TRAINPACK_TEST_REGISTRY") + "/pip-base:3.11";
  run_ok({"skopeo", "copy", "--dest-tls-verify=false", base_oci_ref(), "docker://" + base});
  fs::path pkg = script_with_requirements(dir.path(), "import tp_gamma\n", "tp-gamma[fast]\n");
  // --refresh-pip-steps: the second build reads the base's Python again (from the cached scans), not the pip step's
  // layers from the pip-step cache.
  auto build = [&](const std::string& out) {
    return run_ok({trainpack_bin(), "build", "--executor-image-uri=" + base, "--local-package-path=" + pkg.string(),
                   "--script=task.py", "--output=oci:" + (dir.path() / out).string() + ":x",
                   "--cache-dir=" + (dir.path() / "cache").string(), "--index-url=" + index_url(),
                   "--break-system-packages", "--refresh-pip-steps"});
  };
  std::string first = build("out1");
  ASSERT_FALSE(first.empty());
  fs::path scans = trainpack::store::kind_dir(dir.path() / "cache", trainpack::store::CacheKind::kScans);
  ASSERT_TRUE(fs::is_directory(scans));
  std::size_t scanned = 0;
  for (const auto& selection : fs::directory_iterator(scans))
    for (const auto& layer : fs::directory_iterator(selection.path()))
      scanned += fs::exists(layer.path() / "listing.json");
  EXPECT_GE(scanned, 1u);
  EXPECT_EQ(build("out2"), first) << "the same inputs give the same manifest digest";
  run_ok({"umoci", "unpack", "--image", (dir.path() / "out2").string() + ":x", (dir.path() / "rootfs").string()});
  EXPECT_TRUE(fs::exists(dir.path() / "rootfs" / "rootfs" / "usr/local/lib/python3.11/dist-packages/tp_delta/__init__.py"));
}
