// Docker config.json / podman auth.json credentials (registry/credentials). The input is "REGISTRY[/REPOSITORY]"
// on its first line, then the JSON; the JSON is read both as a file (docker's and podman's providers) and as
// DOCKER_AUTH_CONFIG. PATH is emptied first, so a credsStore or credHelpers entry fails to find its program
// instead of running one.
#include <cstdlib>

#include "registry/credentials.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using trainpack::registry::Credential;

void look_up(trainpack::registry::CredentialProvider& provider, const std::string& registry,
             const std::string& repository) {
  try {
    if (std::optional<Credential> found = provider.find(registry, repository)) found->describe();
  } catch (const trainpack::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("PATH", "/nonexistent-trainpack-fuzz", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static trainpack::fuzz::MemoryFile file;
  std::string_view text = trainpack::fuzz::as_text(data, size);
  std::size_t nl = text.find('\n');
  std::string_view target = text.substr(0, nl);
  std::string_view json = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  std::size_t slash = target.find('/');
  std::string registry(target.substr(0, slash));
  std::string repository(slash == std::string_view::npos ? std::string_view() : target.substr(slash + 1));

  std::filesystem::path path = file.write(json);
  trainpack::registry::DockerConfigProvider docker_file(path);
  look_up(docker_file, registry, repository);
  trainpack::registry::DockerConfigProvider docker_env("", std::string(json));
  look_up(docker_env, registry, repository);
  trainpack::registry::PodmanAuthProvider podman({path});
  look_up(podman, registry, repository);

  trainpack::registry::convert_to_hostname(target);
  try {
    auto [user, password] = trainpack::registry::decode_docker_auth(target, "fuzz");
    trainpack::fuzz::require(!user.empty());
  } catch (const trainpack::Error&) {
  }
  return 0;
}
