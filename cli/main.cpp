#include <malloc.h>

#include "cli/cli.h"

int main(int argc, char** argv) {
#ifdef M_ARENA_MAX
  // glibc gives each thread that allocates an arena of its own, up to 8 per core, and keeps what is freed there:
  // on a framework install that is ~10-20 MB of peak RSS the build never uses again. trainpack's threads mostly
  // move bytes (downloads, compression, bytecode interpreters' pipes); two arenas serve them as fast (measured).
  mallopt(M_ARENA_MAX, 2);
#endif
  return trainpack::cli::run_cli(argc, argv);
}
