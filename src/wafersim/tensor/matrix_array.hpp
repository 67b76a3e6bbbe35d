// The computational (matrix) array of seed 002 (Figs. 1, 2, 10): `rows` x `cols` computation
// units. Each cycle one data vector is broadcast down the columns and one weight vector along
// the rows [0118]; unit (row j, column i) multiplies weight j by data i and accumulates in a
// 32-bit accumulator [0120], [0127]. A shadow register per unit double-buffers the result:
// `capture` copies every accumulator (its value before this cycle's MAC) into its shadow,
// `shift` moves the shadows one row towards the vector engine, which receives row 0 first
// [0123], [0129]. All units share one set of control signals [0018].
//
// Operands are element bit patterns: int8 (weights signed, data unsigned by default [0127];
// 32-bit wrapping accumulation) or, as wafersim's extension, fp16 / bf16 with an fp32
// accumulator (acc = fp32(acc + fp32(w * d))).
//
// In FIFO mode [0036]-[0038] the array is `rows` stages of `cols` lanes that all shift each
// cycle: a row pushed in cycle t leaves the last stage in cycle t + rows.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace wafersim::tensor {

enum class MatrixDtype : uint8_t { int8, fp16, bf16 };

struct MatrixArrayConfig {
  int rows = 96;   // M: weight operands per cycle; one output channel per row
  int cols = 96;   // N: data operands per cycle; one position per column
  int lanes = 96;  // width of the array -> vector-engine channel, in 32-bit elements [0030]
  MatrixDtype dtype = MatrixDtype::int8;
  bool weight_signed = true;  // [0127]
  bool data_signed = false;   // [0127]
};

// Control signals of one cycle, common to every unit (Fig. 10): ResultEnable 1012,
// ClearAcc 1008 (here: true = start from zero), ResultCapture 1014, ShiftEn 1016.
struct ArraySignals {
  bool enable = false;
  bool clear = false;
  bool capture = false;
  bool shift = false;
};

class MatrixArray {
 public:
  explicit MatrixArray(const MatrixArrayConfig& cfg);

  const MatrixArrayConfig& config() const { return cfg_; }
  int rows() const { return cfg_.rows; }
  int cols() const { return cfg_.cols; }
  // Channel transfers needed for one row of `valid_cols` results (ceil(valid/lanes)).
  int chunks(int valid_cols) const { return (valid_cols + cfg_.lanes - 1) / cfg_.lanes; }

  // --- cycle-by-cycle unit model ----------------------------------------------------------
  // One clock of every unit. `data` has cols element patterns, `weights` rows (read only
  // when enable). Returns the row leaving the array (the shadows of row 0, cols values)
  // when shift is set.
  std::optional<std::vector<uint32_t>> step(std::span<const uint32_t> data,
                                            std::span<const uint32_t> weights, ArraySignals s);
  uint32_t accumulator(int row, int col) const { return acc_[idx(row, col)]; }
  uint32_t shadow(int row, int col) const { return shadow_[idx(row, col)]; }
  std::span<const uint32_t> shadow_row(int row) const {
    return {shadow_.data() + idx(row, 0), static_cast<size_t>(cfg_.cols)};
  }
  int64_t cycle() const { return cycle_; }
  // Zeroes accumulators, shadows, FIFO stages and the cycle counter.
  void reset();

  // Element pattern -> value, by dtype and signedness.
  int32_t int_operand(uint32_t bits, bool is_signed) const;
  float float_operand(uint32_t bits) const;
  // Validates an operand pattern for the dtype; `what` names it in the error.
  void check_operand(uint32_t bits, const std::string& what) const;

  // --- FIFO mode [0036]-[0038] --------------------------------------------------------------
  // One shift of every stage; `input` (cols values) enters the first stage when given. Returns
  // the row leaving the last stage, if that stage held one.
  std::optional<std::vector<uint32_t>> fifo_step(const std::vector<uint32_t>* input);
  int fifo_depth() const { return cfg_.rows; }

 private:
  size_t idx(int row, int col) const { return static_cast<size_t>(row) * cfg_.cols + col; }

  MatrixArrayConfig cfg_;
  std::vector<uint32_t> acc_;
  std::vector<uint32_t> shadow_;
  std::vector<uint32_t> fifo_;         // rows x cols stage values; stage rows-1 is the head
  std::vector<uint8_t> fifo_valid_;    // per stage
  int64_t cycle_ = 0;
};

void validate(const MatrixArrayConfig& cfg);
const char* dtype_name(MatrixDtype d);

}  // namespace wafersim::tensor
