#pragma once
// Which layer entries are unsafe to pass on: those Docker's extractor refuses (moby pkg/archive: UnpackLayer's
// "breakout" check on names, createTarFile's checks on hardlink and symlink targets), absolute names, which only a
// crafted tar holds, and whiteouts that hide no file of their directory (".wh.", ".wh..", ".wh...": Docker would
// remove the directory or its parent) or have entries under them (OCI image-spec layer.md, "Whiteouts"). A write
// through a symlink needs no rule of its own: it is resolved inside the root (Docker extracts in a chroot), and a
// symlink whose target leaves the root is refused where it is created.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "image/image.h"
#include "store/cache_dir.h"

namespace trainpack::layers {

enum class EntryKind { kOther, kHardlink, kSymlink };

// Why the entry `name` (as the tar holds it) is unsafe, or nullopt when it is safe. `link_target` is the hardlink's
// or symlink's target as the tar holds it.
std::optional<std::string> unsafe_entry_reason(std::string_view name, EntryKind kind, std::string_view link_target);

}  // namespace trainpack::layers

namespace trainpack::layers {

// Reads each of `layers` of `image` (downloading those that are remote) and throws Error naming the layer and the
// first unsafe entry, or a layer whose uncompressed tar is not the config's diff_id for it. A layer found safe is
// remembered in `marks` under its hex digest with the diff_id it hashed to, so it is read once.
void check_layers_are_safe(const image::Image& image, const std::vector<image::Digest>& layers,
                           const store::CacheArea& marks);

// Remembers a layer that was read whole without an unsafe entry (list_layer_blob refuses them) and whose
// uncompressed tar hashed to `diff_id`, so that check_layers_are_safe does not read it again: a base scan marks
// every layer it lists.
void mark_layer_safe(const store::CacheArea& marks, const image::Digest& layer, const image::Digest& diff_id);

}  // namespace trainpack::layers
