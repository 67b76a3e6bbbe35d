// The compute element of one PE (seed 000 FIG. 8, [0339]-[0399], [0604]-[0610]): picker,
// task sequencer, vector engine with microthreads, input and output queues.
//
// Cycle contract with the fabric (docs/compute_element.md). Every cycle:
//   phase A: step(cycle, router_stall_to_ramp) runs the picker, issues one instruction or
//            runs one vector iteration (foreground or microthread), and may hand at most
//            one wavelet to the on ramp, only for a color whose stall bit (from the end of
//            the previous cycle) is clear;
//   phase B: accept_offramp(w) for the at most one wavelet the router delivered, then
//            finish_cycle(), which latches the per-color stall bits toward the router
//            (occupancy above depth-2 [0329]) that stall_to_router() returns next cycle.
// Local colors (ids >= fabric colors) never enter the router: their wavelets go straight
// from the output side into our own input queues.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "wafersim/fabric/wavelet.hpp"
#include "wafersim/pe/ce_core.hpp"
#include "wafersim/pe/decoded.hpp"
#include "wafersim/pe/isa.hpp"
#include "wafersim/pe/vector_op.hpp"

namespace wafersim::pe {

struct CeTensor;  // ce_tensor.hpp: the attached tensor unit and its pass in flight

class ComputeElement {
 public:
  // `memory`: cfg.memory_bytes zero bytes that outlive the CE (a slot of the wafer's
  // MemoryArena), or nullptr for storage of its own.
  explicit ComputeElement(const CeConfig& cfg, uint8_t* memory = nullptr);
  ~ComputeElement();
  ComputeElement(const ComputeElement&) = delete;
  ComputeElement& operator=(const ComputeElement&) = delete;

  // ---- the cycle contract ------------------------------------------------------------
  // (step and finish_cycle are inline: every PE calls them every cycle, and most cycles
  // send nothing and see no queue cross the stall level.)
  std::optional<fabric::Wavelet> step(uint64_t cycle, fabric::ColorMask router_stall_to_ramp) {
    core_.cycle = cycle;
    std::optional<fabric::Wavelet> out;
    if (core_.outq.nonempty() & ~router_stall_to_ramp) out = present_output(router_stall_to_ramp);
    execute_cycle();
    return out;
  }
  void accept_offramp(const fabric::Wavelet& w);
  // [0329]: a fabric color whose input queue holds more than capacity-2 wavelets stalls;
  // the queue bank keeps that set as its crowded queues.
  void finish_cycle() { stall_to_router_ = core_.inq.crowded() & fabric_mask_; }
  fabric::ColorMask stall_to_router() const { return stall_to_router_; }
  // Nothing queued, running, suspended or activated: the simulator may skip this PE.
  bool idle() const;
  // Grows whenever the CE does something observable; a watchdog compares it.
  uint64_t progress() const { return core_.progress; }
  // Cycles from now on that the CE will only count, handing nothing to the on ramp and
  // changing no input queue (a bulk vector operation's; docs/compute_element.md). A
  // driver with nothing to deliver in them may run them at once with skip_cycles: the
  // same as step(first + k, any) + finish_cycle() for k = 0..n-1 with no wavelet arriving.
  uint64_t countable_cycles() const { return core_.outq.nonempty() ? 0 : bulk_left_; }
  void skip_cycles(uint64_t first, uint64_t n);
  // For a driver that lets a waiting CE sleep (the wafer's cycle loop): after
  // finish_cycle, the cycles from the next one on that the CE will only count as long as
  // no wavelet arrives and the host does not call: kUntilWavelet while its foreground
  // stalls quietly (execute_cycle's quiet_), the bulk operation's countable cycles, or 0.
  // Both need an empty output queue (nothing to offer). catch_up(first, n) then counts
  // cycles first..first+n-1 exactly as step() + finish_cycle() would have.
  static constexpr uint64_t kUntilWavelet = ~uint64_t{0};
  uint64_t sleep_span() const {
    if (core_.outq.nonempty()) return 0;
    return quiet_ ? kUntilWavelet : bulk_left_;
  }
  void catch_up(uint64_t first, uint64_t n);

  // ---- host side ---------------------------------------------------------------------
  const CeConfig& config() const { return core_.cfg; }
  // Writes 20-bit words at instruction indices first.. (ProgramError on overflow).
  void load_code(uint32_t first, std::span<const uint32_t> words);
  // The 20-bit word at instruction index `index` (MemoryAccessError outside code memory).
  uint32_t fetch_word(uint32_t index) const;
  // Host copies of bytes; MemoryAccessError when [addr, addr + n) leaves the PE's memory.
  void write_memory(uint32_t addr, std::span<const uint8_t> bytes);
  void read_memory(uint32_t addr, std::span<uint8_t> out) const;
  void check_memory_range(const char* what, uint64_t addr, uint64_t n) const;
  void set_base(uint32_t base);
  uint32_t base() const { return core_.base; }
  void activate(int id);  // the host starts a task: sets its Active bit
  void block(int id);     // the host sets a Block bit (e.g. at load time)
  void unblock(int id);
  // The input filter of a fabric color [0597]: keep data wavelets with index lo..hi.
  void set_filter(int color, int lo, int hi);
  void clear_filter(int color);
  std::optional<std::pair<int, int>> filter(int color) const;
  uint16_t gpr(int r) const;
  void set_gpr(int r, uint16_t v);
  uint64_t dsr(DsrSet set, int n) const;
  void set_dsr(DsrSet set, int n, uint64_t raw);
  uint64_t xdsr(int n) const;
  void set_xdsr(int n, uint64_t raw);
  uint16_t stride_reg(int n) const;
  void set_stride_reg(int n, uint16_t v);
  bool flag() const { return core_.flag; }
  fabric::ColorMask active_ids() const { return core_.picker.active(); }
  fabric::ColorMask blocked_ids() const { return core_.picker.blocked(); }
  int input_queue_size(int color) const;
  int output_queue_size(int color) const;
  fabric::ColorMask output_colors() const { return core_.outq.nonempty(); }  // non-empty ones
  const numerics::FpControl& fp_control() const { return core_.fpc; }
  void set_fp_control(const numerics::FpControl& ctl);

  // The attached tensor unit, or nullptr until the first tensor instruction created it.
  tensor::TensorUnit* tensor_unit();
  bool tensor_busy() const;

  bool task_running() const { return task_.active; }
  int running_task() const { return task_.active ? task_.id : -1; }
  uint32_t pc() const { return task_.pc; }
  int microthreads_in_use() const;

  CeStats stats() { return core_.stats().snapshot(); }
  // nullptr until the CE counted something (a CE that never ran holds no statistics).
  const CeLiveStats* stats_if_any() const { return core_.stats_if_any(); }
  void reset_stats() { core_.reset_stats(); }
  // Records task and microthread spans and id events from now on (or stops).
  void set_trace(bool on) { core_.cfg.trace = on; }
  void set_profile(bool on) { core_.cfg.profile = on; }
  // What the CE is doing and waiting on, for deadlock reports.
  std::string describe_wait() const;

  // One thing the CE waits for: the running task's or a microthread's stall (cause and
  // the color it waits on), or an output queue the router does not drain.
  struct Wait {
    StallCause cause = StallCause::none;
    int color = -1;
    std::string who;  // "task 3 pc 12 (mov16) dst", "microthread 2 (task 3 pc 9 mov16) src1"
    int held_by = -1;  // a microthread held by this blocked id (block_holds_microthreads)
  };
  std::vector<Wait> waits() const;

 private:
  struct Task {  // (32 bytes)
    uint64_t start = 0, issue_at = 0;
    uint32_t pc = 0;
    int id = 0;       // entry and owner id
    int color = 0;    // the queue a fabric input reads by default [0510]
    bool active = false;
    TaskStart how = TaskStart::activation;
  };

  std::optional<fabric::Wavelet> present_output(fabric::ColorMask router_stall);
  void execute_cycle();
  void try_pick();
  // With microthreads in use: the slot that issues this cycle (0 the foreground, k > 0
  // microthread k-1, -1 none) and, for a microthread, its probe.
  int choose_slot(bool fg_ready, Probe& chosen_probe);
  void run_foreground(const Probe& p);
  uint32_t fetch(uint32_t index) const;  // index < max_instructions
  // Instruction `index` (< max_instructions) decoded: from the shared program while this
  // CE's code is the one it loaded, else from its own table (decode_own fills it).
  const Decoded& decoded(uint32_t index) {
    if (shared_) return shared_->at(index);
    if (decoded_version_ == core_.mem.code_version() && index < decoded_at_.size()) {
      if (const uint16_t at = decoded_at_[index]) return decoded_[at - 1u];
    }
    return decode_own(index);
  }
  const Decoded& decode_own(uint32_t index);
  void issue_instruction();
  void issue_checked(const Instruction& in);
  void execute_compare(const Decoded& d);
  void execute_alu(const Decoded& d);
  void start_vector(const Instruction& in);
  void finish_vector_instruction(const Instruction& in);
  void suspend_foreground();
  bool can_suspend(const VectorOp& op) const;
  // A microthread that may not resume: its owner is blocked under block_holds_microthreads.
  bool held(const VectorOp& op) const {
    return core_.cfg.block_holds_microthreads && core_.picker.is_blocked(op.owner);
  }
  void note_stall(const Probe& p);
  // Bulk vector execution (bulk_vector.hpp). try_bulk: after a foreground iteration,
  // whether the operation's remaining full iterations may only be counted; bulk_cycle:
  // one such cycle; settle: do the work of the iterations counted so far (host reads and
  // the operation's last iteration see exactly the element-by-element state);
  // host_change: a host write, after which the CE looks at everything again.
  void try_bulk();
  void bulk_cycle(CeLiveStats& s);
  void count_bulk(CeLiveStats& s, uint64_t n);
  void settle() const;
  void host_change();
  void note_profile(uint32_t pc, uint64_t cycles = 1);
  void run_microthread(int slot, const Probe& p);
  void note_microthread(const VectorOp& op, int slot);
  void execute_scalar(const Instruction& in);  // sequencer.cpp
  void set_filter_from(const Instruction& in, uint32_t addr);
  // ce_tensor.cpp: tensor instructions, and the pass in flight at the end of each cycle.
  void execute_tensor(const Instruction& in);
  void issue_pass(const Instruction& in, CeTensor& t);
  void advance_tensor();
  CeTensor& tensor_state(const Instruction& in);
  std::string describe_tensor() const;
  void advance(uint32_t next_pc, bool terminate) {
    task_.pc = next_pc;
    if (terminate) finish_task();
  }
  void finish_task();
  [[noreturn]] void fail(const Instruction& in, const std::string& what) const;

  // Members in the order one cycle reads them: what every stepped CE reads or writes
  // each cycle first (its task, the quiet and bulk states, the slot, stall and progress
  // words, then the core's picker, cycle, statistics and queue masks: a few cache lines
  // per PE-cycle, docs/scale.md "Threads that scale"), what a running operation or the
  // host reads after.
  Task task_;
  bool fg_active_ = false;
  // The foreground stalled last cycle with nothing else to run, and nothing it waits on
  // has changed since (no wavelet in or out, no host write): this cycle stalls the same
  // way, so it only counts the stall (cause quiet_cause_) without probing the operands.
  bool quiet_ = false;
  StallCause quiet_cause_ = StallCause::none;
  unsigned ut_used_ = 0;  // which UT State entries (ut_) hold a live operation
  int exec_rr_ = 0;  // round robin between the foreground and ready microthreads
  int out_rr_ = 0;   // round robin over output queues toward the on ramp
  fabric::ColorMask fabric_mask_ = 0;
  fabric::ColorMask stall_to_router_ = 0;
  // Bulk vector execution: cycles of full iterations the foreground operation still only
  // counts, and the iterations counted whose work is not done yet (settle does it).
  uint64_t bulk_left_ = 0;
  uint64_t bulk_owed_ = 0;
  std::unique_ptr<CeTensor> tensor_;  // created on the first tensor instruction
  std::unique_ptr<VectorOp> fg_;  // the running task's vector operation, if any
  // The program decoded once for every CE that loaded the same code (decoded.hpp), while
  // code memory is as that load left it: every host write that reaches code memory
  // (load_code, write_memory; the CE's own stores cannot) drops it first.
  std::shared_ptr<const SharedProgram> shared_;
  CeCore core_;
  // UT State 845: suspended operations [0362]; storage is kept for reuse.
  std::array<std::unique_ptr<VectorOp>, 8> ut_;
  // Without a shared program, instructions decoded once, on their first issue, in issue
  // order; decoded_at_[index] is 1 + the position of instruction `index` there, or 0: not
  // decoded yet. All dropped when code memory is written. Only issued instructions take
  // room: the entry table of 64 tasks spreads a small program over hundreds of indices.
  std::vector<Decoded> decoded_;
  std::vector<uint16_t> decoded_at_;
  uint64_t decoded_version_ = 0;
};

}  // namespace wafersim::pe
