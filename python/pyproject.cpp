#include "python/pyproject.h"

#include <toml++/toml.h>

#include "python/requirement.h"
#include "support/error.h"

namespace trainpack::python {
namespace {

const char* kHint = "fix the [build-system] table of its pyproject.toml (PEP 518)";

Error invalid(const std::string& display, const std::string& reason) {
  return Error(display + " has an invalid pyproject.toml: " + reason, kHint);
}

std::vector<std::string> string_list(const toml::node* node, const std::string& display, const std::string& key) {
  const toml::array* array = node ? node->as_array() : nullptr;
  if (!array) throw invalid(display, "'build-system." + key + "' is not a list of strings");
  std::vector<std::string> out;
  for (const toml::node& item : *array) {
    const auto* text = item.as_string();
    if (!text) throw invalid(display, "'build-system." + key + "' is not a list of strings");
    out.push_back(text->get());
  }
  return out;
}

}  // namespace

BuildSystem read_build_system(std::string_view pyproject_toml, const std::string& display) {
  toml::table doc;
  try {
    doc = toml::parse(pyproject_toml);
  } catch (const toml::parse_error& e) {
    throw invalid(display, std::string(e.description()));
  }
  BuildSystem out;
  const toml::table* table = doc["build-system"].as_table();
  if (!table) return out;
  out.has_table = true;
  if (!table->contains("requires"))
    throw invalid(display,
                  "it has a 'build-system' table but not 'build-system.requires' which is mandatory in the table");
  out.build_requires = string_list(table->get("requires"), display, "requires");
  for (const std::string& r : out.build_requires) {
    try {
      Requirement::parse(r);
    } catch (const Error&) {
      throw invalid(display, "'build-system.requires' contains an invalid requirement: '" + r + "'");
    }
  }
  if (const toml::node* backend = table->get("build-backend")) {
    const auto* text = backend->as_string();
    if (!text) throw invalid(display, "'build-system.build-backend' is not a string");
    out.build_backend = text->get();
  }
  if (table->contains("backend-path"))
    out.backend_path = string_list(table->get("backend-path"), display, "backend-path");
  return out;
}

}  // namespace trainpack::python
