// Inputs for the compressor, splice and layer tests: bytes of a known mix, the same for the same arguments on every
// machine (std::mt19937's sequence is fixed by the standard).
#pragma once

#include <cstddef>
#include <random>
#include <string>

namespace trainpack::test_support {

// Runs of Python-like source lines and runs of random bytes, each up to `max_run` bytes long, a run of noise with a
// chance of `noise_percent` in 100: deflate and zstd meet both what they compress and what they can only store.
inline std::string mixed_bytes(std::size_t size, unsigned seed = 7, std::size_t max_run = 10000,
                               unsigned noise_percent = 50) {
  std::mt19937 random(seed);
  std::string out;
  out.reserve(size + 64);
  while (out.size() < size) {
    const bool noise = random() % 100 < noise_percent;
    const std::size_t run_end = out.size() + 1 + random() % max_run;
    while (out.size() < run_end) {
      if (noise)
        out.push_back(static_cast<char>(random()));
      else
        out += "def step_" + std::to_string(random() % 1000) + "(x):\n    return x * " + std::to_string(random() % 97) +
               "\n";
    }
  }
  out.resize(size);
  return out;
}

// Bytes gzip cannot shrink.
inline std::string incompressible(std::size_t size, unsigned seed = 7) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

}  // namespace trainpack::test_support
