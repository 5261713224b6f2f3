#include "registry/push_ahead.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "support/parallel.h"

namespace trainpack::registry {

PushAhead::PushAhead(RegistryClient& client, Reference target, PushAheadOptions options)
    : client_(client), target_(std::move(target)), options_(std::move(options)),
      upload_slots_(std::max(1, options_.jobs)) {
  if (!options_.store) throw Error("internal: PushAhead needs the blob store");
  auto tag = std::make_shared<std::promise<std::set<image::Digest>>>();
  under_tag_ = tag->get_future().share();
  asking_tag_ = std::async(std::launch::async, [this, tag] { ask_tag(*tag); });
  open_sessions();
}

// The tag's HEAD and those of ask_about, all at once.
void PushAhead::ask_tag(std::promise<std::set<image::Digest>>& answer) {
  try {
    std::vector<char> found(options_.ask_about.size(), 0);
    auto asking = std::async(std::launch::async, [&] {
      parallel_for(options_.ask_about.size(), options_.ask_about.size(),
                   [&](std::size_t i) { found[i] = blob_exists(client_, target_, options_.ask_about[i]); });
    });
    std::set<image::Digest> present;
    if (!target_.tag.empty() && target_.digest.empty()) present = blobs_under_tag(client_, target_, *options_.store);
    asking.get();
    for (std::size_t i = 0; i < found.size(); ++i)
      if (found[i]) present.insert(options_.ask_about[i]);
    answer.set_value(std::move(present));
  } catch (...) {
    answer.set_exception(std::current_exception());  // the registry cannot be reached: every user of this fails so
  }
}

// Everything begun is waited for here, while the members the background work uses are still there.
PushAhead::~PushAhead() {
  abandon();
  if (asking_tag_.valid()) asking_tag_.wait();
  std::deque<std::future<std::optional<UploadSession>>> unused;
  std::map<image::Digest, std::shared_future<BlobEvent>> offered;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    unused.swap(sessions_);
    offered = offered_;
  }
  for (auto& session : unused) forget(session);  // no POST after abandon(); one sent is cancelled
  for (auto& [digest, result] : offered) result.wait();
  if (releasing_.valid()) releasing_.wait();
}

// The POSTs go beside the tag's HEAD, not after it: on a registry a round trip away, each sequential request costs
// one. Their token is fetched once however many ask at once (RegistryClient), and a push that took a session
// meanwhile waits for its POST, whose failure (a registry that does not answer) is then the push's.
void PushAhead::open_sessions() {
  for (std::size_t i = 0; i < options_.sessions; ++i)
    sessions_.push_back(std::async(std::launch::async, [this]() -> std::optional<UploadSession> {
      if (abandoned_) return std::nullopt;
      return open_upload_session(client_, target_);
    }));
}

// A session never used: cancelled once its POST is answered; what went wrong with it no longer matters.
void PushAhead::forget(std::future<std::optional<UploadSession>>& session) {
  try {
    session.get();
  } catch (const std::exception&) {
  }
}

BlobPusher PushAhead::pusher() {
  BlobPusher p{.image = nullptr,
               .store = options_.store,
               .target = target_,
               .clients = [this](const std::string&) -> RegistryClient& { return client_; },
               .locations = options_.locations,
               .emit = [this](const BlobEvent& e) { report(e); },
               .upload_slots = upload_slots_,
               .under_tag = under_tag_,
               .opened_session = [this] { return take_session(); },
               .stop = &abandoned_};
  return p;
}

void PushAhead::offer(const image::Descriptor& blob) {
  if (!options_.store->has(blob.digest)) return;  // elsewhere (a cache repository's): the push mounts or relays it
  std::lock_guard<std::mutex> lock(mutex_);
  if (abandoned_ || offered_.count(blob.digest)) return;
  offered_[blob.digest] = std::async(std::launch::async, [this, blob] {
    BlobPusher p = pusher();
    BlobEvent done = p.push({blob, p.known_there(blob)});
    report(done);
    return done;
  }).share();
}

void PushAhead::abandon() { abandoned_ = true; }

void PushAhead::report(const BlobEvent& event) {
  std::lock_guard<std::mutex> lock(reporting_);
  if (options_.on_blob) options_.on_blob(event);
}

std::optional<BlobEvent> PushAhead::offered_result(const image::Digest& digest) {
  std::shared_future<BlobEvent> result;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = offered_.find(digest);
    if (it == offered_.end()) return std::nullopt;
    result = it->second;
  }
  return result.get();
}

// The oldest session asked for, waiting for its POST if need be (never slower than a POST of the push's own);
// nullopt when none is left (the push then opens its own). The POST's failure is thrown: it is the push's.
std::optional<UploadSession> PushAhead::take_session() {
  std::future<std::optional<UploadSession>> next;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (sessions_.empty()) return std::nullopt;
    next = std::move(sessions_.front());
    sessions_.pop_front();
  }
  return next.get();
}

void PushAhead::release_sessions() {
  std::deque<std::future<std::optional<UploadSession>>> unused;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    unused.swap(sessions_);
  }
  if (unused.empty()) return;
  releasing_ = std::async(std::launch::async, [unused = std::move(unused)]() mutable {
    for (auto& session : unused) forget(session);
  });
}

}  // namespace trainpack::registry
