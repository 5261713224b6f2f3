#pragma once
// Test helpers for image sources and sinks: small tars made with libarchive, gzip via zlib, an in-memory Image
// over a BlobStore, and running the external validators (skopeo, oci-image-tool, umoci).
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/image.h"
#include "image/media_types.h"
#include "store/blob_store.h"
#include "support/fs.h"
#include "tests/unit/memory_image.h"

namespace trainpack::test_support {
namespace fs = std::filesystem;
using nlohmann::json;

struct TarMember {
  std::string name;
  std::string data = {};
  std::string symlink = {};  // non-empty: a symlink to this target
  bool dir = false;
  std::string hardlink = {};  // non-empty: a hardlink to this earlier member
  unsigned mode = 0;     // permission bits (setuid and friends included); 0: the default for the type
};

// A deterministic uncompressed tar (mtime 0, uid/gid 0).
inline std::string make_tar(const std::vector<TarMember>& members) {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_set_bytes_in_last_block(a, 1);
  auto write_cb = [](archive*, void* client, const void* buf, size_t n) -> la_ssize_t {
    static_cast<std::string*>(client)->append(static_cast<const char*>(buf), n);
    return static_cast<la_ssize_t>(n);
  };
  if (archive_write_open(a, &out, nullptr, write_cb, nullptr) != ARCHIVE_OK) throw std::runtime_error("tar open");
  for (const auto& m : members) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, m.name.c_str());
    archive_entry_set_mtime(e, 0, 0);
    archive_entry_set_uid(e, 0);
    archive_entry_set_gid(e, 0);
    if (!m.hardlink.empty()) {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_perm(e, m.mode ? m.mode : 0644);
      archive_entry_set_hardlink(e, m.hardlink.c_str());
      archive_entry_set_size(e, 0);
    } else if (m.dir) {
      archive_entry_set_filetype(e, AE_IFDIR);
      archive_entry_set_perm(e, m.mode ? m.mode : 0755);
    } else if (!m.symlink.empty()) {
      archive_entry_set_filetype(e, AE_IFLNK);
      archive_entry_set_perm(e, 0777);
      archive_entry_set_symlink(e, m.symlink.c_str());
    } else {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_perm(e, m.mode ? m.mode : 0644);
      archive_entry_set_size(e, static_cast<la_int64_t>(m.data.size()));
    }
    if (archive_write_header(a, e) != ARCHIVE_OK) throw std::runtime_error("tar header");
    if (!m.dir && m.symlink.empty() && m.hardlink.empty() && !m.data.empty())
      archive_write_data(a, m.data.data(), m.data.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

// gzip without timestamp (zlib, windowBits 31).
inline std::string gzip(const std::string& in) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("deflateInit2");
  std::string out(deflateBound(&zs, in.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

struct BuiltLayer {
  std::string tar;   // uncompressed
  std::string blob;  // as stored (gzip or tar)
  image::Digest diff_id, digest;
};

struct BuiltImage {
  std::unique_ptr<MemoryImage> image;
  std::vector<BuiltLayer> layers;
  image::Digest config_digest;
};

// A linux image with one layer per member list.
inline BuiltImage make_image_of_layers(const fs::path& store_root, const std::string& arch,
                                       const std::vector<std::vector<TarMember>>& layer_members,
                                       bool gzip_layers = true, const std::string& name = "test-image") {
  store::BlobStore store(store_root);
  BuiltImage out;
  json diff_ids = json::array(), history = json::array();
  image::Manifest m;
  m.media_type = image::media::kOciManifest;
  for (const auto& members : layer_members) {
    BuiltLayer l;
    l.tar = make_tar(members);
    l.blob = gzip_layers ? gzip(l.tar) : l.tar;
    l.diff_id = image::sha256_of(l.tar);
    l.digest = store.put(l.blob).digest;
    diff_ids.push_back(l.diff_id.str());
    history.push_back({{"created_by", "test layer " + std::to_string(out.layers.size())}});
    image::Descriptor d;
    d.media_type = gzip_layers ? image::media::kOciLayerGzip : image::media::kOciLayerTar;
    d.digest = l.digest;
    d.size = l.blob.size();
    m.layers.push_back(d);
    out.layers.push_back(std::move(l));
  }
  json config = {{"architecture", arch},
                 {"os", "linux"},
                 {"config", {{"Cmd", {"/bin/sh"}}, {"Env", {"PATH=/usr/bin:/bin"}}}},
                 {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}},
                 {"history", history}};
  std::string raw_config = config.dump();
  out.config_digest = store.put(raw_config).digest;
  m.config.media_type = image::media::kOciConfig;
  m.config.digest = out.config_digest;
  m.config.size = raw_config.size();
  std::string raw_manifest = m.serialize();
  store.put(raw_manifest);
  out.image = std::make_unique<MemoryImage>(store_root, raw_manifest, raw_config, name);
  return out;
}

// `image` with its config's rootfs.diff_ids[layer] set to `diff_id`, the layer blobs unchanged (a corrupt config).
inline std::unique_ptr<MemoryImage> with_diff_id(const MemoryImage& image, std::size_t layer,
                                                 const std::string& diff_id, const std::string& name = "bad-diff-id") {
  json config = json::parse(image.raw_config());
  config["rootfs"]["diff_ids"][layer] = diff_id;
  std::string raw_config = config.dump();
  image::Manifest m = image.manifest();
  m.config.digest = image.store().put(raw_config).digest;
  m.config.size = raw_config.size();
  std::string raw_manifest = m.serialize();
  image.store().put(raw_manifest);
  return std::make_unique<MemoryImage>(image.store().root(), raw_manifest, raw_config, name);
}

// A small linux image: one layer per entry of `layer_files` (each a file "app/<name>" with given content).
inline BuiltImage make_image(const fs::path& store_root, const std::string& arch,
                             const std::vector<std::pair<std::string, std::string>>& layer_files, bool gzip_layers = true,
                             const std::string& name = "test-image") {
  std::vector<std::vector<TarMember>> layer_members;
  for (const auto& [file, content] : layer_files)
    layer_members.push_back({{"app/", "", "", true}, {"app/" + file, content, "", false}});
  return make_image_of_layers(store_root, arch, layer_members, gzip_layers, name);
}

// A command line run by /bin/sh (popen): its exit status and its stdout and stderr together.
struct ShellResult {
  int status = -1;
  std::string output;
};

inline ShellResult run_shell(const std::string& cmd) {
  ShellResult r;
  std::FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline bool have_tool(const std::string& tool) {
  return run_shell("command -v " + tool + " >/dev/null").status == 0;
}

inline std::string quote(const fs::path& p) {
  std::string s = "'";
  for (char c : p.string()) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return s + "'";
}

// Required external validators: a missing tool is a test failure, never a silent skip.
#define TRAINPACK_REQUIRE_TOOL(tool)                                                                   \
  ASSERT_TRUE(::trainpack::test_support::have_tool(tool))                                            \
      << "required test tool '" << tool << "' is not installed (the test setup installs skopeo, " \
      << "oci-image-tool and umoci; on Debian: apt-get install skopeo oci-image-tool umoci)"

// Names in `dir` other than those listed (to check that failures leave no staging files behind).
inline std::vector<std::string> dir_names(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trainpack::test_support
