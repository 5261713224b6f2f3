// End-to-end tests of `trainpack build` against real tools: oci-image-tool, skopeo, umoci + runc, and a real
// dockerd (docker load / run / BuildKit build of the Dockerfile trainpack prints).
#include <gtest/gtest.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "image/digest.h"
#include "store/cache_dir.h"
#include "support/fs.h"
#include "tests/integration/test_support.h"
#include "tests/integration/timings_check.h"

using namespace trainpack::testing;

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string base_oci() { return base_oci_ref(); }
fs::path example_dir() { return fs::path(source_dir()) / "testdata" / "example-trainer"; }

std::string joined(const CommandResult& r) { return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err; }

class BuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = trainpack::make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-build-");
    pkg_ = dir_ / "pkg";
    fs::copy(example_dir(), pkg_, fs::copy_options::recursive);
    write_file(pkg_ / "trainer" / "train.log", "build debris that .dockerignore keeps out\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  CommandResult trainpack(std::vector<std::string> args) {
    args.insert(args.begin(), trainpack_bin());
    return run_command(args);
  }
  // The usual build of the example onto the test base.
  CommandResult build(const fs::path& pkg, const std::string& output, const fs::path& cache,
                      std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"build", "--executor-image-uri=trainpack-test/python:3.11",
                                  "--base-source=" + base_oci(), "--local-package-path=" + pkg.string(),
                                  "--script=trainer/task.py", "--extra-dirs=config", "--output=" + output,
                                  "--cache-dir=" + cache.string(), "--format=json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return trainpack(args);
  }
  // umoci unpacks the layout's :v1 into `bundle`; runc runs the trainer there for `epochs` epochs.
  CommandResult unpack_and_run(const fs::path& layout, const fs::path& bundle, const std::string& epochs) {
    auto unpack = run_command({"umoci", "unpack", "--image", layout.string() + ":v1", bundle.string()});
    if (unpack.exit_code != 0) return unpack;
    json spec = json::parse(trainpack::read_file(bundle / "config.json"));
    spec["process"]["terminal"] = false;
    spec["process"]["args"].push_back("--epochs");
    spec["process"]["args"].push_back(epochs);
    trainpack::write_file_atomic(bundle / "config.json", spec.dump());
    return run_command({"runc", "run", "-b", bundle.string(), "tp-" + std::to_string(::getpid())});
  }
  fs::path dir_, pkg_;
};

TEST_F(BuildTest, OciLayoutPassesValidatorsAndRunsUnderRunc) {
  auto r = build(pkg_, "oci:" + (dir_ / "out").string() + ":v1", dir_ / "cache");
  ASSERT_EQ(r.exit_code, 0) << joined(r);
  json result = json::parse(r.out);
  std::string digest = result.at("manifest_digest");
  expect_phase_timings(result);
  EXPECT_GT(result.at("timings").at("layers").get<double>(), 0) << "a COPY of the trainer and RUN mkdir were built";
  EXPECT_EQ(result.at("timings").at("resolve").get<double>(), 0) << "no pip step";

  auto inspect = run_command({"skopeo", "inspect", "oci:" + (dir_ / "out").string() + ":v1"});
  ASSERT_EQ(inspect.exit_code, 0) << joined(inspect);
  EXPECT_EQ(json::parse(inspect.out).at("Digest"), digest);
  auto cfg = run_command({"skopeo", "inspect", "--config", "oci:" + (dir_ / "out").string() + ":v1"});
  ASSERT_EQ(cfg.exit_code, 0) << joined(cfg);
  json config = json::parse(cfg.out).at("config");
  EXPECT_EQ(config.at("WorkingDir"), "/usr/app");
  EXPECT_EQ(config.at("Entrypoint"), json({"python", "trainer/task.py"}));
  EXPECT_FALSE(config.contains("Cmd"));
  std::vector<std::string> env = config.at("Env");
  EXPECT_NE(std::find(env.begin(), env.end(), "HOME=/home"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "PYTHONDONTWRITEBYTECODE=1"), env.end());

  auto copy = run_command({"skopeo", "copy", "oci:" + (dir_ / "out").string() + ":v1",
                           "oci:" + (dir_ / "copied").string() + ":v1"});
  EXPECT_EQ(copy.exit_code, 0) << joined(copy);
  // The image as skopeo copied it, byte for byte: oci-image-tool knows image-spec 1.0, whose layouts hold images
  // only, not the SBOM and provenance artifacts (image-spec 1.1) beside it in ours.
  EXPECT_EQ(json::parse(trainpack::read_file(dir_ / "copied" / "index.json")).at("manifests").at(0).at("digest"),
            digest);
  auto v = run_command({"oci-image-tool", "validate", "--type", "image", (dir_ / "copied").string()});
  EXPECT_EQ(v.exit_code, 0) << joined(v);

  fs::path bundle = dir_ / "bundle";
  auto run = unpack_and_run(dir_ / "out", bundle, "2");
  ASSERT_EQ(run.exit_code, 0) << joined(run);
  EXPECT_NE(run.out.find("loaded config/params.json"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("epoch 2/2"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("done:"), std::string::npos) << run.out;

  struct stat st;
  ASSERT_EQ(::lstat((bundle / "rootfs/usr/app").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u);
  EXPECT_TRUE(fs::exists(bundle / "rootfs/usr/app/config/params.json"));
  EXPECT_TRUE(fs::exists(bundle / "rootfs/usr/app/trainer/task.py"));
  EXPECT_FALSE(fs::exists(bundle / "rootfs/usr/app/trainer/train.log")) << ".dockerignore must apply";

  // The manifest names its base (org.opencontainers.image.base.*).
  json manifest = json::parse(run_command({"skopeo", "inspect", "--raw", "oci:" + (dir_ / "out").string() + ":v1"}).out);
  EXPECT_EQ(manifest["annotations"]["org.opencontainers.image.base.name"], "trainpack-test/python:3.11");
  EXPECT_EQ(manifest["annotations"]["org.opencontainers.image.base.digest"], result.at("base").at("digest"));
}

// --compression=zstd: the new layers are tar+zstd with the same tars (diff_ids) as the gzip build's; the zstd tool
// reads each back to its diff_id, and skopeo (containers/image's zstd) converts the image to gzip, which umoci
// unpacks and runc runs. (Debian 12's docker 20.10 and umoci 0.4.7 cannot read zstd layers; docker 23+ can.)
TEST_F(BuildTest, ZstdLayersHoldTheSameTarsAndTheImageRuns) {
  auto gz = build(pkg_, "oci:" + (dir_ / "gz").string() + ":v1", dir_ / "cache");
  ASSERT_EQ(gz.exit_code, 0) << joined(gz);
  auto zs = build(pkg_, "oci:" + (dir_ / "zs").string() + ":v1", dir_ / "cache", {"--compression=zstd"});
  ASSERT_EQ(zs.exit_code, 0) << joined(zs);
  json gzip_result = json::parse(gz.out), zstd_result = json::parse(zs.out);
  EXPECT_EQ(zstd_result.at("layers_built"), gzip_result.at("layers_built")) << "a gzip layer was reused for zstd";

  auto config_of = [&](const std::string& layout) {
    return json::parse(run_command({"skopeo", "inspect", "--config", "--raw", "oci:" + (dir_ / layout).string() + ":v1"}).out);
  };
  EXPECT_EQ(config_of("zs").at("rootfs").at("diff_ids"), config_of("gz").at("rootfs").at("diff_ids"));
  json manifest = json::parse(run_command({"skopeo", "inspect", "--raw", "oci:" + (dir_ / "zs").string() + ":v1"}).out);
  json diff_ids = config_of("zs").at("rootfs").at("diff_ids");
  std::size_t base_layers = json::parse(run_command({"skopeo", "inspect", "--raw", base_oci()}).out).at("layers").size();
  std::size_t zstd_layers = 0;
  for (std::size_t i = base_layers; i < manifest.at("layers").size(); ++i) {
    const json& layer = manifest["layers"][i];
    EXPECT_EQ(layer.at("mediaType"), "application/vnd.oci.image.layer.v1.tar+zstd");
    std::string blob = (dir_ / "zs" / "blobs" / "sha256" / layer.at("digest").get<std::string>().substr(7)).string();
    auto tar_sha = run_command({"sh", "-c", "zstd -dc \"$0\" | sha256sum", blob});
    ASSERT_EQ(tar_sha.exit_code, 0) << joined(tar_sha);
    EXPECT_EQ("sha256:" + tar_sha.out.substr(0, 64), diff_ids[i].get<std::string>());
    ++zstd_layers;
  }
  EXPECT_GE(zstd_layers, 3u);

  auto convert = run_command({"skopeo", "copy", "--dest-compress", "--dest-compress-format=gzip",
                              "oci:" + (dir_ / "zs").string() + ":v1", "oci:" + (dir_ / "converted").string() + ":v1"});
  ASSERT_EQ(convert.exit_code, 0) << joined(convert);
  auto run = unpack_and_run(dir_ / "converted", dir_ / "bundle", "1");
  ASSERT_EQ(run.exit_code, 0) << joined(run);
  EXPECT_NE(run.out.find("epoch 1/1"), std::string::npos) << run.out;

  auto bad = build(pkg_, "oci:" + (dir_ / "bad").string() + ":v1", dir_ / "cache", {"--compression=xz"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--compression must be gzip or zstd"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

TEST_F(BuildTest, DockerArchiveLoadsAndRunsInDocker) {
  fs::path archive = dir_ / "trainer.tar";
  auto r = build(pkg_, "docker-archive:" + archive.string() + ":trainpack-test/trainer:archive", dir_ / "cache");
  ASSERT_EQ(r.exit_code, 0) << joined(r);
  auto load = run_command(docker_command({"load", "-i", archive.string()}));
  ASSERT_EQ(load.exit_code, 0) << joined(load);
  auto run = run_command(docker_command({"run", "--rm", "--network", "none", "trainpack-test/trainer:archive",
                                        "--epochs", "3"}));
  ASSERT_EQ(run.exit_code, 0) << joined(run);
  EXPECT_NE(run.out.find("epoch 3/3"), std::string::npos) << run.out;
  run_command(docker_command({"rmi", "-f", "trainpack-test/trainer:archive"}));
}

TEST_F(BuildTest, SameInputsFromTwoCheckoutsGiveTheSameDigestAndRebuildsReuseLayers) {
  // Second checkout: other directory, other umask, other mtimes, other cache.
  fs::path other = dir_ / "checkout2";
  auto cp = run_command({"sh", "-c", "umask 002 && cp -r \"$0\" \"$1\" && find \"$1\" -exec touch -d 2001-02-03 {} +",
                         example_dir().string(), other.string()});
  ASSERT_EQ(cp.exit_code, 0) << joined(cp);
  auto a = build(pkg_, "oci:" + (dir_ / "a").string() + ":t", dir_ / "cache-a");
  auto b = build(other, "oci:" + (dir_ / "b").string() + ":t", dir_ / "cache-b");
  ASSERT_EQ(a.exit_code, 0) << joined(a);
  ASSERT_EQ(b.exit_code, 0) << joined(b);
  json ja = json::parse(a.out), jb = json::parse(b.out);
  EXPECT_EQ(ja.at("manifest_digest"), jb.at("manifest_digest"));
  EXPECT_GT(ja.at("layers_built").get<int>(), 0);

  auto again = build(pkg_, "oci:" + (dir_ / "c").string() + ":t", dir_ / "cache-a");
  ASSERT_EQ(again.exit_code, 0) << joined(again);
  json jc = json::parse(again.out);
  EXPECT_EQ(jc.at("manifest_digest"), ja.at("manifest_digest"));
  EXPECT_EQ(jc.at("layers_built"), 0);
  EXPECT_EQ(jc.at("layers_cached"), ja.at("layers_built"));
  EXPECT_NE(again.err.find("0 layers built"), std::string::npos) << again.err;

  // Changing the trainer code rebuilds exactly one layer.
  std::ofstream(pkg_ / "trainer" / "task.py", std::ios::app) << "\n# changed\n";
  auto changed = build(pkg_, "oci:" + (dir_ / "d").string() + ":t", dir_ / "cache-a");
  ASSERT_EQ(changed.exit_code, 0) << joined(changed);
  json jd = json::parse(changed.out);
  EXPECT_EQ(jd.at("layers_built"), 1);
  EXPECT_NE(jd.at("manifest_digest"), ja.at("manifest_digest"));
  // The progress says so in words that agree, and each layer's size in a human unit ("built  sha256:… 1.2 kB").
  EXPECT_NE(changed.err.find("\n1 layer built, "), std::string::npos) << changed.err;
  EXPECT_FALSE(RE2::PartialMatch(changed.err, "[0-9]{4,} B "))
      << "a size of 1000 bytes or more in bytes:\n" << changed.err;
  EXPECT_NE(changed.err.find(" kB  "), std::string::npos) << changed.err;
}

// What a build killed with SIGKILL leaves (temporaries named for it, its registration in users/, held by nobody) is
// swept by the next build on that cache, in the cache and beside the output; while no registration is dead, no
// build walks the cache's directories for leftovers.
TEST_F(BuildTest, TheBuildAfterAKilledOneSweepsWhatItLeft) {
  const fs::path cache = dir_ / "cache";
  ASSERT_EQ(build(pkg_, "oci:" + (dir_ / "first").string() + ":t", cache).exit_code, 0);
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  const std::string mine = trainpack::temp_owner_tag();
  const std::string killed = "p" + std::to_string(child) + mine.substr(mine.find('.'));
  const fs::path staged = trainpack::store::temp_dir_of(cache) / ("pip-" + killed + "-x");
  const fs::path beside = dir_ / (".out.tmp-" + killed + "-0");
  write_file(staged, "half a step");
  write_file(beside, "half a layout");

  auto calm = build(pkg_, "oci:" + (dir_ / "out").string() + ":t", cache);
  ASSERT_EQ(calm.exit_code, 0) << joined(calm);
  EXPECT_TRUE(fs::exists(staged)) << "no registration is dead: nothing was walked";

  write_file(cache / "users" / ("user-" + killed + "-x"), "");
  auto after = build(pkg_, "oci:" + (dir_ / "out").string() + ":t", cache);
  ASSERT_EQ(after.exit_code, 0) << joined(after);
  EXPECT_FALSE(fs::exists(staged));
  EXPECT_FALSE(fs::exists(beside));
  EXPECT_FALSE(fs::exists(cache / "users" / ("user-" + killed + "-x")));
  EXPECT_NE(after.err.find("removed 3 leftovers of killed builds"), std::string::npos) << after.err;
}

// Each bad input: non-zero exit, a one-line "error:" (plus an optional hint line), and no output left behind.
struct BadInput {
  std::string name;
  std::vector<std::string> args;
  std::string expect_in_error;
};

TEST_F(BuildTest, BadInputFailsWithOneLineAndLeavesNothing) {
  fs::path out = dir_ / "out";
  fs::path archive = dir_ / "out.tar";
  fs::path bad_index = dir_ / "bad-index";
  fs::copy(base_oci_dir(), bad_index, fs::copy_options::recursive);
  write_file(bad_index / "index.json", "{not json");
  // A flipped bit in the base layer: the digest check must catch it before anything is written.
  fs::path bad_layer = dir_ / "bad-layer";
  fs::copy(base_oci_dir(), bad_layer, fs::copy_options::recursive);
  fs::path biggest;
  for (const auto& e : fs::directory_iterator(bad_layer / "blobs" / "sha256"))
    if (biggest.empty() || e.file_size() > fs::file_size(biggest)) biggest = e.path();
  std::string bytes = read_file(biggest);
  bytes[bytes.size() / 2] ^= 1;
  fs::remove(biggest);  // blobs may be hard links into the fixture: never write through them
  write_file(biggest, bytes);
  fs::path fifo_pkg = dir_ / "fifo-pkg";
  fs::copy(pkg_, fifo_pkg, fs::copy_options::recursive);
  ASSERT_EQ(::mkfifo((fifo_pkg / "trainer" / "pipe").c_str(), 0644), 0);
  fs::path not_layout = dir_ / "not-a-layout";
  write_file(not_layout / "notes.txt", "mine\n");
  write_file(pkg_ / "cache.log", "excluded by .dockerignore\n");

  const std::string to_oci = "--output=oci:" + out.string() + ":t";
  std::vector<BadInput> cases{
      {"missing script", {"--script=trainer/nope.py", to_oci}, "nope.py"},
      {"module file absent", {"--python-module=trainer.absent", to_oci}, "absent"},
      {"path outside package", {"--script=trainer/task.py", "--extra-dirs=../elsewhere", to_oci}, "outside"},
      {"extra dir excluded by .dockerignore", {"--script=trainer/task.py", "--extra-packages=cache.log", to_oci},
       "cache.log"},
      {"unreadable file (a FIFO)",
       {"--script=trainer/task.py", "--local-package-path=" + fifo_pkg.string(), to_oci}, "FIFO"},
      {"unknown output kind", {"--script=trainer/task.py", "--output=tarball:" + out.string()}, "tarball"},
      {"output dir that is not a layout", {"--script=trainer/task.py", "--output=oci:" + not_layout.string()},
       "not an OCI layout"},
      {"corrupt base index", {"--script=trainer/task.py", "--base-source=oci:" + bad_index.string() + ":3.11", to_oci},
       "index.json"},
      {"corrupt base layer",
       {"--script=trainer/task.py", "--base-source=oci:" + bad_layer.string() + ":3.11",
        "--output=docker-archive:" + archive.string()},
       "does not match its digest"},
      {"missing base", {"--script=trainer/task.py", "--base-source=oci:" + (dir_ / "nobase").string(), to_oci},
       "does not exist"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"build", "-q", "--executor-image-uri=trainpack-test/python:3.11",
                                  "--local-package-path=" + pkg_.string(), "--cache-dir=" + (dir_ / "cache").string(),
                                  "--base-source=" + base_oci()};
    args.insert(args.end(), c.args.begin(), c.args.end());  // later flags win
    auto r = trainpack(args);
    EXPECT_NE(r.exit_code, 0) << c.name;
    EXPECT_TRUE(r.err.starts_with("trainpack: error: ")) << c.name << ": " << r.err;
    std::string first_line = r.err.substr(0, r.err.find('\n'));
    EXPECT_NE(first_line.find(c.expect_in_error), std::string::npos) << c.name << ": " << r.err;
    std::string rest = r.err.substr(first_line.size() + 1);
    EXPECT_TRUE(rest.empty() || (rest.starts_with("hint: ") && rest.find('\n') == rest.size() - 1))
        << c.name << ": expected one error line and at most one hint line:\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << c.name << ": " << r.out;
    EXPECT_FALSE(fs::exists(out)) << c.name << " left output behind";
    EXPECT_FALSE(fs::exists(archive)) << c.name << " left output behind";
    EXPECT_EQ(read_file(not_layout / "notes.txt"), "mine\n") << c.name;
    const fs::path work = trainpack::store::temp_dir_of(dir_ / "cache");
    EXPECT_TRUE(!fs::exists(work) || fs::is_empty(work)) << c.name;
    for (const auto& e : fs::directory_iterator(dir_))
      EXPECT_FALSE(e.path().filename().string().starts_with(".")) << c.name << " left " << e.path();
  }
}
// A file the building user cannot read (root reads everything, so the build runs as nobody): a one-line error
// naming the file, nothing written.
TEST_F(BuildTest, UnreadableFileFailsForAnUnprivilegedUser) {
  fs::path home = dir_ / "nobody";
  fs::create_directories(home);
  fs::copy(pkg_, home / "pkg", fs::copy_options::recursive);
  write_file(home / "pkg" / "trainer" / "secret.py", "API_KEY = 'x'\n");
  fs::permissions(home / "pkg" / "trainer" / "secret.py", fs::perms::none);
  for (const auto& p : {dir_, home}) fs::permissions(p, fs::perms::all);
  std::vector<std::string> argv{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                                trainpack_bin(), "build", "-q", "--executor-image-uri=trainpack-test/python:3.11",
                                "--base-source=" + base_oci(), "--local-package-path=" + (home / "pkg").string(),
                                "--script=trainer/task.py", "--cache-dir=" + (home / "cache").string(),
                                "--output=oci:" + (home / "out").string()};
  auto r = run_command(argv);
  EXPECT_NE(r.exit_code, 0) << describe(argv, r);
  EXPECT_TRUE(r.err.starts_with("trainpack: error: ")) << describe(argv, r);
  EXPECT_NE(r.err.substr(0, r.err.find('\n')).find("secret.py"), std::string::npos) << describe(argv, r);
  EXPECT_FALSE(fs::exists(home / "out"));
}

// --digest-file=/dev/stdout writes the digest to standard output, as `> /dev/stdout` would, before the result.
TEST_F(BuildTest, DigestFileDevStdoutPrintsTheDigest) {
  // A link of the test's own with /dev/stdout's target, so that no fault can replace the machine's /dev/stdout.
  const fs::path stdout_link = dir_ / "stdout";
  fs::create_symlink("/proc/self/fd/1", stdout_link);
  auto r = build(pkg_, "oci:" + (dir_ / "out").string() + ":t", dir_ / "cache",
                 {"-q", "--format=text", "--digest-file=" + stdout_link.string()});
  ASSERT_EQ(r.exit_code, 0) << joined(r);
  ASSERT_TRUE(r.out.starts_with("sha256:")) << joined(r);
  const std::string digest = r.out.substr(0, r.out.find('\n') + 1);
  EXPECT_EQ(r.out, digest + digest) << "the digest file's line, then the result";
  EXPECT_TRUE(fs::is_symlink(stdout_link));
}

// --dry-run plans the layers and lists what .dockerignore keeps out, and writes no image.
TEST_F(BuildTest, DryRunListsLayersAndExclusionsAndWritesNothing) {
  write_file(pkg_ / "trainer" / "__pycache__" / "task.cpython-311.pyc", "bytecode");
  auto r = build(pkg_, "oci:" + (dir_ / "out").string() + ":t", dir_ / "cache", {"--dry-run", "-q"});
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build --dry-run"}, r);
  json plan = json::parse(r.out);
  EXPECT_EQ(plan.at("dry_run"), true);
  std::vector<std::string> excluded = plan.at("excluded");
  EXPECT_NE(std::find(excluded.begin(), excluded.end(), "trainer/train.log"), excluded.end()) << r.out;
  EXPECT_NE(std::find(excluded.begin(), excluded.end(), "trainer/__pycache__/"), excluded.end()) << r.out;
  ASSERT_EQ(plan.at("layers").size(), 3u) << r.out;
  EXPECT_EQ(plan["layers"][2]["created_by"], "COPY [\"trainer\", \"trainer\"]");
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

}  // namespace

// Files of the context that look like credentials (secrets/credential_scan.h), in the script's directory and in an
// --extra-dirs directory: one warning each, naming the file, never its contents; the image is still the one gcloud's
// Dockerfile builds. With --fail-on-secrets the build fails before anything reaches the registry; a .dockerignore
// entry leaves a file out, and with it the warning.
TEST_F(BuildTest, LikelyCredentialsInTheContextAreWarnedAboutAndFailWithFailOnSecrets) {
  const std::string marker = "tp-not-a-real-secret-7c1e";
  std::map<std::string, std::string> files{
      {"trainer/.env", "EPOCHS=3\nWANDB_API_KEY=" + marker + "\n"},
      {"trainer/gha-creds-5e0c2a.json", R"({"type": "external_account", "audience": ")" + marker + "\"}"},
      {"trainer/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + marker + "\n-----END OPENSSH PRIVATE KEY-----\n"},
      {"trainer/.netrc", "machine pypi.example.com login ci password " + marker + "\n"},
      {"config/sa.json", R"({"type": "service_account", "client_email": "t@p.iam.gserviceaccount.com",
                            "private_key": ")" + marker + "\"}"},
      {"config/.docker/config.json", R"({"auths": {"us-docker.pkg.dev": {"auth": ")" + marker + "\"}}}"},
      {"config/.git-credentials", "https://ci:" + marker + "@github.com\n"},
      {"config/.aws/credentials", "[default]\naws_secret_access_key = " + marker + "\n"},
      {"config/pip.conf", "[global]\nindex-url = https://u:" + marker + "@pypi.example.com/simple\n"},
  };
  for (const auto& [path, bytes] : files) write_file(pkg_ / path, bytes);
  write_file(pkg_ / "config" / "labels.json", R"({"cat": 0, "dog": 1})");

  auto r = build(pkg_, "oci:" + (dir_ / "out").string() + ":v1", dir_ / "cache", {"-q"});
  ASSERT_EQ(r.exit_code, 0) << joined(r);
  EXPECT_EQ(r.out.find(marker) + r.err.find(marker), 2 * std::string::npos) << joined(r);
  std::vector<std::string> warnings;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);)
    if (line.starts_with("trainpack: warning: ")) warnings.push_back(line);
  EXPECT_EQ(warnings.size(), files.size()) << r.err;
  for (const auto& [path, bytes] : files) {
    std::string named = "warning: " + path + " in the package path looks like ";
    EXPECT_NE(r.err.find(named), std::string::npos) << path << " not warned about:\n" << r.err;
  }
  json result = json::parse(r.out);
  ASSERT_EQ(result.at("secrets").size(), files.size()) << r.out;
  EXPECT_EQ(result["secrets"][0].at("path"), "config/.aws/credentials");
  EXPECT_EQ(result["secrets"][0].at("image_path"), "/usr/app/config/.aws/credentials");
  EXPECT_EQ(result["secrets"][0].at("kind"), "AWS credentials");
  auto unpack = run_command({"umoci", "unpack", "--image", (dir_ / "out").string() + ":v1", (dir_ / "b").string()});
  ASSERT_EQ(unpack.exit_code, 0) << joined(unpack);
  EXPECT_TRUE(fs::exists(dir_ / "b" / "rootfs" / "usr/app/trainer/.env")) << "the image is still gcloud's";

  const std::string registry = env_or_fail("TRAINPACK_TEST_REGISTRY");
  auto refused = build(pkg_, "docker://" + registry + "/secrets-refused:v1", dir_ / "cache", {"--fail-on-secrets"});
  EXPECT_NE(refused.exit_code, 0) << joined(refused);
  EXPECT_NE(refused.err.find("error: the package path holds files that look like credentials: config/.aws/credentials"),
            std::string::npos) << refused.err;
  EXPECT_EQ(refused.out.find(marker) + refused.err.find(marker), 2 * std::string::npos) << joined(refused);
  auto tags = run_command({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                           "http://" + registry + "/v2/secrets-refused/tags/list"});
  EXPECT_EQ(tags.out, "404") << "something reached the registry before the build failed";

  std::string ignored;
  for (const auto& [path, bytes] : files) ignored += path + "\n";
  write_file(pkg_ / ".dockerignore", trainpack::read_file(pkg_ / ".dockerignore") + ignored);
  auto clean = build(pkg_, "oci:" + (dir_ / "clean").string() + ":v1", dir_ / "cache", {"--fail-on-secrets", "-q"});
  ASSERT_EQ(clean.exit_code, 0) << joined(clean);
  EXPECT_EQ(clean.err.find("warning"), std::string::npos) << clean.err;
  EXPECT_EQ(json::parse(clean.out).at("secrets").size(), 0u);
}
