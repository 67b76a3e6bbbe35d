// Per-PE statistics and trace events of a compute element: what `run()` reports and what
// the Chrome/Perfetto trace shows.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wafersim/fabric/wavelet.hpp"
#include "wafersim/pe/counters32.hpp"
#include "wafersim/pe/id_counters.hpp"
#include "wafersim/pe/isa_tables.hpp"

namespace wafersim::pe {

// Why the foreground could not use a cycle, or why a microthread waits [0608].
enum class StallCause : uint8_t {
  none,
  input_empty,       // a fabric input's queue holds too few elements
  output_full,       // a fabric output's output queue is full [0337]
  local_queue_full,  // a local-color output's input queue is full
  fifo_empty,        // a source FIFO is empty [0542]
  fifo_full,         // a destination FIFO is full [0542]
  ut_slot_busy,      // the microthread's UT State entry is taken
  tensor_busy,       // a tensor pass waits for the unit's previous one
};
inline constexpr int kStallCauses = 8;
const char* stall_cause_name(StallCause c);

// How a task was started.
enum class TaskStart : uint8_t { data_wavelet, control_wavelet, activation };

struct TaskSpan {
  uint8_t id;
  TaskStart how;
  uint64_t start, end;  // cycle of the pick, cycle of the terminating instruction
};
struct MicrothreadSpan {  // every microthreaded operation, suspended or not
  uint8_t slot, owner;     // its UT State entry (UTID) and issuing task
  uint16_t pc;
  uint64_t start, end;     // issue, completion
};

// A change of Block or Active bits, for the trace: which ids, how, and what did it.
enum class IdChange : uint8_t { block, unblock, activate };
enum class IdCause : uint8_t { instruction, completion, fifo, tensor, host };
struct IdEvent {
  IdChange change;
  IdCause cause;
  uint64_t cycle;
  fabric::ColorMask ids;
};
const char* id_change_name(IdChange c);
const char* id_cause_name(IdCause c);

// The numeric counters (everything but the trace spans): what a run reports, snapshots
// and packed tables hold. A running CE counts in a CeLiveStats (below).
struct CeCounters {
  uint64_t cycles = 0;        // cycles stepped
  uint64_t busy_cycles = 0;   // a task was starting or running
  uint64_t stall_cycles = 0;  // the running task could not issue or iterate
  uint64_t iterations = 0;              // vector iterations (foreground and microthreads)
  uint64_t element_ops = 0;             // elements processed by vector operations
  uint64_t wavelets_in = 0;             // accepted from the off ramp
  uint64_t wavelets_out = 0;            // handed to the on ramp
  uint64_t microthread_iterations = 0;  // of iterations, those run by microthreads
  std::array<uint64_t, fabric::kMaxColorIds> busy_by_id{};
  std::array<uint64_t, fabric::kMaxColorIds> tasks_by_id{};
  std::array<uint64_t, isa::kOps> instructions{};  // issued, by opcode
  std::array<uint64_t, kStallCauses> stalls{};     // foreground stall cycles by cause
  std::array<uint64_t, kStallCauses> microthread_waits{};  // microthread-cycles waiting, by cause
  uint64_t microthread_blocked = 0;  // microthread-cycles held back by a blocked owner [0390]
  uint64_t suspensions = 0;             // microthread suspensions [0606]
  uint64_t wavelets_local = 0;          // local-color wavelets delivered to our own queues
  uint64_t wavelets_filtered = 0;       // data wavelets an input filter dropped [0597]
  uint64_t tensor_passes = 0;           // matrix-array passes of the attached tensor unit
  uint64_t tensor_cycles = 0;           // the unit's cycles for them (seed 002 timing)
  uint64_t tensor_macs = 0;             // useful multiply-accumulates of the passes
  // Wavelets that entered each input queue (from the router or a local send), and the
  // data wavelets each color's input filter dropped.
  std::array<uint64_t, fabric::kMaxColorIds> received_by_color{};
  std::array<uint64_t, fabric::kMaxColorIds> filtered_by_color{};
  std::array<uint8_t, fabric::kMaxColorIds> max_input_occupancy{};  // high-water marks
};

// The counters with the trace and profile a run reports.
struct CeStats : CeCounters {
  std::vector<TaskSpan> task_spans;               // only with CeConfig::trace
  std::vector<MicrothreadSpan> microthread_spans;  // only with CeConfig::trace
  std::vector<IdEvent> id_events;                   // only with CeConfig::trace
  // Only with CeConfig::profile: [pc] = cycles the CE spent at instruction pc: a task
  // starting there, issuing, iterating or stalled there, or else a microthread iterating
  // the operation issued there.
  std::vector<uint64_t> busy_by_pc;
};

// What a CE counts as it runs (CeCore::stats allocates it on the PE's first step): the
// counters of CeStats, under the same names but for the four by id or color (the columns
// of `ids`). Those by opcode are kept in 32 bits each (Counters32: exact past 2^32), those
// by id or color in one table with a row for each of the first eight ids counted
// (IdCounters32), so that the record is 0.96 KB instead of 3.2 KB. On the whole wafer
// that is 1.7 GB fewer pages to fault in and clear during the run's first cycles, the
// largest share of its page faults, which on 16 threads cost several times what they
// cost on one (docs/scale.md). Aligned to a cache line: the counters most cycles bump
// come first and share one.
struct alignas(64) CeLiveStats {
  // The columns of `ids`: CeStats's busy_by_id, tasks_by_id, received_by_color and
  // filtered_by_color.
  enum IdColumn : int { kBusy, kTasks, kReceived, kFiltered, kIdColumns };
  uint64_t cycles = 0;
  uint64_t busy_cycles = 0;
  uint64_t stall_cycles = 0;
  uint64_t iterations = 0;
  uint64_t element_ops = 0;
  uint64_t wavelets_in = 0;
  uint64_t wavelets_out = 0;
  uint64_t microthread_iterations = 0;
  IdCounters32<kIdColumns> ids;
  Counters32<isa::kOps> instructions;
  std::array<uint64_t, kStallCauses> stalls{};
  std::array<uint64_t, kStallCauses> microthread_waits{};
  uint64_t microthread_blocked = 0;
  uint64_t suspensions = 0;
  uint64_t wavelets_local = 0;
  uint64_t wavelets_filtered = 0;
  uint64_t tensor_passes = 0;
  uint64_t tensor_cycles = 0;
  uint64_t tensor_macs = 0;
  std::array<uint8_t, fabric::kMaxColorIds> max_input_occupancy{};
  std::vector<TaskSpan> task_spans;
  std::vector<MicrothreadSpan> microthread_spans;
  std::vector<IdEvent> id_events;
  std::vector<uint64_t> busy_by_pc;

  CeCounters counters() const;  // the numeric counters, dense
  CeStats snapshot() const;     // all of it, as a run reports it
};

// What was counted between the snapshot `then` and `now` (a run's share of cumulative
// counters). High-water marks cannot be split: they are `now`'s.
CeCounters counters_since(const CeCounters& now, const CeCounters& then);

// The counters as a short byte string: only their nonzero 64-bit words, each as a 2-byte
// word number and its 8 bytes (a PE's counters of one run are mostly zero: a few hundred
// bytes instead of three kilobytes, for wafers of a million PEs), and back.
std::string pack_counters(const CeCounters& c);
CeCounters unpack_counters(std::string_view packed);  // ConfigError if malformed

}  // namespace wafersim::pe
