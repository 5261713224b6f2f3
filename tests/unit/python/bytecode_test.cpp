#include "python/bytecode.h"

#include <gtest/gtest.h>

#include <algorithm>
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
  std::uint64_t size = text.size();
  return {std::move(image_path), "", size, [text] { return text; }};
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
                              {1234, 0, PycInvalidation::kTimestamp});
  ASSERT_EQ(out.size(), 1u) << "a source that does not compile is left out";
  EXPECT_EQ(out[0].source_image_path, "usr/lib/python3/dist-packages/pkg/m.py");
  EXPECT_EQ(out[0].image_path, "usr/lib/python3/dist-packages/pkg/__pycache__/m.cpython-311.pyc");
  const std::string& pyc = out[0].pyc;
  ASSERT_GT(pyc.size(), 16u);
  EXPECT_EQ(pyc.substr(0, 4), std::string("\xa7\x0d\x0d\x0a", 4)) << "CPython 3.11 magic";
  EXPECT_EQ(le32(pyc, 4), 0u) << "timestamp invalidation";
  EXPECT_EQ(le32(pyc, 8), 1234u) << "the layer's mtime of the source";
  EXPECT_EQ(le32(pyc, 12), good.size());
  // co_filename is the path in the image, as pip's compileall records it.
  trainpack::write_file_atomic(work.path() / "m.pyc", pyc);
  auto r = trainpack::run_process(
      python->command({"-c", "import marshal,sys; print(marshal.loads(open(sys.argv[1],'rb').read()[16:]).co_filename)",
                       (work.path() / "m.pyc").string()}),
      "", std::chrono::seconds(30), python->process_options());
  EXPECT_EQ(r.out, "/usr/lib/python3/dist-packages/pkg/m.py\n") << r.err;

  auto optimized = compile_bytecode(*python, {source("opt/venv/lib/python3.11/site-packages/a.py", "assert True\n")},
                                    {0, 1, PycInvalidation::kTimestamp});
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
                            {1234, 0, PycInvalidation::kCheckedHash});
  auto b = compile_bytecode(*python, {source("usr/local/lib/python3.11/dist-packages/y.py", text)},
                            {99, 0, PycInvalidation::kCheckedHash});
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  const std::string& pyc = a[0].pyc;
  EXPECT_EQ(le32(pyc, 4), 3u) << "hash-based, checked";
  EXPECT_EQ(pyc, b[0].pyc) << "the mtime does not enter a hash-based .pyc";
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

// What py_compile writes, for real modules (packages of the host's stdlib, a coding cookie, a syntax error among
// them), in both invalidation modes and at -O2, over enough files for several batches: the same header and the same
// code object, co_filename included. Not always the same bytes: marshal flags a string that something else in the
// process also references (FLAG_REF), so the bytes depend on what the compiling process has loaded (CPython
// gh-78274) — pip's own process is not ours either. Batching changes nothing: a file compiled alone gives the bytes
// it gives among the others.
TEST(PythonBytecode, InMemoryCompilationGivesPyCompilesCode) {
  trainpack::ScopedDir work(trainpack::make_temp_dir("", "tp-pyc-"));
  auto python = find_host_python("3.11", "", work.path() / "scratch");
  if (!python) GTEST_SKIP() << "no host python3.11";
  auto where = trainpack::run_process(python->command({"-c", "import email,os; print(os.path.dirname(email.__file__))"}),
                                      "", std::chrono::seconds(30), python->process_options());
  ASSERT_EQ(where.exit_code, 0) << where.err;
  fs::path stdlib = fs::path(where.out.substr(0, where.out.find('\n'))).parent_path();
  std::vector<fs::path> files;
  for (const char* package : {"email", "json", "xml", "importlib", "asyncio", "unittest", "logging", "http"})
    for (const auto& entry : fs::recursive_directory_iterator(stdlib / package))
      if (entry.path().extension() == ".py") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<BytecodeSource> sources;
  for (const fs::path& f : files)
    sources.push_back(source("usr/lib/python3.11/" + f.lexically_relative(stdlib).string(), trainpack::read_file(f)));
  sources.push_back(source("usr/lib/python3.11/latin.py", "# -*- coding: latin-1 -*-\nS = '\xe9'\n"));
  sources.push_back(source("usr/lib/python3.11/broken.py", "def (:\n"));
  ASSERT_GT(sources.size(), 100u);

  for (BytecodeOptions opts : {BytecodeOptions{1700000000, 0, PycInvalidation::kTimestamp},
                               BytecodeOptions{0, 2, PycInvalidation::kCheckedHash}}) {
    std::vector<Bytecode> ours = compile_bytecode(*python, sources, opts);
    ASSERT_EQ(ours.size(), sources.size() - 1) << "all but the syntax error";
    for (std::size_t i : {std::size_t{0}, ours.size() / 2, ours.size() - 1})
      EXPECT_EQ(compile_bytecode(*python, {sources[i]}, opts).at(0).pyc, ours[i].pyc) << sources[i].image_path;
    // py_compile over copies given the layer's mtime, as pip runs it; a checker compares each pair.
    fs::path dir = work.path() / ("o" + std::to_string(opts.optimization));
    fs::create_directories(dir);
    std::string list;
    for (std::size_t i = 0; i < ours.size(); ++i) {
      std::string n = (dir / std::to_string(i)).string();
      trainpack::write_file_atomic(n + ".py", sources[i].read());
      trainpack::write_file_atomic(n + ".ours", ours[i].pyc);
      list += n + "\t/" + sources[i].image_path + "\n";
    }
    trainpack::write_file_atomic(dir / "list", list);
    std::string check = "import marshal, os, py_compile, sys\n"
                        "mode = py_compile.PycInvalidationMode[sys.argv[2]]\n"
                        "for line in open(sys.argv[1]):\n"
                        "    n, dfile = line.rstrip('\\n').split('\\t')\n"
                        "    os.utime(n + '.py', (" + std::to_string(opts.mtime) + ",) * 2)\n"
                        "    py_compile.compile(n + '.py', cfile=n + '.pyc', dfile=dfile, doraise=True, optimize=" +
                        std::to_string(opts.optimization) + ", invalidation_mode=mode)\n"
                        "    a, b = open(n + '.ours', 'rb').read(), open(n + '.pyc', 'rb').read()\n"
                        "    ca, cb = marshal.loads(a[16:]), marshal.loads(b[16:])\n"
                        "    if a[:16] != b[:16] or ca != cb or ca.co_filename != dfile or cb.co_filename != dfile:\n"
                        "        print('differs:', dfile)\n";
    const char* mode = opts.invalidation == PycInvalidation::kCheckedHash ? "CHECKED_HASH" : "TIMESTAMP";
    auto r = trainpack::run_process(python->command({"-c", check, (dir / "list").string(), mode}), "",
                                    std::chrono::seconds(120), python->process_options());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "") << "at -O" << opts.optimization;
  }
}

// One compiler serves every wheel of a step: its interpreters start once (at most one per core), not once per call.
TEST(PythonBytecode, ACompilerStartsItsInterpretersOnceForManyCalls) {
  trainpack::ScopedDir work(trainpack::make_temp_dir("", "tp-pyc-"));
  auto python = find_host_python("3.11", "", work.path() / "scratch");
  if (!python) GTEST_SKIP() << "no host python3.11 (Debian 12 has it as /usr/bin/python3.11)";
  Interpreter counted = *python;
  const fs::path starts = work.path() / "starts";
  counted.argv = {"/bin/sh", "-c", "echo started >> '" + starts.string() + "'; exec \"$0\" \"$@\"",
                  python->argv.at(0)};
  BytecodeCompiler compiler(counted);
  BytecodeOptions options{1234, 0, PycInvalidation::kTimestamp};
  for (int call = 0; call < 5; ++call) {
    BytecodeSource module = source("usr/lib/python3/dist-packages/m" + std::to_string(call) + ".py",
                                   "X = " + std::to_string(call) + "\n");
    auto out = compiler.compile({module}, options);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].pyc, compile_bytecode(*python, {module}, options).at(0).pyc);
  }
  std::string log = trainpack::read_file(starts);
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << "one-file calls run one after another on one interpreter";
}
