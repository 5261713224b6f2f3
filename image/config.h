#pragma once
// The image configuration (OCI image-spec config.md; Docker's image JSON v1.2): the platform it is for, the
// execution parameters under "config" (Env, Entrypoint, Cmd, WorkingDir, User, Labels, ExposedPorts, ...),
// rootfs.diff_ids and history.
//
// The document is kept whole, unknown and extra fields included: a config's digest is over its exact bytes, so one
// that is not edited serialises to the bytes it was read from, and an edited one to its JSON with sorted keys and
// no whitespace, as configs we author always were. Edits go through the methods, never through raw JSON.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainpack::image {

// An environment as "KEY=VALUE" entries, in the order the image lists them (config.Env; a runtime spec's
// process.env).
class EnvList {
 public:
  EnvList() = default;
  explicit EnvList(std::vector<std::string> entries) : entries_(std::move(entries)) {}

  const std::vector<std::string>& entries() const { return entries_; }
  // Whether an entry "KEY=..." is present.
  bool has(std::string_view key) const;
  // The value of the last "KEY=..." entry (a later entry overrides an earlier one), "" when there is none.
  std::string value(std::string_view key) const;
  // Replaces the first "KEY=..." entry, or a bare "KEY", with "KEY=VALUE"; appends it when there is neither.
  void set(std::string_view key, std::string_view value);
  // One (key, value) per key, at the place of its first entry with the value of its last, as a process sees
  // them; entries without '=' are skipped.
  std::vector<std::pair<std::string, std::string>> pairs() const;

 private:
  std::vector<std::string> entries_;
};

class ImageConfig {
 public:
  ImageConfig() : document_(nlohmann::json::object()), edited_(true) {}
  // Parses config bytes; throws Error("<what>: image config is not valid JSON") when they are no JSON object.
  static ImageConfig parse(std::string raw, std::string_view what);
  // A document already parsed (a runtime spec's input, tests); serialises as edited.
  static ImageConfig from_json(nlohmann::json document);

  // The whole document, read-only: for fields not modelled here.
  const nlohmann::json& document() const { return document_; }
  // The exact bytes read when nothing was edited, else the document's canonical JSON.
  std::string serialize() const { return edited_ ? document_.dump() : raw_; }

  // Platform (strings; "" when absent or not a string).
  std::string os() const;
  std::string architecture() const;
  std::string variant() const;

  // Execution parameters ("config"). Lists hold their string items only.
  EnvList env() const;
  std::vector<std::string> entrypoint() const;
  std::vector<std::string> cmd() const;
  std::string working_dir() const;
  std::string user() const;
  std::map<std::string, std::string> labels() const;
  std::vector<std::string> exposed_ports() const;  // "8080/tcp"

  // Dockerfile ENV KEY=VALUE: replaces the first "KEY=..." entry of config.Env, else appends (other entries, of any
  // type, stay as they are).
  void set_env(std::string_view key, std::string_view value);
  // Dockerfile WORKDIR.
  void set_working_dir(std::string_view dir);
  // Dockerfile LABEL KEY=VALUE: sets config.Labels[KEY], over a label of that key the base has.
  void set_label(std::string_view key, std::string_view value);
  // Dockerfile ENTRYPOINT: also drops the inherited Cmd, as Docker does.
  void set_entrypoint(const std::vector<std::string>& entrypoint);
  // Makes "config" an object ({} when absent or of another type): every config we author has one.
  void ensure_execution_config();

  // rootfs.diff_ids: how many entries it has, and its string entries; nullopt when the config has no such list
  // (a corrupt image).
  std::optional<std::size_t> diff_id_count() const;
  std::optional<std::vector<std::string>> diff_ids() const;
  // history entries (objects as read).
  std::vector<nlohmann::json> history() const;

  void set_created(std::string_view rfc3339);
  // A base without history gets one neutral entry per layer, so that history entries keep mapping onto layers.
  void fill_missing_history(std::size_t base_layers);
  // Appends a history entry, and `diff_id` to rootfs.diff_ids for an entry that made a layer.
  void append_history(nlohmann::json entry, std::optional<std::string> diff_id);

 private:
  nlohmann::json& execution();  // "config", made an object
  const nlohmann::json* execution_or_null() const;

  nlohmann::json document_;
  std::string raw_;
  bool edited_ = false;
};

}  // namespace trainpack::image
