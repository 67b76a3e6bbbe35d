#include "wafersim/pe/ce_stats.hpp"

#include <cstddef>
#include <bit>
#include <cstring>
#include <type_traits>

#include "wafersim/errors.hpp"

namespace wafersim::pe {

const char* stall_cause_name(StallCause c) {
  switch (c) {
    case StallCause::none: return "none";
    case StallCause::input_empty: return "input_empty";
    case StallCause::output_full: return "output_full";
    case StallCause::local_queue_full: return "local_queue_full";
    case StallCause::fifo_empty: return "fifo_empty";
    case StallCause::fifo_full: return "fifo_full";
    case StallCause::ut_slot_busy: return "ut_slot_busy";
    case StallCause::tensor_busy: return "tensor_busy";
  }
  return "?";
}

const char* id_change_name(IdChange c) {
  switch (c) {
    case IdChange::block: return "block";
    case IdChange::unblock: return "unblock";
    case IdChange::activate: return "activate";
  }
  return "?";
}

const char* id_cause_name(IdCause c) {
  switch (c) {
    case IdCause::instruction: return "instruction";
    case IdCause::completion: return "completion";
    case IdCause::fifo: return "fifo";
    case IdCause::tensor: return "tensor";
    case IdCause::host: return "host";
  }
  return "?";
}

CeCounters counters_since(const CeCounters& now, const CeCounters& then) {
  // Field by field: the size check below fails when a counter is added without a line here.
  static_assert(sizeof(CeCounters) == 15 * 8 + (4 * fabric::kMaxColorIds + isa::kOps +
                                                 2 * kStallCauses) * 8 + fabric::kMaxColorIds,
                "a CeCounters field is missing from counters_since");
  CeCounters d = now;
  auto sub = [](auto& a, const auto& b) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] -= b[i];
  };
  d.cycles -= then.cycles;
  d.busy_cycles -= then.busy_cycles;
  d.stall_cycles -= then.stall_cycles;
  sub(d.busy_by_id, then.busy_by_id);
  sub(d.tasks_by_id, then.tasks_by_id);
  sub(d.instructions, then.instructions);
  sub(d.stalls, then.stalls);
  sub(d.microthread_waits, then.microthread_waits);
  d.microthread_blocked -= then.microthread_blocked;
  d.iterations -= then.iterations;
  d.microthread_iterations -= then.microthread_iterations;
  d.element_ops -= then.element_ops;
  d.suspensions -= then.suspensions;
  d.wavelets_in -= then.wavelets_in;
  d.wavelets_out -= then.wavelets_out;
  d.wavelets_local -= then.wavelets_local;
  d.wavelets_filtered -= then.wavelets_filtered;
  sub(d.received_by_color, then.received_by_color);
  sub(d.filtered_by_color, then.filtered_by_color);
  d.tensor_passes -= then.tensor_passes;
  d.tensor_cycles -= then.tensor_cycles;
  d.tensor_macs -= then.tensor_macs;
  return d;
}

CeCounters CeLiveStats::counters() const {
  // Field by field, like counters_since (whose size check names a missing field).
  CeCounters c;
  c.cycles = cycles;
  c.busy_cycles = busy_cycles;
  c.stall_cycles = stall_cycles;
  c.iterations = iterations;
  c.element_ops = element_ops;
  c.wavelets_in = wavelets_in;
  c.wavelets_out = wavelets_out;
  c.microthread_iterations = microthread_iterations;
  ids.copy_to(kBusy, c.busy_by_id);
  ids.copy_to(kTasks, c.tasks_by_id);
  instructions.copy_to(c.instructions);
  c.stalls = stalls;
  c.microthread_waits = microthread_waits;
  c.microthread_blocked = microthread_blocked;
  c.suspensions = suspensions;
  c.wavelets_local = wavelets_local;
  c.wavelets_filtered = wavelets_filtered;
  c.tensor_passes = tensor_passes;
  c.tensor_cycles = tensor_cycles;
  c.tensor_macs = tensor_macs;
  ids.copy_to(kReceived, c.received_by_color);
  ids.copy_to(kFiltered, c.filtered_by_color);
  c.max_input_occupancy = max_input_occupancy;
  return c;
}

CeStats CeLiveStats::snapshot() const {
  CeStats s;
  static_cast<CeCounters&>(s) = counters();
  s.task_spans = task_spans;
  s.microthread_spans = microthread_spans;
  s.id_events = id_events;
  s.busy_by_pc = busy_by_pc;
  return s;
}

namespace {
constexpr size_t kCounterWords = sizeof(CeCounters) / 8;
static_assert(std::is_trivially_copyable_v<CeCounters> && sizeof(CeCounters) % 8 == 0,
              "pack_counters copies CeCounters as whole 64-bit words");
// An entry: a 16-bit header (the word's index in bits 11:0, its byte count - 1 in bits
// 14:12) and the word's low bytes, little-endian. Most counters are small: a PE of
// program 3 packs in about 120 bytes where 10 bytes per word took about 310.
constexpr unsigned kIndexBits = 12;
static_assert(kCounterWords <= (size_t{1} << kIndexBits), "a word index fits the header");
}  // namespace

std::string pack_counters(const CeCounters& c) {
  uint64_t words[kCounterWords];
  std::memcpy(words, &c, sizeof c);
  std::string out;
  for (size_t i = 0; i < kCounterWords; ++i) {
    const uint64_t v = words[i];
    if (v == 0) continue;
    const unsigned bytes = static_cast<unsigned>((71 - std::countl_zero(v)) / 8);  // 1..8
    const auto header = static_cast<uint16_t>(i | ((bytes - 1) << kIndexBits));
    char entry[2 + 8];
    std::memcpy(entry, &header, 2);
    for (unsigned b = 0; b < bytes; ++b) entry[2 + b] = static_cast<char>(v >> (8 * b));
    out.append(entry, 2 + bytes);
  }
  return out;
}

CeCounters unpack_counters(std::string_view packed) {
  uint64_t words[kCounterWords] = {};
  size_t k = 0;
  while (k < packed.size()) {
    if (packed.size() - k < 2) {
      throw ConfigError("packed CE counters end inside an entry's header (" +
                        std::to_string(packed.size()) + " bytes)");
    }
    uint16_t header;
    std::memcpy(&header, packed.data() + k, 2);
    const size_t at = header & ((1u << kIndexBits) - 1);
    const size_t bytes = ((header >> kIndexBits) & 7u) + 1;
    if ((header >> 15) != 0 || at >= kCounterWords) {
      throw ConfigError("packed CE counters name word " + std::to_string(at) + " of " +
                        std::to_string(kCounterWords) + " (header " + std::to_string(header) +
                        ")");
    }
    if (packed.size() - k - 2 < bytes) {
      throw ConfigError("packed CE counters end inside word " + std::to_string(at));
    }
    uint64_t v = 0;
    for (size_t b = 0; b < bytes; ++b) {
      v |= static_cast<uint64_t>(static_cast<uint8_t>(packed[k + 2 + b])) << (8 * b);
    }
    words[at] = v;
    k += 2 + bytes;
  }
  CeCounters c;
  std::memcpy(&c, words, sizeof c);
  return c;
}

}  // namespace wafersim::pe
