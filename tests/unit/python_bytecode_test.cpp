#include "python/bytecode.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "support/fs.h"
#include "support/process.h"

using namespace trainpack::python;
namespace fs = std::filesystem;

namespace {

std::uint32_t le32(const std::string& b, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

BytecodeSource source(std::string image_path, std::string text) {
  return {std::move(image_path), "", [text](const fs::path& to) { trainpack::write_file_atomic(to, text); }};
}

}  // namespace

TEST(PythonBytecode, HostPythonOfTheImagesVersionCompilesLikePip) {
  trainpack::ScopedDir work(trainpack::make_temp_dir("", "tp-pyc-"));
  auto python = find_host_python("3.11", "", work.path() / "scratch");
  if (!python) GTEST_SKIP() << "no host python3.11 (Debian 12 has it as /usr/bin/python3.11)";
  EXPECT_TRUE(python->version.starts_with("3.11.")) << python->version;
  EXPECT_EQ(python->major_minor, "3.11");
  EXPECT_FALSE(python->from_image);
  EXPECT_FALSE(find_host_python("3.99", "", work.path() / "scratch").has_value());

  const std::string good = "X = 1\ndef f():\n    return X\n";
  auto out = compile_bytecode(*python,
                              {source("usr/lib/python3/dist-packages/pkg/m.py", good),
                               source("usr/lib/python3/dist-packages/pkg/bad.py", "def (:\n")},
                              {1234, 0, PycInvalidation::kTimestamp}, work.path() / "t");
  ASSERT_EQ(out.size(), 1u) << "a source that does not compile is left out";
  EXPECT_EQ(out[0].source_image_path, "usr/lib/python3/dist-packages/pkg/m.py");
  EXPECT_EQ(out[0].image_path, "usr/lib/python3/dist-packages/pkg/__pycache__/m.cpython-311.pyc");
  std::string pyc = trainpack::read_file(out[0].file);
  ASSERT_GT(pyc.size(), 16u);
  EXPECT_EQ(pyc.substr(0, 4), std::string("\xa7\x0d\x0d\x0a", 4)) << "CPython 3.11 magic";
  EXPECT_EQ(le32(pyc, 4), 0u) << "timestamp invalidation";
  EXPECT_EQ(le32(pyc, 8), 1234u) << "the layer's mtime of the source";
  EXPECT_EQ(le32(pyc, 12), good.size());
  // co_filename is the path in the image, as pip's compileall records it.
  auto r = trainpack::run_process(
      python->command({"-c", "import marshal,sys; print(marshal.loads(open(sys.argv[1],'rb').read()[16:]).co_filename)",
                       out[0].file.string()}),
      "", std::chrono::seconds(30), python->process_options());
  EXPECT_EQ(r.out, "/usr/lib/python3/dist-packages/pkg/m.py\n") << r.err;

  auto optimized = compile_bytecode(*python, {source("opt/venv/lib/python3.11/site-packages/a.py", "assert True\n")},
                                    {0, 1, PycInvalidation::kTimestamp}, work.path() / "o");
  ASSERT_EQ(optimized.size(), 1u);
  EXPECT_EQ(optimized[0].image_path, "opt/venv/lib/python3.11/site-packages/__pycache__/a.cpython-311.opt-1.pyc");
}

// PEP 552: with SOURCE_DATE_EPOCH in the image's environment pip's py_compile writes checked-hash .pyc (flags 3,
// then the source's SipHash instead of mtime and size), whatever the mtime.
TEST(PythonBytecode, SourceDateEpochInTheImageMeansCheckedHashPycs) {
  EXPECT_EQ(default_invalidation(""), PycInvalidation::kTimestamp);
  EXPECT_EQ(default_invalidation("0"), PycInvalidation::kCheckedHash);
  EXPECT_EQ(default_invalidation("1700000000"), PycInvalidation::kCheckedHash);
  trainpack::ScopedDir work(trainpack::make_temp_dir("", "tp-pyc-"));
  auto python = find_host_python("3.11", "", work.path() / "scratch");
  if (!python) GTEST_SKIP() << "no host python3.11";
  const std::string text = "Y = 2\n";
  auto a = compile_bytecode(*python, {source("usr/local/lib/python3.11/dist-packages/y.py", text)},
                            {1234, 0, PycInvalidation::kCheckedHash}, work.path() / "a");
  auto b = compile_bytecode(*python, {source("usr/local/lib/python3.11/dist-packages/y.py", text)},
                            {99, 0, PycInvalidation::kCheckedHash}, work.path() / "b");
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  std::string pyc = trainpack::read_file(a[0].file);
  EXPECT_EQ(le32(pyc, 4), 3u) << "hash-based, checked";
  EXPECT_EQ(pyc, trainpack::read_file(b[0].file)) << "the mtime does not enter a hash-based .pyc";
  auto r = trainpack::run_process(
      python->command(
          {"-c", "import importlib.util,sys; sys.stdout.write(importlib.util.source_hash(sys.argv[1].encode()).hex())",
           text}),
      "", std::chrono::seconds(30), python->process_options());
  std::string hash;
  for (std::size_t i = 8; i < 16; ++i) {
    static const char* hex = "0123456789abcdef";
    hash += hex[static_cast<unsigned char>(pyc[i]) >> 4];
    hash += hex[static_cast<unsigned char>(pyc[i]) & 15];
  }
  EXPECT_EQ(hash, r.out) << r.err;
}
