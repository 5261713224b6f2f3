#pragma once
// Files of a build context that likely hold credentials: gcloud's Dockerfile copies the whole package path
// (`COPY [".", "."]` when the script sits at its root), so a key that a CI step wrote into the checkout ends up in
// the image. The check is by file name first and reads only the files whose name makes them candidates, at most
// kMaxRead bytes each: a context of datasets is listed, not read. Each finding names the file and the kind of
// credential, never its contents.
//
// Kinds, by the formats their tools write:
//  - Google service-account keys and authorized-user (refresh token) JSON, as gcloud and the IAM API write them;
//    `gha-creds-*.json`, which google-github-actions/auth writes into the workspace;
//  - PEM private keys ("-----BEGIN ... PRIVATE KEY-----", RFC 7468; OpenSSH's own armour too) in *.pem, *.key,
//    *.p8, *.pk8 and id_* files;
//  - docker's config.json with `auths` holding `auth` or `identitytoken` values;
//  - .netrc with a password, .git-credentials (git-credential-store's URLs with passwords);
//  - .env files (also NAME.env and .env.NAME; not *.example, *.sample, *.template) with a non-empty value for a
//    variable named like a secret (*TOKEN, *SECRET*, *PASSWORD*, *PASSWD*, *_KEY, *CREDENTIALS);
//  - AWS shared credentials (`aws_secret_access_key` in a file named credentials, or any file under .aws/);
//  - pip's requirement and configuration files naming an index URL with a password (userinfo, RFC 3986 §3.2.1).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "layers/file_entry.h"

namespace trainpack::secrets {

// Files larger than this are not read (credential files are a few KB).
constexpr std::uint64_t kMaxRead = 1u << 20;

struct Finding {
  std::string context_path;  // relative to the build context, as .dockerignore names it
  std::string image_path;    // where the image holds it: "usr/app/.gcp-creds.json"
  std::string kind;          // "a Google service-account key"
};

// Whether a file's name makes it a candidate (only candidates are read). `path` is slash-separated; only its last
// components are looked at.
bool may_hold_credentials(std::string_view path);

// The kind of credential a candidate file's bytes likely are ("a Google service-account key"), or "" for none.
std::string credential_kind(std::string_view path, std::string_view bytes);

// The files among `entries` (one COPY's) that likely hold credentials, in entry order: candidates of at most
// kMaxRead bytes are read (from layers::FileEntry::source, or its inline bytes); context paths are made relative
// to `context_dir`. COPY copies a symlink as a link, so a link named like a candidate is judged by the bytes of the
// regular file it leads to among `entries` (resolved as the kernel would inside the image: absolute targets from the
// image root, linked directories followed): the image holds those bytes under the link's name. A link whose target
// the image does not hold is no finding. A link has no host path: its context path is its image path relative to
// `context_in_image`, the image directory the context's root is copied to (gcloud's Dockerfile copies each source
// to the same path under its WORKDIR, "usr/app").
std::vector<Finding> find_credentials(const layers::FileEntries& entries, const std::filesystem::path& context_dir,
                                      std::string_view context_in_image);

}  // namespace trainpack::secrets
