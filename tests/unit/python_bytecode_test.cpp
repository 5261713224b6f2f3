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
  return {std::move(image_path), [text](const fs::path& to) { trainpack::write_file_atomic(to, text); }};
}

}  // namespace

TEST(PythonBytecode, HostPythonOfTheImagesVersionCompilesLikePip) {
  auto python = find_host_python("3.11");
  if (!python) GTEST_SKIP() << "no host python3.11 (Debian 12 has it as /usr/bin/python3.11)";
  EXPECT_TRUE(python->version.starts_with("3.11.")) << python->version;
  EXPECT_FALSE(find_host_python("3.99").has_value());

  trainpack::ScopedDir work(trainpack::make_temp_dir("", "tp-pyc-"));
  const std::string good = "X = 1\ndef f():\n    return X\n";
  auto out = compile_bytecode(*python,
                              {source("usr/lib/python3/dist-packages/pkg/m.py", good),
                               source("usr/lib/python3/dist-packages/pkg/bad.py", "def (:\n")},
                              1234, 0, work.path());
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
      {python->path, "-c", "import marshal,sys; print(marshal.loads(open(sys.argv[1],'rb').read()[16:]).co_filename)",
       out[0].file.string()},
      "", std::chrono::seconds(30));
  EXPECT_EQ(r.out, "/usr/lib/python3/dist-packages/pkg/m.py\n") << r.err;

  auto optimized = compile_bytecode(*python, {source("opt/venv/lib/python3.11/site-packages/a.py", "assert True\n")},
                                    0, 1, work.path() / "o");
  ASSERT_EQ(optimized.size(), 1u);
  EXPECT_EQ(optimized[0].image_path, "opt/venv/lib/python3.11/site-packages/__pycache__/a.cpython-311.opt-1.pyc");
}
