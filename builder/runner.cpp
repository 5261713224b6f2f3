#include "builder/runner.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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
#include <thread>

#include "layers/unpack.h"
#include "support/fs.h"
#include "support/process.h"
#include "transports/docker_archive.h"

namespace trainpack::builder {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

// Where stdout/stderr of a child go.
enum class Output { kMergedToStdout, kToStderr, kDiscard };

// Runs argv (PATH lookup) with stdin from /dev/null; returns the exit status (128+N for signal N, 127 when it could
// not be executed). While waiting, SIGINT/SIGTERM/SIGQUIT are ignored by us: the child (runc / docker run, in our
// process group) gets the terminal's Ctrl-C and forwards it to the container; we clean up after it exits.
// `timeout` > 0: the child is killed after that long (returns -1).
int spawn(const std::vector<std::string>& argv, Output output, std::chrono::milliseconds timeout = {}) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) throw Error(std::string("cannot open /dev/null: ") + std::strerror(errno));

  struct sigaction ign {}, old_int {}, old_term {}, old_quit {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ign, &old_int);
  ::sigaction(SIGTERM, &ign, &old_term);
  ::sigaction(SIGQUIT, &ign, &old_quit);
  auto restore = [&] {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
  };

  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    restore();
    ::close(devnull);
    throw Error(std::string("cannot start ") + argv[0] + ": " + std::strerror(e));
  }
  if (pid == 0) {
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGQUIT, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(devnull, 0);
    switch (output) {
      case Output::kMergedToStdout: ::dup2(1, 2); break;
      case Output::kToStderr: ::dup2(2, 1); break;
      case Output::kDiscard:
        ::dup2(devnull, 1);
        ::dup2(devnull, 2);
        break;
    }
    ::execvp(args[0], args.data());
    const char* msg = "trainpack: cannot execute the container runtime\n";
    ssize_t ignored = ::write(2, msg, std::strlen(msg));
    (void)ignored;
    ::_exit(127);
  }
  ::close(devnull);
  int status = 0;
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    pid_t r = ::waitpid(pid, &status, timeout.count() > 0 ? WNOHANG : 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      restore();
      throw Error(std::string("waitpid: ") + std::strerror(errno));
    }
    if (r == 0) {
      if (std::chrono::steady_clock::now() - start > timeout) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        restore();
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  restore();
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}


bool engine_answers(const std::string& cli) {
  if (find_program(cli).empty()) return false;
  return spawn({cli, "info"}, Output::kDiscard, std::chrono::seconds(30)) == 0;
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

// Reads `rel` (e.g. "etc/passwd") inside `rootfs`, symlinks resolved as if rootfs were "/". "" when missing.
std::string read_in_root(const fs::path& rootfs, const std::string& rel) {
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
  if (fd < 0) return {};
  std::string out;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && out.size() < (8u << 20)) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

std::vector<std::vector<std::string>> colon_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::size_t i = 0;
    while (true) {
      std::size_t j = line.find(':', i);
      f.push_back(line.substr(i, j == std::string::npos ? std::string::npos : j - i));
      if (j == std::string::npos) break;
      i = j + 1;
    }
    rows.push_back(std::move(f));
  }
  return rows;
}

bool parse_id(const std::string& s, unsigned& out) {
  if (s.empty() || s.size() > 10) return false;
  unsigned long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > 0xFFFFFFFEul) return false;
  out = static_cast<unsigned>(v);
  return true;
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
  if (user.empty()) {
    for (const auto& r : colon_rows(read_in_root(rootfs, "etc/passwd")))
      if (r.size() >= 6 && r[2] == "0") {
        out.home = r[5];
        break;
      }
    return out;
  }
  std::string u = user, g;
  if (auto c = user.find(':'); c != std::string::npos) {
    u = user.substr(0, c);
    g = user.substr(c + 1);
  }
  auto passwd = colon_rows(read_in_root(rootfs, "etc/passwd"));
  auto group = colon_rows(read_in_root(rootfs, "etc/group"));
  std::string user_name;
  unsigned num = 0;
  bool numeric = parse_id(u, num);
  bool found = false;
  for (const auto& r : passwd) {
    if (r.size() < 4) continue;
    unsigned ruid = 0, rgid = 0;
    if (!parse_id(r[2], ruid) || !parse_id(r[3], rgid)) continue;
    if ((numeric && ruid == num) || (!numeric && r[0] == u)) {
      out.uid = ruid;
      out.gid = rgid;
      out.home = r.size() >= 6 ? r[5] : "";
      user_name = r[0];
      found = true;
      break;
    }
  }
  if (!found) {
    if (!numeric)
      throw Error("the image's user '" + user + "' is not in its /etc/passwd",
                  "the image config's User names an account the image does not have");
    out.uid = num;
    out.gid = 0;
  }
  if (!g.empty()) {
    unsigned gnum = 0;
    bool gnumeric = parse_id(g, gnum);
    bool gfound = false;
    for (const auto& r : group) {
      if (r.size() < 3) continue;
      unsigned rgid = 0;
      if (!parse_id(r[2], rgid)) continue;
      if ((gnumeric && rgid == gnum) || (!gnumeric && r[0] == g)) {
        out.gid = rgid;
        gfound = true;
        break;
      }
    }
    if (!gfound) {
      if (!gnumeric)
        throw Error("the image's group '" + g + "' (user '" + user + "') is not in its /etc/group",
                    "the image config's User names a group the image does not have");
      out.gid = gnum;
    }
  }
  if (!user_name.empty()) {
    for (const auto& r : group) {
      if (r.size() < 4) continue;
      unsigned rgid = 0;
      if (!parse_id(r[2], rgid) || rgid == out.gid) continue;
      std::stringstream ms(r[3]);
      std::string m;
      while (std::getline(ms, m, ','))
        if (m == user_name) {
          out.additional_gids.push_back(rgid);
          break;
        }
    }
  }
  return out;
}

json runtime_spec(const json& image_config, const RunOptions& options, const fs::path& rootfs,
                  const std::string& hostname) {
  if (options.gpu)
    throw Error("--gpu needs docker or podman with the NVIDIA Container Toolkit; runc alone cannot pass GPUs",
                "install docker (or podman) and the NVIDIA Container Toolkit, or run without --gpu");
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

  json linux_ = {
      // No network namespace: the host's network, so the trainer reaches what the host reaches.
      {"namespaces", json::array({{{"type", "pid"}}, {{"type", "ipc"}}, {{"type", "uts"}}, {{"type", "mount"}}})},
      {"resources", {{"devices", json::array({{{"allow", false}, {"access", "rwm"}}})}}},
      {"maskedPaths",
       {"/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
        "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap"}},
      {"readonlyPaths", {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}},
  };
  return json{{"ociVersion", "1.0.2"},
              {"process", process},
              {"root", {{"path", rootfs.string()}, {"readonly", false}}},
              {"hostname", hostname},
              {"mounts", mounts},
              {"linux", linux_}};
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
};

Ran run_with_engine_impl(const std::string& cli, const image::Image& image, const RunOptions& options,
                         const fs::path& work_dir, const std::function<void()>& before_run) {
  if (!options.docker_archive.empty() && options.image_name.empty())
    throw Error("no image name for the docker-archive " + options.docker_archive.string(),
                "give RunOptions::image_name, the name:tag the archive holds");
  std::string ref = options.image_name;
  if (ref.empty()) ref = "trainpack-local-run/image:" + image.manifest_digest().hex().substr(0, 12);
  fs::path archive = options.docker_archive;
  std::optional<ScopedFile> written;
  if (archive.empty()) {
    fs::create_directories(work_dir);
    archive = work_dir / (random_id() + ".tar");
    written.emplace(archive);
    transports::write_docker_archive(image, archive, ref);
  }
  std::vector<std::string> load{cli, "load", "-i", archive.string()};
  int rc = spawn(load, Output::kToStderr);
  if (rc != 0)
    throw RunError(engine_title(cli) + " failed with error code " + std::to_string(rc) + ". Command: " + join(load),
                   "the image could not be loaded into " + cli, rc);
  written.reset();
  if (before_run) before_run();
  std::vector<std::string> argv = docker_run_argv(cli, ref, options);
  return {spawn(argv, Output::kMergedToStdout), argv};
}

Ran run_daemonless_impl(const image::Image& image, const RunOptions& options, const fs::path& work_dir,
                        const std::function<void()>& before_run) {
  if (::geteuid() != 0)
    throw Error("running without docker or podman needs root (runc, rootful): run as root, or install docker",
                "no container engine answered `info`; trainpack then runs the image with runc, which needs root");
  if (options.gpu) runtime_spec(json::object(), options, "/");  // throws the --gpu message before any work
  std::string runc = find_program("runc");
  if (runc.empty() && ::access("/usr/sbin/runc", X_OK) == 0) runc = "/usr/sbin/runc";
  if (runc.empty()) throw Error("runc is not installed", "apt-get install runc, or install docker or podman");

  fs::create_directories(work_dir);
  fs::path work = fs::absolute(work_dir);
  std::string id = random_id();
  ScopedDir bundle(work / id);
  fs::create_directories(bundle.path());
  fs::path rootfs = bundle.path() / "rootfs";
  layers::unpack_image(image, rootfs);
  json spec = runtime_spec(image.config().document(), options, rootfs);
  write_file_atomic(bundle.path() / "config.json", spec.dump(2));
  fs::path state = work / "runc-state";
  fs::create_directories(state);
  std::vector<std::string> argv{runc, "--root", state.string(), "run", "--bundle", bundle.path().string(), id};
  if (before_run) before_run();
  int rc = spawn(argv, Output::kMergedToStdout);
  // `runc run` removes the container when it exits; make sure of it before the bundle goes.
  spawn({runc, "--root", state.string(), "delete", "--force", id}, Output::kDiscard, std::chrono::seconds(30));
  return {rc, argv};
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
  if (ran.code != 0)
    throw RunError(engine_title(engine) + " failed with error code " + std::to_string(ran.code) +
                       ". Command: " + join(ran.argv),
                   "the trainer exited with status " + std::to_string(ran.code) + "; its output is above",
                   ran.code);
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

}  // namespace trainpack::builder
