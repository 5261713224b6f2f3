#include "registry/blob_locations.h"

#include <sstream>

#include "support/error.h"
#include "support/fs.h"

namespace trainpack::registry {

namespace {

// One line per location: "registry repository". Names never hold spaces (distribution-spec name grammar).
std::optional<BlobLocation> parse_line(const std::string& line) {
  auto space = line.find(' ');
  if (space == std::string::npos || space == 0 || space + 1 == line.size()) return std::nullopt;
  BlobLocation where{line.substr(0, space), line.substr(space + 1)};
  if (where.repository.find(' ') != std::string::npos) return std::nullopt;
  return where;
}

}  // namespace

std::string BlobLocations::key_of(const image::Digest& digest) { return digest.algorithm() + "-" + digest.hex(); }

std::vector<BlobLocation> BlobLocations::known(const image::Digest& digest) const {
  std::vector<BlobLocation> locations;
  std::string text;
  if (!entries_.use(key_of(digest))) return locations;
  try {
    text = read_file(entries_.path_of(key_of(digest)), 64 * 1024);
  } catch (const std::exception&) {
    return locations;
  }
  return parse_blob_locations(text);
}

std::vector<BlobLocation> parse_blob_locations(std::string_view text) {
  std::vector<BlobLocation> locations;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line) && locations.size() < BlobLocations::kKeptPerBlob;)
    if (auto where = parse_line(line)) locations.push_back(*where);
  return locations;
}

void BlobLocations::remember(const image::Digest& digest, const BlobLocation& where) const {
  if (where.registry.empty() || where.repository.empty() || where.registry.find(' ') != std::string::npos ||
      where.repository.find(' ') != std::string::npos)
    return;
  std::vector<BlobLocation> locations = known(digest);
  if (!locations.empty() && locations.front() == where) return;  // nothing new: no write
  std::erase(locations, where);
  locations.insert(locations.begin(), where);
  if (locations.size() > kKeptPerBlob) locations.resize(kKeptPerBlob);
  std::string text;
  for (const BlobLocation& l : locations) text += l.registry + " " + l.repository + "\n";
  try {
    std::filesystem::create_directories(entries_.dir());
    write_file_atomic(entries_.path_of(key_of(digest)), text);
  } catch (const std::exception&) {
    // A cache: the push it serves has succeeded either way.
  }
}

}  // namespace trainpack::registry
