#include "wafersim/pe/decoded.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "wafersim/pe/operand.hpp"

namespace wafersim::pe {

using isa::Kind;

namespace {

// A vector-kind instruction that is an operation on one 16-bit register: its destination
// a register (in place of source 0 in the two-source form), source 1 a register or an
// immediate other than the LFSR draw, and no multiply-accumulate (which also reads the
// scalar in GPR2/3).
bool alu_on_registers(const Instruction& in) {
  const isa::OpInfo& info = in.info();
  const auto narrow = [](isa::Elem e) { return e != isa::Elem::fp32 && e != isa::Elem::i32; };
  if (info.vop == isa::VecOp::fmac || info.vop == isa::VecOp::fmac_mixed ||
      !narrow(info.src0) || !narrow(info.src1) || !narrow(info.dst)) {
    return false;
  }
  const bool src1_ok = in.op1_type == 2 || (in.op1_type == 3 && in.op1 != isa::kImmPrn);
  if (info.family == isa::Family::dst2src) return in.op0_type == 2 && src1_ok;
  if (info.family == isa::Family::dst1src) return in.op0_type != 0 && src1_ok;
  return false;
}

}  // namespace

Decoded classify(const Instruction& in) {
  Decoded d;
  d.in = in;
  if (in.word == 0 || in.op == isa::Op::illegal) return d;  // checked: errors name the cause
  const isa::OpInfo& info = in.info();
  const Kind kind = info.kind;
  if (kind == Kind::tensor) return d;  // checked: it may wait for the unit
  const bool vector_source = in.family == isa::Family::nodst1src && in.op1_type == 0;
  if (kind == Kind::compare) {
    // A register (operand 0 type != 0) against a register (type 2) or an immediate (type
    // 3, not the LFSR draw), 16-bit elements: issue_vector_op would resolve two register
    // or immediate operands of one element, without error.
    const auto narrow = [](isa::Elem e) { return e != isa::Elem::fp32 && e != isa::Elem::i32; };
    const bool imm = in.op1_type == 3 && in.op1 != isa::kImmPrn;
    if (in.family == isa::Family::nodst2src && in.op0_type != 0 && narrow(info.src0) &&
        narrow(info.src1) && (in.op1_type == 2 || imm)) {
      d.route = Route::compare;
      d.reg0 = in.op0;
      d.reg1 = in.op1;
      d.src1_imm = imm;
      if (imm) {
        d.value = static_cast<int32_t>(
            imm_value(in.op1, info.src1));
      }
      return d;
    }
    d.route = Route::vector;
  } else if (kind == Kind::vector && alu_on_registers(in)) {
    // A one-element operation on registers: issue_vector_op would resolve register and
    // immediate operands of one element, without error, and run one iteration.
    d.route = Route::alu;
    d.reg0 = in.op0;
    d.reg1 = in.op1;
    d.src0 = info.family == isa::Family::dst2src;
    d.src1_imm = in.op1_type == 3;
    if (d.src1_imm) {
      d.value = static_cast<int32_t>(
          imm_value(in.op1, info.src1));
    }
  } else if (kind == Kind::vector ||
             ((kind == Kind::block || kind == Kind::unblock || kind == Kind::activate) &&
              vector_source)) {
    d.route = Route::vector;
  } else if (kind == Kind::addi) {
    d.route = Route::add_imm;
    d.reg0 = in.op0;
    d.value = static_cast<int32_t>(sign_extend(in.imm10(), 10));
  } else if (kind == Kind::jump) {
    d.route = Route::jump;
    d.value = in.imm14();
  } else if (kind == Kind::branch && in.op1_type == 3) {
    // An immediate is a signed offset from the branch (a register or memory value, an
    // absolute target: execute_scalar).
    d.route = Route::branch_rel;
    d.value = static_cast<int32_t>(sign_extend(in.imm8(), 8));
    d.cond = info.cond;
  } else {
    d.route = Route::scalar;
  }
  return d;
}

// ---- shared programs ----------------------------------------------------------------------

SharedProgram::SharedProgram(uint32_t first, std::span<const uint32_t> words)
    : first_(first), words_(words.begin(), words.end()), empty_(classify(decode(0))) {
  entries_.reserve(words.size());
  for (const uint32_t w : words) entries_.push_back(classify(decode(w)));
}

bool SharedProgram::holds(uint32_t first, std::span<const uint32_t> words) const {
  return first == first_ && std::equal(words.begin(), words.end(), words_.begin(), words_.end());
}

namespace {

uint64_t program_key(uint32_t first, std::span<const uint32_t> words) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ first ^ (uint64_t{words.size()} << 32);
  for (const uint32_t w : words) {
    h ^= w;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  return h;
}

// The programs shared now (weak: a program lives as long as a compute element uses it),
// and the few seen once, not shared yet: a rectangle's loads come one after another, so
// its second PE finds what its first one left here. The registry holds only code images;
// which CE gets which program never changes a result.
struct Registry {
  std::mutex mutex;
  std::unordered_multimap<uint64_t, std::weak_ptr<const SharedProgram>> shared;
  size_t purge_at = 64;
  struct Seen {
    uint64_t key = 0;
    uint32_t first = 0;
    std::vector<uint32_t> words;
  };
  static constexpr size_t kSeen = 8;
  Seen seen[kSeen];
  size_t next_seen = 0;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: CEs may outlive static destructors
  return *r;
}

}  // namespace

std::shared_ptr<const SharedProgram> SharedProgram::find(uint32_t first,
                                                         std::span<const uint32_t> words) {
  const uint64_t key = program_key(first, words);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto [lo, hi] = r.shared.equal_range(key);
  for (auto it = lo; it != hi; ++it) {
    if (auto p = it->second.lock(); p && p->holds(first, words)) return p;
  }
  for (Registry::Seen& s : r.seen) {
    if (s.key != key || s.first != first || !std::equal(words.begin(), words.end(),
                                                        s.words.begin(), s.words.end())) {
      continue;
    }
    s = Registry::Seen{};
    auto p = std::make_shared<const SharedProgram>(first, words);
    if (r.shared.size() >= r.purge_at) {
      std::erase_if(r.shared, [](const auto& e) { return e.second.expired(); });
      r.purge_at = std::max<size_t>(64, 2 * r.shared.size());
    }
    r.shared.emplace(key, p);
    return p;
  }
  Registry::Seen& s = r.seen[r.next_seen++ % Registry::kSeen];
  s.key = key;
  s.first = first;
  s.words.assign(words.begin(), words.end());
  return nullptr;
}

}  // namespace wafersim::pe
