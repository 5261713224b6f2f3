// python/sdist: sdists unpacked as pip's untar_file/unzip_file do (leading directory stripped, modes from the
// execute bit, nothing outside the destination), and the native-code check.
#include "python/sdist.h"

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
  run_ok({"sh", "-c", "cd " + work.path().string() + " && zip -qr pkg-1.0.zip pkg-1.0 || python3 -m zipfile -c "
                          "pkg-1.0.zip pkg-1.0"});
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
  run_ok({"python3", "-c",
          "import io, sys, tarfile\n"
          "t = tarfile.open(sys.argv[1], 'w')\n"
          "def add(name, data=b'x'):\n"
          "    i = tarfile.TarInfo(name); i.size = len(data); t.addfile(i, io.BytesIO(data))\n"
          "add('p-1.0/setup.py')\n"
          "l = tarfile.TarInfo('p-1.0/link'); l.type = tarfile.SYMTYPE; l.linkname = '../../etc'; t.addfile(l)\n"
          "t.close()\n"
          "t = tarfile.open(sys.argv[1] + '.bad', 'w')\n"
          "add('p-1.0/setup.py'); add('p-1.0/../../outside')\n"
          "t.close()\n",
          evil});
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
