// Instructions decoded once (docs/compute_element.md, "Decoded once"): how each one issues,
// judged from its word alone, and the decoded programs that compute elements loaded with
// the same code share, so that a wafer of thousands of PEs running one program reads one
// small table instead of a table per PE.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "wafersim/pe/isa.hpp"

namespace wafersim::pe {

// `checked` goes through the checks of ComputeElement::issue_checked (illegal words, empty
// entries, tensor instructions that wait for the unit); the others go straight to their
// execution, the loop-control instructions of a scalar loop without even execute_scalar's
// dispatch.
enum class Route : uint8_t { checked, scalar, vector, compare, alu, add_imm, jump, branch_rel };

struct Decoded {
  Instruction in;
  Route route = Route::checked;
  uint8_t reg0 = 0, reg1 = 0;
  bool src1_imm = false;
  // add_imm: the sign-extended immediate; jump: the target; branch_rel: the signed
  // offset, taken when the flag equals `cond`; compare (a 16-bit comparison of a
  // register with a register or an immediate, a one-element vector operation) and alu
  // (a 16-bit operation whose destination is register reg0, its source 0 the same
  // register when `src0`, its source 1 a register or an immediate): the immediate's
  // value when src1_imm, else src1 is register reg1.
  int32_t value = 0;
  bool cond = false;
  bool src0 = false;
};

// How `in` issues; it depends on the instruction word alone.
Decoded classify(const Instruction& in);

// The decoded instructions of code memory that holds `words` at instruction indices
// first, first + 1, ... and zeros everywhere else: what a compute element's code memory
// holds after one load into fresh memory. Immutable, so compute elements in any thread
// read it at once; a compute element whose code memory is written afterwards stops using
// it and decodes its own instructions again (copy on write: no write of one PE ever
// reaches another's code).
class SharedProgram {
 public:
  SharedProgram(uint32_t first, std::span<const uint32_t> words);

  // The program decoded for those words, shared with every compute element that found
  // the same words before; nullptr the first time they are seen (a program loaded on one
  // PE only keeps decoding lazily, just the instructions it issues). Thread-safe.
  static std::shared_ptr<const SharedProgram> find(uint32_t first, std::span<const uint32_t> words);

  // Instruction `index`, decoded (a zero word outside the loaded words).
  const Decoded& at(uint32_t index) const {
    const uint32_t k = index - first_;  // wraps for an index below first_
    return k < entries_.size() ? entries_[k] : empty_;
  }
  bool holds(uint32_t first, std::span<const uint32_t> words) const;

 private:
  uint32_t first_;
  std::vector<uint32_t> words_;
  std::vector<Decoded> entries_;
  Decoded empty_;
};

}  // namespace wafersim::pe
