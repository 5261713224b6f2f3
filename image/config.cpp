#include "image/config.h"

#include <algorithm>

#include "image/manifest.h"
#include "support/error.h"

namespace trainpack::image {
using nlohmann::json;

namespace {

bool names_key(std::string_view entry, std::string_view key) {
  return entry.size() > key.size() && entry.starts_with(key) && entry[key.size()] == '=';
}

std::vector<std::string> string_items(const json* list) {
  std::vector<std::string> out;
  if (list && list->is_array())
    for (const json& item : *list)
      if (item.is_string()) out.push_back(item.get<std::string>());
  return out;
}

const json* member(const json* object, std::string_view key) {
  if (!object || !object->is_object()) return nullptr;
  auto it = object->find(key);
  return it == object->end() ? nullptr : &*it;
}

}  // namespace

bool EnvList::has(std::string_view key) const {
  for (const std::string& e : entries_)
    if (names_key(e, key)) return true;
  return false;
}

std::string EnvList::value(std::string_view key) const {
  std::string value;
  for (const std::string& e : entries_)
    if (names_key(e, key)) value = e.substr(key.size() + 1);
  return value;
}

void EnvList::set(std::string_view key, std::string_view value) {
  std::string item = std::string(key) + "=" + std::string(value);
  for (std::string& e : entries_) {
    if (names_key(e, key) || e == key) {
      e = item;
      return;
    }
  }
  entries_.push_back(item);
}

std::vector<std::pair<std::string, std::string>> EnvList::pairs() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& e : entries_) {
    std::size_t eq = e.find('=');
    if (eq == std::string::npos) continue;
    std::string key = e.substr(0, eq);
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == key; });
    if (it == out.end()) out.emplace_back(key, e.substr(eq + 1));
    else it->second = e.substr(eq + 1);
  }
  return out;
}

ImageConfig ImageConfig::parse(std::string raw, std::string_view what) {
  json j = json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw Error(std::string(what) + ": image config is not valid JSON", "the image is corrupt");
  ImageConfig config;
  config.document_ = std::move(j);
  config.raw_ = std::move(raw);
  config.edited_ = false;
  return config;
}

ImageConfig ImageConfig::from_json(json document) {
  ImageConfig config;
  config.document_ = std::move(document);
  return config;
}

std::string ImageConfig::os() const { return string_member(document_, "os"); }
std::string ImageConfig::architecture() const { return string_member(document_, "architecture"); }
std::string ImageConfig::variant() const { return string_member(document_, "variant"); }

const json* ImageConfig::execution_or_null() const { return member(&document_, "config"); }

json& ImageConfig::execution() {
  edited_ = true;
  json& config = document_["config"];
  if (!config.is_object()) config = json::object();
  return config;
}

EnvList ImageConfig::env() const { return EnvList(string_items(member(execution_or_null(), "Env"))); }
std::vector<std::string> ImageConfig::entrypoint() const { return string_items(member(execution_or_null(), "Entrypoint")); }
std::vector<std::string> ImageConfig::cmd() const { return string_items(member(execution_or_null(), "Cmd")); }

namespace {
std::string string_at(const json* value) { return value && value->is_string() ? value->get<std::string>() : ""; }
}  // namespace

std::string ImageConfig::working_dir() const { return string_at(member(execution_or_null(), "WorkingDir")); }
std::string ImageConfig::user() const { return string_at(member(execution_or_null(), "User")); }

std::map<std::string, std::string> ImageConfig::labels() const {
  std::map<std::string, std::string> out;
  const json* labels = member(execution_or_null(), "Labels");
  if (labels && labels->is_object())
    for (auto it = labels->begin(); it != labels->end(); ++it)
      if (it->is_string()) out[it.key()] = it->get<std::string>();
  return out;
}

std::vector<std::string> ImageConfig::exposed_ports() const {
  std::vector<std::string> out;
  const json* ports = member(execution_or_null(), "ExposedPorts");
  if (ports && ports->is_object())
    for (auto it = ports->begin(); it != ports->end(); ++it) out.push_back(it.key());
  return out;
}

void ImageConfig::set_env(std::string_view key, std::string_view value) {
  json& env = execution()["Env"];
  if (!env.is_array()) env = json::array();
  std::string item = std::string(key) + "=" + std::string(value);
  for (json& e : env) {
    if (e.is_string() && names_key(e.get<std::string>(), key)) {
      e = item;
      return;
    }
  }
  env.push_back(item);
}

void ImageConfig::set_working_dir(std::string_view dir) { execution()["WorkingDir"] = dir; }

void ImageConfig::set_label(std::string_view key, std::string_view value) {
  json& labels = execution()["Labels"];
  if (!labels.is_object()) labels = json::object();  // Docker writes null for "no labels"
  labels[std::string(key)] = value;
}

void ImageConfig::set_entrypoint(const std::vector<std::string>& entrypoint) {
  json& config = execution();
  config["Entrypoint"] = entrypoint;
  config.erase("Cmd");
}

void ImageConfig::ensure_execution_config() {
  const json* config = execution_or_null();
  if (!config || !config->is_object()) execution();
}

std::optional<std::size_t> ImageConfig::diff_id_count() const {
  const json* ids = member(member(&document_, "rootfs"), "diff_ids");
  if (!ids || !ids->is_array()) return std::nullopt;
  return ids->size();
}

std::optional<std::vector<std::string>> ImageConfig::diff_ids() const {
  const json* ids = member(member(&document_, "rootfs"), "diff_ids");
  if (!ids || !ids->is_array()) return std::nullopt;
  return string_items(ids);
}

std::vector<json> ImageConfig::history() const {
  const json* history = member(&document_, "history");
  if (!history || !history->is_array()) return {};
  return std::vector<json>(history->begin(), history->end());
}

void ImageConfig::set_created(std::string_view rfc3339) {
  edited_ = true;
  document_["created"] = rfc3339;
}

void ImageConfig::fill_missing_history(std::size_t base_layers) {
  edited_ = true;
  json& history = document_["history"];
  if (!history.is_array()) history = json::array();
  if (!history.empty()) return;
  for (std::size_t i = 0; i < base_layers; ++i) history.push_back({{"created_by", "(base image layer)"}});
}

void ImageConfig::append_history(json entry, std::optional<std::string> diff_id) {
  edited_ = true;
  if (diff_id) document_["rootfs"]["diff_ids"].push_back(*diff_id);
  document_["history"].push_back(std::move(entry));
}

}  // namespace trainpack::image
