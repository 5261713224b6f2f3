#include "cli/cache_command.h"

#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>

#include <nlohmann/json.hpp>

#include "imagebuild/build.h"
#include "store/cache_dir.h"
#include "store/cache_prune.h"
#include "support/error.h"
#include "support/human.h"
#include "support/text.h"

namespace trainpack::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::string_view kSizeHint = "write a size such as 20GB, 500MB or 1.5GiB";

struct CacheFlags {
  std::string action;  // du or prune
  std::string cache_dir;
  std::string format = "text";
  std::string max_size;
  std::string older_than;
  bool all = false;
};

fs::path cache_root(const CacheFlags& f) {
  fs::path dir = f.cache_dir.empty() ? store::default_cache_dir(&std::cerr) : fs::path(f.cache_dir);
  return fs::absolute(dir).lexically_normal();
}

std::uint64_t effective_cap(const fs::path& root) {
  return store::cache_cap(root, cache_cap_setting(""));
}

std::string cap_text(std::uint64_t cap) {
  return cap == std::numeric_limits<std::uint64_t>::max() ? "none" : human_bytes(cap);
}

// The cache the command names, open to read and prune; null when there is none yet (nothing in it to measure or
// prune, and nothing is made). Throws Error when the directory is not a cache.
std::unique_ptr<store::CacheDir> open_cache(const CacheFlags& f) {
  fs::path root = cache_root(f);
  if (store::is_missing_or_empty(root)) return nullptr;
  return std::make_unique<store::CacheDir>(root, store::CacheAccess::kInspect);
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) std::cerr << "trainpack: warning: " << w << "\n";
}

// At most this many strays are named in the text output (the JSON lists them all).
constexpr std::size_t kStraysShown = 5;

std::string strays_text(const std::vector<fs::path>& strays) {
  std::string text;
  for (std::size_t i = 0; i < strays.size() && i < kStraysShown; ++i) text += (i ? ", " : "") + strays[i].string();
  if (strays.size() > kStraysShown) text += " and " + std::to_string(strays.size() - kStraysShown) + " more";
  return text;
}

void print_usage(const fs::path& root, const store::CacheDir* cache, const std::string& format) {
  store::CacheUsage usage;
  if (cache) {
    usage = store::measure_cache(*cache);
  } else {
    for (const store::KindLayout& k : store::cache_layout()) usage.kinds.push_back({k.kind});
  }
  print_warnings(usage.warnings);
  std::uint64_t cap = effective_cap(root);
  if (format == "json") {
    json kinds = json::object();
    for (const store::KindUsage& k : usage.kinds)
      kinds[std::string(store::layout_of(k.kind).dir)] = {{"entries", k.entries}, {"bytes", k.bytes}};
    json strays = json::array();
    for (const fs::path& s : usage.strays) strays.push_back(s.string());
    json j{{"cache_dir", root.string()}, {"kinds", kinds}, {"other_bytes", usage.other_bytes},
           {"total_bytes", usage.total()}, {"strays", strays}};
    if (cap != std::numeric_limits<std::uint64_t>::max()) j["cap_bytes"] = cap;
    std::cout << j.dump(2) << "\n";
    return;
  }
  auto row = [](std::string_view name, std::string entries, const std::string& size) {
    std::string line(name);
    line.resize(16, ' ');
    entries.insert(0, 9 - std::min<std::size_t>(9, entries.size()), ' ');
    std::string padded = size;
    padded.insert(0, 11 - std::min<std::size_t>(11, padded.size()), ' ');
    std::cout << line << entries << padded << "\n";
  };
  std::cout << root.string() << "\n";
  row("KIND", "ENTRIES", "SIZE");
  for (const store::KindUsage& k : usage.kinds)
    row(store::layout_of(k.kind).dir, std::to_string(k.entries), human_bytes(k.bytes));
  row("other", "", human_bytes(usage.other_bytes));
  row("total", "", human_bytes(usage.total()));
  std::cout << "cap " << cap_text(cap) << " (--cache-max-size, TRAINPACK_CACHE_MAX_SIZE): builds prune to it\n";
  if (!usage.strays.empty()) std::cout << "not made by trainpack, never pruned: " << strays_text(usage.strays) << "\n";
}

store::PruneLimits prune_limits(const CacheFlags& f, const fs::path& root) {
  store::PruneLimits limits;
  limits.all = f.all;
  if (!f.max_size.empty()) {
    limits.max_bytes = parse_bytes(f.max_size);
    if (!limits.max_bytes) throw Error("--max-size=" + f.max_size + " is not a size", std::string(kSizeHint));
  }
  if (!f.older_than.empty()) {
    limits.older_than = parse_duration(f.older_than);
    if (!limits.older_than)
      throw Error("--older-than=" + f.older_than + " is not a duration", "write one such as 7d, 12h or 1d12h");
  }
  if (!limits.all && !limits.max_bytes && !limits.older_than) limits.max_bytes = effective_cap(root);
  return limits;
}

void prune(const CacheFlags& f) {
  store::PruneLimits limits = prune_limits(f, cache_root(f));
  std::unique_ptr<store::CacheDir> cache = open_cache(f);
  store::PruneReport report = cache ? store::prune_cache(*cache, limits) : store::PruneReport{};
  print_warnings(report.warnings);
  if (f.format == "json") {
    std::cout << json{{"removed_entries", report.removed_entries}, {"freed_bytes", report.freed_bytes},
                      {"remaining_bytes", report.remaining_bytes}, {"held_entries", report.held_entries}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "removed " << counted(report.removed_entries, "entry", "entries") << " ("
            << human_bytes(report.freed_bytes) << "); the cache holds " << human_bytes(report.remaining_bytes) << "\n";
  if (report.held_entries > 0)
    std::cout << "kept " << counted(report.held_entries, "entry", "entries")
              << " a running build or local-run has used since it started\n";
}

}  // namespace

std::optional<std::uint64_t> cache_cap_setting(const std::string& flag) {
  std::string name = "--cache-max-size";
  std::string value = flag;
  if (value.empty()) {
    const char* env = std::getenv("TRAINPACK_CACHE_MAX_SIZE");
    if (env == nullptr || *env == '\0') return std::nullopt;
    name = "TRAINPACK_CACHE_MAX_SIZE";
    value = env;
  }
  if (ascii_lower(ascii_trim(value)) == "none") return std::numeric_limits<std::uint64_t>::max();
  std::optional<std::uint64_t> bytes = parse_bytes(value);
  if (!bytes) throw Error(name + "=" + value + " is not a size", std::string(kSizeHint) + ", or none to never prune");
  return bytes;
}

void add_cache_command(CLI::App& app) {
  auto flags = std::make_shared<CacheFlags>();
  CLI::App* cmd = app.add_subcommand(
      "cache", "du: print the cache's size by kind of entry and the cap builds keep it under. prune: remove entries, "
               "least recently used first, never one a running build uses (default: down to that cap)");
  cmd->add_option("action", flags->action, "du or prune")->required()->check(CLI::IsMember({"du", "prune"}));
  cmd->add_option("--cache-dir", flags->cache_dir, "The cache (default: ~/.cache/trainpack)");
  cmd->add_option("--format", flags->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->type_name("{text,json}");
  cmd->add_option("--max-size", flags->max_size, "prune: remove entries until the cache holds at most SIZE (20GB, "
                                                 "1.5GiB)");
  cmd->add_option("--older-than", flags->older_than, "prune: remove entries not used for DURATION (7d, 12h, 1d12h)");
  cmd->add_flag("--all", flags->all, "prune: remove every entry no running build uses");
  for (CLI::Option* opt : cmd->get_options())
    if (opt->get_items_expected_max() == 1) opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->callback([flags] {
    if (flags->action == "prune") return prune(*flags);
    if (!flags->max_size.empty() || !flags->older_than.empty() || flags->all)
      throw Error("--max-size, --older-than and --all are flags of trainpack cache prune",
                  "trainpack cache du only measures the cache");
    std::unique_ptr<store::CacheDir> cache = open_cache(*flags);
    print_usage(cache_root(*flags), cache.get(), flags->format);
  });
}

}  // namespace trainpack::cli
