#include "wafersim/tensor/matrix_array.hpp"

#include <bit>

#include "wafersim/errors.hpp"
#include "wafersim/numerics/convert.hpp"

namespace wafersim::tensor {

void validate(const MatrixArrayConfig& cfg) {
  auto range = [](int v, const char* name) {
    if (v < 1 || v > 1024) {
      throw ConfigError(std::string("matrix array ") + name + " must be in 1..1024, got " +
                        std::to_string(v));
    }
  };
  range(cfg.rows, "rows");
  range(cfg.cols, "cols");
  range(cfg.lanes, "lanes");
}

const char* dtype_name(MatrixDtype d) {
  switch (d) {
    case MatrixDtype::int8: return "int8";
    case MatrixDtype::fp16: return "fp16";
    case MatrixDtype::bf16: return "bf16";
  }
  return "?";
}

MatrixArray::MatrixArray(const MatrixArrayConfig& cfg) : cfg_(cfg) {
  validate(cfg);
  const size_t n = static_cast<size_t>(cfg.rows) * cfg.cols;
  acc_.assign(n, 0);
  shadow_.assign(n, 0);
  fifo_.assign(n, 0);
  fifo_valid_.assign(static_cast<size_t>(cfg.rows), 0);
}

void MatrixArray::reset() {
  std::fill(acc_.begin(), acc_.end(), 0u);
  std::fill(shadow_.begin(), shadow_.end(), 0u);
  std::fill(fifo_.begin(), fifo_.end(), 0u);
  std::fill(fifo_valid_.begin(), fifo_valid_.end(), 0);
  cycle_ = 0;
}

int32_t MatrixArray::int_operand(uint32_t bits, bool is_signed) const {
  return is_signed ? static_cast<int8_t>(bits & 0xFFu) : static_cast<int32_t>(bits & 0xFFu);
}

float MatrixArray::float_operand(uint32_t bits) const {
  if (cfg_.dtype == MatrixDtype::bf16) return std::bit_cast<float>(bits << 16);
  return numerics::fp16_to_fp32(static_cast<uint16_t>(bits));
}

void MatrixArray::check_operand(uint32_t bits, const std::string& what) const {
  const uint32_t limit = cfg_.dtype == MatrixDtype::int8 ? 0xFFu : 0xFFFFu;
  if (bits > limit) {
    throw ConfigError(what + " value " + std::to_string(bits) + " does not fit a " +
                      dtype_name(cfg_.dtype) + " operand");
  }
}

std::optional<std::vector<uint32_t>> MatrixArray::step(std::span<const uint32_t> data,
                                                       std::span<const uint32_t> weights,
                                                       ArraySignals s) {
  const int rows = cfg_.rows, cols = cfg_.cols;
  if (s.enable && (static_cast<int>(data.size()) != cols || static_cast<int>(weights.size()) != rows)) {
    throw ConfigError("matrix array step needs " + std::to_string(cols) + " data and " +
                      std::to_string(rows) + " weight operands, got " +
                      std::to_string(data.size()) + " and " + std::to_string(weights.size()));
  }
  std::optional<std::vector<uint32_t>> out;
  if (s.shift) out.emplace(shadow_.begin(), shadow_.begin() + cols);  // ResultOut of row 0
  // Shadows: capture takes the accumulator before this cycle's MAC (mux 1026 on
  // ResultCapture); shift takes ResultIn, the neighbour one row further from the engine.
  if (s.capture) {
    shadow_ = acc_;
  } else if (s.shift) {
    std::copy(shadow_.begin() + cols, shadow_.end(), shadow_.begin());
    std::fill(shadow_.end() - cols, shadow_.end(), 0u);
  }
  if (s.enable) {
    const bool is_int = cfg_.dtype == MatrixDtype::int8;
    for (int j = 0; j < rows; ++j) {
      uint32_t* acc = acc_.data() + idx(j, 0);
      if (is_int) {
        const int32_t w = int_operand(weights[j], cfg_.weight_signed);
        for (int i = 0; i < cols; ++i) {
          const uint32_t p = static_cast<uint32_t>(w * int_operand(data[i], cfg_.data_signed));
          acc[i] = (s.clear ? 0u : acc[i]) + p;  // 32-bit wrap
        }
      } else {
        const float w = float_operand(weights[j]);
        for (int i = 0; i < cols; ++i) {
          const float p = w * float_operand(data[i]);
          const float a = s.clear ? 0.0f : std::bit_cast<float>(acc[i]);
          acc[i] = std::bit_cast<uint32_t>(a + p);
        }
      }
    }
  }
  ++cycle_;
  return out;
}

std::optional<std::vector<uint32_t>> MatrixArray::fifo_step(const std::vector<uint32_t>* input) {
  const int rows = cfg_.rows, cols = cfg_.cols;
  if (input != nullptr && static_cast<int>(input->size()) != cols) {
    throw ConfigError("FIFO row needs " + std::to_string(cols) + " values, got " +
                      std::to_string(input->size()));
  }
  std::optional<std::vector<uint32_t>> out;
  if (fifo_valid_[0]) out.emplace(fifo_.begin(), fifo_.begin() + cols);
  // Every stage shifts in parallel one step towards the engine [0038].
  std::copy(fifo_.begin() + cols, fifo_.end(), fifo_.begin());
  std::copy(fifo_valid_.begin() + 1, fifo_valid_.end(), fifo_valid_.begin());
  if (input != nullptr) {
    std::copy(input->begin(), input->end(), fifo_.end() - cols);
  } else {
    std::fill(fifo_.end() - cols, fifo_.end(), 0u);
  }
  fifo_valid_[rows - 1] = input != nullptr;
  ++cycle_;
  return out;
}

}  // namespace wafersim::tensor
