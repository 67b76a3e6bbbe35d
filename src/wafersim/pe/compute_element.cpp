#include "wafersim/pe/compute_element.hpp"

#include "wafersim/pe/bulk_vector.hpp"
#include "wafersim/pe/ce_errors.hpp"
#include "wafersim/pe/ce_tensor.hpp"

namespace wafersim::pe {

using fabric::ColorMask;
using fabric::Wavelet;

ComputeElement::ComputeElement(const CeConfig& cfg, uint8_t* memory)
    : core_((validate(cfg), cfg), memory) {
  fabric_mask_ = cfg.fabric_colors >= 64 ? ~ColorMask{0} : (ColorMask{1} << cfg.fabric_colors) - 1;
}

// ---- cycle contract ----------------------------------------------------------------------

std::optional<Wavelet> ComputeElement::present_output(ColorMask router_stall) {
  const ColorMask ready = core_.outq.nonempty() & ~router_stall;
  if (ready == 0) return std::nullopt;
  const int n = core_.cfg.fabric_colors;
  for (int k = 0; k < n; ++k) {
    const int c = (out_rr_ + k) % n;
    if (!((ready >> c) & 1u)) continue;
    out_rr_ = (c + 1) % n;
    ++core_.stats().wavelets_out;
    ++core_.progress;
    quiet_ = false;  // room in an output queue
    return core_.outq.pop(c);
  }
  return std::nullopt;
}

void ComputeElement::accept_offramp(const Wavelet& w) {
  if (w.color >= core_.cfg.fabric_colors) {
    internal_error(core_.name() + ": the router delivered local color " + std::to_string(w.color));
  }
  if (core_.inq.full(w.color)) {
    internal_error(core_.name() + ": the router delivered color " + std::to_string(w.color) +
                   " into a full input queue despite the stall [0330]");
  }
  quiet_ = false;  // a wavelet for an input (also one a filter drops)
  ++core_.stats().wavelets_in;
  ++core_.progress;
  if (core_.drops(w)) return;  // an input filter keeps it out of the queue [0597]
  core_.inq.push(w.color, w);
  core_.note_occupancy(w.color);
  core_.stats().ids.increment(CeLiveStats::kReceived, w.color);
}

bool ComputeElement::idle() const {
  return !task_.active && !fg_active_ && ut_used_ == 0 &&
         core_.picker.active() == 0 && core_.inq.nonempty() == 0 &&
         core_.outq.nonempty() == 0 && !tensor_busy();
}

void ComputeElement::note_profile(uint32_t pc, uint64_t cycles) {
  std::vector<uint64_t>& p = core_.stats().busy_by_pc;
  if (p.empty()) p.assign(core_.cfg.max_instructions(), 0);
  if (pc < p.size()) p[pc] += cycles;
}

int ComputeElement::microthreads_in_use() const { return __builtin_popcount(ut_used_); }

// ---- one cycle of execution --------------------------------------------------------------

void ComputeElement::execute_cycle() {
  CeLiveStats& s = core_.stats();
  ++s.cycles;
  if (quiet_) {
    // What the full path below counts for a stalled foreground and nothing else.
    ++s.busy_cycles;
    s.ids.increment(CeLiveStats::kBusy, task_.id);
    ++s.stall_cycles;
    ++s.stalls[static_cast<int>(quiet_cause_)];
    if (core_.cfg.profile) note_profile(task_.pc);
    return;
  }
  if (bulk_left_ > 0) {
    bulk_cycle(s);
    return;
  }
  if (!task_.active) {
    if (core_.picker.has_candidate(core_.inq.nonempty())) {
      try_pick();
    } else if (ut_used_ == 0 && !tensor_) {
      return;  // nothing runs or starts: the cycle is only counted (what follows does no more)
    }
  }
  if (task_.active && !fg_active_ && ut_used_ == 0 && !tensor_ &&
      core_.cycle >= task_.issue_at) {
    // The most common busy cycle: the running task issues its next instruction, with no
    // vector operation, microthread or tensor unit beside it. The general path below
    // would choose slot 0 and count the same; nothing stalls, so quiet_ stays false.
    exec_rr_ = core_.cfg.microthreads == 0 ? 0 : 1;
    ++s.busy_cycles;
    s.ids.increment(CeLiveStats::kBusy, task_.id);
    if (core_.cfg.profile) note_profile(task_.pc);
    issue_instruction();
    if (tensor_) advance_tensor();  // its first tensor instruction made the unit
    return;
  }
  const bool tensor_was_busy = tensor_ && tensor_busy();  // (most CEs have no unit)

  // The foreground: the running task, once its first instruction can issue.
  bool fg_ready = false;
  Probe fgp;
  const bool fg_live = task_.active && core_.cycle >= task_.issue_at;
  if (fg_live) {
    if (!fg_active_) {
      fg_ready = true;
    } else {
      fgp = probe(core_, *fg_);
      fg_ready = fgp.lanes > 0 || fgp.term || can_suspend(*fg_);
    }
  }
  // One issue slot per cycle, shared round-robin by the foreground and microthreads.
  Probe utp;
  const int chosen = ut_used_ == 0 ? (fg_ready ? 0 : -1) : choose_slot(fg_ready, utp);
  if (chosen >= 0) exec_rr_ = chosen == core_.cfg.microthreads ? 0 : chosen + 1;

  if (task_.active) {
    ++s.busy_cycles;
    s.ids.increment(CeLiveStats::kBusy, task_.id);
    if (fg_live && !fg_ready) note_stall(fgp);
  }
  if (core_.cfg.profile && (task_.active || chosen > 0)) {
    // Before the slot runs: the pc it works at (a foreground vector operation's is task_.pc).
    note_profile(task_.active ? task_.pc : ut_[static_cast<size_t>(chosen - 1)]->pc);
  }
  if (chosen == 0) run_foreground(fgp);
  else if (chosen > 0) run_microthread(chosen - 1, utp);
  if (tensor_) advance_tensor();
  // A stalled foreground (it cannot suspend: not microthreaded, as no microthread is in
  // use) in a cycle where nothing ran, with no microthread and no tensor pass beside it,
  // stays stalled until a wavelet arrives or leaves or the host writes: its operands read
  // only queues and descriptors. (A microthread that ran this cycle, even its last
  // iteration, may have changed what the foreground's probe saw before it.)
  quiet_ = chosen < 0 && fg_live && !fg_ready && ut_used_ == 0 && !tensor_was_busy &&
           !(tensor_ && tensor_busy());
  if (quiet_) quiet_cause_ = fgp.cause;
}

int ComputeElement::choose_slot(bool fg_ready, Probe& chosen_probe) {
  // Suspended microthreads whose stall has cleared [0607]. With block_holds_microthreads
  // (the literal reading of [0390]) a blocked owner keeps them waiting, and so does a
  // block with a non-immediate source in progress [0394]; by default blocking gates only
  // what the picker starts.
  CeLiveStats& s = core_.stats();
  const int nut = core_.cfg.microthreads;
  std::array<Probe, 8> utp;
  bool ut_ready[8] = {};
  const bool holds = core_.cfg.block_holds_microthreads;
  const bool all_blocked =
      holds && fg_active_ && fg_->colorset && fg_->in.info().kind == isa::Kind::block;
  for (unsigned used = ut_used_; used; used &= used - 1) {
    const int i = __builtin_ctz(used);
    if (holds && (all_blocked || core_.picker.is_blocked(ut_[i]->owner))) {
      ++s.microthread_blocked;
      continue;
    }
    utp[i] = probe(core_, *ut_[i]);
    ut_ready[i] = utp[i].lanes > 0 || utp[i].term;
    if (!ut_ready[i]) ++s.microthread_waits[static_cast<int>(utp[i].cause)];
  }
  for (int k = 0; k <= nut; ++k) {
    const int pos = (exec_rr_ + k) % (nut + 1);
    if (pos == 0 ? fg_ready : ut_ready[pos - 1]) {
      if (pos > 0) chosen_probe = utp[pos - 1];
      return pos;
    }
  }
  return -1;
}

void ComputeElement::try_pick() {
  const Pick p = core_.picker.select(core_.inq.nonempty());
  if (p.kind == Pick::Kind::none) return;
  Task t;
  t.active = true;
  t.start = core_.cycle;
  t.issue_at = core_.cycle + static_cast<uint64_t>(core_.cfg.task_start_latency);
  t.color = p.id;
  int entry_id = p.id;
  if (p.kind == Pick::Kind::wavelet) {
    const Wavelet w = core_.inq.pop(p.id);
    // The picked wavelet's data and index go to the register file [0346].
    core_.gpr[isa::kWaveletDataGpr] = w.data_lo();
    core_.gpr[isa::kWaveletDataGpr + 1] = w.data_hi();
    core_.gpr[isa::kIndexGpr] = w.index;
    if (w.ctrl) {
      // A control wavelet starts the task its low six index bits name [0371].
      entry_id = w.lower_index();
      t.how = TaskStart::control_wavelet;
      core_.picker.note_closeout();
    } else {
      t.how = TaskStart::data_wavelet;  // entry Base + 4 * color [0371]
    }
  } else {
    t.how = TaskStart::activation;  // Active bit already cleared by the picker [0381]
  }
  t.id = entry_id;
  t.pc = core_.base + 4u * static_cast<uint32_t>(entry_id);
  task_ = t;
  core_.stats().ids.increment(CeLiveStats::kTasks, entry_id);
  ++core_.progress;
}

void ComputeElement::run_foreground(const Probe& p) {
  if (!fg_active_) {
    issue_instruction();
    return;
  }
  if (p.lanes > 0 || p.term) {
    if (iterate(core_, *fg_, p)) {
      complete(core_, *fg_);
      note_microthread(*fg_, fg_->ut_entry);
      fg_active_ = false;
      finish_vector_instruction(fg_->in);
    } else if (!fg_->bulk_checked) {
      try_bulk();
    }
    return;
  }
  suspend_foreground();
}

// ---- bulk vector execution (bulk_vector.hpp) ---------------------------------------------

void ComputeElement::try_bulk() {
  // Each cycle until the operation ends, the element-by-element path would run one more
  // full iteration of it and nothing else: no microthread can start (only the running
  // task issues, and it waits for this operation), none is suspended, no tensor pass
  // runs, the picker waits for the task, and wavelets arriving meanwhile only queue.
  // These conditions are about this CE alone, so they hold until the operation's end
  // or a host call (host_change).
  if (!core_.cfg.bulk_vector || ut_used_ != 0 || tensor_busy()) return;
  VectorOp& op = *fg_;
  op.bulk_checked = true;
  if (!bulk_eligible(core_, op)) return;
  const uint64_t w = static_cast<uint64_t>(op.width);
  const uint64_t left = (op.total - op.done + w - 1) / w;
  // The last iteration (perhaps not full) runs the ordinary way, with the completion.
  bulk_left_ = left - 1;
}

void ComputeElement::bulk_cycle(CeLiveStats& s) { count_bulk(s, 1); }

void ComputeElement::count_bulk(CeLiveStats& s, uint64_t n) {
  // What execute_cycle counts for n foreground iterations of full width (stats.cycles
  // aside).
  s.busy_cycles += n;
  s.ids.add(CeLiveStats::kBusy, task_.id, n);
  if (core_.cfg.profile) note_profile(task_.pc, n);
  s.iterations += n;
  s.element_ops += n * static_cast<uint64_t>(fg_->width);
  core_.progress += n;
  bulk_owed_ += n;
  bulk_left_ -= n;
  if (bulk_left_ == 0) settle();
}

void ComputeElement::skip_cycles(uint64_t first, uint64_t n) {
  if (n == 0) return;
  if (n > countable_cycles()) {
    internal_error(core_.name() + ": skip_cycles(" + std::to_string(n) + ") beyond the " +
                   std::to_string(countable_cycles()) + " countable cycles");
  }
  // step() of each cycle: no wavelet to hand out, a counted iteration; finish_cycle():
  // the same stall bits, as no input queue changes.
  core_.cycle = first + n - 1;
  CeLiveStats& s = core_.stats();
  s.cycles += n;
  count_bulk(s, n);
}

void ComputeElement::catch_up(uint64_t first, uint64_t n) {
  if (n == 0) return;
  if (!quiet_) {
    skip_cycles(first, n);
    return;
  }
  // n cycles of execute_cycle's quiet path.
  core_.cycle = first + n - 1;
  CeLiveStats& s = core_.stats();
  s.cycles += n;
  s.busy_cycles += n;
  s.ids.add(CeLiveStats::kBusy, task_.id, n);
  s.stall_cycles += n;
  s.stalls[static_cast<int>(quiet_cause_)] += n;
  if (core_.cfg.profile) note_profile(task_.pc, n);
}

void ComputeElement::settle() const {
  if (bulk_owed_ == 0) return;
  // The owed iterations are part of the CE's state already (their cycles are spent and
  // counted); doing their work now changes nothing the element-by-element path would
  // show, so a const reader may do it. (No ComputeElement is ever const itself.)
  auto& self = const_cast<ComputeElement&>(*this);
  bulk_iterations(self.core_, *self.fg_, bulk_owed_);
  self.bulk_owed_ = 0;
}

void ComputeElement::host_change() {
  quiet_ = false;  // the next cycle looks at everything again
  settle();
  // A host write may change what the operation reads (a register, its addresses): go on
  // element by element from here, and consider bulk execution again at the next iteration.
  bulk_left_ = 0;
  if (fg_active_) fg_->bulk_checked = false;
}

bool ComputeElement::can_suspend(const VectorOp& op) const {
  return op.microthreaded && !((ut_used_ >> op.ut_entry) & 1u);
}

void ComputeElement::suspend_foreground() {
  // [0606]-[0607], [0609]: save the operation to its UT State entry, write its progress
  // back into the descriptors, and let the task go on with its next instruction.
  write_back_progress(core_, *fg_);
  fg_->regs = core_.gpr;  // its private registers from now on (see VectorOp::regs)
  const Instruction in = fg_->in;
  const int e = fg_->ut_entry;
  std::swap(ut_[static_cast<size_t>(e)], fg_);  // reuses the entry's old storage, if any
  ut_used_ |= 1u << e;
  fg_active_ = false;
  ++core_.stats().suspensions;
  ++core_.progress;
  finish_vector_instruction(in);
}

void ComputeElement::run_microthread(int slot, const Probe& p) {
  VectorOp& op = *ut_[static_cast<size_t>(slot)];
  ++core_.stats().microthread_iterations;
  // Iterate on the operation's own registers; only a register destination reaches the
  // register file.
  std::swap(core_.gpr, op.regs);
  const bool finished = iterate(core_, op, p);
  std::swap(core_.gpr, op.regs);
  if (op.dst.kind == OpndKind::gpr) {
    core_.gpr[op.dst.reg] = op.regs[op.dst.reg];
    if (op.dst.bytes == 4) core_.gpr[op.dst.reg + 1] = op.regs[op.dst.reg + 1];
  }
  if (!finished) return;
  complete(core_, op);
  note_microthread(op, slot);
  ut_used_ &= ~(1u << slot);
}

// The trace shows every microthreaded operation from issue to completion, also one that
// never had to suspend.
void ComputeElement::note_microthread(const VectorOp& op, int slot) {
  if (!core_.cfg.trace || !op.microthreaded) return;
  core_.stats().microthread_spans.push_back({static_cast<uint8_t>(slot),
                                             static_cast<uint8_t>(op.owner),
                                             static_cast<uint16_t>(op.pc), op.issued, core_.cycle});
}

void ComputeElement::start_vector(const Instruction& in) {
  if (!fg_) fg_ = std::make_unique<VectorOp>();
  issue_vector_op(*fg_, core_, in, task_.pc, task_.id, task_.color);
  fg_->issued = core_.cycle;
  fg_active_ = true;
  if (fg_->done >= fg_->total) {  // nothing to do: a zero-length vector
    complete(core_, *fg_);
    note_microthread(*fg_, fg_->ut_entry);
    fg_active_ = false;
    finish_vector_instruction(in);
    return;
  }
  // The issue cycle runs the first iteration, or stalls / suspends right away.
  const Probe p = probe(core_, *fg_);
  if (p.lanes > 0 || p.term) {
    run_foreground(p);
  } else if (can_suspend(*fg_)) {
    suspend_foreground();
  } else {
    note_stall(p);
  }
}

void ComputeElement::note_stall(const Probe& p) {
  CeLiveStats& s = core_.stats();
  ++s.stall_cycles;
  // A microthreaded operation that cannot suspend waits for its UT State entry.
  const StallCause c = fg_->microthreaded ? StallCause::ut_slot_busy : p.cause;
  ++s.stalls[static_cast<int>(c)];
}

// The vector instruction at pc finished or went to a microthread: the task continues
// after it, or ends if it carried the Terminate bit [0595].
void ComputeElement::finish_vector_instruction(const Instruction& in) {
  advance(task_.pc + 1, in.term);
}

void ComputeElement::finish_task() {
  if (core_.cfg.trace) {
    core_.stats().task_spans.push_back(
        {static_cast<uint8_t>(task_.id), task_.how, task_.start, core_.cycle});
  }
  task_.active = false;
  ++core_.progress;
}

void ComputeElement::fail(const Instruction& in, const std::string& what) const {
  program_error(core_, task_.pc, in.mnemonic(), what);
}

}  // namespace wafersim::pe
