#pragma once
// Unpacking an image into a root filesystem directory (for running it daemonless with runc).
//
// Every layer of the manifest is applied in order with libarchive (plain tar or any compression it reads):
// - OCI whiteouts: "<dir>/.wh.<name>" removes <dir>/<name> left by lower layers; "<dir>/.wh..wh..opq" empties <dir>
//   of lower-layer content (entries of the same layer are kept, whatever their order in the tar). Other ".wh..wh."
//   names (aufs metadata) are skipped. Whiteout files themselves never land in the rootfs.
// - Entries that would escape the root are refused with an Error: absolute names, ".." components, a parent that
//   is a symlink (libarchive's SECURE_NOABSOLUTEPATHS | SECURE_NODOTDOT | SECURE_SYMLINKS are set as well, and
//   hardlink targets are checked the same way).
// - A non-directory over a lower directory replaces the whole directory (as Docker does); a directory over a lower
//   directory merges.
// - Modes and times are kept; owners (and xattrs) when running as root. Character and block devices are skipped when
//   not root. Hardlinks are created as hardlinks.
// - While a layer is applied the process's working directory is the rootfs (libarchive's SECURE_* checks work on
//   relative names); it is restored afterwards. Do not run it concurrently with code that relies on the cwd.
// - A layer whose last file is not padded to 512 bytes (umoci writes such layers; Docker accepts them) is accepted.
// - Each layer's uncompressed tar is checked against the config's diff_id (layers/layer_tar_reader.h); a mismatch
//   is an Error once the layer has been read.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "image/image.h"

namespace trainpack::layers {

// Told before each layer is unpacked: its index (from 0), the number of layers, its blob's size.
using UnpackProgress = std::function<void(std::size_t index, std::size_t count, std::int64_t size)>;

// Unpacks `image` into `rootfs`, which must be an empty directory or not exist (it is created).
// Throws Error naming the image, the layer and the entry on failure; what was unpacked so far is left in place.
void unpack_image(const image::Image& image, const std::filesystem::path& rootfs,
                  const UnpackProgress& progress = {});

// Applies one layer blob on top of `rootfs` (the step unpack_image repeats), checking its uncompressed tar against
// `diff_id` (the config's; nullopt: no check) as it goes. `what` names the layer in errors.
void apply_layer(const std::filesystem::path& blob, const std::optional<image::Digest>& diff_id,
                 const std::filesystem::path& rootfs, std::string_view what);

// Unpacks one layer blob alone into the empty directory `dir`, its whiteouts in overlayfs's form (a 0/0 character
// device for ".wh.NAME", the xattr trusted.overlay.opaque="y" on the directory of ".wh..wh..opq"), so that the
// trees of an image's layers, stacked as overlayfs lower directories (the first layer lowest), are its root
// filesystem. `lowers` are the trees of the layers below, the nearest first: a directory the tar leaves out is made
// with their owner, mode and times, since the upper tree's directory is the one the stack shows. A tree thus
// depends on the layers below it (key it by ChainID). Needs root (mknod, trusted.* xattrs). Checks the tar against
// `diff_id` as apply_layer does.
void unpack_layer_tree(const std::filesystem::path& blob, const std::optional<image::Digest>& diff_id,
                       const std::filesystem::path& dir, const std::vector<std::filesystem::path>& lowers,
                       std::string_view what);

}  // namespace trainpack::layers
