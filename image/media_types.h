#pragma once
// Media types of the OCI image spec and Docker schema2 (OCI image-spec media-types.md; Docker's manifest v2 schema 2),
// grouped by what they name, each group with its test.
#include <string_view>

namespace trainpack::image::media {

inline constexpr std::string_view kOciIndex = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view kDockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json";
inline bool is_index(std::string_view t) { return t == kOciIndex || t == kDockerManifestList; }

inline constexpr std::string_view kOciManifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view kDockerManifest = "application/vnd.docker.distribution.manifest.v2+json";
inline bool is_manifest(std::string_view t) { return t == kOciManifest || t == kDockerManifest; }

inline constexpr std::string_view kOciConfig = "application/vnd.oci.image.config.v1+json";
inline constexpr std::string_view kDockerConfig = "application/vnd.docker.container.image.v1+json";

inline constexpr std::string_view kOciLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip";
inline constexpr std::string_view kOciLayerTar = "application/vnd.oci.image.layer.v1.tar";
inline constexpr std::string_view kOciLayerZstd = "application/vnd.oci.image.layer.v1.tar+zstd";
inline constexpr std::string_view kDockerLayerGzip = "application/vnd.docker.image.rootfs.diff.tar.gzip";
inline constexpr std::string_view kDockerForeignLayerGzip = "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip";

inline constexpr std::string_view kOciLayoutHeader = "application/vnd.oci.layout.header.v1+json";

inline bool is_docker_family(std::string_view t) { return t.starts_with("application/vnd.docker."); }

}  // namespace trainpack::image::media
