#pragma once
// OCI image layouts (OCI image-spec image-layout.md) as an image source and an image sink.
//
//   <dir>/oci-layout    {"imageLayoutVersion":"1.0.0"}
//   <dir>/index.json    an image index; tags are the descriptors' org.opencontainers.image.ref.name annotation
//   <dir>/blobs/<alg>/<hex>
//
// The source verifies the manifest and config bytes when it opens the layout and each layer blob (full digest)
// the first time blob_path() hands it out. The sink writes blobs first and index.json last, atomically; a new
// layout is built in a staging sibling directory and renamed into place, so a failure leaves nothing.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/image.h"
#include "transports/transport.h"

namespace trainpack::transports {

inline constexpr std::string_view kAnnotationRefName = "org.opencontainers.image.ref.name";
inline constexpr std::string_view kAnnotationContainerdName = "io.containerd.image.name";

// Opens the image tagged `tag` (ref.name annotation) in the layout at `dir`; an empty tag means the only image.
// Nested indexes are followed, picking `platform`. Throws Error naming the layout and what is wrong.
std::unique_ptr<image::Image> open_oci_layout(const std::filesystem::path& dir, std::string_view tag,
                                       const image::Platform& platform);

// Writes `image` into the layout at `dir` under `tag` (no ref.name annotation when empty) and each of `extra_tags`
// (one index.json descriptor per tag, as skopeo copies one image to several tags), adding `extra_annotations` (an
// object, or null) to its index.json descriptors. A missing `dir` is created; an existing layout gets the image
// added and any descriptor with the same ref.name replaced; an existing empty directory is replaced by the new
// layout; anything else is an Error.
void write_oci_layout(const image::Image& image, const std::filesystem::path& dir, std::string_view tag,
                      const nlohmann::json& extra_annotations = nullptr,
                      const std::vector<std::string>& extra_tags = {});

// Throws Error unless `tag` fits the image spec's grammar of org.opencontainers.image.ref.name.
void check_oci_layout_tag(std::string_view tag);

// Throws the Error write_oci_layout would raise for `dir` as a destination (exists but is not a directory, a non-empty
// directory that is no layout, a corrupt layout, a new one whose parent directory is missing or not writable), so a
// build can refuse a bad output before doing any work.
void check_oci_layout_destination(const std::filesystem::path& dir);

namespace detail {

// Shared by the OCI layout and docker-archive sources: what an index.json resolves to.
struct ResolvedImage {
  image::Descriptor manifest_descriptor;  // the manifest finally selected (after nested indexes)
  std::string raw_manifest;
  std::string raw_config;
  image::Manifest manifest;
  std::string tag;  // the ref.name of the top-level descriptor, if any
};

// Reads a blob's exact bytes, verifying size and digest against the descriptor (throws Error otherwise).
using SmallBlobReader = std::function<std::string(const image::Descriptor&)>;

// Picks the descriptor matching `tag` in `index_json` (a ref.name, or an io.containerd.image.name equal to one of
// `full_names`), follows nested indexes selecting `platform`, reads the manifest and config via `read_blob`.
// `what` names the source in errors ("OCI layout /x"); `hint` is the hint for corrupt input.
ResolvedImage resolve_index(std::string_view index_json, std::string_view tag,
                            const std::vector<std::string>& full_names, const image::Platform& platform,
                            std::string_view what, std::string_view hint, const SmallBlobReader& read_blob);

// Digest of bytes / of a file, for the algorithm of `like` (sha256 or sha512).
image::Digest digest_like(const image::Digest& like, std::string_view bytes);
image::Digest digest_file_like(const image::Digest& like, const std::filesystem::path& path);

// A sink writes each blob it copies hashing its bytes on the way (one read). When the bytes of `digest` hashed to
// `actual` instead, the source drops its damaged copy (image::Image::refetch_blob) and the sink writes the blob
// again, once: this returns. It throws DamagedBlob when the source cannot give the blob again, an Error when it gave
// it damaged twice (`retried`) or the output cannot be written again (not `rewritable`: a FIFO's reader has had
// part of it).
void recover_damaged_blob(const image::Image& image, const image::Digest& digest, const image::Digest& actual,
                          bool retried, bool rewritable);

// Whether an index.json descriptor (as JSON) is named by `tag`: its ref.name equals `tag`, or its
// io.containerd.image.name equals `tag` or one of `full_names`.
bool descriptor_named(const nlohmann::json& descriptor, std::string_view tag,
                      const std::vector<std::string>& full_names);

// The names an index.json offers, for error messages ("a, b" or "none").
std::string list_tags(const nlohmann::json& index);

}  // namespace detail

// The table row: locations "oci:DIR[:TAG]".
extern const Transport kOciLayoutTransport;

}  // namespace trainpack::transports
