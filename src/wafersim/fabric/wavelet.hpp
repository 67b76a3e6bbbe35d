// The unit of data on the fabric, kept logical rather than wire-level (docs/decisions.md):
// seed 000 gives a sparse form {ctrl, 16-bit index, 16-bit data} [0422]-[0426] and a dense
// form {ctrl, 2 x 16-bit or 1 x 32-bit data} [0427]-[0430], 5-bit fabric colors and 6-bit
// color ids [0096]. One struct carries both forms; the receiver's descriptor decides how
// to read it.
#pragma once

#include <algorithm>
#include <cstdint>

namespace wafersim::fabric {

// A set of colors / task ids (0..63) as a bit mask.
using ColorMask = uint64_t;
inline constexpr int kMaxColorIds = 64;

struct Wavelet {
  uint32_t data = 0;    // dense: element 0 in bits 15:0, element 1 in 31:16, or one 32-bit
                        // value; sparse: the 16-bit datum in bits 15:0
  uint16_t index = 0;   // sparse index; the low 6 bits pick a control task's entry [0371]
  uint8_t color = 0;    // 0..63
  bool ctrl = false;    // control (closeout) bit [0425]

  // Simulation bookkeeping, not architectural state: latency and hop statistics.
  uint32_t injected_cycle = 0;
  uint16_t hops = 0;
  // Packet mode only (NoC studies, docs/fabric.md): the destination the routers steer by,
  // row in bits 15:8 and column in bits 7:0, like the header coordinates of seed 003
  // [0037]. Unused by the color-routed fabric.
  uint16_t dest = 0;

  uint16_t lower_index() const { return index & 0x3F; }  // Lower Index Bits 1321.1 [0424]
  uint16_t data_lo() const { return static_cast<uint16_t>(data & 0xFFFF); }
  uint16_t data_hi() const { return static_cast<uint16_t>(data >> 16); }
};

static_assert(sizeof(Wavelet) == 16, "router queues hold many wavelets: keep them small");

// The latency stamp (docs/fabric.md, "Latency counters"). injected_cycle holds the low 32
// bits of the cycle a wavelet's latency counts from: its release at a host port, or the
// cycle a compute element put it on the on-ramp. 32 bits keep the wavelet at 16 bytes, so
// a host port counts at most kMaxStampedWait cycles of a wavelet's wait: a longer wait
// (its exact value is in the port's queue-delay counts) counts as kMaxStampedWait, and a
// latency then never reaches 2^32 (wraps) unless the wavelet stays 2^31 cycles inside the
// fabric itself.
inline constexpr uint64_t kMaxStampedWait = uint64_t{1} << 31;

// The stamp of a wavelet released at `release` that enters the fabric at `entry`.
inline uint32_t entry_stamp(uint64_t release, uint64_t entry) {
  return static_cast<uint32_t>(entry - std::min(entry - release, kMaxStampedWait));
}

// Cycles from a stamp to `cycle` (less than 2^32 of them, see above).
inline uint64_t latency_since(uint32_t stamp, uint64_t cycle) {
  return static_cast<uint32_t>(static_cast<uint32_t>(cycle) - stamp);
}

}  // namespace wafersim::fabric
