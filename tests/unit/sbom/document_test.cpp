// The SBOM model (sbom/document.h): Package URLs as the purl spec writes them, SPDX license expressions, and the
// two documents made from one model. Their schemas are checked in tests/integration/sbom_schema_test.cpp.
#include "sbom/document.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "sbom/cyclonedx.h"
#include "sbom/spdx.h"
#include "sbom/streamed_json.h"
#include "tests/unit/sbom_example.h"

using json = nlohmann::json;
using namespace trainpack::sbom;

TEST(SbomPurl, EachTypeAsThePurlSpecWritesIt) {
  EXPECT_EQ(pypi_purl("Typing_Extensions", "4.8.0"), "pkg:pypi/typing-extensions@4.8.0");
  EXPECT_EQ(pypi_purl("zope.interface", "6.0"), "pkg:pypi/zope.interface@6.0");
  EXPECT_EQ(deb_purl("Debian", "libc6", "2.36-9+deb12u4", "amd64", "debian-12"),
            "pkg:deb/debian/libc6@2.36-9%2Bdeb12u4?arch=amd64&distro=debian-12");
  EXPECT_EQ(deb_purl("debian", "tzdata", "1:2024a-0", "all", ""), "pkg:deb/debian/tzdata@1%3A2024a-0?arch=all");
  EXPECT_EQ(apk_purl("alpine", "musl", "1.2.4-r2", "x86_64"), "pkg:apk/alpine/musl@1.2.4-r2?arch=x86_64");
  EXPECT_EQ(conda_purl("numpy", "1.26.4", "py311h64a7726_0", "conda-forge", "linux-64"),
            "pkg:conda/numpy@1.26.4?build=py311h64a7726_0&channel=conda-forge&subdir=linux-64");
  EXPECT_EQ(oci_purl("localhost:5000/team/Trainer:v1", "sha256:ab"),
            "pkg:oci/trainer@sha256%3Aab?repository_url=localhost%3A5000/team/Trainer");
  EXPECT_EQ(oci_purl("us-docker.pkg.dev/p/r/base@sha256:cd", "sha256:cd"),
            "pkg:oci/base@sha256%3Acd?repository_url=us-docker.pkg.dev/p/r/base");
}

TEST(SbomLicense, ExpressionsAreToldFromFreeText) {
  for (const char* expression : {"MIT", "Apache-2.0 OR MIT", "(MIT OR Apache-2.0) AND BSD-3-Clause", "GPL-2.0+",
                                 "GPL-2.0-only WITH Classpath-exception-2.0", "LicenseRef-Proprietary"})
    EXPECT_TRUE(is_license_expression(expression)) << expression;
  for (const char* text : {"", "MIT License", "Apache 2.0", "(MIT", "MIT OR", "OR MIT", "GPL+2.0", "MIT)"})
    EXPECT_FALSE(is_license_expression(text)) << text;
  EXPECT_TRUE(is_license_expression("BSD")) << "a single id-shaped word is an expression; the list is not checked";
}

TEST(SbomSpdx, TheImageIsDescribedAndContainsEveryPackageAndFile) {
  json doc = json::parse(spdx_json(example_document()));
  EXPECT_EQ(doc.at("spdxVersion"), "SPDX-2.3");
  EXPECT_EQ(doc.at("documentNamespace"), "urn:trainpack:spdx:" + std::string(64, 'a'));
  EXPECT_EQ(doc.at("creationInfo").at("creators")[0], "Tool: trainpack-0.1.0 (commit abc1234)");
  const json& packages = doc.at("packages");
  ASSERT_EQ(packages.size(), 2u + example_document().packages.size());
  EXPECT_EQ(packages[0].at("SPDXID"), "SPDXRef-Image");
  EXPECT_EQ(packages[0].at("primaryPackagePurpose"), "CONTAINER");
  EXPECT_EQ(packages[1].at("SPDXID"), "SPDXRef-Base");
  const json& numpy = packages[2];
  EXPECT_EQ(numpy.at("name"), "numpy");
  EXPECT_EQ(numpy.at("licenseDeclared"), "BSD-3-Clause");
  EXPECT_EQ(numpy.at("checksums")[0].at("checksumValue"), std::string(64, 'b'));
  EXPECT_EQ(numpy.at("externalRefs")[0].at("referenceLocator"), "pkg:pypi/numpy@1.24.2");
  const json& six = packages[3];
  EXPECT_EQ(six.at("licenseDeclared"), "NOASSERTION") << "free text is no SPDX expression";
  EXPECT_NE(six.at("licenseComments").get<std::string>().find("MIT License"), std::string::npos);
  EXPECT_EQ(doc.at("files")[0].at("fileName"), "./usr/app/trainer/task.py");

  std::multiset<std::string> relationships;
  for (const json& r : doc.at("relationships"))
    relationships.insert(r.at("spdxElementId").get<std::string>() + " " + r.at("relationshipType").get<std::string>() +
                         " " + r.at("relatedSpdxElement").get<std::string>());
  for (const char* expected : {"SPDXRef-DOCUMENT DESCRIBES SPDXRef-Image", "SPDXRef-Image DESCENDANT_OF SPDXRef-Base",
                               "SPDXRef-Image CONTAINS SPDXRef-Package-1", "SPDXRef-Image CONTAINS SPDXRef-File-1",
                               "SPDXRef-Package-4 DEPENDS_ON SPDXRef-Package-1"})
    EXPECT_EQ(relationships.count(expected), 1u) << expected;
  EXPECT_EQ(spdx_json(example_document()), spdx_json(example_document())) << "the same model, the same bytes";
}

TEST(SbomCycloneDx, TheImageIsTheSubjectAndEveryPackageAComponent) {
  json bom = json::parse(cyclonedx_json(example_document()));
  EXPECT_EQ(bom.at("specVersion"), "1.6");
  EXPECT_EQ(bom.at("serialNumber").get<std::string>().substr(0, 9), "urn:uuid:");
  EXPECT_EQ(bom.at("serialNumber").get<std::string>()[23], '5') << "a name-based UUID";
  EXPECT_EQ(bom.at("metadata").at("component").at("type"), "container");
  const json& components = bom.at("components");
  EXPECT_EQ(components[0].at("bom-ref"), "base-image");
  EXPECT_EQ(components[1].at("purl"), "pkg:pypi/numpy@1.24.2");
  EXPECT_EQ(components[1].at("licenses")[0].at("expression"), "BSD-3-Clause");
  EXPECT_EQ(components[2].at("licenses")[0].at("license").at("name"), "MIT License");
  EXPECT_EQ(components[1].at("externalReferences")[0].at("url"),
            "https://files.example.com/numpy-1.24.2-cp311-cp311-manylinux_2_17_x86_64.whl");
  EXPECT_EQ(components.back().at("type"), "file");
  const json& dependencies = bom.at("dependencies");
  EXPECT_EQ(dependencies[0].at("ref"), "image");
  EXPECT_EQ(dependencies[0].at("dependsOn").size(), 1u + example_document().packages.size());
  EXPECT_EQ(dependencies[4].at("dependsOn"), json::array({"pkg:pypi/numpy@1.24.2", "pkg:pypi/six@1.16.0"}));
  EXPECT_EQ(cyclonedx_json(example_document()), cyclonedx_json(example_document()));
}

// The documents are written member by member (sbom/streamed_json.h), yet are byte for byte what dump(2) of each as one
// tree gives: parsed and dumped again, the same text, whatever a path holds or however many files or packages.
// An object element written member by member is the text dump(2) gives it: empty, with escapes, with arrays of
// objects (empty ones too).
TEST(SbomStreamed, AnObjectElementIsWhatDumpWritesOfIt) {
  StreamedJson doc;
  doc.begin_array("a");
  StreamedJson::ObjectElement empty(doc);
  empty.end();
  StreamedJson::ObjectElement full(doc);
  full.member("k", "v\n\"q\" \xc3\xa9");
  full.objects("l", {});
  full.objects("m", {{}, {{"x", "1"}, {"y", "2"}}});
  full.end();
  doc.end_array();
  const std::string text = std::move(doc).finish();
  EXPECT_EQ(json::parse(text).dump(2) + "\n", text);
  EXPECT_EQ(json::parse(text).at("a").at(1).at("m").at(1).at("y"), "2");
}

TEST(SbomStreamed, EachDocumentIsTheDumpOfItsTree) {
  Document odd = example_document();
  odd.files.push_back({"usr/app/trainer/a \"quoted\" \\ name\n\twith Ünïcode \x01 and more", std::string(40, 'a'),
                       std::string(64, 'b')});
  Document bare{"", "sha256:" + std::string(64, 'c'), "", "", "1970-01-01T00:00:00Z", "0.1.0", {}, {}};
  for (const Document& d : {example_document(), odd, bare}) {
    for (const std::string& text : {spdx_json(d), cyclonedx_json(d)}) {
      EXPECT_EQ(json::parse(text).dump(2) + "\n", text);
    }
  }
  EXPECT_EQ(json::parse(spdx_json(odd)).at("files").back().at("fileName"), "./" + odd.files.back().path);
  EXPECT_EQ(json::parse(spdx_json(bare)).at("files"), json::array());
}
