#pragma once
// An image held in memory, for the unit tests and the fuzz targets: its manifest and config as given, its blobs in a
// BlobStore (blob_path() does not check existence, so tests can remove blobs), or none at all (a fuzz target's).
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "image/image.h"
#include "store/blob_store.h"
#include "support/error.h"

namespace trainpack::test_support {

class MemoryImage : public image::Image {
 public:
  MemoryImage(std::filesystem::path store_root, std::string manifest, std::string config, std::string name)
      : store_(std::in_place, std::move(store_root)), manifest_(std::move(manifest)), config_(std::move(config)),
        name_(std::move(name)) {}
  // Without blobs: blob_path() throws Error.
  MemoryImage(std::string manifest, std::string config, std::string name)
      : manifest_(std::move(manifest)), config_(std::move(config)), name_(std::move(name)) {}

  const std::string& raw_manifest() const override { return manifest_; }
  const std::string& raw_config() const override { return config_; }
  std::filesystem::path blob_path(const image::Digest& d) const override {
    if (!store_) throw Error("no blobs in " + name_);
    return store_->path_of(d);
  }
  std::string describe() const override { return name_; }
  const store::BlobStore& store() const { return store_.value(); }

 private:
  std::optional<store::BlobStore> store_;
  std::string manifest_, config_, name_;
};

}  // namespace trainpack::test_support
