// The architectural state of one compute element that the sequencer, the vector engine
// and the datapath share: memory, registers, descriptors, queues, Block/Active bits, FP
// control and random-number resources (seed 000 FIG. 8).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "wafersim/numerics/fp_control.hpp"
#include "wafersim/numerics/lfsr.hpp"
#include "wafersim/pe/ce_config.hpp"
#include "wafersim/pe/ce_stats.hpp"
#include "wafersim/pe/dsd.hpp"
#include "wafersim/pe/memory.hpp"
#include "wafersim/pe/picker.hpp"
#include "wafersim/pe/queue_bank.hpp"

namespace wafersim::pe {

struct CeCore {
  // `memory`: zeroed storage for the PE memory (a wafer's arena slot), or nullptr.
  explicit CeCore(const CeConfig& c, uint8_t* memory = nullptr)
      : picker(c.picker),
        inq(fabric::kMaxColorIds, c.input_queue_depth, c.input_queue_depth - 2),
        outq(c.fabric_colors, c.output_queue_depth),
        cfg(c),
        mem(c.memory_bytes, c.data_bytes(), memory),
        rng(c.rng_resources, c.rng_seed) {}

  // What every stepped CE reads each cycle comes first (a few cache lines per PE-cycle,
  // docs/scale.md): the picker, the cycle, the statistics, the queues' masks, the
  // configuration (its flags lead).
  Picker picker;                            // with Active Bits 898 and Block Bits 899
  uint64_t cycle = 0;
  uint64_t progress = 0;  // bumps on every observable step; the watchdog compares it
 private:
  std::unique_ptr<CeLiveStats> stats_;  // allocated on first use: idle PEs stay small
 public:
  bool flag = false;                        // result of the last comparison
  uint32_t base = 0;                        // Base 890, in instructions [0346]
  QueueBank inq;                            // Input Qs 897, one per id [0341]; crowded:
                                            // above depth-2, stalls the router [0329]
  QueueBank outq;                           // Output Queues 859, one per fabric color [0360]
  CeConfig cfg;
  PeMemory mem;
  std::array<uint16_t, isa::kGprs> gpr{};  // RF 842 [0359]
  DsrFile dsr;                              // DSRs 846 [0355]
  numerics::FpControl fpc;                  // FP Control Register 2925 [0680]
  numerics::LfsrBank rng;                   // RNGs 2921 [0671]

  bool is_local(int color) const { return color >= cfg.fabric_colors; }
  std::string name() const { return pe_name(cfg); }

  CeLiveStats& stats() {
    if (!stats_) stats_ = std::make_unique<CeLiveStats>();
    return *stats_;
  }
  const CeLiveStats* stats_if_any() const { return stats_.get(); }
  void reset_stats() { stats_.reset(); }

  // Block / unblock / activate ids; the trace records each change and its cause.
  void change_ids(IdChange change, fabric::ColorMask ids, IdCause cause) {
    switch (change) {
      case IdChange::block: picker.block(ids); break;
      case IdChange::unblock: picker.unblock(ids); break;
      case IdChange::activate: picker.activate(ids); break;
    }
    if (cfg.trace) stats().id_events.push_back({change, cause, cycle, ids});
  }
  void activate_id(int id, IdCause cause) {
    change_ids(IdChange::activate, fabric::ColorMask{1} << id, cause);
  }

  // Input filters (the data filter of [0597]): per fabric color, the index range kept.
  fabric::ColorMask filtered = 0;
  std::array<uint16_t, fabric::kMaxColorIds> filter_lo{}, filter_hi{};
  // A data wavelet of a filtered color whose index is outside the range: dropped, counted.
  bool drops(const fabric::Wavelet& w) {
    if (!((filtered >> w.color) & 1u) || w.ctrl) return false;
    if (w.index >= filter_lo[w.color] && w.index <= filter_hi[w.color]) return false;
    CeLiveStats& s = stats();
    ++s.wavelets_filtered;
    s.ids.increment(CeLiveStats::kFiltered, w.color);
    return true;
  }

  // Wavelets sent on a local color go straight into our own input queue.
  void deliver_local(const fabric::Wavelet& w) {
    inq.push(w.color, w);
    note_occupancy(w.color);
    ++stats().wavelets_local;
    stats().ids.increment(CeLiveStats::kReceived, w.color);
  }
  void note_occupancy(int q) {
    auto& m = stats().max_input_occupancy[q];
    if (inq.size(q) > m) m = static_cast<uint8_t>(inq.size(q));
  }

};

}  // namespace wafersim::pe
