#include "imagebuild/identity.h"

#include "trainpack_commit.h"

namespace trainpack::imagebuild {

std::string_view trainpack_commit() { return TRAINPACK_COMMIT; }

std::string build_identity() { return std::string(TRAINPACK_VERSION) + " " + TRAINPACK_COMMIT; }

}  // namespace trainpack::imagebuild
