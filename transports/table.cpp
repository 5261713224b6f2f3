#include "transports/transport.h"

#include "support/error.h"
#include "transports/docker_archive.h"
#include "transports/oci_layout.h"
#include "transports/registry.h"

namespace trainpack::transports {

const std::vector<const Transport*>& transport_table() {
  static const std::vector<const Transport*> table = {&kOciLayoutTransport, &kDockerArchiveTransport,
                                                      &kRegistryTransport};
  return table;
}

const Transport& transport_of(const ImageLocation& location) {
  for (const Transport* t : transport_table())
    if (t->name == location.transport) return *t;
  throw Error("internal: unknown image transport \"" + location.transport + "\"");
}

std::shared_ptr<const image::Image> open_image(const ImageLocation& location, const OpenContext& context) {
  return transport_of(location).open(location, context);
}

void check_destination(const ImageLocation& location) { transport_of(location).check_destination(location); }

WriteReport write_image(const image::Image& image, const ImageLocation& location, const WriteContext& context) {
  return transport_of(location).write(image, location, context);
}

std::vector<image::AttachedDocument> read_attached(const ImageLocation& location, const OpenContext& context,
                                                  const image::Digest& subject, const std::vector<std::string>& types) {
  return transport_of(location).read_attached(location, context, subject, types);
}

}  // namespace trainpack::transports
