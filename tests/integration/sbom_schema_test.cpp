// trainpack's SPDX 2.3 and CycloneDX 1.6 documents against the official JSON schemas (testdata/sbom-schemas, with
// where each comes from), checked by Debian's python3-jsonschema; and the packages an SBOM reads from an image's own
// records against what dpkg-query and pip report for the same image.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "layers/scanned_image.h"
#include "python/names.h"
#include "sbom/cyclonedx.h"
#include "sbom/image_packages.h"
#include "sbom/spdx.h"
#include "store/blob_store.h"
#include "support/fs.h"
#include "transports/transport.h"
#include "tests/integration/debian_clean.h"
#include "tests/integration/sbom_validation.h"
#include "tests/integration/test_support.h"
#include "tests/unit/sbom_example.h"

namespace fs = std::filesystem;
using namespace trainpack::testing;

namespace {

// A command's stdout; a failure is the test's.
std::string output_of(const std::vector<std::string>& argv) {
  CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << describe(argv, r);
  return r.out;
}

}  // namespace

TEST(SbomSchema, SpdxDocumentsPassTheSpdx23Schema) {
  expect_valid("spdx-2.3.schema.json", trainpack::sbom::spdx_json(trainpack::sbom::example_document()), "SPDX");
  trainpack::sbom::Document bare;  // no base, no packages, no files
  bare.image_digest = "sha256:" + std::string(64, '1');
  bare.created = "2026-12-05T00:00:00Z";
  bare.tool_version = "0.1.0";
  expect_valid("spdx-2.3.schema.json", trainpack::sbom::spdx_json(bare), "a bare SPDX document");
}

TEST(SbomSchema, CycloneDxBomsPassTheCycloneDx16Schema) {
  expect_valid("bom-1.6.schema.json", trainpack::sbom::cyclonedx_json(trainpack::sbom::example_document()),
               "CycloneDX");
}

// The check itself: a document the schema refuses fails it.
TEST(SbomSchema, TheCheckRefusesADocumentTheSchemaDoesNot) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-sbom-"));
  fs::path file = dir.path() / "document.json";
  trainpack::write_file_atomic(file, R"({"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [{}]})");
  CommandResult r = run_command({"/usr/bin/python3", "-c", kValidate,
                                 (fs::path(source_dir()) / "testdata" / "sbom-schemas").string(),
                                 "bom-1.6.schema.json", file.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("components/0"), std::string::npos) << r.out;
}

// The test base (Debian 12's python3 from mmdebstrap, pip installs in /usr/local): its dpkg database and Python
// distributions read through the layers, as a build reads them, against dpkg-query and pip run on its unpacked root.
// (mmdebstrap's extract variant registers no package with dpkg but its merged-/usr stub: a base whose packages dpkg
// installed is what the SBOM tests of whole builds need.)
TEST(SbomGroundTruth, TheTestBasesPackagesAreWhatDpkgAndPipReport) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-sbom-truth-"));
  trainpack::store::BlobStore store(dir.path() / "cache");
  auto location = trainpack::transports::parse_image_location(base_oci_ref());
  ASSERT_TRUE(location.has_value());
  auto image = trainpack::transports::open_image(
      *location, {trainpack::image::Platform::parse("linux/amd64"), store, nullptr, {}});
  trainpack::store::CacheDir cache(dir.path() / "cache");
  trainpack::layers::ScannedImage scan(image, cache,
                                       {"sbom-truth", [](std::string_view path, std::uint64_t) {
                                          return path.starts_with("var/lib/dpkg/status") ||
                                                 path.ends_with("os-release") ||
                                                 path.find(".dist-info/") != std::string_view::npos ||
                                                 path.find(".egg-info") != std::string_view::npos;
                                        }});
  const std::vector<std::string> site_dirs{"/usr/local/lib/python3.11/dist-packages",
                                           "/usr/lib/python3/dist-packages"};
  std::set<std::string> os_found, python_found;
  for (const trainpack::sbom::Package& p : trainpack::sbom::os_packages(scan))
    os_found.insert(p.name + " " + p.version);
  for (const trainpack::sbom::Package& p : trainpack::sbom::python_packages(
           scan, trainpack::python::site_sys_path(scan, site_dirs), trainpack::sbom::Origin::kBasePython))
    python_found.insert(trainpack::python::canonicalize_name(p.name) + " " + p.version);

  fs::path bundle = dir.path() / "bundle";
  output_of({"umoci", "unpack", "--image", base_oci_ref().substr(4), bundle.string()});
  fs::path root = bundle / "rootfs";
  std::set<std::string> os_truth, python_truth;
  std::istringstream dpkg(output_of({"dpkg-query", "--admindir=" + (root / "var/lib/dpkg").string(), "-W", "-f",
                                  "${db:Status-Abbrev} ${Package} ${Version}\n"}));
  for (std::string line; std::getline(dpkg, line);)
    if (line.starts_with("ii ")) os_truth.insert(line.substr(4));
  std::vector<std::string> pip{"/usr/bin/python3", "-m", "pip", "list", "--format=json"};
  for (const std::string& site : site_dirs) pip.insert(pip.end(), {"--path", (root / site.substr(1)).string()});
  for (const auto& d : nlohmann::json::parse(output_of(pip)))
    python_truth.insert(trainpack::python::canonicalize_name(d.at("name").get<std::string>()) + " " +
                        d.at("version").get<std::string>());

  EXPECT_FALSE(os_truth.empty());
  EXPECT_EQ(os_found, os_truth);
  EXPECT_GE(python_truth.size(), 3u) << "pip, setuptools, wheel at least";
  EXPECT_EQ(python_found, python_truth);
}

// A base whose packages dpkg really installed (tests/fixtures/debian-clean.sh, imported into the test dockerd and
// saved as docker saves it): `trainpack sbom --generate` names, from its layers alone, exactly the packages
// dpkg-query lists inside a container of it, as Debian 12 packages; both formats pass their schemas.
TEST(SbomOsGroundTruth, ADpkgInstalledBaseHasWhatDpkgQueryListsInsideIt) {
  const std::string image = clean_debian_image();
  trainpack::ScopedDir dir(trainpack::make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-sbom-os-"));
  const std::string archive = (dir.path() / "debian.tar").string();
  output_of(docker_command({"save", "-o", archive, image}));

  std::set<std::string> truth;
  std::istringstream listed(output_of(docker_command({"run", "--rm", "--network", "none", "--entrypoint",
                                                      "dpkg-query", image, "-W", "-f",
                                                      "${db:Status-Abbrev} ${Package} ${Version}\n"})));
  for (std::string line; std::getline(listed, line);)
    if (line.starts_with("ii ")) truth.insert(line.substr(4));
  EXPECT_GT(truth.size(), 50u) << "a minbase root";

  const std::string cache = "--cache-dir=" + (dir.path() / "cache").string();
  std::string spdx = output_of({trainpack_bin(), "sbom", "--generate", "docker-archive:" + archive, cache});
  expect_valid("spdx-2.3.schema.json", spdx, "the SBOM of a Debian base");
  std::set<std::string> found;
  bool debian_12 = true;
  const nlohmann::json document = nlohmann::json::parse(spdx);
  for (const auto& p : document.at("packages")) {
    std::string purl = p.at("externalRefs").at(0).at("referenceLocator");
    if (!purl.starts_with("pkg:deb/")) continue;
    found.insert(p.at("name").get<std::string>() + " " + p.at("versionInfo").get<std::string>());
    debian_12 = debian_12 && purl.starts_with("pkg:deb/debian/") && purl.find("distro=debian-12") != std::string::npos;
  }
  EXPECT_EQ(found, truth);
  EXPECT_TRUE(debian_12) << "purls name the vendor and release from os-release";
  std::string cyclonedx = output_of({trainpack_bin(), "sbom", "--generate", "--format=cyclonedx",
                                     "docker-archive:" + archive, cache});
  expect_valid("bom-1.6.schema.json", cyclonedx, "the CycloneDX SBOM of a Debian base");
}
