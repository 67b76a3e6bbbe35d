#include "wafersim/pe/ce_config.hpp"

#include "wafersim/errors.hpp"
#include "wafersim/fabric/wavelet.hpp"

namespace wafersim::pe {

namespace {
void require(bool ok, const std::string& what) {
  if (!ok) throw ConfigError("compute element: " + what);
}
}  // namespace

void validate(const CeConfig& c) {
  const auto n = [](auto v) { return std::to_string(v); };
  require(c.code_bytes >= 8 && c.code_bytes % 8 == 0,
          "code_bytes must be a positive multiple of 8, got " + n(c.code_bytes));
  require(c.memory_bytes > c.code_bytes,
          "memory_bytes (" + n(c.memory_bytes) + ") must exceed code_bytes (" +
              n(c.code_bytes) + ")");
  require(c.data_bytes() % 2 == 0 && c.data_bytes() <= 32768,
          "data memory (memory_bytes - code_bytes = " + n(c.data_bytes()) +
              ") must be even and at most 32768 bytes: descriptors hold 15-bit addresses "
              "[0522]");
  require(c.max_instructions() <= 16384,
          "code_bytes allows " + n(c.max_instructions()) +
              " instructions; jump targets have 14 bits [0603], so at most 16384");
  require(c.fabric_colors >= 1 && c.fabric_colors <= 32,
          "fabric_colors must be in 1..32 (5-bit fabric colors [0096]), got " +
              n(c.fabric_colors));
  require(c.input_queue_depth >= 2 && c.input_queue_depth <= 255,
          "input_queue_depth must be in 2..255, got " + n(c.input_queue_depth));
  require(c.output_queue_depth >= 1 && c.output_queue_depth <= 255,
          "output_queue_depth must be in 1..255, got " + n(c.output_queue_depth));
  require(c.microthreads >= 1 && c.microthreads <= 8,
          "microthreads must be in 1..8 (3-bit UTID [0501]), got " + n(c.microthreads));
  require(c.task_start_latency >= 1 && c.task_start_latency <= 64,
          "task_start_latency must be in 1..64 cycles, got " + n(c.task_start_latency));
  require(c.rng_resources == 1 || c.rng_resources == 2 || c.rng_resources == 4 ||
              c.rng_resources == 7,
          "rng_resources must be 1, 2, 4 or 7 [0682], got " + n(c.rng_resources));
  if (c.tensor_unit) {
    tensor::validate(c.tensor.array);  // ConfigError naming the field
    require(c.tensor.input_queue_rows >= 1 && c.tensor.input_queue_rows <= 4096,
            "tensor unit input_queue_rows must be in 1..4096, got " + n(c.tensor.input_queue_rows));
  }
}

std::string pe_name(const CeConfig& c) {
  return "PE(" + std::to_string(c.row) + "," + std::to_string(c.col) + ")";
}

}  // namespace wafersim::pe
