#include "transports/oci_layout.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "image/media_types.h"
#include "store/blob_store.h"
#include "support/byte_regex.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/hash.h"

namespace trainpack::transports {
namespace fs = std::filesystem;
using namespace image;  // the image model a transport reads and writes
using nlohmann::json;

namespace {

constexpr std::string_view kCorruptHint = "the OCI layout is corrupt; re-create it (e.g. with skopeo copy) or use another";
constexpr int kMaxIndexDepth = 8;

// The digest of what `h` hashed, in the form of `h`'s algorithm (sha256, sha512: whatever Digest::parse accepts).
Digest finish_digest(Hasher& h) { return Digest::parse_or_throw(h.algorithm() + ":" + h.finish_hex(), "computed digest"); }

std::string annotation(const json& descriptor, std::string_view key) {
  if (!descriptor.is_object()) return {};
  auto a = descriptor.find("annotations");
  if (a == descriptor.end() || !a->is_object()) return {};
  auto v = a->find(std::string(key));
  return v != a->end() && v->is_string() ? v->get<std::string>() : std::string();
}

// Re-throws an Error from the shared parsers with our own hint.
template <class F>
auto with_hint(std::string_view hint, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error(e.what(), std::string(hint));
  }
}

std::string layout_what(const fs::path& dir) { return "OCI layout " + dir.string(); }

fs::path blob_file(const fs::path& dir, const Digest& d) { return dir / "blobs" / d.algorithm() / d.hex(); }

// Checks `dir/oci-layout`; `what` names the layout in errors.
void check_layout_header(std::string_view header_bytes, std::string_view what, std::string_view hint) {
  json h = json::parse(header_bytes, nullptr, false);
  if (h.is_discarded() || !h.is_object())
    throw Error(std::string(what) + ": oci-layout is not valid JSON", std::string(hint));
  auto v = h.find("imageLayoutVersion");
  if (v == h.end() || !v->is_string())
    throw Error(std::string(what) + ": oci-layout has no imageLayoutVersion", std::string(hint));
  if (v->get<std::string>() != "1.0.0")
    throw Error(std::string(what) + ": unsupported imageLayoutVersion " + v->get<std::string>(),
                "only OCI image layout version 1.0.0 is supported");
}

std::string read_layout_file(const fs::path& dir, const char* name, std::string_view what) {
  fs::path p = dir / name;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec))
    throw Error(std::string(what) + ": " + name + " is missing", std::string(kCorruptHint));
  return with_hint(kCorruptHint, [&] { return read_file(p, 64u << 20); });
}

// The read-only view of one image in an OCI layout directory.
class OciLayoutImage final : public Image {
 public:
  OciLayoutImage(fs::path dir, std::string describe, detail::ResolvedImage resolved)
      : dir_(std::move(dir)), describe_(std::move(describe)), r_(std::move(resolved)) {
    sizes_[r_.manifest_descriptor.digest] = r_.raw_manifest.size();
    sizes_[r_.manifest.config.digest] = r_.manifest.config.size;
    verified_.insert(r_.manifest_descriptor.digest);
    verified_.insert(r_.manifest.config.digest);
    // Cheap checks now (existence, size) so a broken base fails at open, full digests lazily in blob_path().
    for (const auto& l : r_.manifest.layers) {
      sizes_[l.digest] = l.size;
      check_present(l.digest, l.size);
    }
  }

  const std::string& raw_manifest() const override { return r_.raw_manifest; }
  const std::string& raw_config() const override { return r_.raw_config; }
  std::string describe() const override { return describe_; }

  fs::path blob_path(const Digest& digest) const override {
    fs::path p = blob_file(dir_, digest);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (verified_.count(digest)) return p;
    }
    auto it = sizes_.find(digest);
    std::uint64_t size = it != sizes_.end() ? it->second : 0;
    if (it != sizes_.end()) check_present(digest, size);
    else {
      std::error_code ec;
      if (!fs::is_regular_file(p, ec))
        throw Error(describe_ + ": blob " + digest.str() + " is missing (" + p.string() + ")", std::string(kCorruptHint));
    }
    // Hash outside the lock: layers may be gigabytes and other blobs may be requested meanwhile.
    Digest actual = with_hint(kCorruptHint, [&] { return detail::digest_file_like(digest, p); });
    if (actual != digest)
      throw Error(describe_ + ": blob " + digest.str() + " does not match its digest (content hashes to " +
                      actual.str() + ")",
                  std::string(kCorruptHint));
    std::lock_guard<std::mutex> lock(mu_);
    verified_.insert(digest);
    return p;
  }

 private:
  void check_present(const Digest& digest, std::uint64_t size) const {
    fs::path p = blob_file(dir_, digest);
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      throw Error(describe_ + ": blob " + digest.str() + " is missing (" + p.string() + ")", std::string(kCorruptHint));
    auto actual = fs::file_size(p, ec);
    if (ec) throw Error(describe_ + ": cannot stat blob " + digest.str() + ": " + ec.message(), std::string(kCorruptHint));
    if (actual != size)
      throw Error(describe_ + ": blob " + digest.str() + " has " + std::to_string(actual) + " bytes, expected " +
                      std::to_string(size),
                  std::string(kCorruptHint));
  }

  fs::path dir_;
  std::string describe_;
  detail::ResolvedImage r_;
  std::map<Digest, std::uint64_t> sizes_;
  mutable std::mutex mu_;
  mutable std::set<Digest> verified_;
};

// Writes `bytes` as blob `d` under `root` unless a blob of the right size is already there.
void put_bytes_blob(const fs::path& root, const Digest& d, std::string_view bytes) {
  fs::path dst = blob_file(root, d);
  std::error_code ec;
  if (fs::is_regular_file(dst, ec) && fs::file_size(dst, ec) == bytes.size() && !ec) return;
  write_file_atomic(dst, bytes);
}

// Places `src` at `dst` through a staging name, hashing its bytes on the way (a hard link where it lands, a copy as
// it is written): one read. Renamed into place only when they hash to `digest`; returns what they hash to.
Digest place_checked(const fs::path& src, const fs::path& dst, const Digest& digest) {
  ScopedFile staged(staging_path_for(dst));
  std::error_code ec;
  fs::create_hard_link(src, staged.path(), ec);
  Hasher h(digest.algorithm());
  if (!ec) {
    stream_file(staged.path(), [&h](const char* data, std::size_t size) { h.update(data, size); });
  } else {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(staged.path().c_str(), "wb"), &std::fclose);
    if (!out) throw Error("cannot write " + staged.path().string() + ": " + std::strerror(errno));
    stream_file(src, [&](const char* data, std::size_t size) {
      h.update(data, size);
      if (std::fwrite(data, 1, size, out.get()) != size)
        throw Error("cannot write " + staged.path().string() + ": " + std::strerror(errno), "is the disk full?");
    });
    if (std::fclose(out.release()) != 0) throw Error("cannot write " + staged.path().string() + ": " + std::strerror(errno));
  }
  Digest actual = finish_digest(h);
  if (actual != digest) return actual;
  fs::rename(staged.path(), dst, ec);
  if (ec) throw Error("cannot move " + staged.path().string() + " to " + dst.string() + ": " + ec.message());
  staged.release();
  return actual;
}

// Copies the blob `desc` of `image` into the layout at `root`, checked against its digest as it goes.
void put_file_blob(const Image& image, const fs::path& root, const Descriptor& desc) {
  fs::path dst = blob_file(root, desc.digest);
  std::error_code ec;
  if (fs::exists(dst, ec)) {
    // An existing blob of the wrong size is damage we can repair; same-size blobs are trusted by name.
    if (fs::file_size(dst, ec) == desc.size && !ec) return;
    fs::remove(dst, ec);
  }
  for (bool retried = false;; retried = true) {
    fs::path src = image.blob_path(desc.digest);
    static_cast<void>(fs::file_size(src, ec));  // only whether it can be read
    if (ec)
      throw Error(image.describe() + ": blob " + desc.digest.str() + " is unreadable (" + src.string() + ": " +
                  ec.message() + ")");
    Digest actual = place_checked(src, dst, desc.digest);
    if (actual == desc.digest) break;
    detail::recover_damaged_blob(image, desc.digest, actual, retried, true);
  }
  auto size = fs::file_size(dst, ec);
  if (ec || size != desc.size) {
    fs::remove(dst, ec);
    throw Error(image.describe() + ": blob " + desc.digest.str() + " has " + std::to_string(size) +
                " bytes, the manifest says " + std::to_string(desc.size));
  }
}

}  // namespace

namespace detail {

Digest digest_like(const Digest& like, std::string_view bytes) {
  Hasher h(like.algorithm());
  h.update(bytes);
  return finish_digest(h);
}

Digest digest_file_like(const Digest& like, const fs::path& path) {
  Hasher h(like.algorithm());
  stream_file(path, [&h](const char* data, std::size_t size) { h.update(data, size); });
  return finish_digest(h);
}

void recover_damaged_blob(const Image& image, const Digest& digest, const Digest& actual, bool retried,
                          bool rewritable) {
  const std::string damaged = image.describe() + ": blob " + digest.str() + " is damaged (its bytes hash to " +
                              actual.str() + ")";
  if (retried)
    throw Error(damaged + "; nothing was written", "it was fetched again and is still damaged: check the disk");
  bool refetched = image.refetch_blob(digest, actual);
  if (refetched && rewritable) return;
  if (!rewritable) throw Error(damaged + "; the output is incomplete", "write the output again");
  throw DamagedBlob(damaged + "; nothing was written",
                    "its copy in the cache is removed: run the build again, which makes it anew");
}

bool descriptor_named(const json& descriptor, std::string_view tag, const std::vector<std::string>& full_names) {
  std::string ref = annotation(descriptor, kAnnotationRefName);
  if (!ref.empty() && ref == tag) return true;
  std::string cname = annotation(descriptor, kAnnotationContainerdName);
  if (cname.empty()) return false;
  if (cname == tag) return true;
  return std::find(full_names.begin(), full_names.end(), cname) != full_names.end();
}

std::string list_tags(const json& index) {
  std::string out;
  if (index.is_object() && index.contains("manifests") && index["manifests"].is_array()) {
    for (const auto& d : index["manifests"]) {
      std::string name = annotation(d, kAnnotationRefName);
      if (name.empty()) name = annotation(d, kAnnotationContainerdName);
      if (name.empty()) name = "(untagged " + (d.is_object() ? d.value("digest", std::string("?")) : "?") + ")";
      out += (out.empty() ? "" : ", ") + name;
    }
  }
  return out.empty() ? "none" : out;
}

ResolvedImage resolve_index(std::string_view index_json, std::string_view tag,
                            const std::vector<std::string>& full_names, const Platform& platform,
                            std::string_view what, std::string_view hint, const SmallBlobReader& read_blob) {
  const std::string w(what);
  json ij = json::parse(index_json, nullptr, false);
  if (ij.is_discarded() || !ij.is_object()) throw Error(w + ": index.json is not valid JSON", std::string(hint));
  if (ij.contains("manifests") && !ij["manifests"].is_array())
    throw Error(w + ": index.json manifests is not a list", std::string(hint));
  Index index = with_hint(hint, [&] { return Index::parse(index_json, w + " index.json"); });
  if (index.manifests.empty()) throw Error(w + " holds no images (index.json lists none)", std::string(hint));

  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < index.manifests.size(); ++i)
    if (tag.empty() ? !ij["manifests"][i].contains("artifactType")  // an SBOM beside the image is not an image
                    : descriptor_named(ij["manifests"][i], tag, full_names))
      candidates.push_back(i);
  if (candidates.empty())
    throw Error(w + " has no image named \"" + std::string(tag) + "\"", "it has: " + list_tags(ij));

  const Descriptor* chosen = &index.manifests[candidates[0]];
  // Several names for one manifest (an image saved with two tags) are still one image.
  bool same_image = std::all_of(candidates.begin(), candidates.end(),
                                [&](std::size_t i) { return index.manifests[i].digest == chosen->digest; });
  if (candidates.size() > 1 && !same_image) {
    bool all_platforms = std::all_of(candidates.begin(), candidates.end(),
                                     [&](std::size_t i) { return index.manifests[i].platform.is_object(); });
    if (!all_platforms) {
      if (tag.empty())
        throw Error(w + " holds " + std::to_string(candidates.size()) + " images; name the one to use",
                    "it has: " + list_tags(ij));
      throw Error(w + ": \"" + std::string(tag) + "\" names " + std::to_string(candidates.size()) + " images",
                  std::string(hint));
    }
    Index sub;
    sub.media_type = index.media_type;
    for (std::size_t i : candidates) sub.manifests.push_back(index.manifests[i]);
    const Descriptor& d = select_platform(sub, platform, w);
    chosen = &index.manifests[candidates[static_cast<std::size_t>(&d - sub.manifests.data())]];
  }

  ResolvedImage r;
  r.tag = annotation(ij["manifests"][static_cast<std::size_t>(chosen - index.manifests.data())], kAnnotationRefName);
  Descriptor cur = *chosen;
  for (int depth = 0;; ++depth) {
    if (depth > kMaxIndexDepth) throw Error(w + ": image indexes are nested too deeply", std::string(hint));
    if (media::is_index(cur.media_type)) {
      std::string raw = read_blob(cur);
      std::string iw = w + " index " + cur.digest.str();
      Index nested = with_hint(hint, [&] { return Index::parse(raw, iw); });
      cur = select_platform(nested, platform, iw);
      continue;
    }
    if (!media::is_manifest(cur.media_type))
      throw Error(w + ": " + cur.digest.str() + " has unsupported media type " + cur.media_type,
                  "only OCI and Docker schema2 images are supported");
    r.raw_manifest = read_blob(cur);
    std::string mw = w + " manifest " + cur.digest.str();
    r.manifest = with_hint(hint, [&] { return Manifest::parse(r.raw_manifest, mw); });
    r.manifest_descriptor = cur;
    break;
  }
  r.raw_config = read_blob(r.manifest.config);
  json cfg = json::parse(r.raw_config, nullptr, false);
  if (cfg.is_discarded() || !cfg.is_object())
    throw Error(w + ": image config " + r.manifest.config.digest.str() + " is not valid JSON", std::string(hint));
  return r;
}

}  // namespace detail

namespace {

// A small blob of the layout (a manifest, a config, an attached document), checked against its descriptor.
std::string read_layout_blob(const fs::path& dir, const std::string& what, const Descriptor& d) {
  fs::path p = blob_file(dir, d.digest);
  std::error_code e;
  if (!fs::is_regular_file(p, e))
    throw Error(what + ": blob " + d.digest.str() + " is missing", std::string(kCorruptHint));
  auto size = fs::file_size(p, e);
  if (e || size != d.size)
    throw Error(what + ": blob " + d.digest.str() + " has " + std::to_string(size) + " bytes, expected " +
                    std::to_string(d.size),
                std::string(kCorruptHint));
  std::string bytes = with_hint(kCorruptHint, [&] { return read_file(p, 64u << 20); });
  if (detail::digest_like(d.digest, bytes) != d.digest)
    throw Error(what + ": blob " + d.digest.str() + " does not match its digest", std::string(kCorruptHint));
  return bytes;
}

}  // namespace

std::unique_ptr<Image> open_oci_layout(const fs::path& dir, std::string_view tag, const Platform& platform) {
  const std::string what = layout_what(dir);
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw Error(what + " does not exist", "check the path of the OCI layout");
  if (!fs::is_directory(dir, ec)) throw Error(what + " is not a directory", "an OCI layout is a directory");
  if (!fs::is_regular_file(dir / "oci-layout", ec))
    throw Error(what + " is not an OCI layout (no oci-layout file)", std::string(kCorruptHint));
  check_layout_header(read_layout_file(dir, "oci-layout", what), what, kCorruptHint);
  std::string index_json = read_layout_file(dir, "index.json", what);

  auto read_blob = [&](const Descriptor& d) { return read_layout_blob(dir, what, d); };
  detail::ResolvedImage r = detail::resolve_index(index_json, tag, {}, platform, what, kCorruptHint, read_blob);
  std::string describe = "oci:" + dir.string();
  std::string shown_tag = !tag.empty() ? std::string(tag) : r.tag;
  if (!shown_tag.empty()) describe += ":" + shown_tag;
  return std::make_unique<OciLayoutImage>(dir, std::move(describe), std::move(r));
}

namespace {

enum class DestinationMode { kNew, kReplaceEmpty, kExisting };

// What writing to `dir` means: a new layout, replacing an empty directory, or adding to an existing layout (whose
// index.json is read into `index`). Anything else is an Error, raised before any work is done.
DestinationMode classify_destination(const fs::path& dir, const std::string& what, json& index) {
  std::error_code ec;
  auto st = fs::status(dir, ec);
  if (!fs::exists(st)) return DestinationMode::kNew;
  if (!fs::is_directory(st))
    throw Error(what + ": the path exists and is not a directory", "choose another output path or remove it");
  if (fs::is_empty(dir, ec)) return DestinationMode::kReplaceEmpty;
  if (!fs::is_regular_file(dir / "oci-layout", ec))
    throw Error(what + ": the directory exists and is not an OCI layout",
                "choose a new or empty directory, or an existing OCI layout");
  constexpr std::string_view hint = "the existing OCI layout is corrupt; remove it or choose another output";
  check_layout_header(with_hint(hint, [&] { return read_layout_file(dir, "oci-layout", what); }), what, hint);
  std::string raw = with_hint(hint, [&] { return read_layout_file(dir, "index.json", what); });
  index = json::parse(raw, nullptr, false);
  if (index.is_discarded() || !index.is_object()) throw Error(what + ": index.json is not valid JSON", std::string(hint));
  if (index.contains("manifests") && !index["manifests"].is_array())
    throw Error(what + ": index.json manifests is not a list", std::string(hint));
  return DestinationMode::kExisting;
}

// Moves the blobs of a staged layout into `dir`'s (content-addressed: one already there is the same).
void move_blobs(const fs::path& staged, const fs::path& dir) {
  for (const auto& alg : fs::directory_iterator(staged / "blobs")) {
    fs::create_directories(dir / "blobs" / alg.path().filename());
    for (const auto& blob : fs::directory_iterator(alg.path())) {
      fs::path to = dir / "blobs" / alg.path().filename() / blob.path().filename();
      std::error_code ec;
      if (!fs::exists(to, ec)) fs::rename(blob.path(), to, ec);
      if (ec) throw Error("cannot move " + blob.path().string() + " into " + dir.string() + ": " + ec.message());
    }
  }
}

// Holds flock(2) on the layout directory itself: writers of one layout take turns at index.json (the blobs are
// content-addressed and written before, without it). Nothing is added to the layout for it.
class LayoutLock {
 public:
  explicit LayoutLock(const fs::path& dir) : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) {
      int err = errno;
      if (fd_ >= 0) ::close(fd_);
      throw Error("cannot lock " + dir.string() + ": " + std::strerror(err));
    }
  }
  ~LayoutLock() { ::close(fd_); }
  LayoutLock(const LayoutLock&) = delete;
  LayoutLock& operator=(const LayoutLock&) = delete;

 private:
  int fd_;
};

// Reads index.json again under the lock, replaces the entries with the same tags (or the same untagged manifest) by
// `descs`, and writes it back: a tag another build added meanwhile stays.
void add_to_index(const fs::path& dir, const std::string& what, const json& descs, const Digest& manifest_digest) {
  LayoutLock lock(dir);
  json index;
  if (classify_destination(dir, what, index) != DestinationMode::kExisting)
    throw Error(what + ": the layout changed while it was written", "run the build again");
  std::set<std::string> tags;
  for (const auto& d : descs) tags.insert(annotation(d, kAnnotationRefName));
  json kept = json::array();
  if (index.contains("manifests")) {
    for (const auto& d : index["manifests"]) {
      std::string ref = annotation(d, kAnnotationRefName);
      bool same_tag = !ref.empty() && tags.count(ref);
      bool same_untagged = tags.count("") && ref.empty() && d.is_object() &&
                           d.value("digest", std::string()) == manifest_digest.str();
      if (!same_tag && !same_untagged) kept.push_back(d);
    }
  }
  for (const auto& d : descs) kept.push_back(d);
  index["manifests"] = std::move(kept);
  if (!index.contains("schemaVersion")) index["schemaVersion"] = 2;
  write_file_atomic(dir / "index.json", index.dump());
}

// The index.json descriptors of one manifest: one per tag (`tag`, then `extra_tags`), or one untagged.
json index_descriptors(const std::string& media_type, const Digest& digest, std::size_t size,
                       const json& extra_annotations, std::string_view tag,
                       const std::vector<std::string>& extra_tags) {
  std::vector<std::string> tags;
  if (!tag.empty()) tags.emplace_back(tag);
  for (const std::string& t : extra_tags)
    if (std::find(tags.begin(), tags.end(), t) == tags.end()) tags.push_back(t);
  if (tags.empty()) tags.emplace_back();
  json descs = json::array();
  for (const std::string& t : tags) {
    json desc = {{"mediaType", media_type}, {"digest", digest.str()}, {"size", size}};
    json annotations = extra_annotations.is_object() ? extra_annotations : json::object();
    if (!t.empty()) annotations[std::string(kAnnotationRefName)] = t;
    if (!annotations.empty()) desc["annotations"] = annotations;
    descs.push_back(desc);
  }
  return descs;
}

}  // namespace

void check_oci_layout_destination(const fs::path& dir) {
  json index;
  // A new layout is staged beside the directory and renamed into place: its parent must exist and be writable.
  if (classify_destination(dir, layout_what(dir), index) != DestinationMode::kExisting)
    check_output_parent(dir, layout_what(dir));
}

void write_oci_layout(const Image& image, const fs::path& dir_in, std::string_view tag,
                      const json& extra_annotations, const std::vector<std::string>& extra_tags) {
  fs::path dir = dir_in;
  if (dir.has_filename() == false && dir.has_parent_path()) dir = dir.parent_path();  // "out/" → "out"
  const std::string what = layout_what(dir);
  dir = follow_output_links(dir);  // a link to a directory is written through, never replaced by one
  if (!extra_annotations.is_null() && !extra_annotations.is_object())
    throw Error("annotations for " + what + " must be a JSON object");
  if (extra_annotations.is_object())
    for (auto it = extra_annotations.begin(); it != extra_annotations.end(); ++it)
      if (!it.value().is_string())
        throw Error("annotation " + it.key() + " for " + what + " is not a string", "OCI annotation values are strings");

  // Everything about the source is checked before anything is written.
  const std::string& raw_manifest = image.raw_manifest();
  const std::string& raw_config = image.raw_config();
  Manifest manifest = image.manifest();
  Digest manifest_digest = sha256_of(raw_manifest);
  if (detail::digest_like(manifest.config.digest, raw_config) != manifest.config.digest ||
      raw_config.size() != manifest.config.size)
    throw Error(image.describe() + ": config bytes do not match the manifest's config descriptor",
                "the source image is corrupt");

  json index;
  const DestinationMode mode = classify_destination(dir, what, index);
  std::error_code ec;

  fs::path root = mode == DestinationMode::kExisting ? dir : staging_path_for(dir);
  ScopedDir staging(mode == DestinationMode::kExisting ? fs::path() : root);
  if (mode != DestinationMode::kExisting) {
    fs::create_directory(root, ec);
    if (ec) throw Error("cannot create " + root.string() + ": " + ec.message());
  }

  auto make_alg_dir = [&](const Digest& d) {
    fs::create_directories(root / "blobs" / d.algorithm(), ec);
    if (ec) throw Error("cannot create " + (root / "blobs" / d.algorithm()).string() + ": " + ec.message());
  };
  make_alg_dir(manifest_digest);
  make_alg_dir(manifest.config.digest);
  for (const auto& layer : manifest.layers) {
    make_alg_dir(layer.digest);
    put_file_blob(image, root, layer);
  }
  put_bytes_blob(root, manifest.config.digest, raw_config);
  put_bytes_blob(root, manifest_digest, raw_manifest);

  json descs = index_descriptors(manifest.media_type, manifest_digest, raw_manifest.size(), extra_annotations, tag,
                                 extra_tags);
  // An artifact's entry says so (image-spec image-index.md), so readers of the layout can tell it from an image.
  json raw = json::parse(raw_manifest, nullptr, false);
  if (std::string type = string_member(raw, "artifactType"); !type.empty())
    for (json& d : descs) d["artifactType"] = type;
  if (mode != DestinationMode::kExisting) {
    index = {{"schemaVersion", 2}, {"mediaType", media::kOciIndex}, {"manifests", descs}};
    write_file_atomic(root / "oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
    write_file_atomic(root / "index.json", index.dump());
    // rename(2) replaces an empty directory; a directory that appeared meanwhile with content makes it fail.
    fs::rename(root, dir, ec);
    if (!ec) {
      staging.release();
      return;
    }
    // Another build made a layout there meanwhile: add to it, as to any existing layout.
    json ignored;
    if (classify_destination(dir, what, ignored) != DestinationMode::kExisting)
      throw Error("cannot move the new OCI layout into " + dir.string() + ": " + ec.message(),
                  "was the directory created by someone else meanwhile?");
    move_blobs(root, dir);
  }
  add_to_index(dir, what, descs, manifest_digest);
}

// The tag becomes the org.opencontainers.image.ref.name annotation, whose grammar the OCI image spec gives
// (annotations.md: component ("/" component)*, component = alphanum (separator alphanum)*,
// separator = [-._:@+] | "--"); skopeo and umoci refuse other names too.
void check_oci_layout_tag(std::string_view tag) {
  static const RE2 ref_name(
      "[A-Za-z0-9]+(?:(?:[-._:@+]|--)[A-Za-z0-9]+)*(?:/[A-Za-z0-9]+(?:(?:[-._:@+]|--)[A-Za-z0-9]+)*)*",
      byte_regex_options());
  if (RE2::FullMatch(tag, ref_name)) return;
  throw Error("\"" + std::string(tag) + "\" is not a valid OCI layout tag",
              "use letters and digits joined by . _ - : @ + (e.g. oci:DIR:v1.0), as the image spec's ref.name "
              "grammar allows");
}

namespace {

std::shared_ptr<const Image> open_location(const ImageLocation& location, const OpenContext& context) {
  std::error_code ec;
  if (!fs::exists(location.path, ec))
    throw Error("image " + location.str() + " does not exist", "check the path of the OCI layout directory");
  return open_oci_layout(location.path, location.ref, context.platform);
}

void complete_location(ImageLocation& location) {
  if (!location.ref.empty()) check_oci_layout_tag(location.ref);
}

void check_location(const ImageLocation& location) { check_oci_layout_destination(location.path); }

// Referrers only beside a tagged image: an untagged layout keeps the one manifest that tools taking "the only
// image" of a layout (skopeo, umoci) need.
WriteReport write_location(const Image& image, const ImageLocation& location, const WriteContext& context) {
  write_oci_layout(image, location.path, location.ref, nullptr, context.extra_tags);
  WriteReport report;
  if (location.ref.empty()) return report;
  for (const auto& referrer : context.referrers) {
    write_oci_layout(*referrer, location.path, "", nullptr, {});
    ++report.referrers_attached;
  }
  return report;
}

}  // namespace

namespace {

// The layout's artifact entries (image-index.md: artifactType on the descriptor) whose manifest's subject is
// `subject`: the layout's listing of the image's referrers, in index.json's order.
std::vector<image::AttachedDocument> read_attached_in_layout(const ImageLocation& location, const OpenContext&,
                                                             const Digest& subject,
                                                             const std::vector<std::string>& types) {
  const std::string what = layout_what(location.path);
  json index = json::parse(read_layout_file(location.path, "index.json", what), nullptr, false);
  std::vector<image::AttachedDocument> found;
  if (!index.is_object() || !index.contains("manifests") || !index["manifests"].is_array()) return found;
  for (const json& entry : index["manifests"]) {
    std::string type = string_member(entry, "artifactType");
    if (std::find(types.begin(), types.end(), type) == types.end()) continue;
    Descriptor d = Descriptor::from_json(entry, what);
    std::string raw = read_layout_blob(location.path, what, d);
    json manifest = json::parse(raw, nullptr, false);
    if (!manifest.is_object() || string_member(manifest.value("subject", json()), "digest") != subject.str())
      continue;
    const json& blobs = manifest.value("layers", json::array());
    std::string content;
    if (blobs.is_array() && blobs.size() == 1)
      content = read_layout_blob(location.path, what, Descriptor::from_json(blobs[0], what));
    found.push_back({type, d.digest, std::move(raw), std::move(content)});
  }
  return found;
}

}  // namespace

const Transport kOciLayoutTransport{"oci", "oci:", /*local=*/true, complete_location, open_location, check_location,
                                    write_location, read_attached_in_layout};

}  // namespace trainpack::transports
