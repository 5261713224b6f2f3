#include "imagebuild/pip_step_cache.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <map>

#include <nlohmann/json.hpp>

#include "imagebuild/python_installer.h"
#include "imagebuild/identity.h"
#include "image/digest.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/hash.h"
#include "support/text.h"

namespace trainpack::imagebuild {
namespace fs = std::filesystem;
using layers::FileEntry;
using nlohmann::json;

namespace {

// v5: the format line names the SHA-256 of the rest of the file, so a damaged entry is a miss (the cache is input).
constexpr std::string_view kFormat = "trainpack-pip-step-v5";
constexpr std::uint64_t kMaxEntryBytes = 256u << 20;


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
  h.update_field(std::to_string(python.separate_layer_bytes));
}

// An entry file: a format line (kFormat, then "sha256:" and the SHA-256 of the rest of the file), a JSON line (per
// layer its blob, entry count, top-level names and the offset of its first line after the header; every source file
// an entry reads, with its size), then one line per entry, tab-separated, layer after layer. Lines rather than JSON
// objects: a step installs thousands of files and a reused step's entries are read on every build, so they parse
// without a JSON parser: type, mode, uid, gid, size, source (index into the sources, or -), zip index, zip member, source stamp,
// symlink target, path; text fields escaped (\\ \t \n).
std::string escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string unescaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (++i == text.size()) throw Error("a pip-step entry ends in an escape");
    out += text[i] == 't' ? '\t' : text[i] == 'n' ? '\n' : text[i];
  }
  return out;
}

char type_letter(FileEntry::Type type) {
  switch (type) {
    case FileEntry::Type::kDirectory: return 'd';
    case FileEntry::Type::kSymlink: return 'l';
    case FileEntry::Type::kRegular: break;
  }
  return 'f';
}

FileEntry::Type type_of(std::string_view letter) {
  if (letter == "d") return FileEntry::Type::kDirectory;
  if (letter == "l") return FileEntry::Type::kSymlink;
  if (letter == "f") return FileEntry::Type::kRegular;
  throw Error("unknown entry type \"" + std::string(letter) + "\"");
}

std::uint64_t number(std::string_view field) {
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size()) throw Error("a pip-step entry has a bad number");
  return value;
}

// The files entries read, each listed once with its size, for lookup() to check.
class SourceTable {
 public:
  std::size_t index_of(const fs::path& source, const std::string& entry_path) {
    auto [it, fresh] = index_.try_emplace(source.string(), files_.size());
    if (!fresh) return it->second;
    std::error_code ec;
    std::uintmax_t size = fs::file_size(source, ec);
    if (ec) throw Error("cannot keep " + entry_path + " for the pip-step cache: " + source.string() + ": " + ec.message());
    files_.push_back({source.string(), size});
    return it->second;
  }
  json to_json() const { return files_; }

 private:
  std::map<std::string, std::size_t> index_;
  std::vector<std::pair<std::string, std::uint64_t>> files_;
};

// One entry's line. Contents that would not outlive the build (not in a cache entry) become blobs in the store.
std::string entry_line(const FileEntry& e, const store::CacheDir& cache, SourceTable& sources) {
  const store::BlobStore& store = cache.blobs();
  fs::path source = e.source;
  if (e.type == FileEntry::Type::kRegular && source.empty() && !e.data.empty()) {
    source = store.path_of(store.put(e.data).digest);
  } else if (e.type == FileEntry::Type::kRegular && !source.empty() && e.zip_member.empty() &&
             !cache.entry_of(source)) {
    source = store.path_of(store.put_file(source).digest);
  }
  bool reads = e.type == FileEntry::Type::kRegular && !source.empty();  // else empty (a whiteout) or no file
  std::string line(1, type_letter(e.type));
  for (std::uint64_t n : {std::uint64_t{e.mode}, std::uint64_t{e.uid}, std::uint64_t{e.gid}, e.size})
    line += "\t" + std::to_string(n);
  line += "\t" + (reads ? std::to_string(sources.index_of(source, e.path)) : std::string("-"));
  line += "\t" + std::to_string(e.zip_index) + "\t" + escaped(e.zip_member) + "\t" + escaped(e.source_stamp);
  line += "\t" + escaped(e.link_target) + "\t" + escaped(e.path) + "\n";
  return line;
}

FileEntry entry_from_line(std::string_view line, const std::vector<std::string>& sources) {
  std::vector<std::string_view> f = split_at(line, '\t');
  if (f.size() != 11) throw Error("a pip-step entry has " + std::to_string(f.size()) + " fields");
  FileEntry e;
  e.type = type_of(f[0]);
  e.mode = static_cast<std::uint32_t>(number(f[1]));
  e.uid = static_cast<std::uint32_t>(number(f[2]));
  e.gid = static_cast<std::uint32_t>(number(f[3]));
  e.size = number(f[4]);
  if (f[5] != "-") {
    std::uint64_t source = number(f[5]);
    if (source >= sources.size()) throw Error("a pip-step entry names source " + std::string(f[5]) + " of " +
                                              std::to_string(sources.size()));
    e.source = sources[source];
  }
  e.zip_index = number(f[6]);
  e.zip_member = unescaped(f[7]);
  e.source_stamp = unescaped(f[8]);
  e.link_target = unescaped(f[9]);
  e.path = unescaped(f[10]);
  return e;
}

// A layer's blob as its header names it; Error when the header names none.
layers::LayerBlob blob_in_header(const json& j) {
  auto diff_id = image::Digest::parse(j.at("diff_id").get<std::string>());
  auto digest = image::Digest::parse(j.at("digest").get<std::string>());
  if (!diff_id || !digest) throw Error("a pip-step entry names no layer digest");
  return {*diff_id, *digest, j.at("size").get<std::uint64_t>()};
}

// Every file the entries read, checked to be there still at the size it had; their paths, in order.
std::vector<std::string> present_sources(const json& listed, const fs::path& entry_file) {
  std::vector<std::string> paths;
  for (const json& source : listed) {
    std::string path = source.at(0).get<std::string>();
    std::error_code ec;
    if (fs::file_size(path, ec) != source.at(1).get<std::uint64_t>() || ec)
      throw Error("the pip-step cache entry " + entry_file.filename().string() + " names " + path + ", which is gone",
                  "files were removed from the cache since the step was cached; build again with --refresh-pip-steps");
    paths.push_back(std::move(path));
  }
  return paths;
}

// An entry file's text: the format line with the sum of `body` (its header line and listing lines), then `body`.
std::string sealed_entry(std::string_view body) {
  return std::string(kFormat) + " sha256:" + sha256_hex(body) + "\n" + std::string(body);
}

// The body of an entry file, when its format line is this trainpack's and its sum is the body's.
std::optional<std::string_view> entry_body(std::string_view file) {
  std::size_t eol = file.find('\n');
  if (eol == std::string_view::npos) return std::nullopt;
  std::string_view format = file.substr(0, eol), body = file.substr(eol + 1);
  if (format != std::string(kFormat) + " sha256:" + sha256_hex(body)) return std::nullopt;
  return body;
}

// The `count` entries of a layer from its first line at `offset` in `lines` (the listing lines of an entry file).
layers::FileEntries entries_at(std::string_view lines, std::uint64_t offset, std::size_t count,
                               const std::vector<std::string>& sources) {
  std::string_view rest = lines.substr(std::min<std::uint64_t>(lines.size(), offset));
  layers::FileEntries entries;
  entries.reserve(std::min(count, rest.size()));  // a damaged count never asks for more than the lines can hold
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t eol = rest.find('\n');
    if (eol == std::string_view::npos) throw Error("a pip-step entry ends early");
    entries.push_back(entry_from_line(rest.substr(0, eol), sources));
    rest.remove_prefix(eol + 1);
  }
  return entries;
}

// An entry's header line and its listing lines, split.
std::pair<json, std::string_view> header_and_lines(std::string_view body) {
  std::size_t eol = body.find('\n');
  if (eol == std::string_view::npos) throw Error("a pip-step entry has no header line");
  return {json::parse(body.substr(0, eol)), body.substr(eol + 1)};
}

std::vector<std::string> source_paths(const json& header) {
  std::vector<std::string> paths;
  for (const json& source : header.at("sources")) paths.push_back(source.at(0).get<std::string>());
  return paths;
}

// A step as an entry's header names it: its layers (listings deferred to `file`) and what it installed. Throws on
// a header that is not one remember() wrote.
PipStepResult step_from_header(const json& header, const fs::path& file) {
  PipStepResult step{{}, installed_artifacts_from_json(header.at("installed"))};
  for (const json& layer : header.at("layers")) {
    std::optional<layers::LayerBlob> blob;
    if (layer.contains("digest")) blob = blob_in_header(layer);
    layers::FileEntries shallow;
    for (const json& e : layer.at("shallow")) shallow.push_back(entry_from_listing_json(e));
    auto listing = std::make_shared<DeferredListing>(file, layer.at("offset").get<std::uint64_t>(),
                                                     layer.at("entries").get<std::size_t>(), std::move(shallow),
                                                     layer.at("keys").get<std::set<std::string>>());
    step.layers.push_back({layer.at("what").get<std::string>(), blob, {}, std::move(listing)});
  }
  return step;
}

}  // namespace

std::optional<PipStepResult> parse_pip_step_entry(std::string_view file) {
  std::optional<std::string_view> body = entry_body(file);
  if (!body) return std::nullopt;
  try {
    auto [header, lines] = header_and_lines(*body);
    PipStepResult step = step_from_header(header, {});
    std::vector<std::string> sources = source_paths(header);
    for (PipLayer& layer : step.layers) {
      layer.entries = entries_at(lines, layer.deferred->offset(), layer.deferred->size(), sources);
      layer.deferred.reset();
    }
    return step;
  } catch (const std::exception&) {  // Error, or a JSON field missing or of another type
    return std::nullopt;
  }
}

json entry_listing_json(const FileEntry& e) {
  json j{{"p", e.path}, {"t", std::string(1, type_letter(e.type))}, {"m", e.mode}, {"u", e.uid}, {"g", e.gid}};
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
  layers::add_compression_to_key(h, in.layer_options);
  return h.finish().hex();
}

PipStepCache::PipStepCache(const store::CacheDir& cache)
    : cache_(cache), entries_(cache.area(store::CacheKind::kPipSteps)) {}

// lookup() checked the file's sum: a listing that does not parse now was changed since.
const layers::FileEntries& DeferredListing::entries() {
  if (entries_) return *entries_;
  std::string text = read_file(file_, kMaxEntryBytes);
  std::optional<std::string_view> body = entry_body(text);
  if (!body) throw Error("the pip-step cache entry " + file_.string() + " changed during the build", "build again");
  auto [header, lines] = header_and_lines(*body);
  entries_ = entries_at(lines, offset_, count_, present_sources(header.at("sources"), file_));
  if (on_read_) on_read_(entries_->size());
  return *entries_;
}

layers::RootfsIndex::DeferredLayer DeferredListing::for_index(std::shared_ptr<DeferredListing> self) const {
  return {shallow_, keys_, [self] { return self->entries(); }};
}

std::optional<PipStepResult> PipStepCache::lookup(const std::string& key) const {
  const std::string name = key + ".entries";
  fs::path file = entries_.path_of(name);
  if (!entries_.use(name)) return std::nullopt;
  std::optional<PipStepResult> step;
  std::vector<std::string> sources;
  try {
    std::string text = read_file(file, kMaxEntryBytes);
    if (std::optional<std::string_view> body = entry_body(text)) {
      json header = header_and_lines(*body).first;
      step = step_from_header(header, file);
      sources = source_paths(header);
    }
  } catch (const std::exception&) {  // unreadable, or a header remember() did not write: damaged
    step.reset();
  }
  if (!step) {
    entries_.discard(name, "it is not an entry this trainpack wrote");  // the step runs again and remembers anew
    return std::nullopt;
  }
  std::error_code ec;
  for (const PipLayer& layer : step->layers)  // a blob pruned since the step was cached
    if (layer.blob && (!cache_.blobs().has(layer.blob->digest) ||
                       fs::file_size(cache_.blobs().path_of(layer.blob->digest), ec) != layer.blob->size || ec))
      return std::nullopt;
  for (const std::string& source : sources)
    if (!cache_.use_path(source)) return std::nullopt;  // pruned since it was cached
  return step;
}

void PipStepCache::remember(const std::string& key, const PipStepResult& step) const {
  SourceTable sources;
  json header{{"layers", json::array()}, {"installed", installed_artifacts_json(step.installed)}};
  std::string lines;
  for (const PipLayer& layer : step.layers) {
    const layers::FileEntries& entries = layer.listing();
    json j{{"what", layer.what}, {"entries", entries.size()}, {"offset", lines.size()},
           {"keys", layers::RootfsIndex::deferred_keys(entries)}, {"shallow", json::array()}};
    for (const FileEntry& e : entries)
      if (layers::RootfsIndex::is_shallow(e.path)) j["shallow"].push_back(entry_listing_json(e));
    for (const FileEntry& e : entries) lines += entry_line(e, cache_, sources);
    if (layer.blob) {
      j["diff_id"] = layer.blob->diff_id.str();
      j["digest"] = layer.blob->digest.str();
      j["size"] = layer.blob->size;
    }
    header["layers"].push_back(std::move(j));
  }
  header["sources"] = sources.to_json();
  std::error_code ec;
  fs::create_directories(entries_.dir(), ec);
  write_file_atomic(entries_.path_of(key + ".entries"), sealed_entry(header.dump() + "\n" + lines));
}

}  // namespace trainpack::imagebuild
