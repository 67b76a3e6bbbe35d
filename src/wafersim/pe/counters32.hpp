// 64-bit counters kept in 32 bits each, with the high halves apart: a compute element's
// counters by opcode (87 of them; by id and color: id_counters.hpp) are mostly small, and on a
// wafer of 750,000 PEs their zeros are gigabytes of pages the kernel must fault in and
// clear during the first cycles (docs/scale.md). A counter that passes 2^32 carries into
// a high-half array made then (zeroed, one per array), so every count stays exact; the
// common increment touches the one line that holds the low half, as a dense 64-bit array
// would.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

namespace wafersim::pe {

template <int N>
class Counters32 {
 public:
  // What `counters[i]` gives the counting code: `++` and `+= n`, nothing else.
  class Ref {
   public:
    void operator++() { c_.increment(i_); }
    void operator+=(uint64_t n) { c_.add(i_, n); }

   private:
    friend class Counters32;
    Ref(Counters32& c, int i) : c_(c), i_(i) {}
    Counters32& c_;
    int i_;
  };

  Counters32() = default;
  Counters32(const Counters32&) = delete;
  Counters32& operator=(const Counters32&) = delete;

  Ref operator[](int i) { return Ref(*this, i); }
  void increment(int i) {  // (most counting: an add and a branch on the flags)
    if (++low_[static_cast<size_t>(i)] == 0) [[unlikely]] carry(i, 1);
  }
  void add(int i, uint64_t n) {
    uint32_t& low = low_[static_cast<size_t>(i)];
    const uint64_t sum = uint64_t{low} + n;
    low = static_cast<uint32_t>(sum);
    if (sum >> 32) [[unlikely]] carry(i, sum >> 32);
  }
  uint64_t get(int i) const {
    const uint64_t high = high_ ? high_[static_cast<size_t>(i)] : 0;
    return (high << 32) + low_[static_cast<size_t>(i)];
  }
  void copy_to(std::array<uint64_t, N>& out) const {
    for (int i = 0; i < N; ++i) out[static_cast<size_t>(i)] = get(i);
  }

 private:
  void carry(int i, uint64_t up) {
    if (!high_) high_ = std::make_unique<uint32_t[]>(N);  // zeroed
    high_[static_cast<size_t>(i)] += static_cast<uint32_t>(up);
  }

  std::array<uint32_t, N> low_{};
  std::unique_ptr<uint32_t[]> high_;  // none until a counter passes 2^32
};

}  // namespace wafersim::pe
