#include "wafersim/tensor/vector_regfile.hpp"

#include <string>

#include "wafersim/errors.hpp"

namespace wafersim::tensor {

VectorRegFile::VectorRegFile(int lanes) : lanes_(lanes) {
  if (lanes < 1 || lanes > 4096) {
    throw ConfigError("vector engine lanes must be in 1..4096, got " + std::to_string(lanes));
  }
  rd_.assign(static_cast<size_t>(kRdCount) * lanes, 0u);
}

int VectorRegFile::count(isa::RegFile file) {
  for (const auto& rc : isa::kRegFileCounts) {
    if (rc.file == file) return rc.count;
  }
  internal_error("VectorRegFile::count of a file without registers");
}

int VectorRegFile::bits(isa::RegFile file) {
  switch (file) {
    case isa::RegFile::RB: return 8;
    case isa::RegFile::RW: return 16;
    case isa::RegFile::RD: return 32;
    default: internal_error("VectorRegFile::bits of a non-data register file");
  }
}

isa::RegFile VectorRegFile::file_for_size(int size_code) {
  switch (size_code) {
    case 0: return isa::RegFile::RB;
    case 1: return isa::RegFile::RW;
    default: return isa::RegFile::RD;
  }
}

void VectorRegFile::clear() { std::fill(rd_.begin(), rd_.end(), 0u); }

void VectorRegFile::check(isa::RegFile file, int index, const char* field) {
  const int n = count(file);
  if (index < 0 || index >= n) {
    throw MemoryAccessError(std::string(field) + ": register " + file_name(file) +
                            std::to_string(index) + " does not exist (" + file_name(file) + "0-" +
                            file_name(file) + std::to_string(n - 1) + ")");
  }
}

const char* file_name(isa::RegFile file) {
  switch (file) {
    case isa::RegFile::RB: return "RB";
    case isa::RegFile::RW: return "RW";
    case isa::RegFile::RD: return "RD";
    case isa::RegFile::M: return "M";
    default: return "-";
  }
}

}  // namespace wafersim::tensor
