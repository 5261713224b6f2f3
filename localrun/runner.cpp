#include "localrun/runner.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>

#include "distro/users.h"
#include "layers/unpack.h"
#include "image/config.h"
#include "support/fs.h"
#include "support/human.h"
#include "support/late_notice.h"
#include "support/process.h"
#include "support/text.h"
#include "transports/docker_archive.h"

namespace trainpack::localrun {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool engine_answers(const std::string& cli) {
  if (find_program(cli).empty()) return false;
  return run_attached({cli, "info"}, ChildOutput::kDiscard, std::chrono::seconds(30)) == 0;
}

std::string random_id() {
  std::random_device rd;
  std::ostringstream s;
  s << "trainpack-" << ::getpid() << "-" << std::hex << rd() << rd();
  return s.str().substr(0, 40);
}

std::string engine_title(const std::string& cli) {
  std::string base = fs::path(cli).filename().string();
  if (base == "docker") return "Docker";
  if (base == "podman") return "Podman";
  return base;
}

// Opens `rel` (e.g. "etc/passwd") inside `rootfs` for reading, symlinks resolved as if rootfs were "/"; -1 when
// missing.
int open_in_root(const fs::path& rootfs, const std::string& rel) {
  int root = ::open(rootfs.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return {};
  struct open_how how {};
  how.flags = O_RDONLY | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, root, rel.c_str(), &how, sizeof how));
  if (fd < 0 && errno == ENOSYS) {
    // Old kernel: follow no symlink at all.
    fd = -1;
    std::error_code ec;
    fs::path p = rootfs;
    bool ok = true;
    std::stringstream ss(rel);
    std::string comp;
    while (std::getline(ss, comp, '/')) {
      p /= comp;
      if (fs::is_symlink(fs::symlink_status(p, ec))) ok = false;
    }
    if (ok) fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  }
  ::close(root);
  return fd;
}

// Reads `rel` inside `rootfs` (open_in_root). "" when missing.
std::string read_in_root(const fs::path& rootfs, const std::string& rel) {
  int fd = open_in_root(rootfs, rel);
  if (fd < 0) return {};
  std::string out;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && out.size() < (8u << 20)) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

std::vector<std::string> string_list(const json& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const auto& v : j)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

}  // namespace

std::vector<std::string> docker_run_argv(const std::string& cli, const std::string& image_ref,
                                         const RunOptions& options) {
  std::vector<std::string> argv{cli, "run", "--rm"};
  if (options.gpu) {
    if (fs::path(cli).filename() == "podman") {
      argv.insert(argv.end(), {"--device", "nvidia.com/gpu=all"});
    } else {
      argv.insert(argv.end(), {"--gpus", "all"});
    }
  }
  if (!options.credentials_file.empty()) {
    argv.insert(argv.end(), {"-v", options.credentials_file + ":" + kCredentialsMountPath, "-e",
                             std::string(kCredentialsEnv) + "=" + kCredentialsMountPath});
  }
  for (const auto& [k, v] : options.extra_env) argv.insert(argv.end(), {"-e", k + "=" + v});
  for (const auto& [host, ctr] : options.mounts) argv.insert(argv.end(), {"-v", host.string() + ":" + ctr});
  argv.insert(argv.end(), {"--ipc", "host", image_ref});
  argv.insert(argv.end(), options.args.begin(), options.args.end());
  return argv;
}

ContainerUser resolve_user(const std::string& user, const fs::path& rootfs) {
  ContainerUser out;
  auto passwd = distro::parse_passwd(read_in_root(rootfs, "etc/passwd"));
  if (user.empty()) {
    if (const distro::PasswdEntry* root = distro::find_user(passwd, "0")) out.home = root->home;
    return out;
  }
  std::string u = user, g;
  if (auto c = user.find(':'); c != std::string::npos) {
    u = user.substr(0, c);
    g = user.substr(c + 1);
  }
  auto group = distro::parse_group(read_in_root(rootfs, "etc/group"));
  std::string user_name;
  if (const distro::PasswdEntry* entry = distro::find_user(passwd, u)) {
    out.uid = entry->uid;
    out.gid = entry->gid;
    out.home = entry->home;
    user_name = entry->name;
  } else if (auto uid = distro::parse_id(u)) {
    out.uid = *uid;
    out.gid = 0;
  } else {
    throw Error("the image's user '" + user + "' is not in its /etc/passwd",
                "the image config's User names an account the image does not have");
  }
  if (!g.empty()) {
    if (const distro::GroupEntry* entry = distro::find_group(group, g)) out.gid = entry->gid;
    else if (auto gid = distro::parse_id(g)) out.gid = *gid;
    else
      throw Error("the image's group '" + g + "' (user '" + user + "') is not in its /etc/group",
                  "the image config's User names a group the image does not have");
  }
  if (!user_name.empty())
    for (const distro::GroupEntry& entry : group)
      if (entry.gid != out.gid && std::find(entry.members.begin(), entry.members.end(), user_name) != entry.members.end())
        out.additional_gids.push_back(entry.gid);
  return out;
}

// The OCI runtime spec's process: the image's Entrypoint + Cmd (or the given arguments), user, environment and
// working directory resolved as docker run resolves them, with docker's default capabilities.
json process_spec(const json& image_config, const RunOptions& options, const fs::path& rootfs,
                  const std::string& hostname) {
  const json empty = json::object();
  const json& cfg = image_config.contains("config") && image_config["config"].is_object() ? image_config["config"]
                                                                                           : empty;
  std::vector<std::string> args = string_list(cfg.value("Entrypoint", json()));
  std::vector<std::string> cmd = options.args.empty() ? string_list(cfg.value("Cmd", json())) : options.args;
  args.insert(args.end(), cmd.begin(), cmd.end());
  if (args.empty())
    throw Error("the image has no Entrypoint or Cmd and no arguments were given: nothing to run",
                "pass the command after --");

  ContainerUser user = resolve_user(cfg.value("User", std::string()), rootfs);

  image::EnvList env = image::ImageConfig::from_json(image_config).env();
  if (!env.has("PATH")) env.set("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  if (!env.has("HOSTNAME")) env.set("HOSTNAME", hostname);
  if (!env.has("HOME")) env.set("HOME", user.home.empty() ? "/" : user.home);
  if (!options.credentials_file.empty()) env.set(kCredentialsEnv, kCredentialsMountPath);
  for (const auto& [k, v] : options.extra_env) env.set(k, v);

  std::string cwd = cfg.value("WorkingDir", std::string());
  if (cwd.empty()) cwd = "/";

  const json caps = {"CAP_CHOWN",  "CAP_DAC_OVERRIDE", "CAP_FSETID",   "CAP_FOWNER",           "CAP_MKNOD",
                     "CAP_NET_RAW", "CAP_SETGID",      "CAP_SETUID",   "CAP_SETFCAP",          "CAP_SETPCAP",
                     "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"};
  struct rlimit rl {};
  std::uint64_t nofile = 1024;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY)
    nofile = std::min<std::uint64_t>(rl.rlim_max, 1048576);
  json process = {
      {"terminal", false},
      {"user", {{"uid", user.uid}, {"gid", user.gid}}},
      {"args", args},
      {"env", env.entries()},
      {"cwd", cwd},
      {"capabilities", {{"bounding", caps}, {"effective", caps}, {"permitted", caps}}},
      // Docker raises the open-files limit; here as far as our own hard limit goes (more is refused).
      {"rlimits", json::array({{{"type", "RLIMIT_NOFILE"}, {"hard", nofile}, {"soft", nofile}}})},
      {"noNewPrivileges", false},
  };
  if (!user.additional_gids.empty()) process["user"]["additionalGids"] = user.additional_gids;
  return process;
}

// docker's default mounts, the host's resolver files, the credentials file and the user's --mount folders.
json runtime_mounts(const RunOptions& options) {
  json mounts = json::array({
      {{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}, {"options", {"nosuid", "noexec", "nodev"}}},
      {{"destination", "/dev"},
       {"type", "tmpfs"},
       {"source", "tmpfs"},
       {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}},
      {{"destination", "/dev/pts"},
       {"type", "devpts"},
       {"source", "devpts"},
       {"options", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}}},
      // No size cap: this is what gcloud's --ipc host buys (PyTorch DataLoader workers use /dev/shm).
      {{"destination", "/dev/shm"},
       {"type", "tmpfs"},
       {"source", "shm"},
       {"options", {"nosuid", "noexec", "nodev", "mode=1777"}}},
      {{"destination", "/dev/mqueue"}, {"type", "mqueue"}, {"source", "mqueue"},
       {"options", {"nosuid", "noexec", "nodev"}}},
      {{"destination", "/sys"}, {"type", "sysfs"}, {"source", "sysfs"},
       {"options", {"nosuid", "noexec", "nodev", "ro"}}},
  });
  // The host network is shared: give the container the host's resolver and hosts file (read-only), as Docker does.
  for (const char* f : {"/etc/resolv.conf", "/etc/hosts"}) {
    std::error_code ec;
    if (fs::is_regular_file(f, ec))
      mounts.push_back({{"destination", f}, {"type", "bind"}, {"source", f},
                        {"options", {"rbind", "ro", "nosuid", "nodev", "noexec"}}});
  }
  if (!options.credentials_file.empty())
    mounts.push_back({{"destination", kCredentialsMountPath}, {"type", "bind"},
                      {"source", fs::absolute(options.credentials_file).string()},
                      {"options", {"rbind", "ro", "nosuid", "nodev", "noexec"}}});
  for (const auto& [host, ctr] : options.mounts)
    mounts.push_back({{"destination", ctr}, {"type", "bind"}, {"source", fs::absolute(host).string()},
                      {"options", {"rbind", "rw"}}});
  return mounts;
}

// Docker's namespaces but the network one, its masked and read-only paths.
json linux_spec() {
  return json{
      // No network namespace: the host's network, so the trainer reaches what the host reaches.
      {"namespaces", json::array({{{"type", "pid"}}, {{"type", "ipc"}}, {{"type", "uts"}}, {{"type", "mount"}}})},
      {"resources", {{"devices", json::array({{{"allow", false}, {"access", "rwm"}}})}}},
      {"maskedPaths",
       {"/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
        "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap"}},
      {"readonlyPaths", {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}},
  };
}

json runtime_spec(const json& image_config, const RunOptions& options, const fs::path& rootfs,
                  const std::string& hostname) {
  if (options.gpu)
    throw Error("--gpu needs docker or podman with the NVIDIA Container Toolkit; runc alone cannot pass GPUs",
                "install docker (or podman) and the NVIDIA Container Toolkit, or run without --gpu");
  return json{{"ociVersion", "1.0.2"},
              {"process", process_spec(image_config, options, rootfs, hostname)},
              {"root", {{"path", rootfs.string()}, {"readonly", false}}},
              {"hostname", hostname},
              {"mounts", runtime_mounts(options)},
              {"linux", linux_spec()}};
}

std::string choose_engine(const std::string& engine) {
  if (engine == "runc") return "runc";
  if (engine == "docker" || engine == "podman") {
    if (find_program(engine).empty())
      throw Error("--engine=" + engine + ": '" + engine + "' is not on PATH",
                  "install it, or use --engine=runc (daemonless, as root)");
    if (!engine_answers(engine))
      throw Error("--engine=" + engine + ": '" + engine + " info' failed: the engine does not answer",
                  "start the daemon (or check DOCKER_HOST), or use --engine=runc");
    return engine;
  }
  if (engine.empty() || engine == "auto") {
    for (const char* e : {"docker", "podman"})
      if (engine_answers(e)) return e;
    return "runc";
  }
  throw Error("unknown engine '" + engine + "'", "use auto, docker, podman or runc");
}

namespace {

struct Ran {
  int code;
  std::vector<std::string> argv;
  std::string missing_program;  // daemonless: the process's program, when the rootfs's PATH has none
};

// The program of the runtime spec's process when exec cannot find it in `rootfs` (runc's exec.LookPath through the
// process's PATH; a name with a '/' as it is); "" when it is there.
std::string missing_program(const json& spec, const fs::path& rootfs) {
  const json& process = spec.at("process");
  const std::string program = process.at("args").at(0).get<std::string>();
  std::string path;
  for (const std::string& entry : string_list(process.value("env", json())))
    if (entry.starts_with("PATH=")) path = entry.substr(5);
  std::vector<std::string> candidates;
  if (program.find('/') != std::string::npos) candidates.push_back(program);
  else
    for (std::string_view dir : split_nonempty(path, ":")) candidates.push_back(std::string(dir) + "/" + program);
  for (const std::string& candidate : candidates) {
    if (candidate.front() != '/') continue;
    int fd = open_in_root(rootfs, candidate.substr(1));
    struct stat st {};
    bool executable = fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
    if (fd >= 0) ::close(fd);
    if (executable) return {};
  }
  return program;
}

using Clock = std::chrono::steady_clock;

void tell(const RunOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

void tell_detail(const RunOptions& options, const std::string& line) {
  if (options.detail) options.detail(line);
}

// The size of the image's layers as the registry holds them (compressed).
std::string image_size(const image::Image& image) {
  std::uint64_t bytes = 0;
  for (const image::Descriptor& layer : image.manifest().layers)
    bytes += static_cast<std::uint64_t>(std::max<std::int64_t>(layer.size, 0));
  return human_bytes(bytes);
}

// "Unpacking layer 2/3 (1.5 MB)" before each layer that is unpacked.
layers::UnpackProgress unpack_lines(const RunOptions& options, std::size_t& unpacked) {
  return [&options, &unpacked](std::size_t i, std::size_t count, std::int64_t size) {
    ++unpacked;
    tell(options, "Unpacking layer " + std::to_string(i + 1) + "/" + std::to_string(count) + " (" +
                      human_bytes(static_cast<std::uint64_t>(std::max<std::int64_t>(size, 0))) + ")");
  };
}

Ran run_with_engine_impl(const std::string& cli, const image::Image& image, const RunOptions& options,
                         const fs::path& work_dir, const std::function<void()>& before_run) {
  if (!options.docker_archive.empty() && options.image_name.empty())
    throw Error("no image name for the docker-archive " + options.docker_archive.string(),
                "give RunOptions::image_name, the name:tag the archive holds");
  std::string ref = options.image_name;
  if (ref.empty()) ref = "trainpack-local-run/image:" + image.manifest_digest().short_hex();
  fs::path archive = options.docker_archive;
  std::optional<ScopedFile> written;
  if (archive.empty()) {
    fs::create_directories(work_dir);
    archive = work_dir / (random_id() + ".tar");
    written.emplace(archive);
    tell(options, "Writing the image for " + engine_title(cli) + " (" + image_size(image) + ")");
    const auto began = Clock::now();
    transports::write_docker_archive(image, archive, ref);
    tell_detail(options, "Wrote the image's archive in " + human_seconds(Clock::now() - began));
  }
  tell(options, "Loading the image into " + engine_title(cli));
  const auto loading = Clock::now();
  std::vector<std::string> load{cli, "load", "-i", archive.string()};
  int rc = run_attached(load, ChildOutput::kToStderr);
  tell_detail(options, engine_title(cli) + " loaded the image in " + human_seconds(Clock::now() - loading));
  if (rc != 0)
    throw RunError(engine_title(cli) + " failed with error code " + std::to_string(rc) +
                       ". Command: " + join(load, " "),
                   "the image could not be loaded into " + cli, rc);
  written.reset();
  if (before_run) before_run();
  std::vector<std::string> argv = docker_run_argv(cli, ref, options);
  const auto started = Clock::now();
  Ran ran{run_attached(argv, ChildOutput::kMergedToStdout), argv, {}};
  tell_detail(options, "The container ran for " + human_seconds(Clock::now() - started) + " (" + cli + " run)");
  return ran;
}

std::string find_runc() {
  std::string runc = find_program("runc");
  if (runc.empty() && ::access("/usr/sbin/runc", X_OK) == 0) runc = "/usr/sbin/runc";
  if (runc.empty()) throw Error("runc is not installed", "apt-get install runc, or install docker or podman");
  return runc;
}

// The root filesystem as the overlayfs stack of the image's layer trees, mounted for runc alone. nullopt when
// overlayfs cannot be used here (then the image is unpacked whole instead).
std::optional<Ran> run_on_layer_trees(const image::Image& image, const RunOptions& options, const fs::path& bundle,
                                      const std::vector<std::string>& argv, const std::function<void()>& before_run) {
  const auto began = Clock::now();
  std::size_t unpacked = 0;
  LayerTrees trees = layer_trees(image, *options.layer_trees, unpack_lines(options, unpacked));
  tell_detail(options, "The root filesystem is ready in " + human_seconds(Clock::now() - began) + " (" +
                           counted(trees.names.size(), "layer", "layers") + ", " + std::to_string(unpacked) +
                           " unpacked, the others kept from earlier runs)");
  const fs::path upper = bundle / "upper", work = bundle / "work", rootfs = bundle / "rootfs";
  for (const fs::path& dir : {upper, work, rootfs}) fs::create_directories(dir);
  const std::string data =
      "lowerdir=" + overlay_lowerdir(trees) + ",upperdir=" + upper.string() + ",workdir=" + work.string();
  PrivateMount mount{"overlay", "overlay", data, rootfs, trees.dir};
  // overlayfs splits its options at ',' and its layers at ':'; mount(2) takes one page of them.
  if (bundle.string().find_first_of(",:") != std::string::npos || mount.data.size() >= 4000) return std::nullopt;
  std::string missing;
  AttachedRun run = run_attached_with_mount(argv, ChildOutput::kMergedToStdout, mount, [&](const fs::path& seen) {
    json spec = runtime_spec(image.config().document(), options, seen / rootfs.relative_path());
    missing = missing_program(spec, seen / rootfs.relative_path());
    spec["root"]["path"] = rootfs.string();
    write_file_atomic(bundle / "config.json", spec.dump(2));
    if (before_run) before_run();
  });
  if (run.mount_errno == 0) return Ran{run.status, argv, run.status == 0 ? std::string() : missing};
  tell(options, std::string("overlayfs cannot be mounted here (") + std::strerror(run.mount_errno) +
                    "): unpacking the image whole");
  return std::nullopt;
}

Ran run_on_unpacked_image(const image::Image& image, const RunOptions& options, const fs::path& bundle,
                          const std::vector<std::string>& argv, const std::function<void()>& before_run) {
  const fs::path rootfs = bundle / "rootfs";
  fs::remove_all(rootfs);
  const auto began = Clock::now();
  std::size_t unpacked = 0;
  layers::unpack_image(image, rootfs, unpack_lines(options, unpacked));
  tell_detail(options, "The root filesystem is ready in " + human_seconds(Clock::now() - began) + " (" +
                           counted(unpacked, "layer", "layers") + " unpacked)");
  json spec = runtime_spec(image.config().document(), options, rootfs);
  write_file_atomic(bundle / "config.json", spec.dump(2));
  if (before_run) before_run();
  int rc = run_attached(argv, ChildOutput::kMergedToStdout);
  return {rc, argv, rc == 0 ? std::string() : missing_program(spec, rootfs)};
}

Ran run_daemonless_impl(const image::Image& image, const RunOptions& options, const fs::path& work_dir,
                        const std::function<void()>& before_run) {
  if (::geteuid() != 0)
    throw Error("running without docker or podman needs root (runc, rootful): run as root, or install docker",
                "no container engine answered `info`; trainpack then runs the image with runc, which needs root");
  if (options.gpu) runtime_spec(json::object(), options, "/");  // throws the --gpu message before any work
  const std::string runc = find_runc();

  fs::create_directories(work_dir);
  fs::path work = fs::absolute(work_dir);
  std::string id = random_id();
  ScopedDir bundle(work / id);
  fs::create_directories(bundle.path());
  fs::path state = work / "runc-state";
  fs::create_directories(state);
  std::vector<std::string> argv{runc, "--root", state.string(), "run", "--bundle", bundle.path().string(), id};
  std::optional<Clock::time_point> started;
  auto starting = [&] {
    if (before_run) before_run();
    started = Clock::now();
  };
  std::optional<Ran> ran;
  if (options.layer_trees) ran = run_on_layer_trees(image, options, bundle.path(), argv, starting);
  if (!ran) ran = run_on_unpacked_image(image, options, bundle.path(), argv, starting);
  const auto ended = Clock::now();
  if (started) tell_detail(options, "The container ran for " + human_seconds(ended - *started) + " (runc run)");
  {
    // The container's files (its upper directory) can be large: a removal that takes long says so.
    LateNotice notice(options.progress, "Removing the container and its files", std::chrono::seconds(1));
    // `runc run` removes the container when it exits; make sure of it before the bundle goes.
    run_attached({runc, "--root", state.string(), "delete", "--force", id}, ChildOutput::kDiscard,
                 std::chrono::seconds(30));
    remove_tree_quietly(bundle.path());
    bundle.release();
  }
  tell_detail(options, "Removed the container in " + human_seconds(Clock::now() - ended));
  return *ran;
}

// gcloud's line for a container that did not exit 0, and what that means: the trainer's status, or an entrypoint
// program exec could not find (the rootfs runc ran shows it; docker's status for it is 127, which the build's check
// of the image's PATH confirms when it made one).
RunError run_failure(const std::string& engine, const Ran& ran, const image::Image& image, const RunOptions& options) {
  std::string what = engine_title(engine) + " failed with error code " + std::to_string(ran.code) +
                     ". Command: " + join(ran.argv, " ");
  const auto& config = image.config();
  std::vector<std::string> argv = config.entrypoint();
  if (argv.empty()) argv = options.args.empty() ? config.cmd() : options.args;
  std::string program = ran.missing_program;
  bool engine_127 = engine != "runc" && ran.code == 127 && !argv.empty();
  if (engine_127 && options.entrypoint_found == false) program = argv[0];
  std::string path = config.env().has("PATH") ? config.env().value("PATH") : "the default";
  if (!program.empty())
    return RunError(what, "the image's entrypoint program " + program + " was not found in the image's PATH (" +
                              path + "), so the trainer never started: use a base that has " + program +
                              " on its PATH (e.g. Debian's python-is-python3 package)", ran.code);
  if (engine_127 && !options.entrypoint_found.has_value())
    return RunError(what, "status 127 is " + engine + "'s when the image's entrypoint program " + argv[0] +
                              " is not in the image's PATH (" + path + "), unless the trainer exited with it; the "
                              "output is above", ran.code);
  return RunError(what, "the trainer exited with status " + std::to_string(ran.code) + "; its output is above",
                  ran.code);
}

}  // namespace

int run_with_engine(const std::string& cli, const image::Image& image, const RunOptions& options,
                    const fs::path& work_dir) {
  return run_with_engine_impl(cli, image, options, work_dir, {}).code;
}

int run_daemonless(const image::Image& image, const RunOptions& options, const fs::path& work_dir) {
  return run_daemonless_impl(image, options, work_dir, {}).code;
}

int run_image(const image::Image& image, const RunOptions& options_in, const fs::path& work_dir) {
  RunOptions options = options_in;
  if (!options.credentials_file.empty()) {
    std::error_code ec;
    fs::path key = options.credentials_file;
    if (!fs::exists(key, ec))
      throw Error("the credentials file " + key.string() + " does not exist",
                  "pass --service-account-key-file, or run `gcloud auth application-default login`");
    if (!fs::is_regular_file(key, ec))
      throw Error("the credentials file " + key.string() + " is not a regular file",
                  "pass --service-account-key-file=FILE with a JSON key file");
    // `docker -v` takes a relative path for a volume name; runc needs an absolute source too.
    options.credentials_file = fs::absolute(key).lexically_normal().string();
  }
  for (auto& [host, ctr] : options.mounts) {
    std::error_code ec;
    if (!fs::exists(host, ec))
      throw Error("the directory " + host.string() + " to mount at " + ctr + " does not exist",
                  "create it first (docker would create it as root)");
    host = fs::absolute(host).lexically_normal();
    if (ctr.empty() || ctr[0] != '/') throw Error("mount destination '" + ctr + "' is not an absolute path");
  }
  std::string engine = choose_engine(options.engine);
  if (engine != "runc" && options.credentials_file.find(':') != std::string::npos)
    throw Error("the credentials file path " + options.credentials_file + " contains ':', which docker -v cannot take",
                "copy the key file to a path without ':'");
  auto starting = [] { std::cerr << "Starting to run ..." << std::endl; };
  Ran ran = engine == "runc" ? run_daemonless_impl(image, options, work_dir, starting)
                             : run_with_engine_impl(engine, image, options, work_dir, starting);
  if (ran.code != 0) throw run_failure(engine, ran, image, options);
  std::string name = options.image_name.empty() ? image.describe() : options.image_name;
  std::cout << "A local run is finished successfully using custom image: " << name << "." << std::endl;
  return 0;
}

std::string default_credentials_file() {
  if (const char* v = std::getenv("GOOGLE_APPLICATION_CREDENTIALS"); v && *v) return v;
  fs::path dir;
  if (const char* c = std::getenv("CLOUDSDK_CONFIG"); c && *c) {
    dir = c;
  } else {
    const char* home = std::getenv("HOME");
    dir = fs::path(home && *home ? home : "/root") / ".config" / "gcloud";
  }
  return (dir / "application_default_credentials.json").string();
}

}  // namespace trainpack::localrun
