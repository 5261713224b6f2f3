#include "python/wheel_installer.h"

#include <algorithm>

#include "python/destinations.h"
#include "python/scripts.h"
#include "python/wheel_file.h"
#include "support/error.h"
#include "support/paths.h"
#include "support/python_strings.h"
#include "support/utf8.h"

namespace trainpack::python {
namespace {

constexpr std::uint64_t kMaxRewrittenScript = 64u << 20;  // a #!python script is rewritten in memory

EntryPointScripts read_scripts(const WheelFile& wheel) {
  std::optional<std::string> text = wheel.read_dist_info("entry_points.txt");
  if (!text) return {};
  if (!is_utf8(*text)) throw Error(wheel.where() + "entry_points.txt is not UTF-8");
  return read_entry_point_scripts(*text, wheel.file_name());
}

std::vector<RecordRow> read_record(const WheelFile& wheel, std::vector<std::string>& warnings) {
  std::optional<std::string> text = wheel.read_dist_info("RECORD");
  if (!text) throw Error(wheel.where() + "invalid wheel: " + wheel.dist_info_dir() + "/RECORD is missing");
  if (!is_utf8(*text)) throw Error(wheel.where() + "RECORD is not UTF-8");
  return parse_record_file(*text, wheel.where(), warnings);
}

// The members pip installs, in the order it writes them: root files, then other .data files, then .data/scripts
// (a later write of a path wins). Directories and RECORD's signatures are not installed.
struct WheelContents {
  std::vector<const WheelMember*> root, data, scripts;
};

WheelContents wheel_contents(const WheelFile& wheel) {
  const std::string jws = wheel.dist_info_dir() + "/RECORD.jws", p7s = wheel.dist_info_dir() + "/RECORD.p7s";
  WheelContents out;
  for (const WheelMember& m : wheel.members()) {
    if (m.name.ends_with("/") || m.name == jws || m.name == p7s) continue;
    auto slash = m.name.find('/');
    bool data = slash != std::string::npos && m.name.substr(0, slash).ends_with(".data");
    if (!data) out.root.push_back(&m);
    else if (m.name.compare(slash + 1, 8, "scripts/") == 0 && m.name.size() > slash + 9) out.scripts.push_back(&m);
    else out.data.push_back(&m);
  }
  return out;
}

// A .data/scripts file: skipped when it wraps an entry point (pip writes its own launcher), its "#!python" shebang
// rewritten (pip's fix_script).
void install_script(const WheelInstallRequest& req, const WheelFile& wheel, const WheelMember& m,
                    const EntryPointScripts& entry_points, LayerDestination& destination, RecordChanges& changes) {
  std::string path = destination.path_for(m, wheel.where());
  if (is_entry_point_wrapper(path_base(path), entry_points)) return;
  std::string record_path;
  if (wheel.read_prefix(m, 8) == "#!python") {
    std::string text = fix_script_shebang(wheel.read(m, kMaxRewrittenScript), req.sys_executable);
    // pip < 22.2 meant to rehash it but compared an absolute path with RECORD's relative ones, so RECORD kept the
    // wheel's hash and size for the rewritten script (pypa/pip#10744, fixed by e4cd6da6e in 22.2).
    std::pair<std::string, std::string> hash_and_size{record_hash(text), std::to_string(text.size())};
    record_path = destination.write_file(path, std::move(text), m.executable() ? 0755 : 0644);
    if (req.pip_version >= Version::parse("22.2")) changes.rewritten[record_path] = std::move(hash_and_size);
  } else {
    record_path = destination.write_member(wheel, m, path);
  }
  changes.installed[m.name] = record_path;
}

// The dist-info files pip adds (PEP 376 INSTALLER and REQUESTED, PEP 610 direct_url.json), in pip's order.
std::vector<std::pair<std::string, std::string>> additional_metadata(const WheelInstallRequest& req) {
  std::vector<std::pair<std::string, std::string>> files{{"INSTALLER", "pip\n"}};
  if (req.requested) files.emplace_back("REQUESTED", "");
  if (req.direct_url) files.emplace_back("direct_url.json", python_json_dumps(*req.direct_url));
  return files;
}

void set_installed_files(InstalledWheel& out, layers::FileEntries entries) {
  out.files = std::move(entries);
  for (const layers::FileEntry& e : out.files) {
    out.installed_paths.push_back(e.path);
    for (std::string_view dir = path_dir(e.path); !dir.empty(); dir = path_dir(dir))
      if (!out.directories.emplace(dir).second) break;  // its ancestors are already there
  }
}

void dump_json(const nlohmann::json& v, std::string& out) {
  switch (v.type()) {
    case nlohmann::json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {  // nlohmann's object is a std::map: keys sorted
        if (!first) out += ", ";
        first = false;
        out += python_json_string(it.key());
        out += ": ";
        dump_json(it.value(), out);
      }
      out += '}';
      break;
    }
    case nlohmann::json::value_t::array: {
      out += '[';
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out += ", ";
        dump_json(v[i], out);
      }
      out += ']';
      break;
    }
    case nlohmann::json::value_t::string: out += python_json_string(v.get_ref<const std::string&>()); break;
    case nlohmann::json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; break;
    case nlohmann::json::value_t::null: out += "null"; break;
    default: out += v.dump(); break;  // numbers
  }
}

}  // namespace

// pip's _install_wheel, shaped as pypa/installer's install(): read WHEEL, write the wheel's files, the entry point
// launchers and pip's metadata into the destination, then RECORD.
InstalledWheel install_wheel(const WheelInstallRequest& req) {
  WheelFile wheel(req.wheel, req.name);
  WheelMetadata metadata = read_wheel_metadata_file(wheel);
  InstalledWheel out;
  out.dist_info_dir = wheel.dist_info_dir();
  out.warnings = metadata.warnings;
  out.lib_dir = absolute_path(metadata.root_is_purelib ? req.scheme.purelib : req.scheme.platlib);
  EntryPointScripts entry_points = read_scripts(wheel);
  std::vector<RecordRow> wheel_record = read_record(wheel, out.warnings);

  LayerDestination destination(req.scheme, out.lib_dir, req.uid, req.gid);
  RecordChanges changes;
  WheelContents contents = wheel_contents(wheel);
  for (const auto* files : {&contents.root, &contents.data})
    for (const WheelMember* m : *files)
      changes.installed[m->name] = destination.write_member(wheel, *m, destination.path_for(*m, wheel.where()));
  for (const WheelMember* m : contents.scripts) install_script(req, wheel, *m, entry_points, destination, changes);
  for (const auto& [name, value] : launcher_specs(entry_points, req.python_version)) {
    std::string text = entry_point_launcher(name, value, req.sys_executable, req.pip_version, wheel.file_name());
    RecordRow row{"", record_hash(text), std::to_string(text.size())};
    row[0] = destination.write_script(name, std::move(text));
    changes.generated.push_back(std::move(row));
  }
  for (auto& [file, text] : additional_metadata(req)) {
    RecordRow row{"", record_hash(text), std::to_string(text.size())};
    row[0] = destination.write_dist_info(out.dist_info_dir, file, std::move(text));
    changes.generated.push_back(std::move(row));
  }
  out.record_rows = installed_record_rows(wheel_record, std::move(changes));
  destination.write_dist_info(out.dist_info_dir, "RECORD", format_record(out.record_rows));
  set_installed_files(out, destination.take_entries());
  return out;
}

void InstalledWheel::add_unhashed_record_paths(const std::vector<std::string>& lib_relative_paths) {
  for (const std::string& p : lib_relative_paths) record_rows.push_back({p, "", ""});
  std::sort(record_rows.begin(), record_rows.end());
  std::string record = entry_path(absolute_path(lib_dir + "/" + dist_info_dir + "/RECORD"));
  for (layers::FileEntry& e : files) {
    if (e.path != record) continue;
    e.data = format_record(record_rows);
    e.size = e.data.size();
  }
}

std::string python_json_dumps(const nlohmann::json& value) {
  std::string out;
  dump_json(value, out);
  return out;
}

}  // namespace trainpack::python
