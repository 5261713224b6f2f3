#pragma once
// A registry in memory for the unit tests of what talks to one (OCI distribution-spec): blobs and manifests by
// repository; uploads (POST, then one PUT or a PATCH and an empty PUT, each checked against its digest),
// cross-repository mounts and cancelled sessions (DELETE); a manifest naming a blob the repository lacks is refused,
// as real registries refuse it; the referrers API when `referrers_api` is set. A RegistryClient sends through it:
// RegistryClient(std::ref(fake), keychain, "reg.test", "http").
#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/digest.h"
#include "image/media_types.h"
#include "net/http_client.h"
#include "support/fs.h"

namespace trainpack::test_support {

class FakeRegistry {
 public:
  struct Repository {
    std::map<std::string, std::string> blobs;      // digest → bytes
    std::map<std::string, std::string> manifests;  // tag or digest → bytes
  };

  bool referrers_api = false;
  // Answers a request before the registry does, when it returns an answer (a failure, or one that waits for the
  // request's stop flag). Called outside the registry's lock, so a waiting request holds up no other.
  std::function<std::optional<net::HttpResponse>(const net::HttpRequest&)> intercept;

  // What the registry holds and was asked, for a test to set up and read while no request is under way.
  std::map<std::string, Repository> repositories;
  std::map<std::string, std::string> uploads;  // open upload sessions: path → bytes received so far
  std::vector<std::string> requests;           // "METHOD path", without the query, in the order they came

  // One request at a time: the pusher's workers send blobs from several threads.
  net::HttpResponse operator()(const net::HttpRequest& request) {
    if (intercept)
      if (std::optional<net::HttpResponse> answer = intercept(request)) return *answer;
    const std::string body = body_of(request);  // a relayed body waits for its source: not under the lock
    net::HttpResponse response;
    {
      std::lock_guard lock(mutex_);
      const Call call = parse(request);
      requests.push_back(request.method + " " + call.path);
      response = answer(call, body);
    }
    response.url = request.url;
    response.http_version = 11;
    if (request.sink && response.status == 200 && !response.body.empty()) {
      request.sink(response.body.data(), response.body.size());
      response.body.clear();
    }
    return response;
  }

  // Locked: a test may count while background uploads still come in.
  int count(const std::string& request) const {
    std::lock_guard lock(mutex_);
    return static_cast<int>(std::count(requests.begin(), requests.end(), request));
  }
  int count_starting(const std::string& prefix) const {
    std::lock_guard lock(mutex_);
    return static_cast<int>(std::count_if(requests.begin(), requests.end(),
                                          [&](const std::string& r) { return r.starts_with(prefix); }));
  }

  // The requests after the first `request`: a tag's PUT may be followed only by reads begun beside the push.
  std::vector<std::string> requests_after(const std::string& request) const {
    std::lock_guard lock(mutex_);
    auto it = std::find(requests.begin(), requests.end(), request);
    if (it == requests.end()) return {"(no " + request + ")"};
    return {std::next(it), requests.end()};
  }

  static net::HttpResponse error(long status, const std::string& code) {
    return {status, {}, {}, R"({"errors":[{"code":")" + code + R"(","message":"refused by the fake"}]})", 11};
  }

 private:
  // A request's path split up: /v2/<repository>/<area>/<rest>?<query>.
  struct Call {
    std::string method, path, query, repository, area, rest;
  };

  static Call parse(const net::HttpRequest& request) {
    Call call{request.method, request.url, "", "", "", ""};
    if (std::size_t scheme = call.path.find("://"); scheme != std::string::npos)
      call.path.erase(0, call.path.find('/', scheme + 3));
    if (std::size_t mark = call.path.find('?'); mark != std::string::npos) {
      call.query = call.path.substr(mark + 1);
      call.path.resize(mark);
    }
    for (const char* area : {"/blobs/", "/manifests/", "/referrers/"}) {
      std::size_t at = call.path.find(area);
      if (at == std::string::npos || !call.path.starts_with("/v2/")) continue;
      call.repository = call.path.substr(4, at - 4);
      call.area = std::string(area).substr(1, std::string(area).size() - 2);
      call.rest = call.path.substr(at + std::string(area).size());
      break;
    }
    return call;
  }

  static std::string query_value(const std::string& query, const std::string& name) {
    for (std::size_t at = 0; at < query.size();) {
      std::size_t end = std::min(query.find('&', at), query.size());
      std::string pair = query.substr(at, end - at);
      if (pair.starts_with(name + "=")) {
        std::string value = pair.substr(name.size() + 1);
        if (std::size_t colon = value.find("%3A"); colon != std::string::npos) value.replace(colon, 3, ":");
        return value;
      }
      at = end + 1;
    }
    return "";
  }

  static std::string body_of(const net::HttpRequest& request) {
    if (request.body_file) return read_file(*request.body_file);
    if (!request.body_stream) return request.body;
    std::unique_ptr<net::HttpRequest::BodyStream> stream = request.body_stream();
    std::string body;
    char buffer[64 << 10];
    while (std::size_t n = stream->read(buffer, sizeof buffer)) body.append(buffer, n);
    return body;
  }

  net::HttpResponse answer(const Call& call, const std::string& body) {
    if (call.area == "blobs" && call.rest.starts_with("uploads/")) return upload(call, body);
    if (call.area == "blobs") return blob(call);
    if (call.area == "manifests") return manifest(call, body);
    if (call.area == "referrers" && call.method == "GET" && referrers_api) return referrers(call);
    return error(404, "NAME_UNKNOWN");
  }

  net::HttpResponse blob(const Call& call) {
    const std::map<std::string, std::string>& blobs = repositories[call.repository].blobs;
    auto it = blobs.find(call.rest);
    if (it == blobs.end()) return error(404, "BLOB_UNKNOWN");
    net::HttpResponse found{200, {}, {{"content-length", std::to_string(it->second.size())}}, "", 11};
    if (call.method == "GET") found.body = it->second;
    return found;
  }

  net::HttpResponse upload(const Call& call, const std::string& body) {
    if (call.method == "POST" && call.rest == "uploads/") return start_upload(call);
    auto session = uploads.find(call.path);
    if (session == uploads.end()) return error(404, "BLOB_UPLOAD_UNKNOWN");
    if (call.method == "DELETE") {
      uploads.erase(session);
      return {204, {}, {}, "", 11};
    }
    session->second += body;
    if (call.method == "PATCH") return {202, {}, {{"location", call.path}}, "", 11};
    if (call.method != "PUT") return error(405, "UNSUPPORTED");
    std::string digest = query_value(call.query, "digest");
    std::string bytes = std::move(session->second);
    uploads.erase(session);
    if (image::sha256_of(bytes).str() != digest) return error(400, "DIGEST_INVALID");
    repositories[call.repository].blobs[digest] = std::move(bytes);
    return {201, {}, {{"docker-content-digest", digest}}, "", 11};
  }

  // A mount from a repository that holds the blob, else a new session (as registries answer a refused mount).
  net::HttpResponse start_upload(const Call& call) {
    std::string digest = query_value(call.query, "mount");
    auto from = repositories.find(query_value(call.query, "from"));
    if (!digest.empty() && from != repositories.end() && from->second.blobs.count(digest)) {
      repositories[call.repository].blobs[digest] = from->second.blobs[digest];
      return {201, {}, {{"docker-content-digest", digest}}, "", 11};
    }
    std::string session = "/v2/" + call.repository + "/blobs/uploads/" + std::to_string(++sessions_opened_);
    uploads[session] = "";
    return {202, {}, {{"location", session}}, "", 11};
  }

  net::HttpResponse manifest(const Call& call, const std::string& body) {
    Repository& repository = repositories[call.repository];
    if (call.method == "PUT") {
      net::HttpResponse put = put_manifest(repository, call.rest, body);
      nlohmann::json document = nlohmann::json::parse(body);
      if (referrers_api && put.status == 201 && document.contains("subject"))  // distribution-spec 1.1
        put.headers.emplace_back("oci-subject", document["subject"].value("digest", ""));
      return put;
    }
    auto it = repository.manifests.find(call.rest);
    if (it == repository.manifests.end()) return error(404, "MANIFEST_UNKNOWN");
    nlohmann::json document = nlohmann::json::parse(it->second);
    net::HttpResponse found{200, {}, {{"content-type", document.value("mediaType", "")},
                                      {"docker-content-digest", image::sha256_of(it->second).str()}}, "", 11};
    if (call.method == "GET") found.body = it->second;
    return found;
  }

  static net::HttpResponse put_manifest(Repository& repository, const std::string& reference,
                                        const std::string& body) {
    nlohmann::json document = nlohmann::json::parse(body);
    std::vector<nlohmann::json> named = document.value("layers", std::vector<nlohmann::json>{});
    if (document.contains("config")) named.push_back(document["config"]);
    for (const nlohmann::json& blob : named)
      if (!repository.blobs.count(blob.at("digest").get<std::string>())) return error(400, "MANIFEST_BLOB_UNKNOWN");
    const std::string digest = image::sha256_of(body).str();
    repository.manifests[reference] = body;
    repository.manifests[digest] = body;
    return {201, {}, {{"docker-content-digest", digest}}, "", 11};
  }

  net::HttpResponse referrers(const Call& call) {
    nlohmann::json index{{"schemaVersion", 2}, {"mediaType", image::media::kOciIndex},
                         {"manifests", nlohmann::json::array()}};
    for (const auto& [reference, bytes] : repositories[call.repository].manifests) {
      nlohmann::json m = nlohmann::json::parse(bytes);
      if (reference.starts_with("sha256:") && m.contains("subject") && m["subject"]["digest"] == call.rest)
        index["manifests"].push_back({{"mediaType", m["mediaType"]}, {"digest", reference}, {"size", bytes.size()},
                                      {"artifactType", m["artifactType"]}});
    }
    return {200, {}, {{"content-type", std::string(image::media::kOciIndex)}}, index.dump(), 11};
  }

  mutable std::mutex mutex_;
  int sessions_opened_ = 0;
};

}  // namespace trainpack::test_support
