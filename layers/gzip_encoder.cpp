#include "layers/gzip_encoder.h"

#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/error.h"

namespace trainpack::layers {

namespace {

constexpr std::size_t kWindow = kDeflateWindow;

// One block of input and, once a worker is done with it, its raw deflate stream and CRC-32.
struct Block {
  std::string input;
  std::string dictionary;  // the previous block's last kWindow bytes
  bool last = false;
  std::uint64_t input_size = 0;  // input is freed once compressed
  std::string output;
  std::uint32_t crc = 0;
};

void deflate_with_zlib(Block& block, int level) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("zlib could not initialise deflate at level " + std::to_string(level));
  if (!block.dictionary.empty())
    deflateSetDictionary(&z, reinterpret_cast<const Bytef*>(block.dictionary.data()),
                         static_cast<uInt>(block.dictionary.size()));
  // deflateBound covers Z_FINISH; a sync flush adds at most an empty stored block (5 bytes) and a partial byte.
  block.output.resize(deflateBound(&z, block.input.size()) + 16);
  z.next_in = reinterpret_cast<Bytef*>(block.input.data());
  z.avail_in = static_cast<uInt>(block.input.size());
  z.next_out = reinterpret_cast<Bytef*>(block.output.data());
  z.avail_out = static_cast<uInt>(block.output.size());
  int rc = deflate(&z, block.last ? Z_FINISH : Z_SYNC_FLUSH);
  bool complete = block.last ? rc == Z_STREAM_END : (rc == Z_OK && z.avail_in == 0 && z.avail_out > 0);
  block.output.resize(z.total_out);
  deflateEnd(&z);
  if (!complete) throw Error("zlib could not compress a layer block");
}

std::size_t isal_level_buffer_size(int level) {
  switch (level) {
    case 0: return 0;
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    default: return ISAL_DEF_LVL3_DEFAULT;
  }
}

void deflate_with_isal(Block& block, int level) {
  isal_zstream stream;
  isal_deflate_init(&stream);
  // Not zeroed: ISA-L initialises what it uses, and zeroing a MiB for every block costs more than compressing a
  // small layer.
  std::size_t level_bytes = isal_level_buffer_size(level);
  std::unique_ptr<std::uint8_t[]> level_buffer(level_bytes ? new std::uint8_t[level_bytes] : nullptr);
  stream.level = static_cast<std::uint32_t>(level);
  stream.level_buf = level_buffer.get();
  stream.level_buf_size = static_cast<std::uint32_t>(level_bytes);
  stream.end_of_stream = block.last ? 1 : 0;
  stream.flush = block.last ? NO_FLUSH : SYNC_FLUSH;
  if (!block.dictionary.empty() &&
      isal_deflate_set_dict(&stream, reinterpret_cast<std::uint8_t*>(block.dictionary.data()),
                            static_cast<std::uint32_t>(block.dictionary.size())) != COMP_OK)
    throw Error("ISA-L could not set a deflate dictionary");
  stream.next_in = reinterpret_cast<std::uint8_t*>(block.input.data());
  stream.avail_in = static_cast<std::uint32_t>(block.input.size());
  block.output.resize(block.input.size() + block.input.size() / 16 + 4096);
  for (;;) {
    std::size_t written = stream.total_out;
    stream.next_out = reinterpret_cast<std::uint8_t*>(block.output.data()) + written;
    stream.avail_out = static_cast<std::uint32_t>(block.output.size() - written);
    if (isal_deflate(&stream) != COMP_OK) throw Error("ISA-L could not compress a layer block");
    bool flushed = stream.avail_in == 0 && stream.avail_out > 0;
    if (flushed && (!block.last || stream.internal_state.state == ZSTATE_END)) break;
    block.output.resize(block.output.size() * 2);  // out of room: go on where it stopped
  }
  block.output.resize(stream.total_out);
}

void compress(Block& block, const GzipOptions& options) {
  block.crc = static_cast<std::uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(block.input.data()), static_cast<uInt>(block.input.size())));
  if (options.engine == DeflateEngine::kIsal)
    deflate_with_isal(block, options.level);
  else
    deflate_with_zlib(block, options.level);
}

void check_options(const GzipOptions& options) {
  bool isal = options.engine == DeflateEngine::kIsal;
  int max_level = isal ? ISAL_DEF_MAX_LEVEL : 9;
  int min_level = isal ? 0 : 1;
  if (options.level < min_level || options.level > max_level)
    throw Error(std::string("compression level ") + std::to_string(options.level) + " is not one of " +
                engine_name(options.engine) + "'s levels (" + std::to_string(min_level) + "-" +
                std::to_string(max_level) + ")");
  if (options.block_size < kWindow) throw Error("gzip block size must be at least 32 KiB");
}

}  // namespace

const char* engine_name(DeflateEngine engine) { return engine == DeflateEngine::kIsal ? "isal" : "zlib"; }

// Blocks go to a fixed pool of workers; the caller keeps them in input order and writes each block's output as soon
// as it and every block before it are done, so the sink sees one ordered stream. The workers start with the first
// block that is not the last: a stream of one block (a code layer's few KB) is compressed by the caller alone.
class GzipEncoder::Impl {
 public:
  Impl(GzipOptions options, ByteSink sink) : options_(options), sink_(std::move(sink)) {
    check_options(options_);
    threads_ = options_.threads ? options_.threads : std::max(1u, std::thread::hardware_concurrency());
    max_in_flight_ = 2 * static_cast<std::size_t>(threads_);
    pending_.reserve(options_.block_size);
    // RFC 1952 §2.3: ID1 ID2 CM=8 FLG=0 MTIME=0 XFL=0 OS=3 (Unix): no name, no time, the same bytes every time.
    static const char kHeader[10] = {'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, 3};
    sink_(kHeader, sizeof kHeader);
  }

  ~Impl() { stop_workers(); }

  void write(const char* data, std::size_t size) {
    while (size > 0) {
      if (pending_.size() == options_.block_size) submit(false);
      std::size_t take = std::min(size, options_.block_size - pending_.size());
      pending_.append(data, take);
      data += take;
      size -= take;
    }
  }

  void begin_deflated() {
    if (!pending_.empty()) submit(false);
  }

  void write_deflated(const char* data, std::size_t size) {
    auto job = std::make_shared<Job>();
    job->block.output.assign(data, size);
    add_done(job);
  }

  void end_deflated(std::uint64_t plain_size, std::uint32_t plain_crc, std::string_view plain_tail) {
    auto job = std::make_shared<Job>();
    job->block.input_size = plain_size;
    job->block.crc = plain_crc;
    add_done(job);
    dictionary_.assign(plain_tail.substr(plain_tail.size() > kWindow ? plain_tail.size() - kWindow : 0));
  }

  void finish() {
    submit(true);
    while (!in_flight_.empty()) write_oldest();
    stop_workers();
    unsigned char trailer[8];
    for (int i = 0; i < 4; ++i) trailer[i] = static_cast<unsigned char>(crc_ >> (8 * i));
    for (int i = 0; i < 4; ++i) trailer[4 + i] = static_cast<unsigned char>(total_in_ >> (8 * i));  // ISIZE mod 2^32
    sink_(reinterpret_cast<const char*>(trailer), sizeof trailer);
  }

 private:
  struct Job {
    Block block;
    std::promise<void> done;
  };

  void submit(bool last) {
    auto job = std::make_shared<Job>();
    job->block.input.swap(pending_);
    job->block.dictionary = dictionary_;
    job->block.last = last;
    const std::string& input = job->block.input;
    dictionary_.assign(input, input.size() > kWindow ? input.size() - kWindow : 0, std::string::npos);
    pending_.clear();
    pending_.reserve(options_.block_size);
    in_flight_.push_back({job, job->done.get_future()});
    if (!last && workers_.empty() && threads_ > 1)
      for (unsigned i = 0; i < threads_; ++i) workers_.emplace_back([this] { work(); });
    if (workers_.empty()) {
      run(*job);
    } else {
      std::lock_guard lock(mutex_);
      queue_.push_back(job);
      wake_.notify_one();
    }
    while (in_flight_.size() > max_in_flight_) write_oldest();
  }

  // A job with nothing to compute, in order with the others.
  void add_done(const std::shared_ptr<Job>& job) {
    job->done.set_value();
    in_flight_.push_back({job, job->done.get_future()});
    while (in_flight_.size() > max_in_flight_) write_oldest();
  }

  void write_oldest() {
    auto [job, done] = std::move(in_flight_.front());
    in_flight_.pop_front();
    done.get();  // rethrows a worker's error
    const Block& block = job->block;
    sink_(block.output.data(), block.output.size());
    crc_ = static_cast<std::uint32_t>(crc32_combine(crc_, block.crc, static_cast<z_off_t>(block.input_size)));
    total_in_ += block.input_size;
  }

  void run(Job& job) {
    try {
      compress(job.block, options_);
      job.block.input_size = job.block.input.size();
      std::string().swap(job.block.input);
      job.done.set_value();
    } catch (...) {
      job.done.set_exception(std::current_exception());
    }
  }

  void work() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = queue_.front();
        queue_.pop_front();
      }
      run(*job);
    }
  }

  void stop_workers() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& worker : workers_)
      if (worker.joinable()) worker.join();
    workers_.clear();
  }

  GzipOptions options_;
  ByteSink sink_;
  std::string pending_;     // input of the block being filled
  std::string dictionary_;  // last kWindow bytes of the block submitted before
  std::deque<std::pair<std::shared_ptr<Job>, std::future<void>>> in_flight_;
  unsigned threads_ = 1;
  std::size_t max_in_flight_ = 2;
  std::uint32_t crc_ = 0;
  std::uint64_t total_in_ = 0;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

GzipEncoder::GzipEncoder(GzipOptions options, ByteSink sink)
    : impl_(std::make_unique<Impl>(options, std::move(sink))) {}
GzipEncoder::~GzipEncoder() = default;
void GzipEncoder::write(const void* data, std::size_t size) { impl_->write(static_cast<const char*>(data), size); }
void GzipEncoder::begin_deflated() { impl_->begin_deflated(); }
void GzipEncoder::write_deflated(const char* data, std::size_t size) { impl_->write_deflated(data, size); }
void GzipEncoder::end_deflated(std::uint64_t plain_size, std::uint32_t plain_crc, std::string_view plain_tail) {
  impl_->end_deflated(plain_size, plain_crc, plain_tail);
}
void GzipEncoder::finish() { impl_->finish(); }

}  // namespace trainpack::layers
