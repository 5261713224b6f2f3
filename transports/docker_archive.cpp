#include "transports/docker_archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "image/media_types.h"
#include "store/blob_store.h"
#include "transports/oci_layout.h"
#include "support/byte_regex.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/hash.h"

namespace trainpack::transports {
namespace fs = std::filesystem;
using namespace image;  // the image model a transport reads and writes
using store::BlobStore;
using store::StoredBlob;
using nlohmann::json;

namespace {

constexpr std::string_view kCorruptHint = "the docker archive is corrupt or truncated; save it again";
constexpr std::size_t kChunk = 1 << 20;
constexpr std::uint64_t kSmallLimit = 64u << 20;

std::string tag_list(const json& manifest_json) {
  std::string out;
  if (manifest_json.is_array())
    for (const auto& e : manifest_json) {
      if (!e.is_object() || !e.contains("RepoTags") || !e["RepoTags"].is_array() || e["RepoTags"].empty()) {
        out += std::string(out.empty() ? "" : ", ") + "(untagged)";
        continue;
      }
      for (const auto& t : e["RepoTags"])
        if (t.is_string()) out += (out.empty() ? "" : ", ") + t.get<std::string>();
    }
  return out.empty() ? "none" : out;
}

// "name:tag" with docker.io/library/ made explicit, or empty when `ref` is not a valid reference.
std::string normalized(std::string_view ref) {
  try {
    DockerArchiveRef r = parse_docker_archive_ref(ref);
    return r.full + ":" + r.tag;
  } catch (const Error&) {
    return {};
  }
}

// Member names as libarchive reports them, made comparable: no leading "./" or "/", normalised.
std::string clean_name(std::string_view raw) {
  std::string s(raw);
  while (s.starts_with("./") || s.starts_with("/")) s.erase(0, s.starts_with("/") ? 1 : 2);
  std::string n = fs::path(s).lexically_normal().generic_string();
  if (n == ".") return {};
  return n;
}

// ---------------------------------------------------------------------------------------------------------------
// Writing.

class TarWriter {
 public:
  // Writes to `fd` (left open), named `path` in messages.
  TarWriter(int fd, const fs::path& path) : path_(path), a_(archive_write_new()) {
    if (!a_) throw Error("libarchive could not allocate a writer");
    try {
      if (archive_write_set_format_pax_restricted(a_) != ARCHIVE_OK ||
          archive_write_set_bytes_in_last_block(a_, 1) != ARCHIVE_OK)
        fail("cannot set up the tar writer");
      if (archive_write_open_fd(a_, fd) != ARCHIVE_OK) fail("cannot write " + path.string());
    } catch (...) {
      archive_write_free(a_);  // a constructor that throws gets no destructor call
      throw;
    }
  }
  ~TarWriter() {
    if (a_) archive_write_free(a_);
  }
  TarWriter(const TarWriter&) = delete;
  TarWriter& operator=(const TarWriter&) = delete;

  void add_dir(const std::string& name) { header(name, AE_IFDIR, 0755, 0); }

  void add_bytes(const std::string& name, std::string_view bytes) {
    header(name, AE_IFREG, 0644, bytes.size());
    write(bytes.data(), bytes.size());
  }

  // Streams `src` (which must hold exactly `size` bytes) into the archive.
  // Adds the file `src` of `size` bytes as `name`, hashing what it writes into `hash`.
  void add_file(const std::string& name, const fs::path& src, std::uint64_t size, const std::string& what,
                Hasher& hash) {
    std::FILE* f = std::fopen(src.c_str(), "rb");
    if (!f) throw Error(what + " is unreadable (" + src.string() + ": " + std::strerror(errno) + ")");
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, &std::fclose);
    header(name, AE_IFREG, 0644, size);
    std::vector<char> buf(kChunk);
    std::uint64_t done = 0;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
      if (done + n > size) break;
      hash.update(buf.data(), n);
      write(buf.data(), n);
      done += n;
    }
    if (std::ferror(f)) throw Error(what + " could not be read (" + src.string() + ")");
    if (done != size || n > 0)
      throw Error(what + " changed size while being archived (" + src.string() + ")", "is something modifying it?");
  }

  void close() {
    if (archive_write_close(a_) != ARCHIVE_OK) fail("cannot finish writing " + path_.string());
    archive_write_free(a_);
    a_ = nullptr;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    std::string why = archive_error_string(a_) ? archive_error_string(a_) : "";
    // libarchive says "Write error" for any failed write(2): the errno it kept says which.
    if (int err = archive_errno(a_); err > 0 && why.find(std::strerror(err)) == std::string::npos)
      why += (why.empty() ? "" : ": ") + std::string(std::strerror(err));
    throw Error(what + (why.empty() ? std::string() : ": " + why));
  }

  void header(const std::string& name, unsigned type, int perm, std::uint64_t size) {
    std::unique_ptr<archive_entry, void (*)(archive_entry*)> e(archive_entry_new(), &archive_entry_free);
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_filetype(e.get(), type);
    archive_entry_set_perm(e.get(), perm);
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(size));
    archive_entry_set_mtime(e.get(), 0, 0);
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    if (archive_write_header(a_, e.get()) != ARCHIVE_OK) fail("cannot write " + name + " to " + path_.string());
  }

  void write(const char* data, std::size_t size) {
    while (size > 0) {
      la_ssize_t n = archive_write_data(a_, data, size);
      if (n <= 0) fail("cannot write to " + path_.string());
      data += n;
      size -= static_cast<std::size_t>(n);
    }
  }

  fs::path path_;
  archive* a_;
};

// ---------------------------------------------------------------------------------------------------------------
// Reading.

struct Member {
  bool is_link = false;
  std::string target;  // clean name of the link target
  store::StoredBlob blob;
  std::string head;  // first bytes, for compression sniffing
};

struct ArchiveContents {
  std::map<std::string, Member> members;
  std::map<std::string, std::string> small;  // manifest.json, index.json, oci-layout
};

bool kept_in_memory(const std::string& name) {
  return name == "manifest.json" || name == "index.json" || name == "oci-layout";
}

// Files no reader of ours needs: legacy per-layer v1 metadata and the old `repositories` file.
bool skipped(const std::string& name) {
  if (name == "repositories") return true;
  auto slash = name.rfind('/');
  std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  return slash != std::string::npos && name.find('/') == slash && !name.starts_with("blobs/") &&
         (base == "json" || base == "VERSION");
}

// One sequential pass: small metadata into memory, every other regular file into the store (hashed on the way).
ArchiveContents read_archive(const fs::path& file, const store::BlobStore& store, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(file, ec)) throw Error(what + " does not exist", "check the path of the archive");
  if (fs::is_directory(file, ec)) throw Error(what + " is a directory, not a tar archive");

  std::unique_ptr<archive, int (*)(archive*)> a(archive_read_new(), &archive_read_free);
  if (!a) throw Error("libarchive could not allocate a reader");
  archive_read_support_format_tar(a.get());
  archive_read_support_format_gnutar(a.get());
  archive_read_support_filter_all(a.get());  // `docker save | gzip` is loadable too
  auto fail = [&](const std::string& why) -> Error {
    const char* detail = archive_error_string(a.get());
    return Error(what + ": " + why + (detail ? std::string(" (") + detail + ")" : std::string()),
                 std::string(kCorruptHint));
  };
  if (archive_read_open_filename(a.get(), file.c_str(), kChunk) != ARCHIVE_OK) throw fail("not a readable tar archive");

  ArchiveContents out;
  std::vector<char> buf(kChunk);
  archive_entry* e = nullptr;
  for (;;) {
    int r = archive_read_next_header(a.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) throw fail(out.members.empty() && out.small.empty() ? "not a readable tar archive"
                                                                              : "cannot read the archive");
    std::string name = clean_name(archive_entry_pathname(e) ? archive_entry_pathname(e) : "");
    if (name.empty() || name.starts_with("../")) continue;
    auto type = archive_entry_filetype(e);
    const char* hardlink = archive_entry_hardlink(e);
    if (hardlink && archive_entry_size(e) == 0) {
      out.members[name] = Member{true, clean_name(hardlink), {}, {}};
      continue;
    }
    if (type == AE_IFLNK) {
      std::string target = archive_entry_symlink(e) ? archive_entry_symlink(e) : "";
      fs::path resolved = target.starts_with("/") ? fs::path(target) : fs::path(name).parent_path() / target;
      out.members[name] = Member{true, clean_name(resolved.generic_string()), {}, {}};
      continue;
    }
    if (type != AE_IFREG || skipped(name)) continue;  // directories and the rest: nothing to import

    if (kept_in_memory(name)) {
      if (archive_entry_size_is_set(e) && static_cast<std::uint64_t>(archive_entry_size(e)) > kSmallLimit)
        throw Error(what + ": " + name + " is too large", std::string(kCorruptHint));
      std::string bytes;
      la_ssize_t n;
      while ((n = archive_read_data(a.get(), buf.data(), buf.size())) > 0) {
        bytes.append(buf.data(), static_cast<std::size_t>(n));
        if (bytes.size() > kSmallLimit) throw Error(what + ": " + name + " is too large", std::string(kCorruptHint));
      }
      if (n < 0) throw fail("cannot read " + name);
      out.small[name] = std::move(bytes);
      continue;
    }

    store::BlobStore::Writer w = store.begin_write();
    Member m;
    la_ssize_t n;
    while ((n = archive_read_data(a.get(), buf.data(), buf.size())) > 0) {
      if (m.head.size() < 8) m.head.append(buf.data(), std::min<std::size_t>(8 - m.head.size(), n));
      w.write(buf.data(), static_cast<std::size_t>(n));
    }
    if (n < 0) throw fail("cannot read " + name);
    m.blob = w.commit();
    out.members[name] = std::move(m);
  }
  return out;
}

const Member* find_member(const ArchiveContents& c, std::string name) {
  for (int hops = 0; hops < 16; ++hops) {
    auto it = c.members.find(clean_name(name));
    if (it == c.members.end()) return nullptr;
    if (!it->second.is_link) return &it->second;
    name = it->second.target;
  }
  return nullptr;
}

class ArchiveImage final : public Image {
 public:
  ArchiveImage(std::string raw_manifest, std::string raw_config, std::string describe,
               std::map<Digest, fs::path> paths)
      : raw_manifest_(std::move(raw_manifest)),
        raw_config_(std::move(raw_config)),
        describe_(std::move(describe)),
        paths_(std::move(paths)) {}

  const std::string& raw_manifest() const override { return raw_manifest_; }
  const std::string& raw_config() const override { return raw_config_; }
  std::string describe() const override { return describe_; }
  fs::path blob_path(const Digest& digest) const override {
    auto it = paths_.find(digest);
    if (it == paths_.end()) throw Error(describe_ + ": blob " + digest.str() + " is not part of this image");
    return it->second;
  }

 private:
  std::string raw_manifest_, raw_config_, describe_;
  std::map<Digest, fs::path> paths_;
};

// The store path of the archive file `name`, checked against `expected` (digest and size) when given.
fs::path member_blob(const ArchiveContents& c, const store::BlobStore& store, const std::string& name,
                     const Descriptor* expected, const std::string& what) {
  const Member* m = find_member(c, name);
  if (!m) throw Error(what + ": " + name + " is missing from the archive", std::string(kCorruptHint));
  fs::path p = store.path_of(m->blob.digest);
  if (expected) {
    if (m->blob.size != expected->size)
      throw Error(what + ": " + name + " has " + std::to_string(m->blob.size) + " bytes, expected " +
                      std::to_string(expected->size),
                  std::string(kCorruptHint));
    Digest actual = expected->digest.algorithm() == "sha256" ? m->blob.digest
                                                             : detail::digest_file_like(expected->digest, p);
    if (actual != expected->digest)
      throw Error(what + ": " + name + " does not match its digest " + expected->digest.str(),
                  std::string(kCorruptHint));
  }
  return p;
}

std::string blob_name(const Digest& d) { return "blobs/" + d.algorithm() + "/" + d.hex(); }

std::unique_ptr<Image> from_oci_layout(const ArchiveContents& c, const store::BlobStore& store, std::string_view ref,
                                       const std::vector<std::string>& full_names, const Platform& platform,
                                       const std::string& what, const std::string& describe) {
  json header = json::parse(c.small.at("oci-layout"), nullptr, false);
  if (header.is_discarded() || !header.is_object() || header.value("imageLayoutVersion", "") != "1.0.0")
    throw Error(what + ": oci-layout is not {\"imageLayoutVersion\":\"1.0.0\"}", std::string(kCorruptHint));
  auto read_blob = [&](const Descriptor& d) -> std::string {
    return read_file(member_blob(c, store, blob_name(d.digest), &d, what), kSmallLimit);
  };
  detail::ResolvedImage r =
      detail::resolve_index(c.small.at("index.json"), ref, full_names, platform, what, kCorruptHint, read_blob);
  std::map<Digest, fs::path> paths;
  paths[r.manifest_descriptor.digest] = member_blob(c, store, blob_name(r.manifest_descriptor.digest), nullptr, what);
  paths[r.manifest.config.digest] = member_blob(c, store, blob_name(r.manifest.config.digest), nullptr, what);
  for (const auto& l : r.manifest.layers) paths[l.digest] = member_blob(c, store, blob_name(l.digest), &l, what);
  return std::make_unique<ArchiveImage>(std::move(r.raw_manifest), std::move(r.raw_config), describe,
                                        std::move(paths));
}

std::string sniff_layer_type(const Member& m, const std::string& name, const std::string& what) {
  const std::string& h = m.head;
  auto starts = [&](std::string_view magic) { return h.size() >= magic.size() && h.compare(0, magic.size(), magic) == 0; };
  if (starts("\x1f\x8b")) return std::string(media::kOciLayerGzip);
  if (starts("\x28\xb5\x2f\xfd")) return std::string(media::kOciLayerZstd);
  if (starts("BZh") || starts(std::string_view("\xfd" "7zXZ\0", 6)))
    throw Error(what + ": layer " + name + " is bzip2/xz-compressed, which OCI images cannot carry",
                "load it into docker and save it again, or use an uncompressed/gzip base");
  return std::string(media::kOciLayerTar);
}

// The manifest.json entry for `ref` (a RepoTag, compared after normalisation), or the only one when `ref` is empty.
const json* find_manifest_entry(const json& mj, std::string_view ref) {
  if (ref.empty()) return mj.size() == 1 ? &mj[0] : nullptr;
  std::string want = normalized(ref);
  for (const auto& e : mj) {
    if (!e.is_object() || !e.contains("RepoTags") || !e["RepoTags"].is_array()) continue;
    for (const auto& t : e["RepoTags"]) {
      if (!t.is_string()) continue;
      std::string tag = t.get<std::string>();
      if (tag == ref || (!want.empty() && normalized(tag) == want)) return &e;
    }
  }
  return nullptr;
}

std::unique_ptr<Image> from_manifest_json(const ArchiveContents& c, const store::BlobStore& store, const json& mj,
                                          std::string_view ref, const std::string& what,
                                          const std::string& describe) {
  const json* entry = find_manifest_entry(mj, ref);
  if (!entry) {
    if (mj.empty()) throw Error(what + " holds no images (manifest.json is empty)", std::string(kCorruptHint));
    if (ref.empty())
      throw Error(what + " holds " + std::to_string(mj.size()) + " images; name the one to use",
                  "it has: " + tag_list(mj));
    throw Error(what + " has no image named \"" + std::string(ref) + "\"", "it has: " + tag_list(mj));
  }
  if (!entry->is_object() || !(*entry)["Config"].is_string() || !entry->contains("Layers") ||
      !(*entry)["Layers"].is_array())
    throw Error(what + ": manifest.json entry has no Config or Layers", std::string(kCorruptHint));

  std::string config_name = (*entry)["Config"];
  const Member* cm = find_member(c, config_name);
  if (!cm) throw Error(what + ": config " + config_name + " is missing from the archive", std::string(kCorruptHint));
  fs::path config_path = store.path_of(cm->blob.digest);
  std::string raw_config = read_file(config_path, kSmallLimit);
  json cfg = json::parse(raw_config, nullptr, false);
  if (cfg.is_discarded() || !cfg.is_object())
    throw Error(what + ": config " + config_name + " is not valid JSON", std::string(kCorruptHint));
  const json* diff_ids = nullptr;
  if (cfg.contains("rootfs") && cfg["rootfs"].is_object() && cfg["rootfs"].contains("diff_ids") &&
      cfg["rootfs"]["diff_ids"].is_array())
    diff_ids = &cfg["rootfs"]["diff_ids"];
  if (!diff_ids) throw Error(what + ": config " + config_name + " has no rootfs.diff_ids", std::string(kCorruptHint));
  const json& layers = (*entry)["Layers"];
  if (diff_ids->size() != layers.size())
    throw Error(what + ": config lists " + std::to_string(diff_ids->size()) + " diff_ids but manifest.json " +
                    std::to_string(layers.size()) + " layers",
                std::string(kCorruptHint));

  Manifest m;
  m.media_type = media::kOciManifest;
  m.config.media_type = media::kOciConfig;
  m.config.digest = cm->blob.digest;
  m.config.size = cm->blob.size;
  std::map<Digest, fs::path> paths;
  paths[cm->blob.digest] = config_path;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (!layers[i].is_string()) throw Error(what + ": manifest.json Layers holds a non-string", std::string(kCorruptHint));
    std::string name = layers[i];
    const Member* lm = find_member(c, name);
    if (!lm) throw Error(what + ": layer " + name + " is missing from the archive", std::string(kCorruptHint));
    Descriptor d;
    d.media_type = sniff_layer_type(*lm, name, what);
    d.digest = lm->blob.digest;
    d.size = lm->blob.size;
    if (d.media_type == media::kOciLayerTar) {
      std::string diff_id = (*diff_ids)[i].is_string() ? (*diff_ids)[i].get<std::string>() : std::string();
      if (diff_id != d.digest.str())
        throw Error(what + ": layer " + name + " hashes to " + d.digest.str() + " but the config's diff_id is " +
                        diff_id,
                    std::string(kCorruptHint));
    }
    paths[d.digest] = store.path_of(d.digest);
    m.layers.push_back(std::move(d));
  }
  std::string raw_manifest = m.serialize();
  store::StoredBlob mb = store.put(raw_manifest);
  paths[mb.digest] = store.path_of(mb.digest);
  return std::make_unique<ArchiveImage>(std::move(raw_manifest), std::move(raw_config), describe, std::move(paths));
}

}  // namespace

DockerArchiveRef parse_docker_archive_ref(std::string_view ref_in) {
  const std::string ref(ref_in);
  auto bad = [&](const std::string& why) {
    return Error("invalid image reference \"" + ref + "\": " + why, "use NAME[:TAG], e.g. trainer:latest");
  };
  if (ref.empty()) throw bad("it is empty");
  if (ref.find('@') != std::string::npos) throw bad("a docker archive is tagged by name:tag, not by digest");
  std::string name = ref, tag = "latest";
  auto slash = ref.rfind('/');
  auto colon = ref.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    name = ref.substr(0, colon);
    tag = ref.substr(colon + 1);
  }
  static const RE2 tag_re("[A-Za-z0-9_][A-Za-z0-9._-]{0,127}", byte_regex_options());
  static const RE2 component_re("[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*", byte_regex_options());
  static const RE2 host_re("[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]+)?", byte_regex_options());
  if (!RE2::FullMatch(tag, tag_re)) throw bad("\"" + tag + "\" is not a valid tag");

  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    auto p = name.find('/', start);
    parts.push_back(name.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  std::string host = "docker.io";
  if (parts.size() > 1 && (parts[0].find_first_of(".:") != std::string::npos || parts[0] == "localhost")) {
    host = parts[0];
    parts.erase(parts.begin());
    if (!RE2::FullMatch(host, host_re)) throw bad("\"" + host + "\" is not a valid registry host");
    if (host == "index.docker.io") host = "docker.io";
  }
  for (const auto& p : parts)
    if (!RE2::FullMatch(p, component_re))
      throw bad("\"" + p + "\" is not a valid name component (lowercase letters, digits, . _ -)");
  if (host == "docker.io" && parts.size() == 1) parts.insert(parts.begin(), "library");
  std::string path;
  for (const auto& p : parts) path += (path.empty() ? "" : "/") + p;
  DockerArchiveRef r;
  r.full = host + "/" + path;
  if (r.full.size() > 255) throw bad("the name is longer than 255 characters");
  r.tag = tag;
  if (host == "docker.io")
    r.familiar = parts.size() == 2 && parts[0] == "library" ? parts[1] : path;
  else
    r.familiar = r.full;
  return r;
}

namespace {

// What an archive holds besides its layers' bytes.
struct ArchiveParts {
  std::string index;
  std::string manifest_json;
  std::map<std::string, Descriptor> layer_files;    // blob name → layer
  std::map<std::string, std::string> byte_blobs;  // blob name → bytes (the manifest, the config)
};

struct MismatchedLayer {
  Digest digest;
  Digest actual;  // what its bytes hashed to
};

// Writes the archive to `out`, each layer hashed as it is copied in; the first layer whose bytes do not match its
// digest stops the writing (the output is then not committed).
std::optional<MismatchedLayer> write_archive(const Image& image, OutputFile& out, const fs::path& file,
                                         const ArchiveParts& parts) {
  TarWriter tar(out.fd(), file);
  tar.add_dir("blobs/");
  tar.add_dir("blobs/sha256/");
  // Bytewise name order, like a tar of moby's export directory.
  std::vector<std::string> names;
  for (const auto& [n, _] : parts.layer_files) names.push_back(n);
  for (const auto& [n, _] : parts.byte_blobs)
    if (!parts.layer_files.count(n)) names.push_back(n);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    auto layer = parts.layer_files.find(n);
    if (layer == parts.layer_files.end()) {
      tar.add_bytes(n, parts.byte_blobs.at(n));
      continue;
    }
    const Descriptor& d = layer->second;
    Hasher hash;
    tar.add_file(n, image.blob_path(d.digest), d.size, image.describe() + ": layer blob " + d.digest.str(), hash);
    Digest actual = Digest::sha256_from_hex(hash.finish_hex());
    if (actual != d.digest) return MismatchedLayer{d.digest, actual};
  }
  tar.add_bytes("index.json", parts.index);
  tar.add_bytes("manifest.json", parts.manifest_json);
  tar.add_bytes("oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
  tar.close();
  return std::nullopt;
}

}  // namespace

void write_docker_archive(const Image& image, const fs::path& file, std::string_view repo_tag,
                          const std::vector<std::string>& extra_tags) {
  const DockerArchiveRef ref = parse_docker_archive_ref(repo_tag);
  const std::string& raw_manifest = image.raw_manifest();
  const std::string& raw_config = image.raw_config();
  const Manifest manifest = image.manifest();
  const Digest manifest_digest = sha256_of(raw_manifest);
  const std::string src = image.describe();
  if (manifest.config.digest.algorithm() != "sha256")
    throw Error(src + ": config digest " + manifest.config.digest.str() + " is not sha256",
                "docker load only understands sha256 image IDs");
  if (sha256_of(raw_config) != manifest.config.digest || raw_config.size() != manifest.config.size)
    throw Error(src + ": config bytes do not match the manifest's config descriptor", "the source image is corrupt");
  std::size_t diff_ids = image.config().diff_id_count().value_or(0);
  if (diff_ids != manifest.layers.size())
    throw Error(src + ": config lists " + std::to_string(diff_ids) + " diff_ids but the manifest has " +
                    std::to_string(manifest.layers.size()) + " layers",
                "docker load would reject this image");

  // Sources first (manifest.json names blobs by path), so nothing is created when the image is unusable.
  std::map<std::string, Descriptor> layer_files;  // blob name → layer
  json layer_names = json::array();
  for (const auto& l : manifest.layers) {
    if (l.digest.algorithm() != "sha256")
      throw Error(src + ": layer digest " + l.digest.str() + " is not sha256", "docker load only understands sha256");
    std::string name = blob_name(l.digest);
    layer_names.push_back(name);
    if (!layer_files.count(name)) layer_files[name] = l;
    image.blob_path(l.digest);  // fetched now: an unusable source fails before the output is created
  }
  std::map<std::string, std::string> byte_blobs = {{blob_name(manifest_digest), raw_manifest},
                                                   {blob_name(manifest.config.digest), raw_config}};

  std::vector<std::string> tags{ref.tag};
  for (const std::string& t : extra_tags)
    if (std::find(tags.begin(), tags.end(), t) == tags.end()) tags.push_back(t);
  json descs = json::array();
  json repo_tags = json::array();
  for (const std::string& tag : tags) {
    descs.push_back({{"mediaType", manifest.media_type},
                     {"digest", manifest_digest.str()},
                     {"size", raw_manifest.size()},
                     {"annotations",
                      {{std::string(kAnnotationContainerdName), ref.full + ":" + tag},
                       {std::string(kAnnotationRefName), tag}}}});
    repo_tags.push_back(ref.familiar + ":" + tag);
  }
  json index = {{"schemaVersion", 2}, {"mediaType", media::kOciIndex}, {"manifests", descs}};
  json manifest_json = json::array(
      {{{"Config", blob_name(manifest.config.digest)}, {"RepoTags", repo_tags}, {"Layers", layer_names}}});

  ArchiveParts parts{index.dump(), manifest_json.dump(), std::move(layer_files), std::move(byte_blobs)};
  for (bool retried = false;; retried = true) {
    OutputFile out(file);  // a FIFO or a device is written in place; a regular file by a rename when complete
    std::optional<MismatchedLayer> damaged = write_archive(image, out, file, parts);
    if (!damaged) {
      out.commit();
      return;
    }
    detail::recover_damaged_blob(image, damaged->digest, damaged->actual, retried, !out.in_place());
  }
}

std::unique_ptr<Image> open_docker_archive(const fs::path& file, std::string_view ref, const Platform& platform,
                                           const store::BlobStore& store) {
  const std::string what = "docker archive " + file.string();
  std::string describe = "docker-archive:" + file.string();
  if (!ref.empty()) describe += ":" + std::string(ref);
  ArchiveContents c = read_archive(file, store, what);

  std::vector<std::string> full_names;
  if (!ref.empty()) {
    full_names.push_back(std::string(ref));
    if (std::string n = normalized(ref); !n.empty()) full_names.push_back(n);
  }
  json mj;
  bool has_manifest_json = c.small.count("manifest.json") > 0;
  if (has_manifest_json) {
    mj = json::parse(c.small["manifest.json"], nullptr, false);
    if (mj.is_discarded() || !mj.is_array())
      throw Error(what + ": manifest.json is not a JSON list", std::string(kCorruptHint));
  }
  bool has_oci = c.small.count("index.json") && c.small.count("oci-layout");
  if (has_oci) {
    // Prefer the OCI layout; fall back to manifest.json only when the layout does not name the image.
    bool named = ref.empty();
    json ij = json::parse(c.small["index.json"], nullptr, false);
    if (!named && ij.is_object() && ij.contains("manifests") && ij["manifests"].is_array())
      for (const auto& d : ij["manifests"]) named = named || detail::descriptor_named(d, ref, full_names);
    bool in_manifest_json = !named && has_manifest_json && find_manifest_entry(mj, ref) != nullptr;
    if (!in_manifest_json) return from_oci_layout(c, store, ref, full_names, platform, what, describe);
  }
  if (!has_manifest_json)
    throw Error(what + " is not a docker archive (no manifest.json or OCI layout inside)", std::string(kCorruptHint));
  return from_manifest_json(c, store, mj, ref, what, describe);
}

namespace {

// docker load needs name:tag: a name without a tag gets ":latest".
void complete_location(ImageLocation& location) {
  if (location.ref.empty()) return;
  auto last_slash = location.ref.rfind('/');
  std::string_view name_part =
      std::string_view(location.ref).substr(last_slash == std::string::npos ? 0 : last_slash);
  if (name_part.find(':') == std::string_view::npos && name_part.find('@') == std::string_view::npos)
    location.ref += ":latest";
}

std::shared_ptr<const Image> open_location(const ImageLocation& location, const OpenContext& context) {
  std::error_code ec;
  if (!fs::exists(location.path, ec))
    throw Error("image " + location.str() + " does not exist", "check the path of the docker-archive file");
  return open_docker_archive(location.path, location.ref, context.platform, context.store);
}

void check_location(const ImageLocation& location) {
  check_output_parent(location.path, location.str());
  std::error_code ec;
  if (fs::is_directory(location.path, ec))
    throw Error("cannot write " + location.str() + ": " + location.path.string() + " is a directory",
                "a docker-archive is a single tar file");
}

WriteReport write_location(const Image& image, const ImageLocation& location, const WriteContext& context) {
  write_docker_archive(image, location.path, location.ref, context.extra_tags);
  return {};
}

// `docker save`'s format has no place for artifacts.
std::vector<image::AttachedDocument> read_nothing_attached(const ImageLocation&, const OpenContext&,
                                                          const image::Digest&, const std::vector<std::string>&) {
  return {};
}

}  // namespace

const Transport kDockerArchiveTransport{"docker-archive", "docker-archive:", /*local=*/true, complete_location,
                                        open_location, check_location, write_location, read_nothing_attached,
                                        /*holds_referrers=*/false};

}  // namespace trainpack::transports
