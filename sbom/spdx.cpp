#include "sbom/spdx.h"

#include <map>

#include <nlohmann/json.hpp>

namespace trainpack::sbom {

namespace {

using json = nlohmann::json;

constexpr const char* kNoAssertion = "NOASSERTION";

json purl_ref(const std::string& purl) {
  return {{"referenceCategory", "PACKAGE-MANAGER"}, {"referenceType", "purl"}, {"referenceLocator", purl}};
}

json relationship(const std::string& from, const char* type, const std::string& to) {
  return {{"spdxElementId", from}, {"relationshipType", type}, {"relatedSpdxElement", to}};
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

}  // namespace

std::string spdx_json(const Document& d) {
  const std::string image_id = "SPDXRef-Image", base_id = "SPDXRef-Base";
  json doc{{"spdxVersion", "SPDX-2.3"},
           {"dataLicense", "CC0-1.0"},
           {"SPDXID", "SPDXRef-DOCUMENT"},
           {"name", d.image_name.empty() ? d.image_digest : d.image_name + "@" + d.image_digest},
           // A URI unique to the image (SPDX 2.3 §6.5), the same for the same image.
           {"documentNamespace", "urn:trainpack:spdx:" + digest_hex(d.image_digest)},
           {"creationInfo", {{"created", d.created}, {"creators", json::array({"Tool: trainpack-" + d.tool_version})}}},
           {"packages", json::array()},
           {"files", json::array()},
           {"relationships", json::array()}};
  json& packages = doc["packages"];
  json& relationships = doc["relationships"];
  packages.push_back(image_package(image_id, d.image_name, d.image_digest));
  relationships.push_back(relationship("SPDXRef-DOCUMENT", "DESCRIBES", image_id));
  if (!d.base_digest.empty()) {
    packages.push_back(image_package(base_id, d.base_name, d.base_digest));
    relationships.push_back(relationship(image_id, "DESCENDANT_OF", base_id));
  }
  std::map<std::string, std::string> id_of_purl;
  for (std::size_t i = 0; i < d.packages.size(); ++i) {
    std::string id = "SPDXRef-Package-" + std::to_string(i + 1);
    id_of_purl.try_emplace(d.packages[i].purl, id);
    packages.push_back(package_json(id, d.packages[i]));
    relationships.push_back(relationship(image_id, "CONTAINS", id));
  }
  for (std::size_t i = 0; i < d.packages.size(); ++i)
    for (const std::string& dependency : d.packages[i].depends_on)
      if (auto it = id_of_purl.find(dependency); it != id_of_purl.end())
        relationships.push_back(relationship("SPDXRef-Package-" + std::to_string(i + 1), "DEPENDS_ON", it->second));
  for (std::size_t i = 0; i < d.files.size(); ++i) {
    const File& f = d.files[i];
    std::string id = "SPDXRef-File-" + std::to_string(i + 1);
    doc["files"].push_back({{"SPDXID", id},
                            {"fileName", "./" + f.path},
                            {"checksums", json::array({{{"algorithm", "SHA1"}, {"checksumValue", f.sha1}},
                                                       {{"algorithm", "SHA256"}, {"checksumValue", f.sha256}}})},
                            {"licenseConcluded", kNoAssertion},
                            {"copyrightText", kNoAssertion}});
    relationships.push_back(relationship(image_id, "CONTAINS", id));
  }
  return doc.dump(2) + "\n";
}

}  // namespace trainpack::sbom
