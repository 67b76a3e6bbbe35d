// The vector computational unit of seed 002 (Fig. 4A, [0052]-[0061]): `lanes` processing
// elements run one 128-bit triad per clock [0114] on the aliased register file, fed by an
// input queue of matrix-array rows (dequeue-ready [0037], [0061]) and by an SRAM read
// pointer [0084]; results leave through the SRAM write pointer [0090] or the 1-byte-per-lane
// output buffer towards the post-processor [0086].
//
// Timing (Fig. 9, [0111]-[0115]): six stages F D I L A S, one instruction issued per cycle.
// The first bundle is fetched in cycle 0 and issues in cycle 2; bundle k's L, A and S stages
// run in cycles I+1, I+2, I+3 (stagger mode, the default) or all in cycle I+1 (parallel
// mode, [0099]/[0115]). Issue stalls (interlock [0098]) while a DEQ's row is not yet in the
// queue, or while an SRAM load would meet an earlier store on the single SRAM port.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "wafersim/tensor/vector_isa.hpp"
#include "wafersim/tensor/vector_state.hpp"

namespace wafersim::tensor {

enum class PipelineMode : uint8_t {
  stagger,   // Fig. 9: L, A, S of one triad in consecutive cycles; visible order L -> A -> S
  parallel,  // [0115]: L, A, S in the same cycle; each reads the state before the triad
};

struct VectorEngineConfig {
  int lanes = 96;
  int sram_bytes = 64 * 1024;
  PipelineMode mode = PipelineMode::stagger;
};

struct VectorCounters {
  int64_t bundles = 0;            // triads and long instructions retired
  int64_t rows_dequeued = 0;
  int64_t rows_out = 0;           // rows sent to the output buffer
  int64_t stall_dequeue = 0;      // issue cycles lost waiting for dequeue-ready
  int64_t stall_sram_port = 0;    // issue cycles lost to the single SRAM port
  int64_t last_retire = -1;       // cycle of the last retiring stage (-1: nothing retired)
  int64_t cycles() const { return last_retire + 1; }
};

// One row of the output buffer: lanes bytes and the cycle it was written.
struct OutputRow {
  std::vector<uint8_t> bytes;
  int64_t cycle;
};

class VectorEngine {
 public:
  explicit VectorEngine(const VectorEngineConfig& cfg);

  const VectorEngineConfig& config() const { return cfg_; }
  int lanes() const { return cfg_.lanes; }
  VectorState& state() { return state_; }
  const VectorState& state() const { return state_; }

  // --- input queue (matrix array or FIFO rows, one 32-bit value per lane) ---------------
  // `arrival` is the cycle the row was latched into the queue; a DEQ may issue from the
  // next cycle on. A negative arrival means "now" (no stall).
  void push_row(std::span<const uint32_t> row, int64_t arrival = -1);
  size_t queued_rows() const { return queue_.size(); }
  bool dequeue_ready() const { return !queue_.empty(); }
  // The L-stage cycle of the n-th dequeue since the last reset of the counters.
  int64_t dequeue_cycle(int64_t n) const;

  // --- output buffer ------------------------------------------------------------------------
  std::deque<OutputRow>& output() { return output_; }

  // --- SRAM and its pointers (set by the control unit) ----------------------------------
  std::span<uint8_t> sram() { return sram_; }
  std::span<const uint8_t> sram() const { return sram_; }
  int64_t read_pointer() const { return read_ptr_; }
  int64_t write_pointer() const { return write_ptr_; }
  void set_read_pointer(int64_t p);
  void set_write_pointer(int64_t p);

  // --- execution --------------------------------------------------------------------------
  // Executes one decoded bundle functionally (no timing). Throws if it dequeues from an
  // empty queue or leaves the SRAM.
  void execute(const DecodedBundle& b);

  // Runs program[pc...] with the cycle model until the end (returns program.size()) or until
  // a DEQ finds the queue empty (returns that pc; nothing of that bundle has executed).
  size_t run(std::span<const DecodedBundle> program, size_t pc = 0);

  // The instruction buffer [0060]: a decoded program and the pointer to the current
  // instruction. run_loaded() continues from that pointer (the halt/wait of Fig. 6A, 609).
  void load_program(std::span<const Bundle> bundles);
  size_t run_loaded() { return pc_ = run(program_, pc_); }
  size_t pc() const { return pc_; }
  size_t program_size() const { return program_.size(); }
  void restart_program() { pc_ = 0; }

  const VectorCounters& counters() const { return counters_; }
  // The cycle in which the next bundle could issue.
  int64_t next_issue() const { return next_issue_; }
  // "Now" for rows pushed without a cycle: the cycle before the next issue slot.
  int64_t now() const { return next_issue_ - 1; }

  // Clears registers, masks, flags, queues, pointers, counters and the pipeline.
  void reset();
  // Restarts the pipeline and counters only (state kept), e.g. between layers.
  void reset_timing();

 private:
  struct QueuedRow {
    std::vector<uint32_t> lanes;
    int64_t arrival;
  };

  void exec_load(const LoadSlot& l);
  void exec_store(const StoreSlot& st, int64_t cycle);
  void exec_mask_move(const MaskMove& mm);
  void check_sram(int64_t addr, int64_t bytes, const char* what) const;

  VectorEngineConfig cfg_;
  VectorState state_;
  std::deque<QueuedRow> queue_;
  std::deque<OutputRow> output_;
  std::vector<uint8_t> sram_;
  std::vector<DecodedBundle> program_;
  size_t pc_ = 0;
  int64_t read_ptr_ = 0;
  int64_t write_ptr_ = 0;

  // Timing.
  int64_t next_issue_ = 2;                 // F in cycle 0, D in 1, I in 2
  std::vector<int64_t> store_cycles_;      // S cycles of recent SRAM stores (port use)
  std::vector<int64_t> dequeue_cycles_;    // L cycle of every dequeue
  VectorCounters counters_;
};

}  // namespace wafersim::tensor
