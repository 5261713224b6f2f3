// OCI/Docker manifests, indexes and image configs as the pull path reads them (image/manifest, layers/appended_image).
// The input is an index or manifest, "%%", then an image config. The first part is read as an index (and its
// linux/amd64 entry picked, as RemoteImage::open does) and as a manifest; a manifest that parses is re-serialised
// and must parse back to the same bytes, and an image is appended onto it as a build does, which must give a
// manifest and config that parse, with the base's layers and as many diff_ids as layers.
#include <unistd.h>

#include "image/appended_image.h"
#include "image/image.h"
#include "store/blob_store.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/unit/memory_image.h"

namespace {

namespace fs = std::filesystem;
using trainpack::fuzz::require;
using namespace trainpack::image;
using namespace trainpack::store;

using trainpack::test_support::MemoryImage;

void read_index(std::string_view raw) {
  try {
    Index index = Index::parse(raw, "fuzz index");
    require(Index::parse(index.serialize(), "fuzz index").serialize() == index.serialize());
    select_platform(index, Platform::parse("linux/amd64"), "fuzz index");
  } catch (const trainpack::Error&) {
  }
}

// The store the appended image writes into: one directory per process, emptied after each input.
const fs::path& store_dir() {
  static const fs::path dir = fs::temp_directory_path() / ("trainpack-fuzz-manifest-" + std::to_string(::getpid()));
  return dir;
}

void append_onto(std::string_view raw_manifest, std::string_view raw_config) {
  auto base = std::make_shared<MemoryImage>(std::string(raw_manifest), std::string(raw_config), "fuzz image");
  Manifest manifest;
  try {
    manifest = base->manifest();
    require(Manifest::parse(manifest.serialize(), "again").serialize() == manifest.serialize());
    base->config();
  } catch (const trainpack::Error&) {
    return;
  }
  AppendSpec spec;
  spec.steps.push_back({"WORKDIR /usr/app", std::nullopt});
  spec.config = base->config();
  spec.config.set_working_dir("/usr/app");
  spec.created = rfc3339_utc(0);
  spec.manifest_annotations = nlohmann::json::object();
  try {
    AppendedImage appended(base, std::make_shared<BlobStore>(store_dir()), spec);
    Manifest out = appended.manifest();
    require(out.layers.size() == manifest.layers.size());
    require(appended.config().diff_id_count().value_or(0) == out.layers.size());
  } catch (const trainpack::Error&) {
  }
  std::error_code ec;
  fs::remove_all(store_dir(), ec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto parts = trainpack::fuzz::split_parts(trainpack::fuzz::as_text(data, size), 2);
  read_index(parts[0]);
  append_onto(parts[0], parts[1]);
  try {
    Platform::parse(parts[1]).str();
  } catch (const trainpack::Error&) {
  }
  return 0;
}
