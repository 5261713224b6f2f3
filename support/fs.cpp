#include "support/fs.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "support/error.h"

namespace trainpack {
namespace fs = std::filesystem;

fs::path staging_path_for(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  std::string name = "." + path.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter++);
  return path.parent_path() / name;
}

void write_file_atomic(const fs::path& path, std::string_view bytes) {
  fs::path tmp = staging_path_for(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + tmp.string() + ": " + std::strerror(errno));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw Error("cannot write " + tmp.string() + ": " + std::strerror(errno));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error("cannot rename into " + path.string() + ": " + ec.message());
  }
}

std::string read_file(const fs::path& path, std::uintmax_t limit) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) throw Error("cannot read " + path.string() + ": " + ec.message());
  if (size > limit) throw Error(path.string() + " is too large (" + std::to_string(size) + " bytes)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error("cannot read " + path.string());
  return std::move(ss).str();
}

ScopedDir::~ScopedDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

ScopedFile::~ScopedFile() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove(path_, ec);
}

fs::path make_temp_dir(const fs::path& parent, std::string_view prefix) {
  fs::path base = parent.empty() ? fs::temp_directory_path() : parent;
  std::error_code ec;
  fs::create_directories(base, ec);
  std::string tmpl = (base / (std::string(prefix) + "XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw Error("cannot create a temporary directory in " + base.string() + ": " + std::strerror(errno));
  return fs::path(tmpl);
}

}  // namespace trainpack
