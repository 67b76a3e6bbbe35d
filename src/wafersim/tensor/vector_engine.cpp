#include "wafersim/tensor/vector_engine.hpp"

#include <algorithm>
#include <string>

#include "wafersim/errors.hpp"
#include "wafersim/tensor/vector_alu.hpp"

namespace wafersim::tensor {

namespace {

using isa::LoadKind;
using isa::StoreKind;

bool is_dequeue(const DecodedBundle& b) {
  return !b.is_long && (b.load.kind == LoadKind::deq || b.load.kind == LoadKind::deqm);
}
bool is_sram_load(const DecodedBundle& b) {
  return !b.is_long && (b.load.kind == LoadKind::ld || b.load.kind == LoadKind::ldm ||
                        b.load.kind == LoadKind::ldmsk);
}
bool is_sram_store(const DecodedBundle& b) { return !b.is_long && b.store.kind == StoreKind::st; }

}  // namespace

VectorEngine::VectorEngine(const VectorEngineConfig& cfg) : cfg_(cfg), state_(cfg.lanes) {
  if (cfg.sram_bytes < 0 || cfg.sram_bytes > (1 << 30)) {
    throw ConfigError("vector engine sram_bytes must be in 0..2^30, got " +
                      std::to_string(cfg.sram_bytes));
  }
  sram_.assign(static_cast<size_t>(cfg.sram_bytes), 0);
}

void VectorEngine::push_row(std::span<const uint32_t> row, int64_t arrival) {
  if (static_cast<int>(row.size()) != cfg_.lanes) {
    throw ConfigError("input-queue row has " + std::to_string(row.size()) +
                      " values but the vector engine has " + std::to_string(cfg_.lanes) + " lanes");
  }
  queue_.push_back({std::vector<uint32_t>(row.begin(), row.end()), arrival < 0 ? now() : arrival});
}

int64_t VectorEngine::dequeue_cycle(int64_t n) const {
  if (n < 0 || n >= static_cast<int64_t>(dequeue_cycles_.size())) {
    internal_error("dequeue_cycle: dequeue " + std::to_string(n) + " has not happened");
  }
  return dequeue_cycles_[static_cast<size_t>(n)];
}

void VectorEngine::set_read_pointer(int64_t p) {
  if (p < 0 || p > static_cast<int64_t>(sram_.size())) {
    throw MemoryAccessError("vector-engine read pointer " + std::to_string(p) +
                            " is outside the SRAM (0.." + std::to_string(sram_.size()) + ")");
  }
  read_ptr_ = p;
}

void VectorEngine::set_write_pointer(int64_t p) {
  if (p < 0 || p > static_cast<int64_t>(sram_.size())) {
    throw MemoryAccessError("vector-engine write pointer " + std::to_string(p) +
                            " is outside the SRAM (0.." + std::to_string(sram_.size()) + ")");
  }
  write_ptr_ = p;
}

void VectorEngine::check_sram(int64_t addr, int64_t bytes, const char* what) const {
  if (addr < 0 || addr + bytes > static_cast<int64_t>(sram_.size())) {
    throw MemoryAccessError(std::string(what) + " of " + std::to_string(bytes) +
                            " bytes at SRAM address " + std::to_string(addr) +
                            " leaves the vector-engine SRAM of " + std::to_string(sram_.size()) +
                            " bytes");
  }
}

void VectorEngine::exec_load(const LoadSlot& l) {
  VectorRegFile& r = state_.regs;
  const int lanes = cfg_.lanes;
  const std::vector<uint8_t>& m0 = state_.masks[0];
  switch (l.kind) {
    case LoadKind::nop:
      return;
    case LoadKind::deq:
    case LoadKind::deqm: {
      if (queue_.empty()) {
        throw ProgramError(std::string(l.mnemonic) + " on an empty input queue (no row is "
                           "dequeue-ready [0037])");
      }
      const std::vector<uint32_t>& row = queue_.front().lanes;
      const bool masked = l.kind == LoadKind::deqm;
      for (int lane = 0; lane < lanes; ++lane) {
        if (!masked || m0[lane]) r.write(l.file, l.reg, lane, row[lane]);
      }
      queue_.pop_front();
      ++counters_.rows_dequeued;
      return;
    }
    case LoadKind::ld:
    case LoadKind::ldm: {
      const int bytes = VectorRegFile::bits(l.file) / 8;
      check_sram(read_ptr_, int64_t{lanes} * bytes, l.mnemonic);
      const uint8_t* p = sram_.data() + read_ptr_;
      const bool masked = l.kind == LoadKind::ldm;
      for (int lane = 0; lane < lanes; ++lane) {
        uint32_t v = 0;
        for (int i = 0; i < bytes; ++i) v |= uint32_t{p[lane * bytes + i]} << (8 * i);
        if (!masked || m0[lane]) r.write(l.file, l.reg, lane, v);
      }
      read_ptr_ += int64_t{lanes} * bytes;
      return;
    }
    case LoadKind::ldmsk: {
      const int bytes = (lanes + 7) / 8;
      check_sram(read_ptr_, bytes, l.mnemonic);
      const uint8_t* p = sram_.data() + read_ptr_;
      std::vector<uint8_t>& dst = state_.masks[l.reg];
      for (int lane = 0; lane < lanes; ++lane) dst[lane] = (p[lane / 8] >> (lane % 8)) & 1u;
      read_ptr_ += bytes;
      return;
    }
  }
  internal_error("exec_load: unhandled load kind");
}

void VectorEngine::exec_store(const StoreSlot& st, int64_t cycle) {
  const VectorRegFile& r = state_.regs;
  const int lanes = cfg_.lanes;
  switch (st.kind) {
    case StoreKind::nop:
      return;
    case StoreKind::st: {
      const int bytes = VectorRegFile::bits(st.file) / 8;
      check_sram(write_ptr_, int64_t{lanes} * bytes, st.mnemonic);
      uint8_t* p = sram_.data() + write_ptr_;
      for (int lane = 0; lane < lanes; ++lane) {
        const uint32_t v = r.read(st.file, st.reg, lane);
        for (int i = 0; i < bytes; ++i) p[lane * bytes + i] = static_cast<uint8_t>(v >> (8 * i));
      }
      write_ptr_ += int64_t{lanes} * bytes;
      return;
    }
    case StoreKind::out: {
      OutputRow row{std::vector<uint8_t>(static_cast<size_t>(lanes)), cycle};
      for (int lane = 0; lane < lanes; ++lane) {
        row.bytes[lane] = static_cast<uint8_t>(r.read(st.file, st.reg, lane));
      }
      output_.push_back(std::move(row));
      ++counters_.rows_out;
      return;
    }
  }
  internal_error("exec_store: unhandled store kind");
}

void VectorEngine::exec_mask_move(const MaskMove& mm) {
  const int lanes = cfg_.lanes;
  for (int bit = lanes; bit < 96; ++bit) {
    if ((mm.imm[bit / 8] >> (bit % 8)) & 1u) {
      throw ProgramError("MASKMOV immediate sets bit " + std::to_string(bit) +
                         " but the vector engine has only " + std::to_string(lanes) + " lanes");
    }
  }
  std::vector<uint8_t>& dst = state_.masks[mm.mask];
  for (int lane = 0; lane < lanes; ++lane) {
    dst[lane] = lane < 96 ? (mm.imm[lane / 8] >> (lane % 8)) & 1u : 0u;  // lanes >= 96 clear
  }
}

void VectorEngine::execute(const DecodedBundle& b) {
  const int64_t s_cycle = next_issue_ + (cfg_.mode == PipelineMode::stagger ? 3 : 1);
  if (b.is_long) {
    exec_mask_move(b.mask_move);
  } else if (cfg_.mode == PipelineMode::stagger) {
    exec_load(b.load);  // visible order L -> A -> S, as the staggered pipeline gives
    execute_alu(b.alu, state_);
    exec_store(b.store, s_cycle);
  } else {
    if (is_dequeue(b) && queue_.empty()) exec_load(b.load);  // throws before any effect
    exec_store(b.store, s_cycle);  // every slot reads the state from before the triad
    execute_alu(b.alu, state_);
    exec_load(b.load);
  }
}

size_t VectorEngine::run(std::span<const DecodedBundle> program, size_t pc) {
  const bool stagger = cfg_.mode == PipelineMode::stagger;
  for (; pc < program.size(); ++pc) {
    const DecodedBundle& b = program[pc];
    int64_t issue = next_issue_;
    if (is_dequeue(b)) {
      if (queue_.empty()) return pc;  // blocked: dequeue-ready is low
      const int64_t ready = queue_.front().arrival + 1;
      if (issue < ready) {
        counters_.stall_dequeue += ready - issue;
        issue = ready;
      }
    }
    int64_t extra = 0;
    if (is_sram_load(b)) {
      if (stagger) {
        while (std::find(store_cycles_.begin(), store_cycles_.end(), issue + 1) !=
               store_cycles_.end()) {
          ++counters_.stall_sram_port;
          ++issue;
        }
      } else if (is_sram_store(b)) {
        extra = 1;  // load and store of one triad in one cycle share the port
        ++counters_.stall_sram_port;
      }
    }
    const int64_t l_cycle = issue + 1;
    const int64_t s_cycle = stagger ? issue + 3 : issue + 1;
    next_issue_ = issue;  // execute() stamps outputs with this issue slot
    const bool deq = is_dequeue(b);
    execute(b);
    if (deq) dequeue_cycles_.push_back(l_cycle);
    if (is_sram_store(b)) {
      store_cycles_.push_back(s_cycle + extra);
      if (store_cycles_.size() > 4) store_cycles_.erase(store_cycles_.begin());
    }
    ++counters_.bundles;
    counters_.last_retire = std::max(counters_.last_retire, s_cycle + extra);
    next_issue_ = issue + 1 + extra;
  }
  return pc;
}

void VectorEngine::load_program(std::span<const Bundle> bundles) {
  std::vector<DecodedBundle> prog;
  prog.reserve(bundles.size());
  for (size_t i = 0; i < bundles.size(); ++i) {
    prog.push_back(decode(bundles[i], "bundle " + std::to_string(i)));
  }
  program_ = std::move(prog);
  pc_ = 0;
}

void VectorEngine::reset_timing() {
  next_issue_ = 2;
  store_cycles_.clear();
  dequeue_cycles_.clear();
  counters_ = {};
  for (auto& row : queue_) row.arrival = 0;
}

void VectorEngine::reset() {
  state_ = VectorState(cfg_.lanes);
  queue_.clear();
  output_.clear();
  std::fill(sram_.begin(), sram_.end(), 0);
  read_ptr_ = write_ptr_ = 0;
  pc_ = 0;
  reset_timing();
}

}  // namespace wafersim::tensor
