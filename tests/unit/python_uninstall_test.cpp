// pip's uninstall set (req_uninstall.py): RECORD paths, legacy .pyc beside .py, and compress_for_rename's rule that
// a directory goes as a whole only when every file under it is being removed.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "python/uninstall.h"

using trainpack::python::uninstall_paths;

namespace {

struct Tree {
  std::set<std::string> files;
  std::vector<std::string> under(const std::string& dir) const {
    std::vector<std::string> out;
    for (const auto& f : files)
      if (f.starts_with(dir + "/")) out.push_back(f);
    return out;
  }
  bool exists(const std::string& p) const {
    return files.count(p) || std::any_of(files.begin(), files.end(), [&](const auto& f) { return f.starts_with(p + "/"); });
  }
};

}  // namespace

TEST(Uninstall, WholeDirectoriesWhenEveryFileGoesSingleFilesOtherwise) {
  const std::string site = "/usr/local/lib/python3.11/dist-packages";
  const std::string s = "usr/local/lib/python3.11/dist-packages/";
  Tree t{{s + "foo/__init__.py", s + "foo/__pycache__/__init__.cpython-311.pyc", s + "foo-1.0.dist-info/METADATA",
          s + "foo-1.0.dist-info/RECORD", s + "foo-1.0.dist-info/INSTALLER", s + "shared/a.py", s + "shared/other.py",
          s + "other/keep.py", "usr/local/bin/foo", "usr/local/bin/other"}};
  std::string record =
      "foo/__init__.py,sha256=x,1\r\n"
      "foo/__pycache__/__init__.cpython-311.pyc,,\r\n"
      "foo-1.0.dist-info/METADATA,sha256=y,2\r\n"
      "foo-1.0.dist-info/INSTALLER,sha256=z,4\r\n"
      "foo-1.0.dist-info/RECORD,,\r\n"
      "\"shared/a.py\",sha256=q,3\r\n"
      "../../../bin/foo,sha256=w,5\r\n"
      "../../../../../etc/escape,,\r\n";
  auto got = uninstall_paths(record, site, [&](const std::string& d) { return t.under(d); },
                             [&](const std::string& p) { return t.exists(p); });
  EXPECT_EQ(got.directories, (std::vector<std::string>{s + "foo", s + "foo-1.0.dist-info"}));
  // shared/ keeps other.py and bin/ keeps other, so a.py and bin/foo go alone (pip would take a directory left
  // empty with it); the escaping path is clamped to the root and absent, so ignored.
  EXPECT_EQ(got.files, (std::vector<std::string>{"usr/local/bin/foo", s + "shared/a.py"}));
}
