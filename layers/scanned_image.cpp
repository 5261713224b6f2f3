#include "layers/scanned_image.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "layers/entry_safety.h"
#include "layers/layer_tar_reader.h"
#include "store/sealed_text.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/hash.h"
#include "support/parallel.h"
#include "support/paths.h"

namespace trainpack::layers {
namespace fs = std::filesystem;

namespace {

// Streams an entry's data into `to` (parents created), through a temporary name; returns the data's SHA-256 (hex).
std::string keep_copy(const fs::path& to, const std::function<std::size_t(char*, std::size_t)>& read) {
  fs::create_directories(to.parent_path());
  fs::path tmp = staging_path_for(to);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(tmp.c_str(), "wb"), std::fclose);
  if (!out) throw Error("cannot write " + tmp.string());
  Hasher hash;
  char buffer[64 * 1024];
  for (std::size_t n; (n = read(buffer, sizeof buffer)) > 0;) {
    hash.update(buffer, n);
    if (std::fwrite(buffer, 1, n, out.get()) != n) throw Error("cannot write " + tmp.string());
  }
  if (std::fclose(out.release()) != 0) throw Error("cannot write " + tmp.string());
  fs::rename(tmp, to);
  return hash.finish_hex();
}

// The files a scan kept, with their SHA-256s (kept.json: one JSON object, sealed), so a kept copy whose bytes
// changed in the cache is never taken for the layer's file.
constexpr const char* kKeptSums = "kept.json";

std::optional<KeptSums> parse_kept_sums(std::string_view file) {
  std::optional<std::string_view> text = store::unseal(file);
  if (!text) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  KeptSums sums;
  for (const auto& [path, sum] : j.items()) {
    if (!sum.is_string() || sum.get_ref<const std::string&>().size() != 64) return std::nullopt;
    sums.emplace(path, sum.get<std::string>());
  }
  return sums;
}

std::string kept_sums_file(const KeptSums& sums) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [path, sum] : sums) j[path] = sum;
  return store::seal(j.dump());
}

std::string safe_name(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out;
}

}  // namespace

std::string ScannedImage::scan_key(const std::string& selection_name, const image::Digest& layer,
                                   const image::Digest& diff_id) {
  return safe_name(selection_name) + "/" + layer.hex() + "-" + diff_id.hex();
}

ScannedImage::ScannedImage(std::shared_ptr<const image::Image> image, const store::CacheDir& cache,
                           ScanSelection selection)
    : image_(std::move(image)),
      scans_(cache.area(store::CacheKind::kScans)),
      checked_layers_(cache.area(store::CacheKind::kCheckedLayers)),
      selection_(std::move(selection)) {
  image::Manifest manifest = image_->manifest();
  const std::vector<image::Digest> diff_ids = layer_diff_ids(*image_);
  const std::size_t n = manifest.layers.size();
  std::vector<std::optional<LayerListing>> listings(n);
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string key = scan_key(selection_.name, manifest.layers[i].digest, diff_ids[i]);
    fs::path dir = scans_.path_of(key);
    layers_.push_back({manifest.layers[i].digest, diff_ids[i], dir, {}});
    if (scans_.use(key)) listings[i] = read_cached_listing(key, layers_.back().kept);
    if (!listings[i]) todo.push_back(i);
  }

  // Layers not scanned yet: downloaded (when remote) and listed in parallel, a few at a time.
  parallel_for(todo.size(), kScanWorkers, [&](std::size_t k) { listings[todo[k]] = scan_layer(todo[k]); });

  for (std::size_t i = 0; i < n; ++i) {
    index_.apply(*listings[i]);
    for (const auto& [path, info] : listings[i]->entries)
      if (info.type == PathInfo::Type::kRegular || info.type == PathInfo::Type::kHardlink) provider_[path] = i;
  }
}

std::optional<LayerListing> ScannedImage::parse_scan_listing(std::string_view file) {
  std::optional<std::string_view> text = store::unseal(file);
  return text ? parse_listing(*text) : std::nullopt;
}

std::optional<LayerListing> ScannedImage::read_cached_listing(const std::string& key, KeptSums& kept) const {
  const fs::path dir = scans_.path_of(key);
  std::optional<LayerListing> listing;
  std::optional<KeptSums> sums;
  try {
    listing = parse_scan_listing(read_file(dir / "listing.json", 1u << 30));
    if (listing) sums = parse_kept_sums(read_file(dir / kKeptSums, 1u << 30));
  } catch (const Error&) {  // unreadable, or not in the entry: the same miss
  }
  if (!listing || !sums) {
    scans_.discard(key, "it is not what the scan wrote", dir / (listing ? kKeptSums : "listing.json"));
    return std::nullopt;
  }
  kept = std::move(*sums);
  return listing;
}

LayerListing ScannedImage::scan_layer(std::size_t i) {
  Layer& layer = layers_.at(i);
  // Scan into a staging directory, then rename it into place: a half-done scan is never taken for a whole one.
  fs::create_directories(layer.dir.parent_path());
  ScopedDir staging(staging_path_for(layer.dir));
  fs::create_directories(staging.path() / "files");
  const std::string what = image_->describe() + " layer " + layer.digest.str();
  auto visit = [&](const std::string& path, const PathInfo& info, std::uint64_t size,
                   const std::function<std::size_t(char*, std::size_t)>& read) {
    if (info.type != PathInfo::Type::kRegular || has_parent_reference(path)) return;
    if (selection_.keep(path, size)) layer.kept[path] = keep_copy(staging.path() / "files" / path, read);
  };
  LayerListing listing = list_layer_blob(image_->blob_path(layer.digest), layer.diff_id, what, visit);
  write_file_atomic(staging.path() / "listing.json", store::seal(serialize_listing(listing)));
  write_file_atomic(staging.path() / kKeptSums, kept_sums_file(layer.kept));
  // Listed whole and its diff_id checked: check_layers_are_safe need not read it again.
  mark_layer_safe(checked_layers_, layer.digest, layer.diff_id);
  std::error_code ec;
  fs::rename(staging.path(), layer.dir, ec);
  if (!ec) staging.release();
  else if (!fs::exists(layer.dir / "listing.json")) throw Error("cannot store the scan of " + what + ": " + ec.message());
  // else: another build stored the same scan first; ours is dropped
  return listing;
}

fs::path ScannedImage::kept_file(std::size_t layer, const std::string& path) const {
  return layers_.at(layer).dir / "files" / path;
}

std::optional<fs::path> ScannedImage::local_copy(std::string_view path) const {
  std::string resolved = index_.resolve(path);
  const PathInfo* info = index_.find(resolved);
  if (info && info->type == PathInfo::Type::kHardlink) {
    resolved = info->link_target;
    info = index_.find(resolved);
  }
  if (!info || info->type != PathInfo::Type::kRegular || has_parent_reference(resolved)) return std::nullopt;
  auto it = provider_.find(resolved);
  if (it == provider_.end()) return std::nullopt;
  fs::path file = kept_file(it->second, resolved);
  std::error_code ec;
  if (fs::exists(file, ec) && !kept_whole(it->second, resolved, file)) {
    scans_.report_damaged(file, "its bytes are not those the scan kept");
    remove_file_quietly(file);  // kept again from the layer, just below
  }
  if (!fs::exists(file, ec)) {
    // Not selected when the layer was scanned: read the layer once more for this file and keep it too.
    std::lock_guard<std::mutex> lock(mutex_);
    if (!fs::exists(file, ec)) {
      auto visit = [&](const std::string& p, const PathInfo& i, std::uint64_t,
                       const std::function<std::size_t(char*, std::size_t)>& read) {
        if (p == resolved && i.type == PathInfo::Type::kRegular) keep_copy(file, read);
      };
      read_layer(it->second, visit);
      if (!fs::exists(file, ec)) return std::nullopt;
    }
  }
  return file;
}

bool ScannedImage::kept_whole(std::size_t layer, const std::string& path, const fs::path& file) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (verified_.count(file)) return true;
  auto sum = layers_.at(layer).kept.find(path);
  // A file kept on demand (not selected) has no sum: its copy is as the layer's read gave it.
  if (sum != layers_.at(layer).kept.end() && image::sha256_of_file(file).hex() != sum->second) return false;
  verified_.insert(file);
  return true;
}

std::optional<std::size_t> ScannedImage::provider(std::string_view path) const {
  auto it = provider_.find(path);
  const PathInfo* info = index_.find(path);
  if (it == provider_.end() || !info ||
      (info->type != PathInfo::Type::kRegular && info->type != PathInfo::Type::kHardlink))
    return std::nullopt;
  return it->second;
}

void ScannedImage::read_layer(std::size_t i, const LayerEntryVisitor& visit) const {
  const Layer& layer = layers_.at(i);
  list_layer_blob(image_->blob_path(layer.digest), layer.diff_id, image_->describe() + " layer " + layer.digest.str(),
                  visit);
}

std::optional<std::string> ScannedImage::read(std::string_view path, std::size_t max_bytes) const {
  std::optional<fs::path> file = local_copy(path);
  if (!file) return std::nullopt;
  return read_file(*file, max_bytes);
}

std::optional<std::string> ScannedImage::read_prefix(std::string_view path, std::size_t max_bytes) const {
  std::optional<fs::path> file = local_copy(path);
  if (!file) return std::nullopt;
  std::ifstream in(*file, std::ios::binary);
  std::string bytes(max_bytes, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(max_bytes));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

}  // namespace trainpack::layers
