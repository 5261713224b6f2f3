#pragma once
// Small pure-Python wheels made on the fly (by the host's python3 and its zipfile), with whatever tags a test needs
// in their file names: one module NAME.py and a .dist-info whose RECORD lists every file with its sha256 (PEP 427).
// And the build that installs them: a trainer with --extra-packages on the Debian 12 test base.
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/test_support.h"

namespace trainpack::testing {

// Writes DIR/NAME-1.0-TAGS.whl (NAME a module name, "tp_tagged"; TAGS "py3-none-any") and returns its file name.
inline std::string write_test_wheel(const std::filesystem::path& dir, const std::string& name,
                                    const std::string& tags) {
  static constexpr const char* kMaker = R"(
import base64, hashlib, sys, zipfile
path, name, tags = sys.argv[1:]
info = name + "-1.0.dist-info/"
files = {
    name + ".py": b"",
    info + "METADATA": ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name).encode(),
    info + "WHEEL": ("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: %s\n" % tags).encode(),
}
digest = lambda b: base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
record = "".join("%s,sha256=%s,%d\n" % (n, digest(b), len(b)) for n, b in files.items())
files[info + "RECORD"] = (record + info + "RECORD,,\n").encode()
with zipfile.ZipFile(path, "w") as z:
    for n, b in files.items():
        z.writestr(n, b)
)";
  const std::string filename = name + "-1.0-" + tags + ".whl";
  std::filesystem::create_directories(dir);
  CommandResult r = run_command({"python3", "-c", kMaker, (dir / filename).string(), name, tags});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return filename;
}

// `trainpack build` of `pkg` (task.py) on the Debian 12 test base into oci:WORK/out:x, with the cache WORK/cache.
inline CommandResult build_on_test_base(const std::filesystem::path& pkg, const std::filesystem::path& work,
                                        const std::vector<std::string>& flags) {
  std::vector<std::string> argv{trainpack_bin(), "build", "--executor-image-uri=python:3",
                                "--base-source=" + base_oci_ref(), "--local-package-path=" + pkg.string(),
                                "--script=task.py", "--output=oci:" + (work / "out").string() + ":x",
                                "--cache-dir=" + (work / "cache").string(), "--break-system-packages"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return run_command(argv);
}

}  // namespace trainpack::testing
