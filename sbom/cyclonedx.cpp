#include "sbom/cyclonedx.h"

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/digest.h"
#include "sbom/streamed_json.h"

namespace trainpack::sbom {

namespace {

using json = nlohmann::json;

// urn:uuid: of 16 bytes of SHA-256(`seed`), with the version (5, name-based) and variant bits of RFC 9562 set: the
// same image gives the same serial number.
std::string serial_number(std::string_view seed) {
  std::string hex = image::sha256_of(seed).hex().substr(0, 32);
  hex[12] = '5';
  hex[16] = "89ab"[std::stoi(hex.substr(16, 1), nullptr, 16) & 3];
  return "urn:uuid:" + hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

json container(const std::string& ref, const std::string& name, const std::string& digest) {
  json c{{"type", "container"}, {"bom-ref", ref}, {"name", name.empty() ? std::string("image") : name},
         {"version", digest}};
  if (digest.starts_with("sha256:")) {
    c["hashes"] = json::array({{{"alg", "SHA-256"}, {"content", digest_hex(digest)}}});
    if (!name.empty()) c["purl"] = oci_purl(name, digest);
  }
  return c;
}

json licenses_of(const Package& p) {
  if (!p.license_expression.empty()) return json::array({{{"expression", p.license_expression}}});
  if (!p.license_text.empty()) return json::array({{{"license", {{"name", p.license_text}}}}});
  return nullptr;
}

json component(const std::string& ref, const Package& p) {
  json c{{"type", p.origin == Origin::kBaseOs ? "application" : "library"},
         {"bom-ref", ref},
         {"name", p.name},
         {"purl", p.purl},
         {"properties", json::array({{{"name", "trainpack:origin"}, {"value", std::string(origin_name(p.origin))}}})}};
  if (!p.version.empty()) c["version"] = p.version;
  if (json licenses = licenses_of(p); !licenses.is_null()) c["licenses"] = licenses;
  if (!p.sha256.empty()) c["hashes"] = json::array({{{"alg", "SHA-256"}, {"content", p.sha256}}});
  if (!p.download_url.empty())
    c["externalReferences"] = json::array({{{"type", "distribution"}, {"url", p.download_url}}});
  return c;
}

// A file component, written without building it: a large extra dir has tens of thousands.
void add_file(StreamedJson& bom, const File& f) {
  StreamedJson::ObjectElement file(bom);
  file.member("bom-ref", "file:/" + f.path);
  file.objects("hashes", {{{"alg", "SHA-1"}, {"content", f.sha1}}, {{"alg", "SHA-256"}, {"content", f.sha256}}});
  file.member("name", "/" + f.path);
  file.member("type", "file");
  file.end();
}

}  // namespace

std::string cyclonedx_json(const Document& d) {
  const std::string image_ref = "image", base_ref = "base-image";
  // bom-refs are unique: a purl seen twice (one version in two places) gets "#2" on its second.
  std::map<std::string, std::string> ref_of_purl;
  std::set<std::string> refs;
  std::vector<std::string> package_refs;
  for (const Package& p : d.packages) {
    std::string ref = p.purl;
    for (int n = 2; !refs.insert(ref).second; ++n) ref = p.purl + "#" + std::to_string(n);
    ref_of_purl.try_emplace(p.purl, ref);
    package_refs.push_back(ref);
  }
  // Members in key order (StreamedJson): the bytes of dump(2) of the document as one object.
  StreamedJson bom;
  bom.member("bomFormat", "CycloneDX");
  bom.begin_array("components");
  json image_needs = json::array();
  if (!d.base_digest.empty()) {
    bom.element(container(base_ref, d.base_name, d.base_digest));
    image_needs.push_back(base_ref);
  }
  for (std::size_t i = 0; i < d.packages.size(); ++i) {
    bom.element(component(package_refs[i], d.packages[i]));
    image_needs.push_back(package_refs[i]);
  }
  for (const File& f : d.files) add_file(bom, f);
  bom.end_array();
  bom.begin_array("dependencies");
  bom.element({{"ref", image_ref}, {"dependsOn", image_needs}});
  for (std::size_t i = 0; i < d.packages.size(); ++i) {
    json needs = json::array();
    for (const std::string& dependency : d.packages[i].depends_on)
      if (auto it = ref_of_purl.find(dependency); it != ref_of_purl.end()) needs.push_back(it->second);
    bom.element({{"ref", package_refs[i]}, {"dependsOn", needs}});
  }
  bom.end_array();
  bom.member("metadata", {{"timestamp", d.created},
                          {"tools", {{"components", json::array({{{"type", "application"},
                                                                  {"name", "trainpack"},
                                                                  {"version", d.tool_version}}})}}},
                          {"component", container(image_ref, d.image_name, d.image_digest)}});
  bom.member("serialNumber", serial_number(d.image_digest));
  bom.member("specVersion", "1.6");
  bom.member("version", 1);
  return std::move(bom).finish();
}

}  // namespace trainpack::sbom
