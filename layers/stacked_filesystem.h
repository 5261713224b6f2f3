#pragma once
// A base image's filesystem with this build's own layers on top, as the next RUN step would see it: the listing
// is the base's index with each layer applied (whiteouts honoured); a file's bytes come from the topmost layer that
// wrote it (host file, inline bytes or wheel member) or, when no layer of this build did, from the base.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "layers/file_entry.h"
#include "layers/image_filesystem.h"
#include "layers/rootfs_index.h"

namespace trainpack::layers {

class StackedFilesystem : public ImageFilesystem {
 public:
  // `base` and the entries of `layers` must outlive this view.
  StackedFilesystem(const ImageFilesystem& base, RootfsIndex base_index, const std::vector<const FileEntries*>& layers);

  const PathInfo* find(std::string_view path) const override { return index_.find(path); }
  std::string resolve(std::string_view path) const override { return index_.resolve(path); }
  std::vector<std::string> children(std::string_view dir) const override { return index_.children(dir); }
  std::optional<std::string> read(std::string_view path, std::size_t max_bytes) const override;

  const RootfsIndex& index() const { return index_; }
  // The entry this build's layers wrote last at exactly `path`, nullptr when the base provides it (or nobody).
  const FileEntry* own_entry(std::string_view path) const;

 private:
  const ImageFilesystem& base_;
  RootfsIndex index_;
  std::map<std::string, const FileEntry*, std::less<>> own_;
};

}  // namespace trainpack::layers
