// An image's own records as SBOM packages (sbom/image_packages.h): dpkg's status and distroless's status.d, apk's
// database, Python distributions with licenses and Requires-Dist edges. Checked against dpkg-query and pip on a real
// base in tests/integration/sbom_schema_test.cpp.
#include "sbom/image_packages.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "distro/package_db.h"
#include "layers/memory_filesystem.h"

using trainpack::layers::MemoryFilesystem;
using namespace trainpack::sbom;

namespace {

std::vector<std::string> purls(const std::vector<Package>& packages) {
  std::vector<std::string> out;
  for (const Package& p : packages) out.push_back(p.purl);
  return out;
}

}  // namespace

TEST(SbomImagePackages, DpkgStatusAndDistrolessStatusD) {
  MemoryFilesystem fs;
  fs.add_file("etc/os-release", "ID=debian\nVERSION_ID=\"12\"\n");
  fs.add_file("var/lib/dpkg/status",
              "Package: libc6\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.36-9+deb12u4\n"
              "Description: GNU C Library\n shared libraries\n\n"
              "Package: oldpkg\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 1.0\n\n"
              "Package: tzdata\nStatus: install ok installed\nArchitecture: all\nVersion: 2024a-0+deb12u1\n");
  fs.add_file("var/lib/dpkg/status.d/python3.11", "Package: python3.11\nVersion: 3.11.2-6\nArchitecture: amd64\n");
  fs.add_file("var/lib/dpkg/status.d/python3.11.md5sums", "0123  usr/bin/python3.11\n");
  std::vector<Package> found = os_packages(fs);
  EXPECT_EQ(purls(found), (std::vector<std::string>{
                              "pkg:deb/debian/libc6@2.36-9%2Bdeb12u4?arch=amd64&distro=debian-12",
                              "pkg:deb/debian/tzdata@2024a-0%2Bdeb12u1?arch=all&distro=debian-12",
                              "pkg:deb/debian/python3.11@3.11.2-6?arch=amd64&distro=debian-12"}));
  EXPECT_EQ(found[0].origin, Origin::kBaseOs);
  EXPECT_EQ(found[0].license_expression + found[0].license_text, "") << "dpkg records no license";
}

TEST(SbomImagePackages, ApkDatabaseWithLicenses) {
  MemoryFilesystem fs;
  fs.add_file("etc/os-release", "ID=alpine\nVERSION_ID=3.19.1\n");
  fs.add_file("lib/apk/db/installed",
              "C:Q1abc=\nP:musl\nV:1.2.4_git20230717-r4\nA:x86_64\nL:MIT\nT:the musl c library\n\n"
              "P:busybox\nV:1.36.1-r15\nA:x86_64\nL:GPL-2.0-only\n\n"
              "P:ca-certificates-bundle\nV:20240226-r0\nA:x86_64\nL:MPL-2.0 AND MIT\n");
  std::vector<Package> found = os_packages(fs);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].purl, "pkg:apk/alpine/musl@1.2.4_git20230717-r4?arch=x86_64");
  EXPECT_EQ(found[0].license_expression, "MIT");
  EXPECT_EQ(found[2].license_expression, "MPL-2.0 AND MIT");
  EXPECT_EQ(trainpack::distro::apk_installed("P:x\nV:1\n\nV:2\n").size(), 1u) << "a V: outside a package is not one";
}

TEST(SbomImagePackages, PythonDistributionsWithLicensesAndUnconditionalEdges) {
  const std::string site = "usr/local/lib/python3.11/site-packages";
  MemoryFilesystem fs;
  fs.add_file(site + "/requests-2.31.0.dist-info/METADATA",
              "Metadata-Version: 2.1\nName: requests\nVersion: 2.31.0\nLicense: Apache 2.0\n"
              "Requires-Dist: urllib3 (<3,>=1.21.1)\nRequires-Dist: idna\n"
              "Requires-Dist: PySocks (!=1.5.7,>=1.5.6) ; extra == 'socks'\n");
  fs.add_file(site + "/urllib3-2.1.0.dist-info/METADATA",
              "Metadata-Version: 2.1\nName: urllib3\nVersion: 2.1.0\n"
              "Classifier: License :: OSI Approved :: MIT License\nClassifier: Programming Language :: Python\n");
  fs.add_file(site + "/Flask_Cors-4.0.0.dist-info/METADATA",
              "Metadata-Version: 2.4\nName: Flask_Cors\nVersion: 4.0.0\nLicense-Expression: MIT\n");
  fs.add_file(site + "/pysocks-1.7.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: PySocks\nVersion: 1.7.1\n");
  std::vector<trainpack::python::SysPathEntry> sys_path{{"/" + site, ""}};
  std::vector<Package> found = python_packages(fs, sys_path, Origin::kBasePython);
  ASSERT_EQ(found.size(), 4u);
  std::map<std::string, const Package*> by_name;
  for (const Package& p : found) by_name[p.name] = &p;
  const Package& requests = *by_name.at("requests");
  EXPECT_EQ(requests.purl, "pkg:pypi/requests@2.31.0");
  EXPECT_EQ(requests.license_text, "Apache 2.0") << "not an SPDX expression: kept as the metadata words it";
  EXPECT_EQ(requests.depends_on, std::vector<std::string>{"pkg:pypi/urllib3@2.1.0"})
      << "idna is not in the image; PySocks only with an extra";
  EXPECT_EQ(by_name.at("urllib3")->license_expression, "MIT");
  EXPECT_EQ(by_name.at("Flask_Cors")->purl, "pkg:pypi/flask-cors@4.0.0");
  EXPECT_EQ(by_name.at("Flask_Cors")->license_expression, "MIT");
  EXPECT_EQ(by_name.at("PySocks")->origin, Origin::kBasePython);
}

// Given the image's environment, an edge whose marker it satisfies counts; one that needs an extra does not (an
// installed distribution does not say which extras were asked for).
TEST(SbomImagePackages, EdgesWhoseMarkersTheImagesPythonSatisfies) {
  const std::string site = "usr/lib/python3/dist-packages";
  MemoryFilesystem fs;
  fs.add_file(site + "/app-1.0.dist-info/METADATA",
              "Metadata-Version: 2.1\nName: app\nVersion: 1.0\n"
              "Requires-Dist: tomli ; python_version < \"3.11\"\n"
              "Requires-Dist: typing-extensions ; python_version >= \"3.8\"\n"
              "Requires-Dist: colorama ; sys_platform == \"win32\"\n"
              "Requires-Dist: rich ; extra == \"pretty\"\n");
  for (const char* name : {"tomli", "typing_extensions", "colorama", "rich"})
    fs.add_file(site + "/" + name + "-1.0.dist-info/METADATA",
                std::string("Metadata-Version: 2.1\nName: ") + name + "\nVersion: 1.0\n");
  std::vector<trainpack::python::SysPathEntry> sys_path{{"/" + site, ""}};
  auto environment = trainpack::python::MarkerEnvironment::cpython_linux("3.11.2", "x86_64");
  std::vector<Package> found = python_packages(fs, sys_path, Origin::kBasePython, &environment);
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found[0].name, "app");
  EXPECT_EQ(found[0].depends_on, std::vector<std::string>{"pkg:pypi/typing-extensions@1.0"});
  EXPECT_TRUE(python_packages(fs, sys_path, Origin::kBasePython)[0].depends_on.empty()) << "no environment given";
}

TEST(SbomImagePackages, CondaRecordsByTheirFileNames) {
  MemoryFilesystem fs;
  fs.add_file("opt/conda/conda-meta/python-3.13.5-h9e4cc4f_101_cp313.json", "{}");
  fs.add_file("opt/conda/conda-meta/ca-certificates-2024.2.2-hbcca054_0.json", "{}");
  fs.add_file("opt/conda/conda-meta/history", "==> 2024-01-01 <==\n");
  fs.add_file("opt/conda/conda-meta/broken.json", "{}");
  std::vector<Package> found = conda_packages(fs, "/opt/conda");
  EXPECT_EQ(purls(found), (std::vector<std::string>{
                              "pkg:conda/ca-certificates@2024.2.2?build=hbcca054_0",
                              "pkg:conda/python@3.13.5?build=h9e4cc4f_101_cp313"}));
  EXPECT_TRUE(conda_packages(fs, "/usr").empty());
}
