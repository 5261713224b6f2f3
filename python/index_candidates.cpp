#include "python/index_candidates.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>

#include "image/digest.h"
#include "python/filenames.h"
#include "python/metadata.h"
#include "support/error.h"
#include "support/text.h"

namespace trainpack::python {
namespace fs = std::filesystem;

TagPriority tags_for(const PythonFacts& f) {
  CPythonTarget t;
  auto dot = f.python_version.find('.');
  t.major = leading_int(f.python_version.substr(0, dot));
  t.minor = dot == std::string::npos ? 0 : leading_int(f.python_version.substr(dot + 1));
  t.debug = f.py_debug;
  t.free_threaded = f.free_threaded;
  t.libc = f.libc == "musl" ? Libc::musl : f.libc == "glibc" ? Libc::glibc : Libc::none;
  auto ldot = f.libc_version.find('.');
  t.libc_major = leading_int(f.libc_version.substr(0, ldot));
  t.libc_minor = ldot == std::string::npos ? 0 : leading_int(f.libc_version.substr(ldot + 1));
  t.arch = f.machine;
  TagBehaviour behaviour;
  behaviour.linux_platform_first = false;
  return TagPriority(sys_tags(t, behaviour));
}

void require_supported_wheel(const WheelFilename& wheel, const std::string& filename, const TagPriority& tags,
                             const std::string& where) {
  if (tags.wheel_priority(wheel.tags)) return;
  std::string best = tags.tags().empty() ? "none" : tags.tags().front().str();
  throw Error(where + ": " + filename + " is not a supported wheel on this platform.",
              "pip in the image refuses it too; pass a wheel whose tags the image's Python accepts (best: " + best +
                  ", or py3-none-any)");
}

CandidateMetadata candidate_metadata(const std::string& text) {
  CoreMetadata md = CoreMetadata::parse(text);
  CandidateMetadata out;
  for (const auto& r : md.requires_dist) out.requires_dist.push_back(r.str());
  out.requires_python = md.requires_python.value_or("");
  out.provides_extra = md.provides_extra;
  return out;
}

IndexCandidates::IndexCandidates(IndexClient& client, const store::BlobStore& store,
                                 const TagPriority& tags, FormatControl formats,
                                 std::map<std::string, LocalDistribution> local, SdistBuilder build_sdist,
                                 const PipBehaviour& pip)
    : client_(client), store_(store), tags_(tags), formats_(std::move(formats)), local_(std::move(local)),
      build_sdist_(std::move(build_sdist)), pip_(pip) {}

bool IndexCandidates::yanked(const IndexFile& f) const {
  return f.is_yanked() && (!f.yanked_without_value || pip_.bare_yanked_attribute_is_yanked());
}

std::vector<CandidateInfo> IndexCandidates::candidates(const std::string& name) {
  if (auto it = local_.find(name); it != local_.end()) {
    IndexFile f;
    f.filename = it->second.file.empty() ? it->second.built.name : it->second.file.filename().string();
    files_.push_back({f, &it->second, std::nullopt, std::nullopt, std::nullopt, false});
    return {CandidateInfo{it->second.built.version, false, "", "", true, files_.size() - 1}};
  }
  struct Ranked {
    CandidateInfo info;
    bool wheel;
    std::size_t priority;
    std::optional<BuildTag> build;
  };
  std::vector<Ranked> ranked;
  for (IndexFile& f : client_.project_files(name)) {
    Ranked r{};
    if (f.filename.ends_with(".whl")) {
      auto wf = WheelFilename::try_parse(f.filename);
      if (!wf || wf->name != name || !formats_.binary_allowed(name)) continue;
      auto pri = tags_.wheel_priority(wf->tags);
      if (!pri) continue;
      r = Ranked{{wf->version, yanked(f), f.yanked.value_or(""), f.requires_python.value_or(""), true, 0},
                 true, *pri, wf->build};
    } else {
      auto sf = SdistFilename::try_parse(f.filename);
      if (!sf || sf->name != name || !formats_.source_allowed(name)) continue;
      r = Ranked{{sf->version, yanked(f), f.yanked.value_or(""), f.requires_python.value_or(""), false, 0},
                 false, 0, std::nullopt};
    }
    files_.push_back({std::move(f), nullptr, std::nullopt, std::nullopt, std::nullopt, false});
    r.info.handle = files_.size() - 1;
    ranked.push_back(std::move(r));
  }
  // Within a version: wheels before the sdist, the best tag first, then the highest build tag (pip's _sort_key).
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.info.version != b.info.version) return b.info.version < a.info.version;
    if (a.wheel != b.wheel) return a.wheel;
    if (a.priority != b.priority) return a.priority < b.priority;
    return b.build < a.build;
  });
  std::vector<CandidateInfo> out;
  for (auto& r : ranked) out.push_back(r.info);
  return out;
}

const CandidateMetadata& IndexCandidates::metadata_of(std::size_t handle) {
  File& file = files_.at(handle);
  if (!file.metadata) {
    std::optional<std::string> text;
    if (!file.local && file.index.filename.ends_with(".whl")) {
      text = client_.fetch_metadata(file.index);
      if (!text && !file.built && (text = client_.read_metadata_by_range(file.index))) file.metadata_by_range = true;
    }
    file.metadata = text ? candidate_metadata(*text) : built(handle).metadata;
  }
  return *file.metadata;
}

const BuiltDistribution& IndexCandidates::built(std::size_t handle) {
  File& file = files_.at(handle);
  if (file.local) return file.local->built;
  if (file.built) return *file.built;
  fs::path downloaded = archive(handle);
  if (file.index.filename.ends_with(".whl")) {
    auto wf = WheelFilename::try_parse(file.index.filename);
    BuiltDistribution b;
    b.wheel = downloaded;
    b.name = wf ? wf->name : file.index.filename;
    b.version = wf ? wf->version : Version::parse("0");
    b.metadata = candidate_metadata(read_wheel_metadata(downloaded, file.index.filename));
    // What a range read gave the resolver is checked against the verified download, as the page's hash covers it.
    if (file.metadata_by_range && file.metadata && *file.metadata != b.metadata)
      throw Error(file.index.filename + ": its METADATA differs from what the index served of it in ranges",
                  "the file changed on the index during the build; run the build again");
    file.built = std::move(b);
  } else {
    // An sdist: pip builds it in the image; trainpack builds it the same way (imagebuild/source_builds.h).
    auto sdist = SdistFilename::try_parse(file.index.filename);
    std::string display = sdist ? sdist->name + " " + sdist->version.str() : file.index.filename;
    file.built = build_sdist_(downloaded, file.index.filename, display);
  }
  return *file.built;
}

fs::path IndexCandidates::archive(std::size_t handle) {
  File& file = files_.at(handle);
  if (file.local) return file.local->file.empty() ? file.local->built.wheel : file.local->file;
  if (!file.blob) {
    auto pending = downloading_.find(handle);
    file.blob = pending != downloading_.end() ? pending->second.get() : client_.download(file.index);
  }
  return store_.path_of(file.blob->digest);
}

ArtifactOrigin IndexCandidates::origin(std::size_t handle) {
  const File& file = files_.at(handle);
  if (file.local) {
    const fs::path& given = file.local->file;
    std::string name = given.filename().string();
    return {name, "", given.empty() ? "" : image::sha256_of_file(given).hex(), true, !name.ends_with(".whl")};
  }
  archive(handle);  // the download, if still under way
  return {file.index.filename, file.index.url, file.blob->digest.hex(), false,
          !file.index.filename.ends_with(".whl")};
}

std::string IndexCandidates::filename(std::size_t handle) const { return files_.at(handle).index.filename; }

bool IndexCandidates::wheel_at_hand(std::size_t handle) const {
  const File& file = files_.at(handle);
  if (file.local) return !file.local->built.legacy;
  if (!file.index.filename.ends_with(".whl")) return false;
  if (file.blob) return true;
  auto pending = downloading_.find(handle);
  return pending != downloading_.end() &&
         pending->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

void IndexCandidates::prefetch(const std::vector<std::size_t>& handles, int jobs) {
  struct Queue {
    std::vector<IndexFile> files;
    std::vector<std::promise<store::StoredBlob>> results;
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
  };
  auto queue = std::make_shared<Queue>();
  for (std::size_t h : handles) {
    File& f = files_.at(h);
    if (f.local || f.blob || downloading_.count(h)) continue;
    queue->files.push_back(f.index);
    queue->results.emplace_back();
    downloading_[h] = queue->results.back().get_future().share();
  }
  std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(std::max(1, jobs)), queue->files.size());
  for (std::size_t w = 0; w < workers; ++w) {
    downloaders_.push_back(std::async(std::launch::async, [this, queue] {
      for (std::size_t k; (k = queue->next++) < queue->files.size();) {
        if (queue->failed) {
          queue->results[k].set_exception(std::make_exception_ptr(Error("not downloaded: an earlier download failed")));
          continue;
        }
        try {
          queue->results[k].set_value(client_.download(queue->files[k]));
        } catch (...) {
          queue->failed = true;
          queue->results[k].set_exception(std::current_exception());
        }
      }
    }));
  }
}

}  // namespace trainpack::python
