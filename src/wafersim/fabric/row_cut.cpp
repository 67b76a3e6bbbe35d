// The links that cross a cut between two rows, for a wafer split into domains of rows
// (docs/scale.md, "One wafer over several processes"). A router reads another row's state
// at two points of a cycle: phase B takes what the neighbouring rows' phase A sent
// (arrival-board posts and output registers), and the next phase A reads the
// neighbouring rows' stall bits from the end of phase B. So a domain hands its neighbour
// exactly these two things per cycle, and a cut costs one exchange after each phase.
#include <cstring>

#include "wafersim/errors.hpp"
#include "wafersim/fabric/fabric.hpp"

namespace wafersim::fabric {

namespace {
constexpr Dir kCrossing[] = {kN, kS, kNE, kSW, kNW, kSE};  // links between rows
}

void Fabric::check_cut(int from_row, int to_row) const {
  if (from_row < 0 || from_row >= rows() || to_row < 0 || to_row >= rows() ||
      (to_row != from_row + 1 && to_row != from_row - 1)) {
    throw ConfigError("a cut joins two neighbouring rows of 0.." + std::to_string(rows() - 1) +
                      ", got rows " + std::to_string(from_row) + " and " +
                      std::to_string(to_row));
  }
  if (config_.packet_mode || topology().loop ||
      (topology().has_diagonals() && topology().diag_hop_cycles == 2)) {
    throw ConfigError("a wafer split into domains needs color mode without loop links and "
                      "with 1-cycle diagonal links (packet mode, loop=True and "
                      "diag_hop_cycles=2 are not supported over several processes)");
  }
}

size_t Fabric::cut_sends_bytes() const {
  const size_t c = static_cast<size_t>(cols());
  return row_words() * sizeof(uint64_t) + c * sizeof(DirMask) + 3 * c * sizeof(Wavelet);
}

// Layout: the receiving row's arrival marks (row_words words), its routers' arrival
// directions (cols DirMasks), then the sending row's output registers toward the
// receiving row, per crossing direction in kCrossing order that leads there (3 of them).
size_t Fabric::export_cut_sends(int from_row, int to_row, uint64_t cycle, uint8_t* out) {
  check_cut(from_row, to_row);
  const size_t c = static_cast<size_t>(cols());
  const Dir toward = to_row > from_row ? kN : kS;
  const int source = ArrivalBoard::source_of(toward);
  uint64_t* marks = arrivals_.marks(source, cycle, to_row);
  DirMask* dirs = arrivals_.dirs(source, cycle) + static_cast<size_t>(to_row) * c;
  uint64_t posted = 0;
  for (size_t k = 0; k < row_words(); ++k) posted |= marks[k];
  if (posted == 0) return 0;  // nothing crossed (the receiving row's posts stay clear)
  // Read and cleared: this domain does not run the receiving row's phase B, which would.
  std::memcpy(out, marks, row_words() * sizeof(uint64_t));
  std::memset(marks, 0, row_words() * sizeof(uint64_t));
  out += row_words() * sizeof(uint64_t);
  std::memcpy(out, dirs, c * sizeof(DirMask));
  std::memset(dirs, 0, c * sizeof(DirMask));
  out += c * sizeof(DirMask);
  const DirMask links = directions_between_rows(from_row, to_row);
  const size_t base = static_cast<size_t>(from_row) * c;
  for (Dir d : kCrossing) {
    if (!(links & bit(d))) continue;
    std::memcpy(out, &out_[out_index(static_cast<uint32_t>(base), cycle, d)], c * sizeof(Wavelet));
    out += c * sizeof(Wavelet);
  }
  return cut_sends_bytes();
}

void Fabric::import_cut_sends(int from_row, int to_row, uint64_t cycle, const uint8_t* in,
                              size_t bytes) {
  check_cut(from_row, to_row);
  const size_t c = static_cast<size_t>(cols());
  const Dir toward = to_row > from_row ? kN : kS;
  const int source = ArrivalBoard::source_of(toward);
  if (bytes == 0) {  // nothing crossed: no posts (phase B then reads no output register)
    std::memset(arrivals_.marks(source, cycle, to_row), 0, row_words() * sizeof(uint64_t));
    std::memset(arrivals_.dirs(source, cycle) + static_cast<size_t>(to_row) * c, 0,
                c * sizeof(DirMask));
    return;
  }
  if (bytes != cut_sends_bytes()) {
    throw ConfigError("a cut's sends are 0 or " + std::to_string(cut_sends_bytes()) +
                      " bytes, got " + std::to_string(bytes));
  }
  // Only the sending row posts this class of entries for the receiving row: a copy.
  std::memcpy(arrivals_.marks(source, cycle, to_row), in, row_words() * sizeof(uint64_t));
  in += row_words() * sizeof(uint64_t);
  std::memcpy(arrivals_.dirs(source, cycle) + static_cast<size_t>(to_row) * c, in,
              c * sizeof(DirMask));
  in += c * sizeof(DirMask);
  const DirMask links = directions_between_rows(from_row, to_row);
  const size_t base = static_cast<size_t>(from_row) * c;
  for (Dir d : kCrossing) {
    if (!(links & bit(d))) continue;
    std::memcpy(&out_[out_index(static_cast<uint32_t>(base), cycle, d)], in, c * sizeof(Wavelet));
    in += c * sizeof(Wavelet);
  }
}

void Fabric::export_row_stalls(int row, uint64_t* out) const {
  check_cut(row, row + 1 < rows() ? row + 1 : row - 1);
  const size_t c = static_cast<size_t>(cols());
  std::memcpy(out, &stall_out_[static_cast<size_t>(row) * c], c * sizeof(uint64_t));
}

void Fabric::import_row_stalls(int row, const uint64_t* in) {
  check_cut(row, row + 1 < rows() ? row + 1 : row - 1);
  const size_t c = static_cast<size_t>(cols());
  std::memcpy(&stall_out_[static_cast<size_t>(row) * c], in, c * sizeof(uint64_t));
}

}  // namespace wafersim::fabric
