#pragma once
// Where a build's image goes (BuildRequest::outputs), as one step of the build: each registry output's push begins
// with the build (registry/push_ahead.h) and takes every layer as it is made; once the image is assembled it is
// written to every output in order, with its SBOM and provenance where the output can hold them
// (transports/transport.h), and what was pushed, attached or not attached goes into the build's result.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "imagebuild/build.h"
#include "imagebuild/progress.h"
#include "image/image.h"
#include "layers/layer_writer.h"
#include "registry/blob_locations.h"
#include "registry/push_ahead.h"
#include "store/blob_store.h"

namespace trainpack::imagebuild {

class Outputs {
 public:
  // `blobs` holds the image's new blobs; `locations` says where earlier pushes put them (mount sources). Both, the
  // request, `progress` and `result` outlive this.
  Outputs(const BuildRequest& request, const store::BlobStore& blobs, const registry::BlobLocations& locations,
          Progress& progress, BuildResult& result);

  // Each registry output's push starts now: its token, its tag, upload sessions (not for a dry run).
  void begin_pushes();
  // A layer just made goes to the pushes begun.
  void offer(const layers::LayerBlob& blob);
  // Whether there is a registry output and each has the blob (a dry run's plan; a HEAD with pull access).
  bool registries_have(const image::Digest& digest);
  // Writes `image` to every output in order, `referrers` beside it where an output holds them.
  void write(const image::Image& image, const std::vector<std::shared_ptr<const image::Image>>& referrers);
  // Whether some output will hold the SBOM and provenance beside the image.
  bool take_attachments() const;

 private:
  void write_one(const image::Image& image, const transports::ImageLocation& out,
                 const std::vector<std::shared_ptr<const image::Image>>& referrers);
  void record_push(const registry::PushResult& pushed);
  void record_attached(const transports::ImageLocation& out,
                       const std::vector<std::shared_ptr<const image::Image>>& referrers);
  void record_not_attached(const transports::ImageLocation& out);

  const BuildRequest& req_;
  const store::BlobStore& blobs_;
  const registry::BlobLocations& locations_;
  Progress& progress_;
  BuildResult& result_;
  // Pushes begun with the build, by output (ImageLocation::str()).
  std::map<std::string, std::unique_ptr<registry::PushAhead>> ahead_;
};

}  // namespace trainpack::imagebuild
