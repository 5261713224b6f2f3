// python/sdist: sdists unpacked as pip's untar_file/unzip_file do (leading directory stripped, modes from the
// execute bit, nothing outside the destination), and the native-code check.
#include "python/sdist.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "support/error.h"
#include "support/fs.h"
#include "support/process.h"

using namespace trainpack::python;
namespace fs = std::filesystem;

namespace {

void run_ok(const std::vector<std::string>& argv) {
  auto r = trainpack::run_process(argv, "", std::chrono::seconds(30));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// One member of an archive written by write_archive: a directory (name ends in '/'), a symlink, or a file.
struct Member {
  std::string name;
  std::string data = {};
  int mode = 0644;
  std::string symlink = {};
};

// A tar (pax) or zip archive of `members`, written with libarchive as Python's tarfile and zipfile would write it:
// names as given (even "../x"), modes kept.
void write_archive(const fs::path& file, bool zip, const std::vector<Member>& members) {
  archive* a = archive_write_new();
  if (zip) archive_write_set_format_zip(a);
  else archive_write_set_format_pax_restricted(a);
  ASSERT_EQ(archive_write_open_filename(a, file.c_str()), ARCHIVE_OK) << archive_error_string(a);
  for (const Member& m : members) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, m.name.c_str());
    if (m.name.ends_with('/')) {
      archive_entry_set_filetype(e, AE_IFDIR);
      archive_entry_set_perm(e, 0755);
    } else if (!m.symlink.empty()) {
      archive_entry_set_filetype(e, AE_IFLNK);
      archive_entry_set_symlink(e, m.symlink.c_str());
      archive_entry_set_perm(e, 0777);
    } else {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_perm(e, m.mode);
      archive_entry_set_size(e, static_cast<la_int64_t>(m.data.size()));
    }
    EXPECT_EQ(archive_write_header(a, e), ARCHIVE_OK) << archive_error_string(a);
    if (!m.data.empty()) archive_write_data(a, m.data.data(), m.data.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

// A project tree pkg-1.0/ with setup.py, a package and an executable script.
fs::path project(const fs::path& work) {
  fs::path top = work / "pkg-1.0";
  fs::create_directories(top / "pkg");
  trainpack::write_file_atomic(top / "setup.py", "from setuptools import setup\nsetup()\n");
  trainpack::write_file_atomic(top / "pkg" / "__init__.py", "");
  trainpack::write_file_atomic(top / "run.sh", "#!/bin/sh\n");
  fs::permissions(top / "run.sh", fs::perms(0700));
  return top;
}

}  // namespace

TEST(Sdist, UnpacksWithoutTheLeadingDirectoryWithPipsModesAndTheLayerMtime) {
  trainpack::ScopedDir work(trainpack::make_temp_dir("", "tp-sdist-"));
  project(work.path());
  run_ok({"tar", "-czf", (work.path() / "pkg-1.0.tar.gz").string(), "-C", work.path().string(), "pkg-1.0"});
  write_archive(work.path() / "pkg-1.0.zip", /*zip=*/true,
                {{"pkg-1.0/"}, {"pkg-1.0/setup.py", trainpack::read_file(work.path() / "pkg-1.0" / "setup.py")},
                 {"pkg-1.0/pkg/"}, {"pkg-1.0/pkg/__init__.py", ""}, {"pkg-1.0/run.sh", "#!/bin/sh\n", 0700}});
  for (const char* archive : {"pkg-1.0.tar.gz", "pkg-1.0.zip"}) {
    SCOPED_TRACE(archive);
    fs::path out = unpack_sdist(work.path() / archive, work.path() / (std::string(archive) + ".d"), 315532800);
    EXPECT_TRUE(fs::is_regular_file(out / "setup.py"));
    EXPECT_TRUE(fs::is_regular_file(out / "pkg" / "__init__.py"));
    struct stat st {};
    ASSERT_EQ(::stat((out / "run.sh").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755u);
    ASSERT_EQ(::stat((out / "setup.py").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    EXPECT_EQ(st.st_mtime, 315532800);
  }
}

TEST(Sdist, AMemberOutsideTheDestinationIsRefusedAndAnEscapingSymlinkSkipped) {
  trainpack::ScopedDir work(trainpack::make_temp_dir("", "tp-sdist-"));
  const std::string evil = (work.path() / "evil.tar").string();
  write_archive(evil, /*zip=*/false, {{"p-1.0/setup.py", "x"}, {"p-1.0/link", "", 0777, "../../etc"}});
  write_archive(evil + ".bad", /*zip=*/false, {{"p-1.0/setup.py", "x"}, {"p-1.0/../../outside", "x"}});
  fs::path out = unpack_sdist(evil, work.path() / "ok", 0);
  EXPECT_TRUE(fs::is_regular_file(out / "setup.py"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(out / "link")));
  EXPECT_THROW(unpack_sdist(evil + ".bad", work.path() / "bad", 0), trainpack::Error);
  EXPECT_FALSE(fs::exists(work.path() / "outside"));
}

TEST(Sdist, NativeSourcesAreListed) {
  trainpack::ScopedDir work(trainpack::make_temp_dir("", "tp-sdist-"));
  fs::path top = project(work.path());
  run_ok({"tar", "-czf", (work.path() / "pure.tar.gz").string(), "-C", work.path().string(), "pkg-1.0"});
  EXPECT_TRUE(native_sources_in_sdist(work.path() / "pure.tar.gz").empty());
  trainpack::write_file_atomic(top / "pkg" / "_speed.c", "int x;\n");
  run_ok({"tar", "-czf", (work.path() / "native.tar.gz").string(), "-C", work.path().string(), "pkg-1.0"});
  EXPECT_EQ(native_sources_in_sdist(work.path() / "native.tar.gz"), (std::vector<std::string>{"pkg/_speed.c"}));
  trainpack::write_file_atomic(work.path() / "junk.tar.gz", "not an archive");
  EXPECT_THROW(native_sources_in_sdist(work.path() / "junk.tar.gz"), trainpack::Error);
}
