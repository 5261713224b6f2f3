// The generated Dockerfile against gcloud 578.0.0's output (lib/googlecloudsdk/command_lib/ai/docker/build.py), byte for byte.
#include "gcloud/dockerfile.h"
#include "support/python_strings.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using trainpack::gcloud::DockerfileSpec;
using trainpack::gcloud::is_vertex_prebuilt_image;
using trainpack::gcloud::json_list;
using trainpack::python_json_string;
using trainpack::gcloud::module_to_path;
using trainpack::gcloud::python_dedent;
using trainpack::gcloud::render_dockerfile;
using trainpack::gcloud::shlex_quote;

constexpr const char* kPython = "python:3.10";
constexpr const char* kPrebuilt = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310:latest";

std::string golden(const std::string& name) {
  const std::filesystem::path path = std::filesystem::path(TRAINPACK_TESTDATA_DIR) / "dockerfile" / name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing golden file " << path;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

DockerfileSpec script_spec(std::string base, std::string script) {
  DockerfileSpec spec;
  spec.base_image = std::move(base);
  spec.script = std::move(script);
  return spec;
}

DockerfileSpec module_spec(std::string base, std::string module) {
  DockerfileSpec spec;
  spec.base_image = std::move(base);
  spec.python_module = std::move(module);
  return spec;
}

// E/E': setup.py and requirements.txt at the root and every list flag.
DockerfileSpec everything_spec(std::string base) {
  DockerfileSpec spec = module_spec(std::move(base), "trainer.task");
  spec.has_setup_py = true;
  spec.has_requirements_txt = true;
  spec.requirements = {"pandas==1.2.0", "scipy>=1.3.0"};
  spec.extra_packages = {"dep/foo.tar.gz", "bar.whl"};
  spec.extra_dirs = {"dataset", "config"};
  return spec;
}

// ----- exact outputs -----

TEST(Dockerfile, GoldenA_ScriptInSubdirOnPlainPython) {
  EXPECT_EQ(render_dockerfile(script_spec(kPython, "trainer/task.py")), golden("A.Dockerfile"));
}

TEST(Dockerfile, GoldenA_AsCString) {
  // Verbatim as gcloud 578.0.0 writes it, independent of the golden file's bytes on disk.
  const std::string expected =
      "\nFROM python:3.10\n# The directory is created by root. This sets permissions so that any user can\n# access the "
      "folder.\nRUN mkdir -m 777 -p /usr/app /home\nWORKDIR /usr/app\nENV HOME=/home\n\n# Keeps Python from generating "
      ".pyc files in the container\nENV PYTHONDONTWRITEBYTECODE=1\n\n# Copy the source directory into the docker "
      "container.\nCOPY [\"trainer\", \"trainer\"]\n\n\nENTRYPOINT [\"python\", \"trainer/task.py\"]";
  EXPECT_EQ(render_dockerfile(script_spec(kPython, "trainer/task.py")), expected);
  EXPECT_EQ(golden("A.Dockerfile"), expected);
}

TEST(Dockerfile, GoldenB_RootScriptOnPrebuilt) {
  EXPECT_EQ(render_dockerfile(script_spec(kPrebuilt, "task.py")), golden("B.Dockerfile"));
}

TEST(Dockerfile, GoldenC_ShellScript) {
  EXPECT_EQ(render_dockerfile(script_spec(kPython, "scripts/run.sh")), golden("C.Dockerfile"));
}

TEST(Dockerfile, GoldenD_ModuleOnPrebuilt) {
  EXPECT_EQ(render_dockerfile(module_spec(kPrebuilt, "trainer.task")), golden("D.Dockerfile"));
}

TEST(Dockerfile, GoldenDPrime_NestedModuleOnPlainPython) {
  EXPECT_EQ(render_dockerfile(module_spec(kPython, "a.b.c")), golden("D-prime.Dockerfile"));
}

TEST(Dockerfile, GoldenE_EverythingOnPrebuilt) {
  EXPECT_EQ(render_dockerfile(everything_spec(kPrebuilt)), golden("E.Dockerfile"));
}

TEST(Dockerfile, GoldenEPrime_EverythingOnPlainPython) {
  EXPECT_EQ(render_dockerfile(everything_spec(kPython)), golden("E-prime.Dockerfile"));
}

TEST(Dockerfile, GoldenFilesKeepTheirExactShape) {
  // Guards against editors or git normalising the files: leading newline, no final newline, no CR, 8-space lines.
  for (const char* name : {"A.Dockerfile", "B.Dockerfile", "C.Dockerfile", "D.Dockerfile", "D-prime.Dockerfile",
                           "E.Dockerfile", "E-prime.Dockerfile", "F.Dockerfile"}) {
    const std::string text = golden(name);
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_EQ(text.front(), '\n') << name;
    EXPECT_NE(text.back(), '\n') << name;
    EXPECT_EQ(text.find('\r'), std::string::npos) << name;
  }
  EXPECT_NE(golden("E.Dockerfile").find("\n        RUN pip3 install --no-cache-dir .\n"), std::string::npos);
  EXPECT_NE(golden("E-prime.Dockerfile").find("thus to the docker container.\n"), std::string::npos);
}

// ----- composition details -----

TEST(Dockerfile, ScriptPathIsKeptAsGiven) {
  const std::string out = render_dockerfile(script_spec(kPython, "./trainer/task.py"));
  EXPECT_NE(out.find("\nCOPY [\"./trainer\", \"./trainer\"]\n"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("\nENTRYPOINT [\"python\", \"./trainer/task.py\"]")) << out;
}

TEST(Dockerfile, DotSlashRootScriptCopiesDot) {
  DockerfileSpec spec = script_spec(kPython, "./task.py");
  spec.derive();
  EXPECT_EQ(spec.parent_dir, ".");
  EXPECT_EQ(spec.entrypoint, (std::vector<std::string>{"python", "./task.py"}));
}

TEST(Dockerfile, RootScriptCopiesTheWholeContext) {
  DockerfileSpec spec = script_spec(kPython, "task.py");
  spec.derive();
  EXPECT_EQ(spec.parent_dir, ".");
  EXPECT_NE(render_dockerfile(spec).find("COPY [\".\", \".\"]"), std::string::npos);
}

TEST(Dockerfile, ShellScriptRunsUnderBashEvenOnPrebuilt) {
  DockerfileSpec spec = script_spec(kPrebuilt, "run.sh");
  spec.derive();
  EXPECT_TRUE(spec.prebuilt);
  EXPECT_EQ(spec.entrypoint, (std::vector<std::string>{"/bin/bash", "run.sh"}));
  EXPECT_TRUE(render_dockerfile(spec).ends_with("\nENTRYPOINT [\"/bin/bash\", \"run.sh\"]"));
}

TEST(Dockerfile, ExtensionTestIsPythonsSplitext) {
  const auto entry = [](const std::string& script) {
    DockerfileSpec spec = script_spec(kPython, script);
    return spec.derive().entrypoint.front();
  };
  EXPECT_EQ(entry("train.py"), "python");
  EXPECT_EQ(entry("a.b/train.py"), "python");
  EXPECT_EQ(entry("train.PY"), "/bin/bash");  // case-sensitive
  EXPECT_EQ(entry("train"), "/bin/bash");
  EXPECT_EQ(entry(".py"), "/bin/bash");       // a leading dot starts a name, not an extension
  EXPECT_EQ(entry("dir/..py"), "/bin/bash");
  EXPECT_EQ(entry("dir/.x.py"), "python");
  EXPECT_EQ(entry("a.py/run"), "/bin/bash");
}

TEST(Dockerfile, ParentDirIsPosixDirname) {
  const auto parent = [](const std::string& script) {
    DockerfileSpec spec = script_spec(kPython, script);
    return spec.derive().parent_dir;
  };
  EXPECT_EQ(parent("trainer/task.py"), "trainer");
  EXPECT_EQ(parent("a/b/c.py"), "a/b");
  EXPECT_EQ(parent("a//b.py"), "a");
  EXPECT_EQ(parent("/abs/x.py"), "/abs");
  EXPECT_EQ(parent("/x.py"), "/");
  EXPECT_EQ(parent("//x.py"), "//");
  EXPECT_EQ(parent("x.py"), ".");
}

TEST(Dockerfile, BackslashesBecomeSlashesInTheScript) {
  DockerfileSpec spec = script_spec(kPython, "trainer\\task.py");
  spec.derive();
  EXPECT_EQ(spec.script, "trainer/task.py");
  EXPECT_EQ(spec.parent_dir, "trainer");
  EXPECT_EQ(render_dockerfile(script_spec(kPython, "trainer\\task.py")), golden("A.Dockerfile"));
}

TEST(Dockerfile, ModuleBecomesItsPath) {
  EXPECT_EQ(module_to_path("trainer.task"), "trainer/task.py");
  EXPECT_EQ(module_to_path("task"), "task.py");
  EXPECT_EQ(module_to_path("a.b.c"), "a/b/c.py");
  DockerfileSpec spec = module_spec(kPython, "a.b.c");
  spec.derive();
  EXPECT_EQ(spec.script, "a/b/c.py");
  EXPECT_EQ(spec.parent_dir, "a/b");
  EXPECT_EQ(spec.entrypoint, (std::vector<std::string>{"python", "-m", "a.b.c"}));
  DockerfileSpec root = module_spec(kPrebuilt, "task");
  root.derive();
  EXPECT_EQ(root.parent_dir, ".");
  EXPECT_EQ(root.entrypoint, (std::vector<std::string>{"python3", "-m", "task"}));
}

TEST(Dockerfile, DeriveIsIdempotentAndRenderDerivesItself) {
  DockerfileSpec spec = everything_spec(kPrebuilt);
  DockerfileSpec twice = spec;
  twice.derive().derive();
  DockerfileSpec once = spec;
  once.derive();
  EXPECT_EQ(twice.script, once.script);
  EXPECT_EQ(twice.entrypoint, once.entrypoint);
  EXPECT_EQ(render_dockerfile(spec), render_dockerfile(once));
}

TEST(Dockerfile, ExtraPackageIsCopiedToItsBasename) {
  DockerfileSpec spec = script_spec(kPython, "task.py");
  spec.extra_packages = {"deps/my pkg-1.0.tar.gz"};
  const std::string out = render_dockerfile(spec);
  EXPECT_NE(out.find("\nCOPY [\"deps/my pkg-1.0.tar.gz\", \"my pkg-1.0.tar.gz\"]\n\n"
                     "RUN pip install --no-cache-dir 'my pkg-1.0.tar.gz'\n"),
            std::string::npos)
      << out;
}

TEST(Dockerfile, SetupPyAloneAndRequirementsAlone) {
  DockerfileSpec setup = script_spec(kPython, "task.py");
  setup.has_setup_py = true;
  const std::string with_setup = render_dockerfile(setup);
  EXPECT_NE(with_setup.find("ENV PYTHONDONTWRITEBYTECODE=1\n\n        # Found setup.py file, thus copy it to the docker "
                            "container.\nCOPY [\"./setup.py\", \"./setup.py\"]\n\n        RUN pip install "
                            "--no-cache-dir .\n\n# Copy the source directory"),
            std::string::npos)
      << with_setup;
  DockerfileSpec req = script_spec(kPrebuilt, "task.py");
  req.has_requirements_txt = true;
  const std::string with_req = render_dockerfile(req);
  EXPECT_NE(with_req.find("RUN rm -rf /var/sitecustomize\n        # Found requirements.txt file, thus to the docker "
                          "container.\nCOPY [\"./requirements.txt\", \"./requirements.txt\"]\n\n        RUN pip3 "
                          "install --no-cache-dir -r ./requirements.txt\n\n# Copy"),
            std::string::npos)
      << with_req;
}

// Values containing newlines change textwrap.dedent's common margin in gcloud; expected texts from Python 3.11
// running gcloud 578's _MakeDockerfile.
TEST(Dockerfile, NewlinesInValuesDedentLikeGcloud) {
  EXPECT_EQ(render_dockerfile(script_spec("python:3.10\n    RUN echo hi", "task.py")),
            "\n  FROM python:3.10\nRUN echo hi\n  # The directory is created by root. This sets permissions so that "
            "any user can\n  # access the folder.\n  RUN mkdir -m 777 -p /usr/app /home\n  WORKDIR /usr/app\n  ENV "
            "HOME=/home\n\n  # Keeps Python from generating .pyc files in the container\n  ENV "
            "PYTHONDONTWRITEBYTECODE=1\n\n# Copy the source directory into the docker container.\nCOPY [\".\", "
            "\".\"]\n\n\nENTRYPOINT [\"python\", \"task.py\"]");
  EXPECT_EQ(render_dockerfile(script_spec("python:3.10\nRUN echo hi", "task.py")),
            "\n      FROM python:3.10\nRUN echo hi\n      # The directory is created by root. This sets permissions so "
            "that any user can\n      # access the folder.\n      RUN mkdir -m 777 -p /usr/app /home\n      WORKDIR "
            "/usr/app\n      ENV HOME=/home\n\n      # Keeps Python from generating .pyc files in the container\n      "
            "ENV PYTHONDONTWRITEBYTECODE=1\n\n# Copy the source directory into the docker container.\nCOPY [\".\", "
            "\".\"]\n\n\nENTRYPOINT [\"python\", \"task.py\"]");
  EXPECT_EQ(render_dockerfile(script_spec("python:3.10\n\t\tX", "trainer/task.py")),
            "\n      FROM python:3.10\n\t\tX\n      # The directory is created by root. This sets permissions so that "
            "any user can\n      # access the folder.\n      RUN mkdir -m 777 -p /usr/app /home\n      WORKDIR "
            "/usr/app\n      ENV HOME=/home\n\n      # Keeps Python from generating .pyc files in the container\n      "
            "ENV PYTHONDONTWRITEBYTECODE=1\n\n# Copy the source directory into the docker container.\nCOPY "
            "[\"trainer\", \"trainer\"]\n\n\nENTRYPOINT [\"python\", \"trainer/task.py\"]");

  DockerfileSpec requirements = script_spec(kPython, "task.py");
  requirements.requirements = {"a\nb", "c\n            d"};
  EXPECT_EQ(render_dockerfile(requirements),
            "\nFROM python:3.10\n# The directory is created by root. This sets permissions so that any user can\n# "
            "access the folder.\nRUN mkdir -m 777 -p /usr/app /home\nWORKDIR /usr/app\nENV HOME=/home\n\n# Keeps "
            "Python from generating .pyc files in the container\nENV PYTHONDONTWRITEBYTECODE=1\n\n        RUN pip "
            "install --no-cache-dir --upgrade 'a\nb'\n\nRUN pip install --no-cache-dir --upgrade 'c\n    d'\n\n# Copy "
            "the source directory into the docker container.\nCOPY [\".\", \".\"]\n\n\nENTRYPOINT [\"python\", "
            "\"task.py\"]");

  DockerfileSpec blank = script_spec(kPython, "task.py");
  blank.requirements = {"x\n   \n      y"};
  EXPECT_EQ(render_dockerfile(blank),
            "\nFROM python:3.10\n# The directory is created by root. This sets permissions so that any user can\n# "
            "access the folder.\nRUN mkdir -m 777 -p /usr/app /home\nWORKDIR /usr/app\nENV HOME=/home\n\n# Keeps "
            "Python from generating .pyc files in the container\nENV PYTHONDONTWRITEBYTECODE=1\n\n  RUN pip install "
            "--no-cache-dir --upgrade 'x\n\ny'\n\n# Copy the source directory into the docker container.\nCOPY "
            "[\".\", \".\"]\n\n\nENTRYPOINT [\"python\", \"task.py\"]");

  DockerfileSpec package = script_spec(kPrebuilt, "task.py");
  package.extra_packages = {"dir/we ird\n  x.whl"};
  EXPECT_EQ(render_dockerfile(package),
            "\nFROM us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310:latest\n# The directory is created by "
            "root. This sets permissions so that any user can\n# access the folder.\nRUN mkdir -m 777 -p /usr/app "
            "/home\nWORKDIR /usr/app\nENV HOME=/home\n\n# Keeps Python from generating .pyc files in the "
            "container\nENV PYTHONDONTWRITEBYTECODE=1\nRUN rm -rf /var/sitecustomize\n      COPY [\"dir/we ird\\n  "
            "x.whl\", \"we ird\\n  x.whl\"]\n\n      RUN pip3 install --no-cache-dir 'we ird\nx.whl'\n\n# Copy the "
            "source directory into the docker container.\nCOPY [\".\", \".\"]\n\n\nENTRYPOINT [\"python3\", "
            "\"task.py\"]");
}

TEST(Dockerfile, NeverEmitsInstructionsGcloudDoesNot) {
  const std::string out = render_dockerfile(everything_spec(kPrebuilt));
  for (const char* word : {"\nCMD", "\nUSER", "\nLABEL", "\nEXPOSE", "\nARG", "--chown", "--platform"}) {
    EXPECT_EQ(out.find(word), std::string::npos) << word;
  }
}

// ----- prebuilt-image detection -----

TEST(PrebuiltImage, TableFromTheSpec) {
  const std::string t = "us-docker.pkg.dev/vertex-ai/training/";
  struct Row {
    std::string uri;
    bool match;
  };
  const std::vector<Row> rows = {
      // yes
      {t + "tf-cpu.2-14.py310:latest", true},
      {t + "pytorch-gpu.2-1.py310", true},
      {t + "pytorch-xla.2-4.py310:latest", true},
      {t + "scikit-learn-cpu.0-23", true},
      {"europe-docker.pkg.dev/vertex-ai/training/xgboost-cpu.1-1:latest", true},
      {t + "tf-cpu.2-14.py310@sha256:" + std::string(64, '0'), true},
      {"asia-docker.pkg.dev/vertex-ai/training/tf-gpu.2-17.py310:latest", true},
      // no: current scikit-learn names, ray
      {t + "sklearn-cpu.1-0", false},
      {t + "sklearn-cpu.1-6", false},
      {t + "ray-cpu.2-47.py311:latest", false},
      // no: other hosts, case
      {"us-central1-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310:latest", false},
      {"gcr.io/cloud-aiplatform/training/tf-cpu.2-14:latest", false},
      {"US-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310:latest", false},
      // yes: the dots are unescaped
      {"us-dockerXpkgYdev/vertex-ai/training/tf-x", true},
  };
  for (const auto& row : rows) EXPECT_EQ(is_vertex_prebuilt_image(row.uri), row.match) << row.uri;
}

TEST(PrebuiltImage, RegexEdgesMatchPython) {
  // Expected values from Python's re.fullmatch with the same pattern.
  const std::string t = "us-docker.pkg.dev/vertex-ai/training/";
  EXPECT_FALSE(is_vertex_prebuilt_image("python:3.10"));
  EXPECT_FALSE(is_vertex_prebuilt_image(""));
  EXPECT_FALSE(is_vertex_prebuilt_image(t + "tf-"));  // .+ needs a character
  EXPECT_FALSE(is_vertex_prebuilt_image(t + "tf"));
  EXPECT_FALSE(is_vertex_prebuilt_image(t + "tf-x\n"));  // fullmatch: $ before a final newline does not help
  EXPECT_FALSE(is_vertex_prebuilt_image(t + "tf-x\ny"));
  EXPECT_FALSE(is_vertex_prebuilt_image("us-docker\npkg.dev/vertex-ai/training/tf-x"));
  EXPECT_TRUE(is_vertex_prebuilt_image("us-docker\xe2\x82\xac" "pkg.dev/vertex-ai/training/tf-x"));  // one code point
  EXPECT_TRUE(is_vertex_prebuilt_image(t + "tf-\xe2\x82\xac"));
  EXPECT_FALSE(is_vertex_prebuilt_image("xus-docker.pkg.dev/vertex-ai/training/tf-x"));
  EXPECT_FALSE(is_vertex_prebuilt_image("eu-docker.pkg.dev/vertex-ai/training/tf-x"));
  EXPECT_FALSE(is_vertex_prebuilt_image("docker.pkg.dev/vertex-ai/training/tf-x"));
  EXPECT_FALSE(is_vertex_prebuilt_image(t + "TF-x"));
  EXPECT_TRUE(is_vertex_prebuilt_image(t + "pytorch--"));
  EXPECT_TRUE(is_vertex_prebuilt_image(t + "tf-cpu.2-14.py310:latest "));
  EXPECT_FALSE(is_vertex_prebuilt_image("us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-14:latest"));
}

TEST(PrebuiltImage, SwitchesPipPythonAndSitecustomize) {
  const std::string prebuilt = render_dockerfile(everything_spec(kPrebuilt));
  const std::string plain = render_dockerfile(everything_spec(kPython));
  EXPECT_NE(prebuilt.find("RUN rm -rf /var/sitecustomize"), std::string::npos);
  EXPECT_EQ(plain.find("sitecustomize"), std::string::npos);
  EXPECT_EQ(prebuilt.find("pip install"), std::string::npos);
  EXPECT_EQ(plain.find("pip3"), std::string::npos);
  EXPECT_EQ(plain.find("python3"), std::string::npos);
}

// ----- escaping -----

TEST(ShlexQuote, SpecExamples) {
  EXPECT_EQ(shlex_quote("pandas==1.2.0"), "pandas==1.2.0");
  EXPECT_EQ(shlex_quote("scipy>=1.3.0"), "'scipy>=1.3.0'");
  EXPECT_EQ(shlex_quote("pkg[x]>=1"), "'pkg[x]>=1'");
}

TEST(ShlexQuote, EdgeCasesMatchPython) {
  EXPECT_EQ(shlex_quote(""), "''");
  EXPECT_EQ(shlex_quote("it's"), "'it'\"'\"'s'");
  EXPECT_EQ(shlex_quote("''"), "''\"'\"''\"'\"''");
  EXPECT_EQ(shlex_quote("a b"), "'a b'");
  EXPECT_EQ(shlex_quote("$HOME"), "'$HOME'");
  EXPECT_EQ(shlex_quote("a\nb"), "'a\nb'");
  EXPECT_EQ(shlex_quote("_@%+=:,./-AZaz09"), "_@%+=:,./-AZaz09");
  EXPECT_EQ(shlex_quote("-e"), "-e");
  EXPECT_EQ(shlex_quote("d\xc3\xa4t\xc3\xa4"), "'d\xc3\xa4t\xc3\xa4'");  // non-ASCII is never "safe"
  EXPECT_EQ(shlex_quote("\xc3\xb1"), "'\xc3\xb1'");
  EXPECT_EQ(shlex_quote("a\"b"), "'a\"b'");
  EXPECT_EQ(shlex_quote("x*"), "'x*'");
}

TEST(JsonDumps, SpecExample) {
  EXPECT_EQ(json_list({"d\xc3\xa4t\xc3\xa4/x", "a\\b"}), "[\"d\\u00e4t\\u00e4/x\", \"a\\\\b\"]");
}

TEST(JsonDumps, EdgeCasesMatchPython) {
  EXPECT_EQ(json_list({}), "[]");
  EXPECT_EQ(json_list({""}), "[\"\"]");
  EXPECT_EQ(python_json_string(""), "\"\"");
  EXPECT_EQ(json_list({"\"q\""}), "[\"\\\"q\\\"\"]");
  EXPECT_EQ(json_list({"a/b"}), "[\"a/b\"]");  // '/' is not escaped
  // Control characters: named escapes where JSON has them, \u00XX otherwise; DEL is escaped too.
  EXPECT_EQ(json_list({"\x01\x1f\x7f\b\f\n\r\t"}), "[\"\\u0001\\u001f\\u007f\\b\\f\\n\\r\\t\"]");
  // Astral characters become surrogate pairs, lowercase hex.
  EXPECT_EQ(json_list({"\xf0\x9f\x98\x80"}), "[\"\\ud83d\\ude00\"]");
  EXPECT_EQ(json_list({"\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e"}), "[\"\\u00e9\\u20ac\\ud834\\udd1e\"]");
  EXPECT_EQ(json_list({"\xe2\x80\xa8"}), "[\"\\u2028\"]");
  // Bytes that are not UTF-8 arrive in Python as surrogateescape code points.
  EXPECT_EQ(json_list({"\xff\xe4"}), "[\"\\udcff\\udce4\"]");
  EXPECT_EQ(python_json_string("\xed\xa0\x80"), "\"\\udced\\udca0\\udc80\"");  // an encoded surrogate is invalid UTF-8
  EXPECT_EQ(python_json_string("\xc0\xaf"), "\"\\udcc0\\udcaf\"");              // overlong
  EXPECT_EQ(python_json_string("\xe2\x82" "A"), "\"\\udce2\\udc82A\"");          // truncated sequence
  EXPECT_EQ(json_list({"a", "b", "c"}), "[\"a\", \"b\", \"c\"]");
}

TEST(PythonDedent, MatchesTextwrap) {
  // Expected values from Python 3.11's textwrap.dedent.
  EXPECT_EQ(python_dedent("\n  a\n  b\n  "), "\na\nb\n");
  EXPECT_EQ(python_dedent("  a\n\tb"), "  a\n\tb");
  EXPECT_EQ(python_dedent("\ta\n\t\tb\n"), "a\n\tb\n");
  EXPECT_EQ(python_dedent("  \n  a\n"), "\na\n");
  EXPECT_EQ(python_dedent(" a\r\n  b"), "a\r\n b");
  EXPECT_EQ(python_dedent("x"), "x");
  EXPECT_EQ(python_dedent(""), "");
  EXPECT_EQ(python_dedent("    a\n      b\n   \n"), "a\n  b\n\n");
}

}  // namespace
