#pragma once
// Chosen parts of an image's merged root filesystem copied into a host directory, without privileges and without
// running anything: the merged view decides what exists (whiteouts honoured) and each file's bytes come from the
// topmost layer that provides it. What lands in the destination is safe to keep on the host:
//   - symlinks stay symlinks; a target that is absolute or climbs with ".." is rewritten as a relative path that
//     reaches the same place inside the destination (the parent resolved as the kernel would inside the image, so
//     nothing in the copy points at the host);
//   - hardlinks become copies of the file they link to;
//   - modes keep the permission bits only (no setuid, setgid or sticky bit), directories stay writable by us;
//   - nothing is written through a symlink or outside the destination: names with ".." are refused, parents are
//     created as real directories, files are created with O_EXCL | O_NOFOLLOW;
//   - devices, FIFOs and sockets are left out.
// Each copy() reads every layer that provides a pending file once, lowest first.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "layers/scanned_image.h"

namespace trainpack::layers {

class ImageExtraction {
 public:
  // Extra regular files a caller would like while their layer is read anyway (e.g. every shared library in the
  // search path, so that a later pass is rarely needed): path in the image, size in bytes.
  using Opportunistic = std::function<bool(std::string_view path, std::uint64_t size)>;

  // `destination` is created when missing and should be empty and private to the caller.
  ImageExtraction(const ScannedImage& image, std::filesystem::path destination);

  // An image path to copy: every symlink on the way to it (its own, and directory components such as /lib ->
  // usr/lib), then what it resolves to: a file, or a directory with all under it except where `skip_under`
  // (given a path below the directory) says so. A symlink inside a copied directory that resolves to a regular
  // file brings that file too. A missing path adds nothing; returns whether it exists.
  bool add(std::string_view path, const std::function<bool(std::string_view)>& skip_under = {});

  // Copies what was added and not copied yet. `also` may pick more regular files from the layers being read.
  // Throws Error when a layer cannot be read or an entry cannot be written safely.
  void copy(const Opportunistic& also = {});

  // Whether the image path (exactly, no resolution) has been written into the destination.
  bool has(std::string_view path) const { return written_.count(std::string(path)) > 0; }
  // Image paths copied because `also` picked them, not because they were added.
  const std::set<std::string>& opportunistic() const { return opportunistic_; }
  // Removes an opportunistic copy (it turned out not to be needed).
  void drop_opportunistic(const std::string& path);
  const std::filesystem::path& destination() const { return destination_; }

 private:
  void add_entry(const std::string& path);
  void add_directory(const std::string& dir, const std::function<bool(std::string_view)>& skip_under);
  void copy_layer(std::size_t layer, const std::set<std::string>& files, const Opportunistic& also);
  bool names_file(const std::string& link) const;
  void write_symlink(const std::string& path, const std::string& target);
  std::string relative_target(const std::string& link, const std::string& target) const;
  std::filesystem::path host_parent(const std::string& path);

  const ScannedImage& image_;
  std::filesystem::path destination_;
  std::set<std::string> pending_files_;                 // regular files and hardlinks to copy
  std::map<std::string, std::string> pending_symlinks_;  // path -> target as the image has it
  std::set<std::string> written_;
  std::set<std::string> opportunistic_;
};

}  // namespace trainpack::layers
