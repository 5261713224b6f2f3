#include "sbom/spdx.h"

#include <cstddef>
#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "sbom/streamed_json.h"

namespace trainpack::sbom {

namespace {

using json = nlohmann::json;

constexpr const char* kNoAssertion = "NOASSERTION";

json purl_ref(const std::string& purl) {
  return {{"referenceCategory", "PACKAGE-MANAGER"}, {"referenceType", "purl"}, {"referenceLocator", purl}};
}

// A relationship, written without building it: an image has one per file.
void add_relationship(StreamedJson& doc, const std::string& from, const char* type, const std::string& to) {
  StreamedJson::ObjectElement r(doc);
  r.member("relatedSpdxElement", to);
  r.member("relationshipType", type);
  r.member("spdxElementId", from);
  r.end();
}

// The image, or its base: a container package whose version is its manifest digest.
json image_package(const std::string& id, const std::string& name, const std::string& digest) {
  json p{{"SPDXID", id},
         {"name", name.empty() ? std::string("image") : name},
         {"versionInfo", digest},
         {"downloadLocation", kNoAssertion},
         {"filesAnalyzed", false},
         {"primaryPackagePurpose", "CONTAINER"}};
  if (digest.starts_with("sha256:")) {
    p["checksums"] = json::array({{{"algorithm", "SHA256"}, {"checksumValue", digest_hex(digest)}}});
    if (!name.empty()) p["externalRefs"] = json::array({purl_ref(oci_purl(name, digest))});
  }
  return p;
}

std::string_view source_info(Origin origin) {
  switch (origin) {
    case Origin::kBaseOs: return "in the base image's OS package database";
    case Origin::kBasePython: return "a Python distribution the base image has";
    case Origin::kInstalled: return "installed by a pip step from a package index";
    case Origin::kLocalArchive: return "installed by a pip step from a local archive";
    case Origin::kBuiltFromSource: return "built from source, then installed by a pip step";
  }
  return "";
}

json package_json(const std::string& id, const Package& p) {
  json j{{"SPDXID", id},
         {"name", p.name},
         {"downloadLocation", p.download_url.empty() ? kNoAssertion : p.download_url},
         {"filesAnalyzed", false},
         {"licenseConcluded", kNoAssertion},
         {"licenseDeclared", p.license_expression.empty() ? kNoAssertion : p.license_expression},
         {"copyrightText", kNoAssertion},
         {"primaryPackagePurpose", p.origin == Origin::kBaseOs ? "APPLICATION" : "LIBRARY"},
         {"sourceInfo", source_info(p.origin)},
         {"externalRefs", json::array({purl_ref(p.purl)})}};
  if (!p.version.empty()) j["versionInfo"] = p.version;
  if (p.license_expression.empty() && !p.license_text.empty())
    j["licenseComments"] = "The package's metadata names its license as: " + p.license_text;
  if (!p.sha256.empty()) j["checksums"] = json::array({{{"algorithm", "SHA256"}, {"checksumValue", p.sha256}}});
  return j;
}

std::string package_id(std::size_t i) { return "SPDXRef-Package-" + std::to_string(i + 1); }
std::string file_id(std::size_t i) { return "SPDXRef-File-" + std::to_string(i + 1); }

// A file, written without building it: a large extra dir has tens of thousands.
void add_file(StreamedJson& doc, const std::string& id, const File& f) {
  StreamedJson::ObjectElement file(doc);
  file.member("SPDXID", id);
  file.objects("checksums", {{{"algorithm", "SHA1"}, {"checksumValue", f.sha1}},
                             {{"algorithm", "SHA256"}, {"checksumValue", f.sha256}}});
  file.member("copyrightText", kNoAssertion);
  file.member("fileName", "./" + f.path);
  file.member("licenseConcluded", kNoAssertion);
  file.end();
}

}  // namespace

std::string spdx_json(const Document& d) {
  const std::string image_id = "SPDXRef-Image", base_id = "SPDXRef-Base";
  // Members in key order (StreamedJson): the bytes of dump(2) of the document as one object.
  StreamedJson doc;
  doc.member("SPDXID", "SPDXRef-DOCUMENT");
  doc.member("creationInfo",
             {{"created", d.created}, {"creators", json::array({"Tool: trainpack-" + d.tool_version})}});
  doc.member("dataLicense", "CC0-1.0");
  // A URI unique to the image (SPDX 2.3 §6.5), the same for the same image.
  doc.member("documentNamespace", "urn:trainpack:spdx:" + digest_hex(d.image_digest));
  doc.begin_array("files");
  for (std::size_t i = 0; i < d.files.size(); ++i) add_file(doc, file_id(i), d.files[i]);
  doc.end_array();
  doc.member("name", d.image_name.empty() ? d.image_digest : d.image_name + "@" + d.image_digest);

  doc.begin_array("packages");
  doc.element(image_package(image_id, d.image_name, d.image_digest));
  if (!d.base_digest.empty()) doc.element(image_package(base_id, d.base_name, d.base_digest));
  std::map<std::string, std::string> id_of_purl;
  for (std::size_t i = 0; i < d.packages.size(); ++i) {
    id_of_purl.try_emplace(d.packages[i].purl, package_id(i));
    doc.element(package_json(package_id(i), d.packages[i]));
  }
  doc.end_array();

  doc.begin_array("relationships");
  add_relationship(doc, "SPDXRef-DOCUMENT", "DESCRIBES", image_id);
  if (!d.base_digest.empty()) add_relationship(doc, image_id, "DESCENDANT_OF", base_id);
  for (std::size_t i = 0; i < d.packages.size(); ++i) add_relationship(doc, image_id, "CONTAINS", package_id(i));
  for (std::size_t i = 0; i < d.packages.size(); ++i)
    for (const std::string& dependency : d.packages[i].depends_on)
      if (auto it = id_of_purl.find(dependency); it != id_of_purl.end())
        add_relationship(doc, package_id(i), "DEPENDS_ON", it->second);
  for (std::size_t i = 0; i < d.files.size(); ++i) add_relationship(doc, image_id, "CONTAINS", file_id(i));
  doc.end_array();
  doc.member("spdxVersion", "SPDX-2.3");
  return std::move(doc).finish();
}

}  // namespace trainpack::sbom
