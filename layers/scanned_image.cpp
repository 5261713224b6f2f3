#include "layers/scanned_image.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <system_error>

#include "support/error.h"
#include "support/fs.h"
#include "support/paths.h"

namespace trainpack::layers {
namespace fs = std::filesystem;

namespace {

bool has_parent_reference(std::string_view path) {
  for (std::string_view c : path_components(path))
    if (c == "..") return true;
  return false;
}

// Streams an entry's data into `to` (parents created), through a temporary name.
void keep_copy(const fs::path& to, const std::function<std::size_t(char*, std::size_t)>& read) {
  fs::create_directories(to.parent_path());
  fs::path tmp = staging_path_for(to);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(tmp.c_str(), "wb"), std::fclose);
  if (!out) throw Error("cannot write " + tmp.string());
  char buffer[64 * 1024];
  for (std::size_t n; (n = read(buffer, sizeof buffer)) > 0;)
    if (std::fwrite(buffer, 1, n, out.get()) != n) throw Error("cannot write " + tmp.string());
  if (std::fclose(out.release()) != 0) throw Error("cannot write " + tmp.string());
  fs::rename(tmp, to);
}

std::string safe_name(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out;
}

}  // namespace

ScannedImage::ScannedImage(std::shared_ptr<const Image> image, fs::path cache_dir, ScanSelection selection)
    : image_(std::move(image)), cache_dir_(std::move(cache_dir)), selection_(std::move(selection)) {
  Manifest manifest = image_->manifest();
  for (std::size_t i = 0; i < manifest.layers.size(); ++i) {
    const Descriptor& d = manifest.layers[i];
    fs::path dir = cache_dir_ / "scans" / safe_name(selection_.name) / d.digest.hex();
    std::optional<LayerListing> listing;
    std::error_code ec;
    if (fs::exists(dir / "listing.json", ec)) listing = parse_listing(read_file(dir / "listing.json", 1u << 30));
    if (!listing) {
      // Scan into a staging directory, then rename it into place: a half-done scan is never taken for a whole one.
      fs::create_directories(dir.parent_path());
      ScopedDir staging(staging_path_for(dir));
      fs::create_directories(staging.path() / "files");
      const std::string what = image_->describe() + " layer " + d.digest.str();
      auto visit = [&](const std::string& path, const PathInfo& info, std::uint64_t size,
                       const std::function<std::size_t(char*, std::size_t)>& read) {
        if (info.type != PathInfo::Type::kRegular || has_parent_reference(path)) return;
        if (selection_.keep(path, size)) keep_copy(staging.path() / "files" / path, read);
      };
      listing = list_layer_blob(image_->blob_path(d.digest), what, visit);
      write_file_atomic(staging.path() / "listing.json", serialize_listing(*listing));
      fs::rename(staging.path(), dir, ec);
      if (!ec) staging.release();
      else if (!fs::exists(dir / "listing.json")) throw Error("cannot store the scan of " + what + ": " + ec.message());
      // else: another build stored the same scan first; ours is dropped
    }
    index_.apply(*listing);
    for (const auto& [path, info] : listing->entries)
      if (info.type == PathInfo::Type::kRegular || info.type == PathInfo::Type::kHardlink) provider_[path] = i;
    layers_.push_back({d.digest, dir});
  }
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
  if (!fs::exists(file, ec)) {
    // Not selected when the layer was scanned: read the layer once more for this file and keep it too.
    std::lock_guard<std::mutex> lock(mutex_);
    if (!fs::exists(file, ec)) {
      const Digest& digest = layers_.at(it->second).digest;
      auto visit = [&](const std::string& p, const PathInfo& i, std::uint64_t,
                       const std::function<std::size_t(char*, std::size_t)>& read) {
        if (p == resolved && i.type == PathInfo::Type::kRegular) keep_copy(file, read);
      };
      list_layer_blob(image_->blob_path(digest), image_->describe() + " layer " + digest.str(), visit);
      if (!fs::exists(file, ec)) return std::nullopt;
    }
  }
  return file;
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
