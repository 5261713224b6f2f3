#include "context/context_copy.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "layers/layer_writer.h"
#include "support/error.h"
#include "support/fs.h"

namespace fs = std::filesystem;
using trainpack::Error;
using namespace trainpack::context;
using namespace trainpack::image;
using namespace trainpack::layers;

namespace {

// `COPY <src> <dest>` as a build makes it: the source read, then placed.
FileEntries collect_copy(const fs::path& context_dir, std::string_view src, std::string_view dest,
                         const DockerIgnore& ignore, const CopyOptions& opts = {}) {
  return place_copy(read_copy_source(context_dir, src, ignore), dest, opts);
}

class ContextCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<trainpack::ScopedDir>(trainpack::make_temp_dir({}, "trainpack-copy-"));
    ctx_ = dir_->path() / "pkg";
    fs::create_directories(ctx_);
  }

  // Creates a file (and its parent directories) with exactly `mode`.
  void file(const std::string& rel, const std::string& content = "x", mode_t mode = 0644) {
    fs::path p = ctx_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    ASSERT_EQ(::chmod(p.c_str(), mode), 0);
  }
  void dir(const std::string& rel) { fs::create_directories(ctx_ / rel); }
  void symlink(const std::string& target, const std::string& rel) {
    fs::create_directories((ctx_ / rel).parent_path());
    ASSERT_EQ(::symlink(target.c_str(), (ctx_ / rel).c_str()), 0);
  }

  FileEntries copy(std::string_view src, std::string_view dest, const CopyOptions& opts = {}) {
    return collect_copy(ctx_, src, dest, DockerIgnore::load(ctx_), opts);
  }

  static std::vector<std::string> paths(const FileEntries& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(e.path);
    return out;
  }
  static const FileEntry& find(const FileEntries& entries, const std::string& path) {
    for (const auto& e : entries)
      if (e.path == path) return e;
    throw std::runtime_error("no entry " + path);
  }
  // Runs `fn`, expecting an Error whose message contains `needle`; returns the Error for more checks.
  template <class Fn>
  static Error expect_error(Fn fn, const std::string& needle) {
    try {
      fn();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one-line cause: " << e.what();
      return e;
    }
    ADD_FAILURE() << "expected an Error containing \"" << needle << "\"";
    return Error("");
  }

  std::unique_ptr<trainpack::ScopedDir> dir_;
  fs::path ctx_;
};

TEST_F(ContextCopyTest, DirectorySourceCopiesItsContentsIntoDest) {
  file("trainer/task.py", "print(1)\n", 0644);
  file("trainer/run.sh", "#!/bin/sh\n", 0755);
  file("trainer/sub/data.txt", "abc", 0600);
  file("other.py");
  FileEntries e = copy("trainer", "usr/app/trainer");
  EXPECT_EQ(paths(e), (std::vector<std::string>{"usr", "usr/app", "usr/app/trainer", "usr/app/trainer/run.sh",
                                                "usr/app/trainer/sub", "usr/app/trainer/sub/data.txt",
                                                "usr/app/trainer/task.py"}));
  for (const auto& x : e) {
    EXPECT_EQ(x.uid, 0u);
    EXPECT_EQ(x.gid, 0u);
  }
  EXPECT_EQ(find(e, "usr").type, FileEntry::Type::kDirectory);
  EXPECT_EQ(find(e, "usr").mode, 0755u);
  EXPECT_EQ(find(e, "usr/app/trainer").mode, 0755u);
  const FileEntry& task = find(e, "usr/app/trainer/task.py");
  EXPECT_EQ(task.type, FileEntry::Type::kRegular);
  EXPECT_EQ(task.mode, 0644u);
  EXPECT_EQ(task.size, 9u);
  EXPECT_TRUE(fs::path(task.source).is_absolute());
  EXPECT_EQ(fs::canonical(task.source), fs::canonical(ctx_ / "trainer/task.py"));
  struct stat st;
  ASSERT_EQ(::stat(task.source.c_str(), &st), 0);
  EXPECT_EQ(task.source_stamp, "9:" + std::to_string(st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec) +
                                   ":" + std::to_string(st.st_ino));
  EXPECT_EQ(find(e, "usr/app/trainer/run.sh").mode, 0755u);
  EXPECT_EQ(find(e, "usr/app/trainer/sub/data.txt").mode, 0644u);  // 0600 on disk: the mode rule applies
  EXPECT_TRUE(std::is_sorted(e.begin(), e.end(), [](auto& a, auto& b) { return a.path < b.path; }));
}

TEST_F(ContextCopyTest, ExistingDirectoriesKeepTheirAttributes) {
  file("trainer/task.py");
  CopyOptions opts;
  opts.existing_dir = [](std::string_view p) -> std::optional<ExistingDir> {
    if (p == "usr") return ExistingDir{0755, 0, 0};
    if (p == "usr/app") return ExistingDir{0777, 0, 0};
    return std::nullopt;
  };
  FileEntries e = copy("trainer", "usr/app/trainer", opts);
  EXPECT_EQ(find(e, "usr/app").mode, 0777u);
  EXPECT_EQ(find(e, "usr/app/trainer").mode, 0755u);  // created by the COPY

  // COPY . . into an existing /usr/app: the destination keeps its 0777.
  FileEntries all = copy(".", "usr/app", opts);
  EXPECT_EQ(find(all, "usr/app").mode, 0777u);
  EXPECT_EQ(find(all, "usr/app/trainer/task.py").type, FileEntry::Type::kRegular);
}

TEST_F(ContextCopyTest, FileSourceLandsAtDest) {
  file("setup.py", "from setuptools import setup\n", 0664);
  FileEntries e = copy("./setup.py", "/usr/app/setup.py");
  EXPECT_EQ(paths(e), (std::vector<std::string>{"usr", "usr/app", "usr/app/setup.py"}));
  EXPECT_EQ(find(e, "usr/app/setup.py").mode, 0644u);
  EXPECT_EQ(find(e, "usr/app/setup.py").size, 29u);

  // A destination ending in "/" or naming an existing directory receives the file under its own name.
  EXPECT_EQ(paths(copy("setup.py", "usr/app/")), (std::vector<std::string>{"usr", "usr/app", "usr/app/setup.py"}));
  CopyOptions opts;
  opts.existing_dir = [](std::string_view p) -> std::optional<ExistingDir> {
    if (p == "usr" || p == "usr/app") return ExistingDir{};
    return std::nullopt;
  };
  EXPECT_EQ(paths(copy("setup.py", "usr/app", opts)),
            (std::vector<std::string>{"usr", "usr/app", "usr/app/setup.py"}));
  // At the image root.
  EXPECT_EQ(paths(copy("setup.py", "/")), (std::vector<std::string>{"setup.py"}));
}

// A source read once is placed anywhere without reading the context again: the build's secrets check and its layer
// share one walk. Placing it gives what collect_copy gives.
TEST_F(ContextCopyTest, ASourceReadOnceIsPlacedWithoutReadingTheContextAgain) {
  file("trainer/task.py", "print(1)\n");
  file("trainer/sub/data.txt", "abc");
  file("setup.py", "setup()\n");
  const DockerIgnore ignore = DockerIgnore::load(ctx_);
  trainpack::context::CopySource trainer = trainpack::context::read_copy_source(ctx_, "trainer", ignore);
  trainpack::context::CopySource setup = trainpack::context::read_copy_source(ctx_, "setup.py", ignore);
  EXPECT_TRUE(trainer.directory);
  EXPECT_EQ(paths(trainer.entries), (std::vector<std::string>{"sub", "sub/data.txt", "task.py"}));
  EXPECT_FALSE(setup.directory);
  EXPECT_EQ(setup.name, "setup.py");
  fs::remove_all(ctx_ / "trainer");
  fs::remove(ctx_ / "setup.py");

  CopyOptions opts;
  opts.existing_dir = [](std::string_view p) -> std::optional<ExistingDir> {
    if (p == "usr" || p == "usr/app") return ExistingDir{0777, 0, 0};
    return std::nullopt;
  };
  FileEntries placed = trainpack::context::place_copy(trainer, "usr/app/trainer", opts);
  EXPECT_EQ(paths(placed), (std::vector<std::string>{"usr", "usr/app", "usr/app/trainer", "usr/app/trainer/sub",
                                                     "usr/app/trainer/sub/data.txt", "usr/app/trainer/task.py"}));
  EXPECT_EQ(find(placed, "usr/app").mode, 0777u);
  EXPECT_EQ(find(placed, "usr/app/trainer/task.py").size, 9u);
  EXPECT_EQ(paths(trainpack::context::place_copy(setup, "usr/app", opts)),
            (std::vector<std::string>{"usr", "usr/app", "usr/app/setup.py"}));  // an existing directory
  EXPECT_EQ(paths(trainpack::context::place_copy(setup, "usr/app/setup.py")),
            (std::vector<std::string>{"usr", "usr/app", "usr/app/setup.py"}));
  expect_error([&] { trainpack::context::place_copy(setup, "../x"); }, "outside the image root");
}

TEST_F(ContextCopyTest, WholeContextWithDockerignore) {
  file("task.py");
  file("sub/mod.py");
  file("sub/mod.pyc");
  file("top.pyc");
  file(".git/HEAD");
  file(".git/objects/ab/cdef");
  file("venv/bin/python", "", 0755);
  file("data/big.bin");
  file("data/keep.txt");
  file(".dockerignore", "# keep the image small\n.git\nvenv/\n**/*.pyc\ndata\n!data/keep.txt\n");
  FileEntries e = copy(".", "usr/app");
  EXPECT_EQ(paths(e), (std::vector<std::string>{"usr", "usr/app", "usr/app/.dockerignore", "usr/app/data",
                                                "usr/app/data/keep.txt", "usr/app/sub", "usr/app/sub/mod.py",
                                                "usr/app/task.py"}));
  EXPECT_EQ(list_excluded(ctx_, DockerIgnore::load(ctx_)),
            (std::vector<std::string>{".git/", "data/big.bin", "sub/mod.pyc", "top.pyc", "venv/"}));
  EXPECT_NO_THROW(sort_and_check_entries(e));  // what the layer writer requires: every parent present, no dups

  // An excluded directory that Docker walks into but where nothing is re-included is listed once, as a whole.
  file(".dockerignore", "data\n!data/nothing-here\n");
  EXPECT_EQ(list_excluded(ctx_, DockerIgnore::load(ctx_)), (std::vector<std::string>{"data/"}));
  file(".dockerignore", "data\n!data/*.md\n");
  EXPECT_EQ(list_excluded(ctx_, DockerIgnore::load(ctx_)), (std::vector<std::string>{"data/"}));
  file(".dockerignore", "data\n!data/*.txt\n");
  EXPECT_EQ(list_excluded(ctx_, DockerIgnore::load(ctx_)), (std::vector<std::string>{"data/big.bin"}));
}

TEST_F(ContextCopyTest, DestinationAtTheImageRoot) {
  file("trainer/task.py");
  file("trainer/sub/x.py");
  std::vector<std::string> want{"sub", "sub/x.py", "task.py"};
  EXPECT_EQ(paths(copy("trainer", "")), want);
  EXPECT_EQ(paths(copy("trainer", ".")), want);
  EXPECT_EQ(paths(copy("trainer", "/")), want);
}

TEST_F(ContextCopyTest, DockerignoreCanExcludeItself) {
  file("task.py");
  file(".dockerignore", ".dockerignore\n");
  EXPECT_EQ(paths(copy(".", "usr/app")), (std::vector<std::string>{"usr", "usr/app", "usr/app/task.py"}));
}

TEST_F(ContextCopyTest, SymlinksInsideTheTreeAreCopiedAsSymlinks) {
  file("trainer/task.py");
  dir("trainer/sub");
  file("trainer/sub/x.py");
  symlink("task.py", "trainer/alias.py");
  symlink("/etc/passwd", "trainer/abs");          // never followed, target kept verbatim
  symlink("sub", "trainer/subdir");               // a directory symlink is not walked into
  symlink("../../../nowhere", "trainer/dangling");  // dangling and pointing outside: still just a symlink
  FileEntries e = copy("trainer", "usr/app/trainer");
  for (const char* name : {"alias.py", "abs", "subdir", "dangling"}) {
    const FileEntry& l = find(e, std::string("usr/app/trainer/") + name);
    EXPECT_EQ(l.type, FileEntry::Type::kSymlink) << name;
    EXPECT_EQ(l.mode, 0777u);
  }
  EXPECT_EQ(find(e, "usr/app/trainer/abs").link_target, "/etc/passwd");
  EXPECT_EQ(find(e, "usr/app/trainer/subdir").link_target, "sub");
  EXPECT_EQ(find(e, "usr/app/trainer/dangling").link_target, "../../../nowhere");
  EXPECT_EQ(std::count_if(e.begin(), e.end(), [](auto& x) { return x.path.starts_with("usr/app/trainer/subdir/"); }),
            0);
}

TEST_F(ContextCopyTest, SymlinkedSourceIsFollowedInsideTheContext) {
  file("real/a.py", "a");
  file("real/b/c.py", "c");
  symlink("real", "alias");
  symlink("/real", "absalias");  // absolute targets are read from the context root, as BuildKit does
  symlink("real/a.py", "file_alias.py");
  symlink("alias", "chain");
  std::vector<std::string> want{"usr", "usr/app", "usr/app/t", "usr/app/t/a.py", "usr/app/t/b", "usr/app/t/b/c.py"};
  EXPECT_EQ(paths(copy("alias", "usr/app/t")), want);
  EXPECT_EQ(paths(copy("absalias", "usr/app/t")), want);
  EXPECT_EQ(paths(copy("chain", "usr/app/t")), want);
  EXPECT_EQ(paths(copy("alias/b/", "usr/app/t")), (std::vector<std::string>{"usr", "usr/app", "usr/app/t",
                                                                             "usr/app/t/c.py"}));
  FileEntries f = copy("file_alias.py", "usr/app/");
  EXPECT_EQ(paths(f), (std::vector<std::string>{"usr", "usr/app", "usr/app/file_alias.py"}));  // named as written
  EXPECT_EQ(find(f, "usr/app/file_alias.py").type, FileEntry::Type::kRegular);
  EXPECT_EQ(find(f, "usr/app/file_alias.py").size, 1u);
}

TEST_F(ContextCopyTest, EscapesAreRefused) {
  file("inside.py");
  fs::create_directories(dir_->path() / "outside");
  std::ofstream(dir_->path() / "outside" / "secret.txt") << "s";
  expect_error([&] { copy("../outside", "usr/app/x"); }, "is outside the package directory");
  expect_error([&] { copy("a/../../outside", "usr/app/x"); }, "is outside the package directory");
  expect_error([&] { copy((dir_->path() / "outside").string(), "usr/app/x"); }, "is outside the package directory");
  symlink("../outside", "out");
  expect_error([&] { copy("out", "usr/app/x"); }, "is outside the package directory");
  symlink("../outside/secret.txt", "secret.txt");
  expect_error([&] { copy("secret.txt", "usr/app/secret.txt"); }, "is outside the package directory");
  // An absolute source inside the context is fine.
  EXPECT_EQ(paths(copy((ctx_ / "inside.py").string(), "usr/app/inside.py")),
            (std::vector<std::string>{"usr", "usr/app", "usr/app/inside.py"}));
  expect_error([&] { copy("inside.py", "../etc/x"); }, "outside the image root");
}

TEST_F(ContextCopyTest, SourcesExcludedByDockerignoreAreNotFound) {
  file("trainer/task.py");
  file("setup.py");
  file("data/keep.txt");
  file("data/drop.txt");
  symlink("trainer", "trainer_link");
  file(".dockerignore", "trainer\nsetup.py\ndata\n!data/keep.txt\n");
  Error e = expect_error([&] { copy("trainer", "usr/app/trainer"); }, "not found");
  EXPECT_NE(e.hint().find(".dockerignore"), std::string::npos) << e.hint();
  EXPECT_NE(e.hint().find("\"trainer\""), std::string::npos) << e.hint();
  Error f = expect_error([&] { copy("setup.py", "usr/app/setup.py"); }, "not found");
  EXPECT_NE(f.hint().find(".dockerignore"), std::string::npos);
  // Through a symlink that is itself kept: its target is excluded.
  expect_error([&] { copy("trainer_link", "usr/app/trainer"); }, "not found");
  // Below an excluded directory.
  expect_error([&] { copy("trainer/task.py", "usr/app/task.py"); }, "not found");
  // An excluded directory with a re-included child is there, holding only that child.
  EXPECT_EQ(paths(copy("data", "usr/app/data")),
            (std::vector<std::string>{"usr", "usr/app", "usr/app/data", "usr/app/data/keep.txt"}));
  // A plain missing source: no .dockerignore hint.
  Error g = expect_error([&] { copy("missing.py", "usr/app/missing.py"); }, "not found");
  EXPECT_TRUE(g.hint().empty());
}

TEST_F(ContextCopyTest, UnreadableAndSpecialFiles) {
  file("trainer/task.py");
  // A dangling symlink as the source: nothing to read.
  symlink("gone.py", "dangling.py");
  expect_error([&] { copy("dangling.py", "usr/app/x.py"); }, "dangling.py");
  // A FIFO inside the tree is refused, naming it...
  ASSERT_EQ(::mkfifo((ctx_ / "trainer/pipe").c_str(), 0644), 0);
  Error e = expect_error([&] { copy("trainer", "usr/app/trainer"); }, "pipe");
  EXPECT_NE(std::string(e.what()).find("FIFO"), std::string::npos);
  EXPECT_NE(e.hint().find(".dockerignore"), std::string::npos);
  // ...unless .dockerignore excludes it.
  file(".dockerignore", "trainer/pipe\n");
  EXPECT_EQ(paths(copy("trainer", "t")), (std::vector<std::string>{"t", "t/task.py"}));
  // A socket is skipped.
  fs::remove(ctx_ / ".dockerignore");
  fs::remove(ctx_ / "trainer/pipe");
  std::string sock_path = (ctx_ / "trainer/sock").string();
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (sock_path.size() < sizeof(addr.sun_path)) {
    std::strcpy(addr.sun_path, sock_path.c_str());
    ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(paths(copy("trainer", "t")), (std::vector<std::string>{"t", "t/task.py"}));
  }
  ::close(s);
}

// A mode-0000 file needs a non-root reader to be unreadable: see BuildTest.UnreadableFileFailsForAnUnprivilegedUser
// (integration), which runs trainpack as nobody.

// Creates the same small tree under `mask`, letting the umask decide the on-disk modes.
void make_tree_under_umask(const fs::path& root, mode_t mask) {
  mode_t old = ::umask(mask);
  fs::create_directories(root / "pkg" / "trainer" / "sub");  // create_directories uses 0777 & ~umask
  for (auto [rel, mode] : {std::pair<const char*, mode_t>{"pkg/trainer/task.py", 0666},
                           {"pkg/trainer/run.sh", 0777},
                           {"pkg/trainer/sub/data.csv", 0666}}) {
    int fd = ::open((root / rel).c_str(), O_CREAT | O_WRONLY | O_TRUNC, mode);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "x", 1), 1);
    ::close(fd);
  }
  ::umask(old);
}

TEST(ContextCopyUmask, ModesDoNotDependOnTheUmask) {
  trainpack::ScopedDir tmp(trainpack::make_temp_dir({}, "trainpack-umask-"));
  make_tree_under_umask(tmp.path() / "a", 002);
  make_tree_under_umask(tmp.path() / "b", 022);
  struct stat st;
  ASSERT_EQ(::stat((tmp.path() / "a/pkg/trainer/task.py").c_str(), &st), 0);
  ASSERT_EQ(st.st_mode & 0777, 0664u);  // the trees really differ on disk
  ASSERT_EQ(::stat((tmp.path() / "b/pkg/trainer/task.py").c_str(), &st), 0);
  ASSERT_EQ(st.st_mode & 0777, 0644u);

  auto modes = [](const fs::path& ctx) {
    std::map<std::string, std::uint32_t> m;
    for (const auto& e : collect_copy(ctx, "trainer", "usr/app/trainer", DockerIgnore::load(ctx))) m[e.path] = e.mode;
    return m;
  };
  auto a = modes(tmp.path() / "a/pkg");
  auto b = modes(tmp.path() / "b/pkg");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a["usr/app/trainer/task.py"], 0644u);
  EXPECT_EQ(a["usr/app/trainer/run.sh"], 0755u);
  EXPECT_EQ(a["usr/app/trainer/sub"], 0755u);
}

TEST_F(ContextCopyTest, SpecialBitsAreDropped) {
  file("bin/tool", "x", 04755);
  file("bin/grouped", "x", 02750);
  file("bin/plain", "x", 0640);
  dir("shared");
  ASSERT_EQ(::chmod((ctx_ / "shared").c_str(), 01777), 0);
  file("shared/f", "x", 0644);
  FileEntries e = copy(".", "app");
  EXPECT_EQ(find(e, "app/bin/tool").mode, 0755u);
  EXPECT_EQ(find(e, "app/bin/grouped").mode, 0755u);
  EXPECT_EQ(find(e, "app/bin/plain").mode, 0644u);
  EXPECT_EQ(find(e, "app/shared").mode, 0755u);
}

TEST_F(ContextCopyTest, HardLinksBecomeIndependentFiles) {
  file("a.txt", "same");
  ASSERT_EQ(::link((ctx_ / "a.txt").c_str(), (ctx_ / "b.txt").c_str()), 0);
  FileEntries e = copy(".", "app");
  EXPECT_EQ(find(e, "app/a.txt").type, FileEntry::Type::kRegular);
  EXPECT_EQ(find(e, "app/b.txt").type, FileEntry::Type::kRegular);
  EXPECT_EQ(find(e, "app/b.txt").size, 4u);
}

TEST_F(ContextCopyTest, WildcardsAndEmptySourcesAreRefused) {
  file("a.py");
  expect_error([&] { copy("*.py", "app/"); }, "wildcard");
  expect_error([&] { copy("", "app/"); }, "empty COPY source");
}

TEST_F(ContextCopyTest, MissingContextIsAnError) {
  expect_error([&] { collect_copy(ctx_ / "nope", ".", "app", DockerIgnore()); }, "package directory");
}

}  // namespace
