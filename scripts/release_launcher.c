// bin/trainpack of the self-contained release tarball (scripts/package.sh): starts lib/trainpack.bin through the
// dynamic loader the binary was linked against, shipped in lib/ with every library it loads, glibc's included. So
// nothing of the host's libc is used and the tarball runs whatever the host's libc is (an older glibc, musl, none).
//
// Linked statically (no loader, no libc and no /bin/sh needed to start it). It runs
//   lib/LOADER --inhibit-cache --library-path lib --argv0 ARGV0 lib/trainpack.bin ARGS...
// --library-path rather than LD_LIBRARY_PATH: the programs trainpack starts (the host's Python, credential helpers,
// runc) inherit its environment and must load their own libraries, not the bundle's. --inhibit-cache: the host's
// /etc/ld.so.cache lists the host's libraries, which an NSS module the bundle lacks must not be resolved through
// (glibc >= 2.34 has `files` and `dns` in libc.so.6; the bundle ships libnss_compat for `compat`).
// CA certificates: trainpack reads $SSL_CERT_FILE or the distributions' bundle paths (net/http_client.cpp,
// system_ca_file); on a host with none of them (no ca-certificates installed, a busybox root) SSL_CERT_FILE is
// pointed at the bundle the tarball ships in share/trainpack/cacert.pem.
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LOADER
#error "build with -DLOADER='\"ld-linux-x86-64.so.2\"' (the basename of the binary's PT_INTERP)"
#endif

static _Noreturn void fail(const char* what, const char* path) {
  fprintf(stderr, "trainpack: %s %s: %s\n", what, path, strerror(errno));
  exit(127);
}

// The release's top directory: the parent of the directory holding this program (symlinks resolved, so a link to
// bin/trainpack from a directory on PATH works). /proc/self/exe first; without /proc, argv[0] when it is a path.
static void release_root(const char* argv0, char* root) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
  } else if (strchr(argv0, '/') == NULL || realpath(argv0, self) == NULL) {
    fail("cannot find its own path (mount /proc, or start it by its path):", argv0);
  }
  char* slash = strrchr(self, '/');
  *slash = '\0';  // .../bin
  slash = strrchr(self, '/');
  *(slash == self ? slash + 1 : slash) = '\0';  // ...
  strcpy(root, self);
}

// dst = a + b, or exit when it does not fit.
static void join(char* dst, const char* a, const char* b) {
  if ((size_t)snprintf(dst, PATH_MAX, "%s%s", a, b) >= PATH_MAX) {
    errno = ENAMETOOLONG;
    fail("cannot start from", a);
  }
}

static int readable_file(const char* path) { return path != NULL && *path != '\0' && access(path, R_OK) == 0; }

// The same places as net/http_client.cpp's system_ca_file, in the same order.
static int host_has_ca_bundle(void) {
  static const char* const paths[] = {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                                      "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/ca-bundle.pem",
                                      "/etc/ssl/cert.pem"};
  if (readable_file(getenv("SSL_CERT_FILE")) || readable_file(getenv("SSL_CERT_DIR"))) return 1;
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    if (readable_file(paths[i])) return 1;
  return 0;
}

int main(int argc, char** argv) {
  char root[PATH_MAX], lib[PATH_MAX], loader[PATH_MAX], binary[PATH_MAX], cacert[PATH_MAX];
  release_root(argc > 0 ? argv[0] : "", root);
  join(lib, root, "/lib");
  join(loader, lib, "/" LOADER);
  join(binary, lib, "/trainpack.bin");
  join(cacert, root, "/share/trainpack/cacert.pem");
  if (!host_has_ca_bundle() && readable_file(cacert)) setenv("SSL_CERT_FILE", cacert, 1);

  char** args = calloc((size_t)argc + 8, sizeof *args);
  if (args == NULL) fail("out of memory starting", binary);
  int n = 0;
  args[n++] = loader;
  args[n++] = "--inhibit-cache";
  args[n++] = "--library-path";
  args[n++] = lib;
  args[n++] = "--argv0";
  args[n++] = argc > 0 ? argv[0] : "trainpack";
  args[n++] = binary;
  for (int i = 1; i < argc; i++) args[n++] = argv[i];
  args[n] = NULL;
  execv(loader, args);
  fail("cannot execute", loader);
}
