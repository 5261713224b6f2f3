#pragma once
// Image references in Docker's grammar and normalisation (distribution/reference: reference.go, normalize.go):
//   "ubuntu"                          → docker.io/library/ubuntu:latest (API host registry-1.docker.io)
//   "127.0.0.1:5000/base/python:3.11" → registry 127.0.0.1:5000, repository base/python, tag 3.11
//   "us-docker.pkg.dev/p/r/img@sha256:…" → digest reference (a digest wins over a tag when both are given)
#include <string>
#include <string_view>

namespace trainpack::registry {

struct Reference {
  std::string registry;    // as written, normalised: "docker.io" (also for index.docker.io), "127.0.0.1:5000"
  std::string repository;  // "library/ubuntu", "base/python"
  std::string tag;         // empty only when a digest is given
  std::string digest;      // "sha256:<hex>" or empty

  // Throws Error with a one-line cause and a hint for anything Docker would reject.
  static Reference parse(std::string_view text);

  std::string api_host() const;    // "registry-1.docker.io" for docker.io, else registry
  std::string identifier() const;  // digest if set, else tag
  std::string name() const;        // "registry/repository"
  std::string str() const;         // "registry/repository:tag" or "registry/repository@digest"
  std::string with_digest(std::string_view digest) const;  // "registry/repository@digest"
  bool is_docker_hub() const { return registry == "docker.io"; }
  // *.gcr.io, gcr.io, *-docker.pkg.dev, docker.*.rep.pkg.dev: Google Container/Artifact Registry.
  bool is_google() const;
};

// Whether `tag` is a tag of the distribution spec's grammar ([a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}).
bool is_valid_tag(std::string_view tag);

// Whether the name begins with its registry ("host.domain/…", "host:port/…", "localhost/…"), by Docker's rule for
// splitting one off; "python:3.11" and "team/app" do not (they are Docker Hub's).
bool starts_with_registry(std::string_view name);

// True when `text` names a registry image rather than a local location ("oci:…", "docker-archive:…").
bool is_registry_reference(std::string_view text);

}  // namespace trainpack::registry
