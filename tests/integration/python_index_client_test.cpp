// The index client against a local static index (testdata/python/index/serve_index.py on 127.0.0.1, a free port):
// project pages (HTML and JSON), 404, hash-verified downloads into the blob store, PEP 658 metadata, parallel
// downloads, credentials (URL userinfo, .netrc; never sent to another host), find-links and file:// indexes.
#include "python/index_client.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "image/digest.h"
#include "net/http_client.h"
#include "net/http_range_reader.h"
#include "python/wheel_file.h"
#include "store/cache_dir.h"
#include "support/error.h"
#include "support/fs.h"
#include "tests/integration/test_support.h"

extern char** environ;

using trainpack::Error;
using trainpack::store::BlobStore;
using trainpack::image::Digest;
using trainpack::store::StoredBlob;
using trainpack::image::sha256_of;
using namespace trainpack::python;
namespace fs = std::filesystem;

namespace {

// serve_index.py in a child process; killed and reaped on destruction.
class IndexServer {
 public:
  explicit IndexServer(const fs::path& root) {
    std::string script = std::string(TRAINPACK_TESTDATA_DIR) + "/python/index/serve_index.py";
    std::string root_arg = root.string();
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    char* argv[] = {const_cast<char*>("/usr/bin/python3"), script.data(), root_arg.data(), nullptr};
    int rc = posix_spawn(&pid_, "/usr/bin/python3", &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      pid_ = -1;
      throw std::runtime_error("cannot start /usr/bin/python3");
    }
    // The server binds before it prints, so once the port is read it accepts connections.
    std::string line;
    pollfd pfd{fds[0], POLLIN, 0};
    while (line.find('\n') == std::string::npos && ::poll(&pfd, 1, 15000) > 0) {
      char buf[64];
      ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    port_ = std::atoi(line.c_str());
    if (port_ <= 0) {
      stop();
      throw std::runtime_error("index server did not report a port");
    }
  }
  ~IndexServer() { stop(); }
  IndexServer(const IndexServer&) = delete;
  IndexServer& operator=(const IndexServer&) = delete;
  int port() const { return port_; }
  std::string url(const std::string& host = "127.0.0.1") const { return "http://" + host + ":" + std::to_string(port_); }

 private:
  void stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  pid_t pid_ = -1;
  int port_ = 0;
};

void write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::size_t count_lines(const fs::path& log, const std::string& needle) {
  std::ifstream in(log);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) ++n;
  return n;
}

std::size_t files_in(const fs::path& dir) {
  std::size_t n = 0;
  for (auto it = fs::directory_iterator(dir); it != fs::directory_iterator(); ++it) ++n;
  return n;
}

std::string wheel_bytes(const std::string& name) {
  // Distinct, not tiny contents (several write callbacks per download).
  std::string out;
  for (int i = 0; i < 20000; ++i) out += name + ":" + std::to_string(i) + "\n";
  return out;
}

class IndexClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = trainpack::make_temp_dir({}, "index-client-test");
    root_ = tmp_ / "www";
    fs::create_directories(root_);
    store_ = std::make_unique<trainpack::store::CacheDir>(tmp_ / "store");
    trainpack::net::HttpOptions options;
    options.max_attempts = 2;
    options.initial_backoff = std::chrono::milliseconds(10);
    options.certs_dirs.clear();
    http_ = std::make_unique<trainpack::net::HttpClient>(options);
    lay_out();
    server_ = std::make_unique<IndexServer>(root_);
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }

  // /simple/demo/         demo 1.0 (right sha256, metadata with hash), 2.0 (wrong sha256), 3.0 (no hash),
  //                       4.0 (metadata with a wrong hash)
  // /simple/jsonpkg/      index.html and index.json (different files: tells which one was parsed)
  // /extra/demo/          demo 5.0 on a second index
  // /private/simple/demo/ needs Basic user:p@ss; its file is linked on host "localhost" (another host)
  // /files/...            the files
  void lay_out() {
    for (const char* v : {"1.0", "2.0", "3.0", "4.0", "5.0"}) {
      std::string name = std::string("demo-") + v + "-py3-none-any.whl";
      contents_[name] = wheel_bytes(name);
      write(root_ / "files" / name, contents_[name]);
    }
    metadata_ = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Dist: idna\n";
    write(root_ / "files" / "demo-1.0-py3-none-any.whl.metadata", metadata_);
    write(root_ / "files" / "demo-4.0-py3-none-any.whl.metadata", "Name: demo\n");
    auto sha = [&](const std::string& bytes) { return sha256_of(bytes).hex(); };
    write(root_ / "simple" / "demo" / "index.html",
          "<!DOCTYPE html><html><body>\n"
          "<a href=\"../../files/demo-1.0-py3-none-any.whl#sha256=" + sha(contents_["demo-1.0-py3-none-any.whl"]) +
              "\" data-core-metadata=\"sha256=" + sha(metadata_) + "\">demo-1.0</a>\n"
          "<a href=\"../../files/demo-2.0-py3-none-any.whl#sha256=" + std::string(64, 'a') + "\">demo-2.0</a>\n"
          "<a href=\"/files/demo-3.0-py3-none-any.whl\" data-requires-python=\"&gt;=3.8\">demo-3.0</a>\n"
          "<a href=\"/files/demo-4.0-py3-none-any.whl\" data-dist-info-metadata=\"sha256=" + std::string(64, 'b') +
              "\">demo-4.0</a>\n"
          "</body></html>\n");
    write(root_ / "simple" / "jsonpkg" / "index.html", "<a href=\"/files/html-only-1.0.tar.gz\">x</a>");
    write(root_ / "simple" / "jsonpkg" / "index.json",
          R"({"meta":{"api-version":"1.1"},"name":"jsonpkg","files":[{"filename":"jsonpkg-1.0.tar.gz",)"
          R"("url":"../../files/jsonpkg-1.0.tar.gz","hashes":{"sha256":"00"},"size":7,"upload-time":"2024-01-01T00:00:00Z"}]})");
    write(root_ / "extra" / "demo" / "index.html",
          "<a href=\"/files/demo-5.0-py3-none-any.whl#sha256=" + sha(contents_["demo-5.0-py3-none-any.whl"]) + "\">5</a>");
    write(root_ / "auth.txt", "user:p@ss");
    // The private page links its file through another host name: credentials must not follow.
    write(root_ / "private" / "simple" / "demo" / "index.html",
          "<a href=\"http://localhost:" + std::string("PORT") + "/files/demo-1.0-py3-none-any.whl\">1.0</a>"
          "<a href=\"/private/files/secret-1.0.tar.gz\">secret</a>");
    write(root_ / "private" / "files" / "secret-1.0.tar.gz", "secret bytes");
  }

  // The private page needs the port, known only once the server runs.
  void fix_private_page() {
    fs::path page = root_ / "private" / "simple" / "demo" / "index.html";
    std::string text = trainpack::read_file(page);
    text.replace(text.find("PORT"), 4, std::to_string(server_->port()));
    write(page, text);
  }

  IndexClientOptions options(std::vector<std::string> indexes) {
    IndexClientOptions o;
    o.index_urls = std::move(indexes);
    o.use_netrc = false;
    return o;
  }
  const IndexFile& file_named(const std::vector<IndexFile>& files, const std::string& name) {
    for (const auto& f : files)
      if (f.filename == name) return f;
    throw std::runtime_error("no file " + name);
  }
  std::string blob_text(const StoredBlob& b) { return trainpack::read_file(store_->blobs().path_of(b.digest)); }
  fs::path log() const { return root_ / "requests.log"; }

  fs::path tmp_, root_;
  std::unique_ptr<trainpack::store::CacheDir> store_;
  std::unique_ptr<trainpack::net::HttpClient> http_;
  std::unique_ptr<IndexServer> server_;
  std::map<std::string, std::string> contents_;
  std::string metadata_;
};

TEST_F(IndexClientTest, ProjectPageListsFilesWithAbsoluteUrls) {
  IndexClient c(*http_, *store_, options({server_->url() + "/simple"}));
  std::vector<IndexFile> files = c.project_files("Demo");  // canonicalized to /simple/demo/
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].filename, "demo-1.0-py3-none-any.whl");
  EXPECT_EQ(files[0].url, server_->url() + "/files/demo-1.0-py3-none-any.whl");
  EXPECT_EQ(files[0].origin, server_->url() + "/simple/demo/");
  EXPECT_TRUE(files[0].metadata.available);
  EXPECT_EQ(files[2].requires_python, std::optional<std::string>(">=3.8"));
  EXPECT_EQ(count_lines(log(), "GET /simple/demo/ "), 1u);
}

TEST_F(IndexClientTest, MissingProjectIsEmpty) {
  IndexClient c(*http_, *store_, options({server_->url() + "/simple/"}));
  EXPECT_TRUE(c.project_files("no-such-project").empty());
  EXPECT_TRUE(c.project_files("../files").empty());  // canonicalized ("-/files"), the slash encoded
  EXPECT_EQ(count_lines(log(), "GET /simple/-%2Ffiles/ "), 1u);
  EXPECT_EQ(count_lines(log(), "GET /simple/no-such-project/ "), 1u);
}

TEST_F(IndexClientTest, JsonPageChosenByContentType) {
  IndexClient c(*http_, *store_, options({server_->url() + "/simple/"}));
  IndexPage page = c.fetch_project_page(server_->url() + "/simple/", "JSONPKG");
  EXPECT_EQ(page.repository_version, "1.1");
  ASSERT_EQ(page.files.size(), 1u);
  EXPECT_EQ(page.files[0].filename, "jsonpkg-1.0.tar.gz");
  EXPECT_EQ(page.files[0].url, server_->url() + "/files/jsonpkg-1.0.tar.gz");
  EXPECT_EQ(page.files[0].size, std::optional<std::uint64_t>(7));
}

TEST_F(IndexClientTest, IndexesAreMergedInOrder) {
  IndexClient c(*http_, *store_, options({server_->url() + "/extra/", server_->url() + "/simple/"}));
  std::vector<IndexFile> files = c.project_files("demo");
  ASSERT_EQ(files.size(), 5u);
  EXPECT_EQ(files[0].filename, "demo-5.0-py3-none-any.whl");
  EXPECT_EQ(files[1].filename, "demo-1.0-py3-none-any.whl");
}

TEST_F(IndexClientTest, DownloadVerifiesHashAndIsNotRepeated) {
  IndexClientOptions opts = options({server_->url() + "/simple/"});
  std::vector<std::pair<std::uint64_t, bool>> reported;  // what a progress row would show
  opts.on_download = [&](const std::string& file, std::uint64_t bytes, bool finished) {
    EXPECT_EQ(file, "demo-1.0-py3-none-any.whl");
    reported.emplace_back(bytes, finished);
  };
  IndexClient c(*http_, *store_, opts);
  std::vector<IndexFile> files = c.project_files("demo");
  const IndexFile& good = file_named(files, "demo-1.0-py3-none-any.whl");
  StoredBlob blob = c.download(good);
  EXPECT_EQ(blob.digest.hex(), good.sha256());
  EXPECT_EQ(blob.size, contents_[good.filename].size());
  EXPECT_EQ(blob_text(blob), contents_[good.filename]);
  ASSERT_GE(reported.size(), 2u) << "bytes as they came, then the end";
  EXPECT_EQ(reported.back(), std::make_pair(std::uint64_t{blob.size}, true));
  for (std::size_t i = 0; i + 1 < reported.size(); ++i) {
    EXPECT_FALSE(reported[i].second);
    EXPECT_LE(reported[i].first, reported[i + 1].first);
  }
  reported.clear();
  StoredBlob again = c.download(good);
  EXPECT_TRUE(reported.empty()) << "a stored file is not downloaded, so no progress";
  EXPECT_EQ(again.digest, blob.digest);
  EXPECT_EQ(again.size, blob.size);
  EXPECT_EQ(count_lines(log(), "GET /files/demo-1.0-py3-none-any.whl "), 1u);
}

TEST_F(IndexClientTest, WrongHashFailsAndLeavesNothing) {
  IndexClient c(*http_, *store_, options({server_->url() + "/simple/"}));
  std::vector<IndexFile> files = c.project_files("demo");
  const IndexFile& bad = file_named(files, "demo-2.0-py3-none-any.whl");
  std::string actual = sha256_of(contents_[bad.filename]).hex();
  try {
    c.download(bad);
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("demo-2.0-py3-none-any.whl"), std::string::npos) << what;
    EXPECT_NE(what.find(std::string(64, 'a')), std::string::npos) << what;
    EXPECT_NE(what.find(actual), std::string::npos) << what;
  }
  EXPECT_EQ(files_in(store_->blobs().path_of(Digest::sha256_from_hex(std::string(64, '0'))).parent_path()), 0u);
  EXPECT_EQ(files_in(store_->temp_dir()), 0u);
  EXPECT_FALSE(store_->blobs().has(Digest::sha256_from_hex(actual)));
}

TEST_F(IndexClientTest, DownloadWithoutHashIsStoredByContent) {
  IndexClient c(*http_, *store_, options({server_->url() + "/simple/"}));
  std::vector<IndexFile> files = c.project_files("demo");
  const IndexFile& plain = file_named(files, "demo-3.0-py3-none-any.whl");
  ASSERT_TRUE(plain.hashes.empty());
  StoredBlob blob = c.download(plain);
  EXPECT_EQ(blob.digest, sha256_of(contents_[plain.filename]));
  EXPECT_EQ(blob_text(blob), contents_[plain.filename]);
}

TEST_F(IndexClientTest, MissingFileIsAnErrorNamingIt) {
  IndexClient c(*http_, *store_, options({server_->url() + "/simple/"}));
  IndexFile f;
  f.filename = "gone-1.0.tar.gz";
  f.url = server_->url() + "/files/gone-1.0.tar.gz";
  try {
    c.download(f);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gone-1.0.tar.gz"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("404"), std::string::npos);
  }
  EXPECT_EQ(files_in(store_->temp_dir()), 0u);
}

TEST_F(IndexClientTest, CoreMetadataFetchedAndVerified) {
  IndexClient c(*http_, *store_, options({server_->url() + "/simple/"}));
  std::vector<IndexFile> files = c.project_files("demo");
  EXPECT_EQ(c.fetch_metadata(file_named(files, "demo-1.0-py3-none-any.whl")), std::optional<std::string>(metadata_));
  EXPECT_EQ(count_lines(log(), "GET /files/demo-1.0-py3-none-any.whl.metadata "), 1u);
  EXPECT_EQ(c.fetch_metadata(file_named(files, "demo-3.0-py3-none-any.whl")), std::nullopt);  // not announced
  EXPECT_EQ(count_lines(log(), "GET /files/demo-3.0-py3-none-any.whl.metadata "), 0u);
  try {
    c.fetch_metadata(file_named(files, "demo-4.0-py3-none-any.whl"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("demo-4.0-py3-none-any.whl"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::string(64, 'b')), std::string::npos) << e.what();
  }
  IndexFile announced_but_missing = file_named(files, "demo-3.0-py3-none-any.whl");
  announced_but_missing.metadata.available = true;
  EXPECT_EQ(c.fetch_metadata(announced_but_missing), std::nullopt);  // 404
}

// A page is kept with its validators: the next client (the next build) asks with If-Modified-Since (HTML, from
// http.server's Last-Modified) or If-None-Match (JSON, its ETag) and reads the kept page on a 304; a page that
// changed comes whole again. PEP 658 metadata named by its sha256 is asked for once.
TEST_F(IndexClientTest, PagesAreRevalidatedAndMetadataIsAskedForOnce) {
  std::vector<std::string> filenames;
  {
    IndexClient c(*http_, *store_, options({server_->url() + "/simple/"}));
    std::vector<IndexFile> files = c.project_files("demo");
    for (const IndexFile& f : files) filenames.push_back(f.filename);
    ASSERT_EQ(c.project_files("jsonpkg").size(), 1u);
    EXPECT_EQ(c.fetch_metadata(file_named(files, "demo-1.0-py3-none-any.whl")), std::optional<std::string>(metadata_));
  }
  EXPECT_EQ(count_lines(log(), "GET /simple/demo/ auth=no host=127.0.0.1:" + std::to_string(server_->port()) +
                                   " if-none-match=- if-modified-since=-"), 1u);
  IndexClient again(*http_, *store_, options({server_->url() + "/simple/"}));
  std::vector<std::string> kept;
  for (const IndexFile& f : again.project_files("demo")) kept.push_back(f.filename);
  EXPECT_EQ(kept, filenames);
  EXPECT_EQ(count_lines(log(), "GET /simple/demo/ "), 2u);
  EXPECT_EQ(count_lines(log(), "GET /simple/demo/ auth=no host=127.0.0.1:" + std::to_string(server_->port()) +
                                   " if-none-match=- if-modified-since=-"), 1u)
      << "the second client asked without If-Modified-Since";
  std::vector<IndexFile> json_files = again.project_files("jsonpkg");
  ASSERT_EQ(json_files.size(), 1u);
  EXPECT_EQ(json_files[0].filename, "jsonpkg-1.0.tar.gz");
  EXPECT_EQ(count_lines(log(), "GET /simple/jsonpkg/ auth=no host=127.0.0.1:" + std::to_string(server_->port()) +
                                   " if-none-match=\""), 1u) << "no If-None-Match with the JSON page's ETag";
  std::vector<IndexFile> files = again.project_files("demo");
  EXPECT_EQ(again.fetch_metadata(file_named(files, "demo-1.0-py3-none-any.whl")), std::optional<std::string>(metadata_));
  EXPECT_EQ(count_lines(log(), "GET /files/demo-1.0-py3-none-any.whl.metadata "), 1u) << "metadata asked for again";

  // The page changes (a later modification time, as a new upload gives it): it is read afresh.
  fs::path page = root_ / "simple" / "demo" / "index.html";
  write(page, "<a href=\"/files/demo-5.0-py3-none-any.whl\">5</a>");
  fs::last_write_time(page, fs::last_write_time(page) + std::chrono::hours(1));
  IndexClient third(*http_, *store_, options({server_->url() + "/simple/"}));
  std::vector<IndexFile> changed = third.project_files("demo");
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].filename, "demo-5.0-py3-none-any.whl");
}

TEST_F(IndexClientTest, ParallelDownloads) {
  IndexClient c(*http_, *store_, options({server_->url() + "/extra/", server_->url() + "/simple/"}));
  std::vector<IndexFile> all = c.project_files("demo");
  std::vector<IndexFile> good;
  for (const char* v : {"5.0", "1.0", "3.0", "4.0"}) good.push_back(file_named(all, std::string("demo-") + v + "-py3-none-any.whl"));
  good.push_back(good[1]);  // listed twice: fetched once
  std::vector<StoredBlob> blobs = c.download_all(good, 3);
  ASSERT_EQ(blobs.size(), good.size());
  for (std::size_t i = 0; i < good.size(); ++i) {
    EXPECT_EQ(blobs[i].digest, sha256_of(contents_[good[i].filename])) << good[i].filename;
  }
  EXPECT_EQ(count_lines(log(), "GET /files/demo-1.0-py3-none-any.whl "), 1u);
  EXPECT_EQ(files_in(store_->blobs().path_of(Digest::sha256_from_hex(std::string(64, '0'))).parent_path()), 4u);

  std::vector<IndexFile> with_bad = {file_named(all, "demo-2.0-py3-none-any.whl"), good[0]};
  try {
    c.download_all(with_bad, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("demo-2.0-py3-none-any.whl"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(c.download_all({}, 4).empty());
}

TEST_F(IndexClientTest, UrlCredentialsStayOnTheirHost) {
  fix_private_page();
  IndexClient anonymous(*http_, *store_, options({server_->url() + "/private/simple/"}));
  try {
    anonymous.project_files("demo");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("401"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("credentials"), std::string::npos) << e.hint();
  }
  std::string index = "http://user:p%40ss@127.0.0.1:" + std::to_string(server_->port()) + "/private/simple/";
  IndexClient c(*http_, *store_, options({index}));
  std::vector<IndexFile> files = c.project_files("demo");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].origin.find("p%40ss"), std::string::npos);
  EXPECT_EQ(files[0].origin.find("user"), std::string::npos);
  // Same host as the index: credentials sent; the file on "localhost" gets none.
  EXPECT_EQ(blob_text(c.download(file_named(files, "secret-1.0.tar.gz"))), "secret bytes");
  c.download(file_named(files, "demo-1.0-py3-none-any.whl"));
  EXPECT_EQ(count_lines(log(), "GET /private/simple/demo/ auth=yes"), 1u);
  EXPECT_EQ(count_lines(log(), "GET /private/files/secret-1.0.tar.gz auth=yes"), 1u);
  EXPECT_EQ(count_lines(log(), "GET /files/demo-1.0-py3-none-any.whl auth=no host=localhost"), 1u);

  // A wrong password is refused, and never quoted.
  IndexClient wrong(*http_, *store_,
                    options({"http://user:wr0ngpass@127.0.0.1:" + std::to_string(server_->port()) + "/private/simple/"}));
  try {
    wrong.project_files("demo");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("wr0ngpass"), std::string::npos) << e.what();
    EXPECT_EQ(e.hint().find("wr0ngpass"), std::string::npos);
  }
}

TEST_F(IndexClientTest, NetrcCredentials) {
  fs::path netrc = tmp_ / "netrc";
  write(netrc, "# test\nmachine other.example.org login x password y\n\nmachine 127.0.0.1\n  login user\n  password \"p@ss\"\n");
  IndexClientOptions o = options({server_->url() + "/private/simple/"});
  o.use_netrc = true;
  o.netrc_file = netrc;
  IndexClient c(*http_, *store_, o);
  EXPECT_EQ(c.project_files("demo").size(), 2u);
  EXPECT_EQ(count_lines(log(), "GET /private/simple/demo/ auth=yes"), 1u);
}

TEST_F(IndexClientTest, FindLinksComeFirstAndAreFiltered) {
  fs::path wheelhouse = tmp_ / "wheelhouse";
  write(wheelhouse / "demo-0.9-py3-none-any.whl", "local wheel");
  write(wheelhouse / "Demo-0.8.tar.gz", "local sdist");
  write(wheelhouse / "demolition-1.0.tar.gz", "another project");
  write(wheelhouse / "other-1.0-py3-none-any.whl", "another project");
  IndexClientOptions o = options({server_->url() + "/simple/"});
  o.find_links = {wheelhouse.string(), server_->url() + "/extra/demo/"};
  IndexClient c(*http_, *store_, o);
  std::vector<IndexFile> files = c.project_files("demo");
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.filename);
  EXPECT_EQ(names, (std::vector<std::string>{"Demo-0.8.tar.gz", "demo-0.9-py3-none-any.whl",
                                             "demo-5.0-py3-none-any.whl", "demo-1.0-py3-none-any.whl",
                                             "demo-2.0-py3-none-any.whl", "demo-3.0-py3-none-any.whl",
                                             "demo-4.0-py3-none-any.whl"}));
  // A local file is copied in by content.
  StoredBlob local = c.download(files[1]);
  EXPECT_EQ(blob_text(local), "local wheel");
  // Asked again for another project, the find-links page is not fetched again.
  c.project_files("other");
  EXPECT_EQ(count_lines(log(), "GET /extra/demo/ "), 1u);
  EXPECT_THROW(c.fetch_find_links((tmp_ / "missing").string()), Error);
  EXPECT_TRUE(c.fetch_find_links(server_->url() + "/nowhere/").empty());  // 404: pip ignores it, with a warning
  ASSERT_EQ(c.warnings().size(), 1u);
  EXPECT_NE(c.warnings()[0].find("/nowhere/"), std::string::npos);
}

TEST_F(IndexClientTest, FileIndexUrl) {
  IndexClient c(*http_, *store_, options({file_url_for(root_ / "simple")}));
  std::vector<IndexFile> files = c.project_files("demo");
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].url, file_url_for(root_ / "files" / "demo-1.0-py3-none-any.whl"));
  EXPECT_EQ(blob_text(c.download(files[0])), contents_["demo-1.0-py3-none-any.whl"]);
  EXPECT_EQ(c.fetch_metadata(files[0]), std::optional<std::string>(metadata_));
  EXPECT_THROW(c.download(files[1]), Error);  // wrong hash, local too
  EXPECT_TRUE(c.project_files("absent").empty());
}

TEST_F(IndexClientTest, AccessTokenForTokenHosts) {
  // Artifact Registry hosts get Basic oauth2accesstoken:<token>; here 127.0.0.1 stands in for one.
  write(root_ / "auth.txt", "oauth2accesstoken:ya29.token-for-127.0.0.1");
  IndexClientOptions o = options({server_->url() + "/private/simple/"});
  int calls = 0;
  o.access_token = [&](const std::string& host) {
    ++calls;
    return "ya29.token-for-" + host;
  };
  o.token_hosts = [](const std::string& host) { return host == "127.0.0.1"; };
  IndexClient c(*http_, *store_, o);
  EXPECT_EQ(c.project_files("demo").size(), 2u);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(count_lines(log(), "GET /private/simple/demo/ auth=yes"), 1u);
  // Without the predicate 127.0.0.1 is no Artifact Registry host: no token, 401.
  o.token_hosts = nullptr;
  IndexClient plain(*http_, *store_, o);
  EXPECT_THROW(plain.project_files("demo"), Error);
  EXPECT_EQ(calls, 1);
}

// A 1.5 MB wheel whose METADATA comes first and whose central directory (3,000 members) is larger than the first
// range asked for: the end records, the directory and the member each need a range of their own.
std::string write_wheel_with_leading_metadata(const fs::path& path, const std::string& metadata) {
  std::string script =
      "import os, sys, zipfile\n"
      "with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n"
      "    z.writestr('bigmeta-1.0.dist-info/METADATA', sys.argv[2])\n"
      "    z.writestr('bigmeta/blob.bin', os.urandom(1 << 20))\n"
      "    for i in range(3000): z.writestr(f'bigmeta/module_{i:05}_with_a_longer_name.py', 'x = 1\\n')\n"
      "    z.writestr('bigmeta-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\n')\n"
      "    z.writestr('bigmeta-1.0.dist-info/RECORD', '')\n";
  fs::create_directories(path.parent_path());
  auto r = trainpack::testing::run_command({"python3", "-c", script, path.string(), metadata});
  if (r.exit_code != 0) throw std::runtime_error(r.err);
  return trainpack::read_file(path);
}

// Without PEP 658 files, a wheel's METADATA is read in HTTP ranges where the server answers them (pip's fast-deps,
// uv): a few ranges, not the file. A server that ignores Range is asked once per client; a wheel already in the
// store is read there.
TEST_F(IndexClientTest, MetadataIsReadInRangesWhereTheServerAnswersThem) {
  std::string metadata = "Metadata-Version: 2.1\nName: bigmeta\nVersion: 1.0\nRequires-Dist: idna\n";
  std::string wheel = write_wheel_with_leading_metadata(root_ / "files" / "bigmeta-1.0-py3-none-any.whl", metadata);
  ASSERT_GT(wheel.size(), 1000000u);
  IndexFile file;
  file.filename = "bigmeta-1.0-py3-none-any.whl";

  trainpack::testing::BusyboxHttpd ranged(root_, tmp_ / "busybox.log");
  file.url = ranged.url() + "/files/" + file.filename;
  trainpack::net::HttpRequest request;
  request.url = file.url;
  std::optional<trainpack::net::HttpRangeReader> remote = trainpack::net::HttpRangeReader::open(*http_, request);
  ASSERT_TRUE(remote);
  EXPECT_EQ(remote->size(), wheel.size());
  EXPECT_EQ(remote->tail_by(), trainpack::net::HttpRangeReader::TailBy::size);  // busybox: no suffix ranges
  trainpack::ZipArchive zip(*remote, file.filename);
  EXPECT_EQ(read_wheel_metadata(zip, file.filename), metadata);
  // The suffix range (answered with the whole file, cut off), HEAD, the tail, the directory, METADATA.
  EXPECT_LE(remote->requests(), 5) << "more ranges than a zip's parts need";
  EXPECT_EQ(count_lines(tmp_ / "busybox.log", "response:206"), 3u) << trainpack::read_file(tmp_ / "busybox.log");

  IndexClient c(*http_, *store_, options({server_->url() + "/simple/"}));
  EXPECT_EQ(c.read_metadata_by_range(file), std::optional<std::string>(metadata));
  EXPECT_EQ(count_lines(tmp_ / "busybox.log", "response:206"), 6u) << "the client asked by offset at once";

  // serve_index.py ignores Range: no metadata, and the next file of that server is not asked for in ranges.
  file.url = server_->url() + "/files/" + file.filename;
  EXPECT_EQ(c.read_metadata_by_range(file), std::nullopt);
  IndexFile other = file;
  other.url = server_->url() + "/files/demo-1.0-py3-none-any.whl";
  EXPECT_EQ(c.read_metadata_by_range(other), std::nullopt);
  EXPECT_EQ(count_lines(log(), "GET /files/bigmeta-1.0-py3-none-any.whl "), 1u);
  EXPECT_EQ(count_lines(log(), "GET /files/demo-1.0-py3-none-any.whl "), 0u);

  // A wheel already in the store is read there (the caller falls back to it).
  file.url = ranged.url() + "/files/" + file.filename;
  file.hashes["sha256"] = sha256_of(wheel).hex();
  c.download(file);
  EXPECT_EQ(c.read_metadata_by_range(file), std::nullopt);
}

TEST(PythonIndexClientHelpers, ParseNetrc) {
  auto entries = parse_netrc(
      "machine A.example.com login alice password secret1\n"
      "macdef init\ncd /pub\nbinary\n\n"
      "machine b.example.com\n\tlogin bob\n\taccount acct\n\tpassword \"with space\"\n"
      "default login anon password guest\n");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries.at("a.example.com").login, "alice");
  EXPECT_EQ(entries.at("a.example.com").password, "secret1");
  EXPECT_EQ(entries.at("b.example.com").login, "bob");
  EXPECT_EQ(entries.at("b.example.com").password, "with space");
  EXPECT_EQ(entries.at("").login, "anon");
}

TEST(PythonIndexClientHelpers, ArtifactRegistryHosts) {
  EXPECT_TRUE(is_artifact_registry_python_host("us-python.pkg.dev"));
  EXPECT_TRUE(is_artifact_registry_python_host("europe-west4-python.pkg.dev"));
  EXPECT_TRUE(is_artifact_registry_python_host("US-Python.pkg.dev:443"));
  EXPECT_FALSE(is_artifact_registry_python_host("us-docker.pkg.dev"));
  EXPECT_FALSE(is_artifact_registry_python_host("evil.us-python.pkg.dev.example.com"));
  EXPECT_FALSE(is_artifact_registry_python_host("a.b-python.pkg.dev"));
  EXPECT_FALSE(is_artifact_registry_python_host("-python.pkg.dev"));
}

}  // namespace
