#include "layers/layer_cache.h"

#include <map>

#include <nlohmann/json.hpp>

#include "store/sealed_text.h"
#include "support/error.h"
#include "support/fs.h"

namespace trainpack::layers {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
// Bump when the layer writer's output for the same entries changes, or the record's format does.
constexpr const char* kFormatVersion = "trainpack-layer-v3";  // v3: sealed records (store/sealed_text.h)

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

std::optional<LayerBlob> parse_layer_record(std::string_view file) {
  std::optional<std::string_view> text = store::unseal(file);
  if (!text) return std::nullopt;
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  auto text_of = [&j](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::optional<image::Digest> diff_id = image::Digest::parse(text_of("diff_id"));
  std::optional<image::Digest> digest = image::Digest::parse(text_of("digest"));
  auto size = j.find("size");
  if (!diff_id || !digest || size == j.end() || !size->is_number_unsigned()) return std::nullopt;
  return LayerBlob{*diff_id, *digest, size->get<std::uint64_t>()};
}

std::optional<LayerBlob> LayerCache::lookup(const std::string& fp) const {
  const std::string key = fp + ".json";
  if (!entries_.use(key)) return std::nullopt;
  std::optional<LayerBlob> blob;
  try {
    blob = parse_layer_record(read_file(entries_.path_of(key), 1 << 16));
  } catch (const Error&) {  // unreadable: the same miss
  }
  if (!blob) {
    entries_.discard(key, "it is not a layer record");  // the layer is made again and remembered anew
    return std::nullopt;
  }
  std::error_code ec;
  if (!store_.has(blob->digest) || fs::file_size(store_.path_of(blob->digest), ec) != blob->size) return std::nullopt;
  return blob;
}

void LayerCache::remember(const std::string& fp, const LayerBlob& blob) const {
  json j{{"diff_id", blob.diff_id.str()}, {"digest", blob.digest.str()}, {"size", blob.size}};
  write_file_atomic(entries_.path_of(fp + ".json"), store::seal(j.dump()));
}

LayerLookup look_up_layer(const LayerCache& cache, FileEntries entries, const LayerOptions& options) {
  sort_and_check_entries(entries);
  std::string fingerprint = LayerCache::fingerprint(entries, options);
  std::optional<LayerBlob> cached = cache.lookup(fingerprint);
  return {std::move(entries), std::move(fingerprint), std::move(cached)};
}

BuiltLayer build_layer(const store::BlobStore& store, const LayerCache& cache, FileEntries entries,
                       const LayerOptions& options) {
  LayerLookup layer = look_up_layer(cache, std::move(entries), options);
  if (layer.cached) return {*layer.cached, true, std::move(layer.entries)};
  LayerBlob blob = write_sorted_layer(store, layer.entries, options);
  cache.remember(layer.fingerprint, blob);
  return {blob, false, std::move(layer.entries)};
}

}  // namespace trainpack::layers
