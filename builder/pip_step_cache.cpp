#include "builder/pip_step_cache.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "builder/python_steps.h"
#include "builder/version.h"
#include "image/digest.h"
#include "support/error.h"
#include "support/fs.h"

namespace trainpack::builder {
namespace fs = std::filesystem;
using layers::FileEntry;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "trainpack-pip-step-v1";


// A local --find-links directory's listing: a wheel added or replaced there changes what pip would pick.
std::string directory_listing(const fs::path& dir) {
  std::vector<std::string> lines;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    struct stat st {};
    if (::stat(e.path().c_str(), &st) != 0) continue;
    lines.push_back(e.path().filename().string() + " " + std::to_string(st.st_size) + " " +
                    std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec));
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

void add_python_options(image::Sha256& h, const PythonOptions& python) {
  h.update_field(python.index_url.value_or("(image)"));
  for (const std::string& url : python.extra_index_urls) h.update_field("extra-index " + url);
  for (const std::string& link : python.find_links) {
    h.update_field("find-links " + link);
    std::error_code ec;
    if (fs::is_directory(link, ec)) h.update_field(directory_listing(link));
  }
  h.update_field(python.no_compile ? "no-compile" : "compile");
  h.update_field(python.break_system_packages ? "break-system-packages" : "");
  h.update_field(std::to_string(static_cast<int>(python.build_python)));
  h.update_field(std::to_string(python.own_layer_bytes));
}

const char* type_name(FileEntry::Type type) {
  switch (type) {
    case FileEntry::Type::kDirectory: return "d";
    case FileEntry::Type::kSymlink: return "l";
    case FileEntry::Type::kRegular: break;
  }
  return "f";
}

FileEntry::Type type_of(const std::string& name) {
  if (name == "d") return FileEntry::Type::kDirectory;
  if (name == "l") return FileEntry::Type::kSymlink;
  if (name == "f") return FileEntry::Type::kRegular;
  throw Error("unknown entry type \"" + name + "\"");
}

bool inside(const fs::path& path, const fs::path& dir) {
  auto rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

// One entry as JSON. Contents that would not outlive the build become blobs in `store`; `sources` collects each
// file an entry reads, with its size, for lookup() to check.
json entry_json(const FileEntry& e, const layers::BlobStore& store, std::map<std::string, std::uint64_t>& sources) {
  json j = entry_listing_json(e);
  if (e.type != FileEntry::Type::kRegular) return j;
  fs::path source = e.source;
  if (source.empty() && !e.data.empty()) {
    source = store.path_of(store.put(e.data).digest);
  } else if (!source.empty() && e.zip_member.empty() && !inside(source, store.root())) {
    source = store.path_of(store.put_file(source).digest);
  }
  if (source.empty()) return j;  // empty inline file (a whiteout)
  std::error_code ec;
  std::uintmax_t size = fs::file_size(source, ec);
  if (ec) throw Error("cannot keep " + e.path + " for the pip-step cache: " + source.string() + ": " + ec.message());
  sources[source.string()] = size;
  j["src"] = source.string();
  if (!e.zip_member.empty()) {
    j["zm"] = e.zip_member;
    j["zi"] = e.zip_index;
  }
  if (!e.source_stamp.empty()) j["st"] = e.source_stamp;
  return j;
}

FileEntry entry_from_json(const json& j) {
  FileEntry e = entry_from_listing_json(j);
  e.source = j.value("src", "");
  e.zip_member = j.value("zm", "");
  e.zip_index = j.value("zi", std::uint64_t{0});
  e.source_stamp = j.value("st", "");
  return e;
}

// The layer's blob, checked to be in the store; nullopt when it is not. `present` is false for a step without a layer.
std::optional<layers::LayerBlob> blob_from_json(const json& j, const layers::BlobStore& store, bool& present) {
  present = j.contains("digest");
  if (!present) return std::nullopt;
  auto diff_id = image::Digest::parse(j.at("diff_id").get<std::string>());
  auto digest = image::Digest::parse(j.at("digest").get<std::string>());
  if (!diff_id || !digest) return std::nullopt;
  layers::LayerBlob blob{*diff_id, *digest, j.at("size").get<std::uint64_t>()};
  std::error_code ec;
  if (fs::file_size(store.path_of(blob.digest), ec) != blob.size || ec) return std::nullopt;
  return blob;
}

// Every file the entries read is still there at the size it had.
bool sources_present(const json& sources) {
  for (const auto& [path, size] : sources.items()) {
    std::error_code ec;
    if (fs::file_size(path, ec) != size.get<std::uint64_t>() || ec) return false;
  }
  return true;
}

}  // namespace

json entry_listing_json(const FileEntry& e) {
  json j{{"p", e.path}, {"t", type_name(e.type)}, {"m", e.mode}, {"u", e.uid}, {"g", e.gid}};
  if (e.type == FileEntry::Type::kSymlink) j["l"] = e.link_target;
  if (e.type == FileEntry::Type::kRegular) j["s"] = e.size;
  return j;
}

FileEntry entry_from_listing_json(const json& j) {
  FileEntry e;
  e.path = j.at("p").get<std::string>();
  e.type = type_of(j.at("t").get<std::string>());
  e.mode = j.at("m").get<std::uint32_t>();
  e.uid = j.at("u").get<std::uint32_t>();
  e.gid = j.at("g").get<std::uint32_t>();
  e.link_target = j.value("l", "");
  e.size = j.value("s", std::uint64_t{0});
  return e;
}

std::string pip_step_key(const PipStepInputs& in) {
  image::Sha256 h;
  h.update_field(kFormat);
  h.update_field(build_identity());
  h.update_field(in.base_manifest_digest);
  for (const std::string& step : in.earlier_steps) h.update_field(step);
  h.update_field(in.instruction);
  if (in.python) add_python_options(h, *in.python);
  h.update_field(std::to_string(in.layer_options.mtime));
  h.update_field(layers::engine_name(in.layer_options.gzip.engine));
  h.update_field(std::to_string(in.layer_options.gzip.level) + "/" + std::to_string(in.layer_options.gzip.block_size));
  return h.finish().hex();
}

PipStepCache::PipStepCache(const layers::BlobStore& store, fs::path dir) : store_(store), dir_(std::move(dir)) {}

std::optional<std::vector<CachedPipLayer>> PipStepCache::lookup(const std::string& key) const {
  fs::path file = dir_ / (key + ".json");
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  try {
    json j = json::parse(read_file(file, 64u << 20));
    if (!sources_present(j.at("sources"))) return std::nullopt;
    std::vector<CachedPipLayer> layers;
    for (const json& layer : j.at("layers")) {
      bool has_layer = false;
      std::optional<layers::LayerBlob> blob = blob_from_json(layer, store_, has_layer);
      if (has_layer && !blob) return std::nullopt;
      CachedPipLayer cached{layer.at("what").get<std::string>(), blob, {}};
      for (const json& entry : layer.at("entries")) cached.entries.push_back(entry_from_json(entry));
      layers.push_back(std::move(cached));
    }
    return layers;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged entry is a miss; remember() replaces it
  }
}

void PipStepCache::remember(const std::string& key, const std::vector<CachedPipLayer>& layers) const {
  std::map<std::string, std::uint64_t> sources;
  json out{{"format", kFormat}, {"layers", json::array()}};
  for (const CachedPipLayer& layer : layers) {
    json entries = json::array();
    for (const FileEntry& e : layer.entries) entries.push_back(entry_json(e, store_, sources));
    json j{{"what", layer.what}, {"entries", std::move(entries)}};
    if (layer.blob) {
      j["diff_id"] = layer.blob->diff_id.str();
      j["digest"] = layer.blob->digest.str();
      j["size"] = layer.blob->size;
    }
    out["layers"].push_back(std::move(j));
  }
  out["sources"] = sources;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  write_file_atomic(dir_ / (key + ".json"), out.dump());
}

}  // namespace trainpack::builder
