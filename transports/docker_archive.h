#pragma once
// docker-archive: the `docker save` / `docker load` tar format (moby image/tarexport; `docker save` since 25.0 also writes an OCI layout), as an image sink and source.
//
// Written archives hold both layouts in one uncompressed, deterministic tar, like current moby `docker save`:
//   blobs/sha256/<hex>   manifest, config and the (compressed) layer blobs, each once
//   index.json           one descriptor annotated io.containerd.image.name=<full ref>, ...ref.name=<tag>
//   manifest.json        [{"Config":"blobs/sha256/<hex>","RepoTags":["repo:tag"],"Layers":["blobs/sha256/<hex>",...]}]
//   oci-layout
// The classic `docker load` reads manifest.json (auto-detecting layer compression); the containerd image store
// and our own reader use the OCI layout.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "image/image.h"
#include "store/blob_store.h"
#include "transports/transport.h"

namespace trainpack::transports {

// Writes `image` to `file` tagged `repo_tag` ("trainer:latest", "127.0.0.1:5000/x/y:tag"; ":latest" is implied
// when there is no tag). Layer bytes are streamed; the tar is built beside `file` and renamed over it at the end,
// so a failure leaves nothing and concurrent writers never mix: the last rename wins, as with `docker save -o`.
// Throws Error on an invalid reference or an unreadable/inconsistent image.
// `extra_tags` are more tags of the same name: more RepoTags, and one more index.json descriptor each, as
// `docker save NAME:A NAME:B` writes one image under two names.
void write_docker_archive(const image::Image& image, const std::filesystem::path& file, std::string_view repo_tag,
                          const std::vector<std::string>& extra_tags = {});

// Opens the image `ref` (a RepoTag such as "trainer:latest", a full reference, or a bare tag; empty = the only
// image) in a docker-archive written by `docker save` (legacy `<id>/layer.tar` form or the newer form with an
// OCI layout inside), by skopeo, or by write_docker_archive. The archive is read in one sequential pass and its
// files are imported (hashed while copying) into `store`; blob_path() returns store paths. The OCI layout inside
// is preferred; otherwise an OCI manifest is synthesised from manifest.json, each layer's compression detected
// (plain tar: digest = diff_id; gzip; zstd). Throws Error naming the archive and what is wrong.
std::unique_ptr<image::Image> open_docker_archive(const std::filesystem::path& file, std::string_view ref,
                                           const image::Platform& platform, const store::BlobStore& store);

// The reference parts used for RepoTags and annotations: "trainer" → {"trainer", "docker.io/library/trainer",
// "latest"}. Throws Error when `ref` is not a valid name[:tag] (digests are not accepted).
struct DockerArchiveRef {
  std::string familiar;  // "trainer", "127.0.0.1:5000/x/y" (docker.io/library/ stripped, as RepoTags show it)
  std::string full;      // "docker.io/library/trainer", "127.0.0.1:5000/x/y"
  std::string tag;       // "latest"
};
DockerArchiveRef parse_docker_archive_ref(std::string_view ref);

// The table row: locations "docker-archive:FILE[:NAME:TAG]".
extern const Transport kDockerArchiveTransport;

}  // namespace trainpack::transports
