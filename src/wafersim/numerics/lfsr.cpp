#include "wafersim/numerics/lfsr.hpp"

#include <string>

#include "wafersim/errors.hpp"

namespace wafersim::numerics {

namespace {
// splitmix64: spreads nearby seeds over unrelated LFSR states.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

void Lfsr::reseed(uint64_t seed) {
  const uint64_t m = mix(seed);
  state_ = static_cast<uint32_t>(m ^ (m >> 32));
  if (state_ == 0) state_ = 1;
}

void Lfsr::set_state(uint32_t state) {
  if (state == 0) throw ConfigError("LFSR state must be nonzero (0 is the lock-up state)");
  state_ = state;
}

LfsrBank::LfsrBank(int count, uint64_t seed_value) {
  if (count != 1 && count != 2 && count != 4 && count != 7) {
    throw ConfigError("rng count must be 1, 2, 4 or 7 (seed 000 [0682]), got " +
                      std::to_string(count));
  }
  lfsrs_.resize(static_cast<size_t>(count));
  seed(seed_value);
}

void LfsrBank::seed(uint64_t seed_value) {
  for (size_t i = 0; i < lfsrs_.size(); ++i) lfsrs_[i].reseed(mix(seed_value) + i);
}

Lfsr& LfsrBank::resource(int i) {
  if (i < 0 || i >= count()) {
    throw ConfigError("rng resource " + std::to_string(i) + " out of range: this bank has " +
                      std::to_string(count()) + " resource(s)");
  }
  return lfsrs_[static_cast<size_t>(i)];
}

}  // namespace wafersim::numerics
