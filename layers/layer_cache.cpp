#include "layers/layer_cache.h"

#include <map>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "support/fs.h"

namespace trainpack::layers {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
// Bump when the layer writer's output for the same entries changes.
constexpr const char* kFormatVersion = "trainpack-layer-v2";  // v2: parallel gzip blocks, spliced members

}  // namespace

LayerCache::LayerCache(const store::BlobStore& store, store::CacheArea entries)
    : store_(store), entries_(std::move(entries)) {
  std::error_code ec;
  fs::create_directories(entries_.dir(), ec);
  if (ec) throw Error("cannot create layer cache at " + entries_.dir().string() + ": " + ec.message());
}

std::string LayerCache::fingerprint(const FileEntries& entries, const LayerOptions& options) {
  image::Sha256 h;
  h.update_field(kFormatVersion);
  h.update_field(std::to_string(options.mtime));
  add_compression_to_key(h, options);
  std::map<std::string, std::string> archive_hashes;  // zip archives without a stamp: hash each once
  for (const FileEntry& e : entries) {
    h.update_field(e.path);
    h.update_field(std::to_string(static_cast<int>(e.type)));
    h.update_field(std::to_string(e.mode) + "," + std::to_string(e.uid) + "," + std::to_string(e.gid));
    h.update_field(e.link_target);
    h.update_field(std::to_string(e.size));
    if (e.type != FileEntry::Type::kRegular) continue;
    if (!e.zip_member.empty()) {
      // A wheel member: the archive (by stamp, else by content) plus which member.
      h.update_field("zip");
      h.update_field(e.source);
      if (!e.source_stamp.empty()) {
        h.update_field(e.source_stamp);
      } else {
        auto [it, fresh] = archive_hashes.try_emplace(e.source);
        if (fresh) it->second = image::sha256_of_file(e.source).hex();
        h.update_field(it->second);
      }
      h.update_field(e.zip_member);
      h.update_field(std::to_string(e.zip_index));
    } else if (e.source.empty()) {
      h.update_field("inline");
      h.update_field(image::sha256_of(e.data).hex());
    } else if (!e.source_stamp.empty()) {
      h.update_field(e.source);
      h.update_field(e.source_stamp);
    } else {
      h.update_field("content");  // no cheap stamp: fall back to hashing the bytes
      h.update_field(image::sha256_of_file(e.source).hex());
    }
  }
  return h.finish().hex();
}

std::optional<LayerBlob> LayerCache::lookup(const std::string& fp) const {
  const std::string key = fp + ".json";
  if (!entries_.use(key)) return std::nullopt;
  fs::path p = entries_.path_of(key);
  std::error_code ec;
  json j = json::parse(read_file(p, 1 << 16), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;  // unreadable entry: rebuild and overwrite
  auto diff_id = image::Digest::parse(j.value("diff_id", ""));
  auto digest = image::Digest::parse(j.value("digest", ""));
  if (!diff_id || !digest || !j.contains("size") || !j["size"].is_number_unsigned()) return std::nullopt;
  LayerBlob blob{*diff_id, *digest, j["size"].get<std::uint64_t>()};
  if (!store_.has(blob.digest) || fs::file_size(store_.path_of(blob.digest), ec) != blob.size) return std::nullopt;
  return blob;
}

void LayerCache::remember(const std::string& fp, const LayerBlob& blob) const {
  json j{{"diff_id", blob.diff_id.str()}, {"digest", blob.digest.str()}, {"size", blob.size}};
  write_file_atomic(entries_.path_of(fp + ".json"), j.dump());
}

BuiltLayer build_layer(const store::BlobStore& store, const LayerCache& cache, FileEntries entries,
                       const LayerOptions& options) {
  sort_and_check_entries(entries);
  std::string fp = LayerCache::fingerprint(entries, options);
  if (auto hit = cache.lookup(fp)) return {*hit, true, std::move(entries)};
  LayerBlob blob = write_sorted_layer(store, entries, options);
  cache.remember(fp, blob);
  return {blob, false, std::move(entries)};
}

}  // namespace trainpack::layers
