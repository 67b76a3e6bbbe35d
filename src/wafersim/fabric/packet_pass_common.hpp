// What both packet-mode row passes use (fabric_packet_cycle.cpp, the general one, and
// fabric_packet_planes_cycle.cpp, the bit-plane one): their build for newer CPUs, the hop
// count of a wavelet crossing a link, and a host port's step.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "wafersim/fabric/fabric.hpp"
#include "wafersim/fabric/host_port.hpp"
#include "wafersim/fabric/wavelet.hpp"

// The row loops come in two builds, chosen when the library loads: one for the baseline
// x86-64 the package is compiled for, one for x86-64-v3 CPUs (2013 on), whose BMI
// instructions shift by a variable, isolate and clear bits and count them in one
// instruction each: about 8% fewer instructions here. Same results on both. Only where
// GCC supports it and the address sanitizer (whose start-up the loader's choice
// precedes) is off.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && \
    __GNUC__ >= 12 && !defined(__SANITIZE_ADDRESS__)
#define WAFERSIM_X86_64_V3_CLONE [[gnu::target_clones("arch=x86-64-v3", "default")]]
#else
#define WAFERSIM_X86_64_V3_CLONE
#endif

namespace wafersim::fabric {

// `to` = `from` with one more hop, computed in registers. Bumping the field of a copy in
// memory, or of the entry right after copying into it, makes the CPU read a 16-byte store
// back in part, which it cannot forward: a stall of a dozen cycles on every arrival.
// (Hops cannot carry into `dest`: packet routes are minimal, well under 65535 hops.)
[[gnu::always_inline]] inline void copy_with_one_more_hop(Wavelet& to, const Wavelet& from) {
  static_assert(offsetof(Wavelet, hops) == 12 && std::endian::native == std::endian::little);
  uint64_t halves[2];
  std::memcpy(halves, &from, sizeof halves);
  halves[1] += uint64_t{1} << 32;  // hops is bits 32-47 of the second half
  std::memcpy(&to, halves, sizeof halves);
}

// Only an offer moves a FIFO's front, so only then can the port's next reads change
// (between runs, pushes are caught by Fabric::latch_endpoint_stalls).
[[gnu::always_inline]] inline RampStep Fabric::PacketHost::step(uint64_t cycle, ColorMask stall,
                                                                Wavelet& w) {
  const RampStep step = host->step(cycle, stall, w);
  if (step.offered) {
    const HostPort::NextReads next = host->next_reads();
    fifo = next.fifo;
    wavelet = next.wavelet;
  }
  return step;
}

}  // namespace wafersim::fabric
