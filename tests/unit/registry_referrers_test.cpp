// Referrers (registry/referrers.h) against an in-memory registry: with the referrers API the registry lists them and
// no fallback tag is written; without it the sha256-<hex> index lists each once, and what is listed is not pushed
// again. The fallback against a real docker-registry is in tests/integration/registry_build_test.cpp; no registry
// packaged for Debian has the API, so that half is shown here.
#include "registry/referrers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "image/digest.h"
#include "image/media_types.h"
#include "layers/artifact_image.h"
#include "support/fs.h"

using namespace trainpack::registry;
using nlohmann::json;
using trainpack::net::HttpRequest;
using trainpack::net::HttpResponse;

namespace {

// Blobs and manifests of one repository "r"; the referrers API when `api` is set.
struct FakeRegistry {
  bool api = false;
  std::map<std::string, std::string> blobs, manifests;  // digest → bytes; tag or digest → bytes
  std::vector<std::string> requests;                    // "METHOD path"
  std::mutex mutex;                                     // the pusher's workers send blobs from several threads

  HttpResponse operator()(const HttpRequest& r) {
    std::lock_guard lock(mutex);
    std::string path = r.url.substr(std::string("http://reg.test").size());
    requests.push_back(r.method + " " + path.substr(0, path.find('?')));
    std::string body = r.body_file ? trainpack::read_file(*r.body_file) : r.body;
    if (r.method == "HEAD" && path.starts_with("/v2/r/blobs/"))
      return {blobs.count(path.substr(12)) ? 200L : 404L, r.url, {}, "", 11};
    if (r.method == "GET" && path.starts_with("/v2/r/blobs/") && blobs.count(path.substr(12)))
      return {200, r.url, {}, blobs[path.substr(12)], 11};
    if (r.method == "POST" && path.starts_with("/v2/r/blobs/uploads/"))
      return {202, r.url, {{"location", "/v2/r/blobs/uploads/session"}}, "", 11};
    if (r.method == "PUT" && path.starts_with("/v2/r/blobs/uploads/session?digest=")) {
      std::string digest = path.substr(path.find("digest=") + 7);
      if (auto colon = digest.find("%3A"); colon != std::string::npos) digest.replace(colon, 3, ":");
      blobs[digest] = body;
      return {201, r.url, {}, "", 11};
    }
    if (path.starts_with("/v2/r/manifests/")) {
      std::string ref = path.substr(16);
      if (r.method == "PUT") {
        manifests[ref] = body;
        manifests[trainpack::image::sha256_of(body).str()] = body;
        return {201, r.url, {{"docker-content-digest", trainpack::image::sha256_of(body).str()}}, "", 11};
      }
      auto it = manifests.find(ref);
      if (it == manifests.end()) return {404, r.url, {}, R"({"errors":[{"code":"MANIFEST_UNKNOWN"}]})", 11};
      return {200, r.url, {{"content-type", json::parse(it->second).value("mediaType", "")}}, it->second, 11};
    }
    if (r.method == "GET" && path.starts_with("/v2/r/referrers/") && api) {
      json index{{"schemaVersion", 2}, {"mediaType", trainpack::image::media::kOciIndex}, {"manifests", json::array()}};
      for (const auto& [ref, bytes] : manifests) {
        json m = json::parse(bytes);
        if (ref.starts_with("sha256:") && m.contains("subject") && m["subject"]["digest"] == path.substr(16))
          index["manifests"].push_back({{"mediaType", m["mediaType"]}, {"digest", ref}, {"size", bytes.size()},
                                        {"artifactType", m["artifactType"]}});
      }
      return {200, r.url, {{"content-type", std::string(trainpack::image::media::kOciIndex)}}, index.dump(), 11};
    }
    return {404, r.url, {}, R"({"errors":[{"code":"NOT_FOUND"}]})", 11};
  }

  int count(const std::string& request) const {
    return static_cast<int>(std::count(requests.begin(), requests.end(), request));
  }
};

struct Referred {
  trainpack::ScopedDir dir{trainpack::make_temp_dir({}, "referrers-")};
  trainpack::store::BlobStore store{dir.path()};
  trainpack::image::Descriptor subject{std::string(trainpack::image::media::kOciManifest),
                                       trainpack::image::sha256_of("the image"), 9, {}, {}, {}};
  std::vector<std::shared_ptr<const trainpack::image::Image>> referrers{
      trainpack::layers::make_referrer(store, subject, "application/spdx+json", "application/spdx+json", "{\"s\":1}",
                                       {}, "the SBOM"),
      trainpack::layers::make_referrer(store, subject, "application/vnd.in-toto+json",
                                       "application/vnd.in-toto+json", "{\"p\":1}", {}, "the provenance")};
};

}  // namespace

TEST(Referrers, WithoutTheApiTheFallbackTagListsEachOnceAndAListedOneIsNotPushedAgain) {
  FakeRegistry fake;
  Keychain keychain({});
  RegistryClient client(std::ref(fake), keychain, "reg.test", "http");
  Referred r;
  EXPECT_EQ(push_referrers(client, "r", r.referrers, r.subject.digest, {}), 2u);
  const std::string tag = "sha256-" + r.subject.digest.hex();
  EXPECT_EQ(referrers_tag(r.subject.digest), tag);
  ASSERT_TRUE(fake.manifests.count(tag));
  json index = json::parse(fake.manifests[tag]);
  ASSERT_EQ(index.at("manifests").size(), 2u);
  EXPECT_EQ(index["manifests"][0].at("artifactType"), "application/spdx+json");
  EXPECT_EQ(index["manifests"][1].at("digest"), r.referrers[1]->manifest_digest().str());
  EXPECT_EQ(fake.count("PUT /v2/r/manifests/" + tag), 1) << "one PUT for both";

  fake.requests.clear();
  EXPECT_EQ(push_referrers(client, "r", r.referrers, r.subject.digest, {}), 0u);
  for (const std::string& request : fake.requests) EXPECT_FALSE(request.starts_with("PUT")) << request;

  std::vector<trainpack::image::Descriptor> listed = list_referrers(client, "r", r.subject.digest);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(read_attached(client, "r", r.subject.digest, {"application/vnd.in-toto+json"}), "{\"p\":1}");
  EXPECT_EQ(read_attached(client, "r", r.subject.digest, {"application/vnd.cyclonedx+json"}), std::nullopt);
}

TEST(Referrers, ARegistryWithTheApiListsThemItselfAndGetsNoFallbackTag) {
  FakeRegistry fake;
  fake.api = true;
  Keychain keychain({});
  RegistryClient client(std::ref(fake), keychain, "reg.test", "http");
  Referred r;
  EXPECT_EQ(push_referrers(client, "r", r.referrers, r.subject.digest, {}), 2u);
  EXPECT_FALSE(fake.manifests.count("sha256-" + r.subject.digest.hex()));
  EXPECT_EQ(fake.count("GET /v2/r/manifests/sha256-" + r.subject.digest.hex()), 0);
  EXPECT_EQ(list_referrers(client, "r", r.subject.digest).size(), 2u);
  EXPECT_EQ(read_attached(client, "r", r.subject.digest, {"application/spdx+json"}), "{\"s\":1}");
  fake.requests.clear();
  EXPECT_EQ(push_referrers(client, "r", r.referrers, r.subject.digest, {}), 0u);
  EXPECT_EQ(fake.requests, std::vector<std::string>{"GET /v2/r/referrers/" + r.subject.digest.str()});
}
