// The host side of a compute element: loading code and data, registers, launching
// tasks, and the "what are you waiting on" report for deadlock diagnostics.
#include <sstream>

#include "wafersim/pe/ce_errors.hpp"
#include "wafersim/pe/ce_tensor.hpp"
#include "wafersim/pe/compute_element.hpp"

namespace wafersim::pe {

namespace {
void check_id(const CeCore& core, int id, const char* what) {
  if (id < 0 || id >= fabric::kMaxColorIds) {
    throw ConfigError(core.name() + ": " + what + " " + std::to_string(id) +
                      " is not a task id (0..63)");
  }
}
}  // namespace

void ComputeElement::load_code(uint32_t first, std::span<const uint32_t> words) {
  host_change();
  const uint64_t end = uint64_t{first} + words.size();
  if (end > core_.cfg.max_instructions()) {
    throw ProgramError(core_.name() + ": instruction memory overflow: the program needs " +
                       std::to_string(end) + " instruction slots, this PE holds " +
                       std::to_string(core_.cfg.max_instructions()) + " (" +
                       std::to_string(core_.cfg.code_bytes) + " bytes of code memory)");
  }
  // Code memory never written before holds zeros: after this load it holds exactly
  // `words`, whose decoded form other CEs may have already (decoded.hpp).
  const bool fresh = core_.mem.code_version() == 0;
  shared_.reset();  // the code changes (also if a word below is refused)
  // Three words share 8 bytes. In fresh memory the 8 bytes a load first reaches are known
  // to be zero and are not read: a read would map the zero page and the write then copy
  // it, two page faults where one does (a whole wafer's load takes a fault per PE less).
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] >> isa::kWordBits) {
      throw ProgramError(core_.name() + ": instruction word " + hex(words[i]) + " at index " +
                         std::to_string(first + i) + " is wider than 20 bits");
    }
    const uint32_t index = first + static_cast<uint32_t>(i);
    const uint32_t addr = core_.cfg.data_bytes() + index / 3 * 8;
    const int shift = 20 * static_cast<int>(index % 3);
    const bool untouched = fresh && (i == 0 || index % 3 == 0);
    uint64_t w = untouched ? 0 : core_.mem.read_le(addr, 8);
    w = (w & ~(uint64_t{0xFFFFF} << shift)) | (uint64_t{words[i]} << shift);
    core_.mem.write_le(addr, 8, w);
  }
  if (fresh && !words.empty()) shared_ = SharedProgram::find(first, words);
}

void ComputeElement::check_memory_range(const char* what, uint64_t addr, uint64_t n) const {
  const uint64_t limit = core_.cfg.memory_bytes;
  if (addr > limit || n > limit - addr) {  // no wrap-around for any addr and n
    throw MemoryAccessError(core_.name() + ": " + what + " of " + std::to_string(n) +
                            " bytes at address " + std::to_string(addr) +
                            " reaches past the end of memory (" + std::to_string(limit) +
                            " bytes)");
  }
}

void ComputeElement::write_memory(uint32_t addr, std::span<const uint8_t> bytes) {
  check_memory_range("write", addr, bytes.size());
  host_change();
  // Code written: this CE decodes its own instructions from now on; the shared program
  // stays as it was for the others.
  if (!bytes.empty() && addr + bytes.size() > core_.cfg.data_bytes()) shared_.reset();
  core_.mem.write(addr, bytes);
}

void ComputeElement::read_memory(uint32_t addr, std::span<uint8_t> out) const {
  check_memory_range("read", addr, out.size());
  settle();
  core_.mem.read(addr, out);
}

void ComputeElement::set_base(uint32_t base) {
  if (uint64_t{base} + 4u * fabric::kMaxColorIds > core_.cfg.max_instructions()) {
    throw ConfigError(core_.name() + ": Base " + std::to_string(base) +
                      " leaves no room for the 64 task entries below " +
                      std::to_string(core_.cfg.max_instructions()));
  }
  host_change();
  core_.base = base;
}

void ComputeElement::activate(int id) {
  check_id(core_, id, "activate:");
  host_change();
  core_.activate_id(id, IdCause::host);
}
void ComputeElement::block(int id) {
  check_id(core_, id, "block:");
  host_change();
  core_.change_ids(IdChange::block, fabric::ColorMask{1} << id, IdCause::host);
}
void ComputeElement::unblock(int id) {
  check_id(core_, id, "unblock:");
  host_change();
  core_.change_ids(IdChange::unblock, fabric::ColorMask{1} << id, IdCause::host);
}

namespace {
void check_filter_color(const CeCore& core, int color) {
  if (color < 0 || color >= core.cfg.fabric_colors) {
    throw ConfigError(core.name() + ": color " + std::to_string(color) +
                      " has no input filter (fabric colors are 0.." +
                      std::to_string(core.cfg.fabric_colors - 1) + ")");
  }
}
}  // namespace

void ComputeElement::set_filter(int color, int lo, int hi) {
  check_filter_color(core_, color);
  if (lo < 0 || hi > 0xFFFF || lo > hi) {
    throw ConfigError(core_.name() + ": the filter of color " + std::to_string(color) +
                      " keeps indices " + std::to_string(lo) + ".." + std::to_string(hi) +
                      ": give 0 <= lowest <= highest <= 65535");
  }
  host_change();
  core_.filtered |= fabric::ColorMask{1} << color;
  core_.filter_lo[static_cast<size_t>(color)] = static_cast<uint16_t>(lo);
  core_.filter_hi[static_cast<size_t>(color)] = static_cast<uint16_t>(hi);
}
void ComputeElement::clear_filter(int color) {
  check_filter_color(core_, color);
  host_change();
  core_.filtered &= ~(fabric::ColorMask{1} << color);
}
std::optional<std::pair<int, int>> ComputeElement::filter(int color) const {
  check_filter_color(core_, color);
  if (!((core_.filtered >> color) & 1u)) return std::nullopt;
  return std::pair<int, int>{core_.filter_lo[static_cast<size_t>(color)],
                             core_.filter_hi[static_cast<size_t>(color)]};
}

uint16_t ComputeElement::gpr(int r) const {
  if (r < 0 || r >= isa::kGprs) {
    throw MemoryAccessError("GPR " + std::to_string(r) + " does not exist (0..15)");
  }
  settle();
  return core_.gpr[r];
}
void ComputeElement::set_gpr(int r, uint16_t v) {
  gpr(r);
  host_change();
  core_.gpr[r] = v;
}

namespace {
void check_dsr(int n) {
  if (n < 0 || n >= isa::kDsrsPerSet) {
    throw MemoryAccessError("DSR " + std::to_string(n) + " does not exist (0..11) [0355]");
  }
}
void check_x(int n, const char* what) {
  if (n < isa::kFirstXdsr || n > isa::kLastXdsr) {
    throw MemoryAccessError(std::string(what) + " " + std::to_string(n) +
                            " does not exist (2..7)");
  }
}
}  // namespace

uint64_t ComputeElement::dsr(DsrSet set, int n) const {
  check_dsr(n);
  return core_.dsr.dsr(set, n);
}
void ComputeElement::set_dsr(DsrSet set, int n, uint64_t raw) {
  check_dsr(n);
  host_change();
  core_.dsr.dsr(set, n) = raw & kDsrMask;
}
uint64_t ComputeElement::xdsr(int n) const {
  check_x(n, "XDSR");
  return core_.dsr.xdsr(n);
}
void ComputeElement::set_xdsr(int n, uint64_t raw) {
  check_x(n, "XDSR");
  host_change();
  core_.dsr.xdsr(n) = raw & kXdsrMask;
}
uint16_t ComputeElement::stride_reg(int n) const {
  check_x(n, "stride register");
  return core_.dsr.stride_reg(n);
}
void ComputeElement::set_stride_reg(int n, uint16_t v) {
  check_x(n, "stride register");
  host_change();
  core_.dsr.stride_reg(n) = v & kStrideMask;
}

int ComputeElement::input_queue_size(int color) const {
  check_id(core_, color, "input queue");
  return core_.inq.size(color);
}
int ComputeElement::output_queue_size(int color) const {
  if (color < 0 || color >= core_.cfg.fabric_colors) {
    throw ConfigError(core_.name() + ": color " + std::to_string(color) +
                      " has no output queue (fabric colors are 0.." +
                      std::to_string(core_.cfg.fabric_colors - 1) + ")");
  }
  return core_.outq.size(color);
}

void ComputeElement::set_fp_control(const numerics::FpControl& ctl) {
  numerics::validate(ctl);
  core_.rng.resource(ctl.rng);  // checks the index
  host_change();
  core_.fpc = ctl;
}

namespace {
std::string id_list(fabric::ColorMask m) {
  if (m == 0) return "none";
  if (m == ~fabric::ColorMask{0}) return "all";
  std::string s;
  for (int i = 0; i < fabric::kMaxColorIds; ++i) {
    if ((m >> i) & 1u) s += (s.empty() ? "" : ", ") + std::to_string(i);
  }
  return s;
}
}  // namespace

std::string ComputeElement::describe_wait() const {
  settle();  // the elements done so far
  std::ostringstream os;
  os << core_.name() << ":";
  if (task_.active) {
    os << " task " << task_.id << " running at pc " << task_.pc;
    if (core_.cycle < task_.issue_at) os << " (starting)";
    if (fg_active_) {
      const Probe p = probe(core_, *fg_);
      os << " in " << fg_->mnemonic() << " (" << fg_->done << " of " << fg_->total
         << " elements)";
      if (p.lanes == 0 && !p.term) os << ", waiting: " << describe_stall(p);
    }
  } else {
    os << " no task running";
  }
  os << "\n  blocked ids: " << id_list(core_.picker.blocked())
     << "\n  active ids: " << id_list(core_.picker.active());
  std::string qs;
  for (int c = 0; c < fabric::kMaxColorIds; ++c) {
    if (core_.inq.empty(c)) continue;
    qs += (qs.empty() ? "" : ", ") + std::string("color ") + std::to_string(c) + ": " +
          std::to_string(core_.inq.size(c));
    if (core_.picker.is_blocked(c)) qs += " (blocked)";
    if ((stall_to_router_ >> c) & 1u) qs += " (stalling the router)";
  }
  os << "\n  input queues: " << (qs.empty() ? "empty" : qs);
  std::string oq;
  for (int c = 0; c < core_.cfg.fabric_colors; ++c) {
    if (core_.outq.empty(c)) continue;
    oq += (oq.empty() ? "" : ", ") + std::string("color ") + std::to_string(c) + ": " +
          std::to_string(core_.outq.size(c));
  }
  os << "\n  output queues: " << (oq.empty() ? "empty" : oq);
  for (size_t i = 0; i < ut_.size(); ++i) {
    if (!((ut_used_ >> i) & 1u)) continue;
    const VectorOp& op = *ut_[i];
    const Probe p = probe(core_, op);
    os << "\n  microthread " << i << " (task " << op.owner << ", pc " << op.pc << " "
       << op.mnemonic() << ", " << op.done << " of " << op.total << " elements): ";
    if (held(op)) os << "held: its task id " << op.owner << " is blocked (block_holds_microthreads) [0390]";
    else if (p.lanes == 0 && !p.term) os << "waiting: " << describe_stall(p);
    else os << "ready";
  }
  if (tensor_busy()) os << "\n  " << describe_tensor();
  return os.str();
}

std::vector<ComputeElement::Wait> ComputeElement::waits() const {
  settle();
  std::vector<Wait> out;
  auto add = [&](const Probe& p, const std::string& who) {
    if (p.lanes > 0 || p.term || p.cause == StallCause::none) return;
    out.push_back({p.cause, p.color, who + " " + p.operand});
  };
  if (task_.active && fg_active_) {
    add(probe(core_, *fg_), "task " + std::to_string(task_.id) + " pc " + std::to_string(task_.pc) +
                                " (" + fg_->mnemonic() + ")");
  }
  for (size_t i = 0; i < ut_.size(); ++i) {
    if (!((ut_used_ >> i) & 1u)) continue;
    const VectorOp& op = *ut_[i];
    if (held(op)) {  // waits for an unblock, not for a color
      out.push_back({StallCause::none, -1,
                     "microthread " + std::to_string(i) + " (task " + std::to_string(op.owner) +
                         " pc " + std::to_string(op.pc) + " " + op.mnemonic() + ")",
                     op.owner});
      continue;
    }
    add(probe(core_, op), "microthread " + std::to_string(i) + " (task " + std::to_string(op.owner) +
                              " pc " + std::to_string(op.pc) + " " + op.mnemonic() + ")");
  }
  if (tensor_busy() && tensor_->pass.fabric && core_.cycle >= tensor_->pass.done_at) {
    out.push_back({StallCause::output_full, tensor_->pass.color,
                   "tensor unit (" + std::string(tensor_->pass.mnemonic) + " at pc " +
                       std::to_string(tensor_->pass.pc) + ") results"});
  }
  for (fabric::ColorMask m = core_.outq.nonempty(); m; m &= m - 1) {
    const int c = __builtin_ctzll(m);
    out.push_back({StallCause::output_full, c,
                   "output queue of color " + std::to_string(c) + " (" +
                       std::to_string(core_.outq.size(c)) + " wavelets)"});
  }
  return out;
}

}  // namespace wafersim::pe
