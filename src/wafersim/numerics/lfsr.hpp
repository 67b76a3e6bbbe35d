// Random-number resources for stochastic rounding [0671], [0682]: a bank of 1, 2, 4 or 7
// independent 32-bit LFSRs, each seedable, readable and writable [0668].
#pragma once

#include <cstdint>
#include <vector>

namespace wafersim::numerics {

// A maximal-length (period 2^32 - 1) Galois LFSR, x^32 + x^22 + x^2 + x + 1.
class Lfsr {
 public:
  static constexpr uint32_t kTaps = 0x80200003u;

  explicit Lfsr(uint64_t seed = 0) { reseed(seed); }
  void reseed(uint64_t seed);
  uint32_t state() const { return state_; }
  void set_state(uint32_t state);  // state 0 is the LFSR's lock-up state and is refused

  // The next n (1..32) output bits, oldest bit most significant.
  uint32_t next_bits(int n) {
    uint32_t r = 0;
    for (int i = 0; i < n; ++i) {
      const uint32_t bit = state_ & 1u;
      state_ = (state_ >> 1) ^ (kTaps & (0u - bit));
      r = (r << 1) | bit;
    }
    return r;
  }

 private:
  uint32_t state_ = 1;
};

class LfsrBank {
 public:
  // count must be 1, 2, 4 or 7 [0682]; resource i is seeded from (seed, i).
  explicit LfsrBank(int count = 4, uint64_t seed = 0);
  int count() const { return static_cast<int>(lfsrs_.size()); }
  void seed(uint64_t seed);
  Lfsr& resource(int i);  // throws ConfigError naming the index when out of range
  uint32_t next_bits(int resource_index, int n) { return resource(resource_index).next_bits(n); }

 private:
  std::vector<Lfsr> lfsrs_;
};

}  // namespace wafersim::numerics
