// The links that cross a cut between two rows, for a wafer split into domains of rows
// (docs/scale.md, "One wafer over several processes"). A router reads another row's state
// at two points of a cycle: phase B takes what the neighbouring rows' phase A sent
// (arrival-board posts and output registers), and the next phase A reads the
// neighbouring rows' stall bits and, on switched colors, the holds of their switches
// (QueueSlot::hold), both from the end of phase B. So a domain hands its neighbour
// exactly these things per cycle, and a cut costs one exchange after each phase.
// A 2-cycle diagonal link's wavelet is posted for the cycle after it was sent: the
// receiver's phase B of cycle t reads the posts of cycle t (N/S links: sent in t,
// diagonals: sent in t - 1) and each link's output register of the cycle it was sent in.
// With loop links the last row and row 0 are neighbours too (the N/S wrap).
#include <cstring>

#include "wafersim/errors.hpp"
#include "wafersim/fabric/fabric.hpp"

namespace wafersim::fabric {

namespace {
constexpr Dir kCrossing[] = {kN, kS, kNE, kSW, kNW, kSE};  // links between rows
}

void Fabric::check_cut(int from_row, int to_row) const {
  const int last = rows() - 1;
  const bool wrap = topology().loop && rows() >= 3 &&
                    ((from_row == last && to_row == 0) || (from_row == 0 && to_row == last));
  if (from_row < 0 || from_row > last || to_row < 0 || to_row > last ||
      (to_row != from_row + 1 && to_row != from_row - 1 && !wrap)) {
    throw ConfigError("a cut joins two neighbouring rows of 0.." + std::to_string(last) +
                      (topology().loop && rows() >= 3 ? " (or the loop links' rows " +
                                                            std::to_string(last) + " and 0)"
                                                      : std::string()) +
                      ", got rows " + std::to_string(from_row) + " and " +
                      std::to_string(to_row));
  }
  if (topology().loop && rows() < 3) {
    // Both rows' N and S links join the same two rows, in two classes of arrival posts.
    throw ConfigError("a wafer with loop=True split into domains needs at least 3 rows, got " +
                      std::to_string(rows()));
  }
}

// The arrival-board class of what crosses from `from_row` to `to_row`: every link between
// two rows leads the same way (with loop links, the wrap is an N or S link).
int Fabric::cut_source(int from_row, int to_row) const {
  const DirMask links = directions_between_rows(from_row, to_row);
  for (Dir d : kCrossing) {
    if (links & bit(d)) return ArrivalBoard::source_of(d);
  }
  internal_error("no link between rows " + std::to_string(from_row) + " and " +
                 std::to_string(to_row));
}

size_t Fabric::cut_sends_bytes() const {
  const size_t c = static_cast<size_t>(cols());
  if (config_.packet_mode) {
    return link_sends_.block_words() * sizeof(uint64_t) + 3 * c * sizeof(Wavelet);
  }
  return row_words() * sizeof(uint64_t) + c * sizeof(DirMask) + 3 * c * sizeof(Wavelet);
}

// Packet mode (its general pass: a split wafer does not use the bit-plane pass, whose
// senders write into the receiving queues): the receiving row's phase B reads the
// sending row's LinkSends block of the cycle it sent in (a bit per wavelet per direction)
// and the output registers of that cycle. So a cut carries the sending row's block of
// this cycle as it is, and its registers of this cycle toward the receiving row; both
// are kept for two cycles (by parity) when 2-cycle diagonal links read last cycle's.
size_t Fabric::export_packet_cut(int from_row, int to_row, uint64_t cycle, uint8_t* out) {
  const size_t c = static_cast<size_t>(cols());
  const uint64_t* block = link_sends_.block(from_row, cycle);
  if (block[0] != cycle) return 0;  // the row did not run phase A: it sent nothing
  const DirMask links = directions_between_rows(from_row, to_row);
  const size_t words = link_sends_.words();
  uint64_t sent = 0;
  for (Dir d : kCrossing) {
    if (!(links & bit(d))) continue;
    for (size_t k = 0; k < words; ++k) sent |= block[1 + static_cast<size_t>(d) * words + k];
  }
  if (sent == 0) return 0;
  std::memcpy(out, block, link_sends_.block_words() * sizeof(uint64_t));
  out += link_sends_.block_words() * sizeof(uint64_t);
  const size_t base = static_cast<size_t>(from_row) * c;
  for (Dir d : kCrossing) {
    if (!(links & bit(d))) continue;
    std::memcpy(out, &out_[out_index(static_cast<uint32_t>(base), cycle, d)], c * sizeof(Wavelet));
    out += c * sizeof(Wavelet);
  }
  return cut_sends_bytes();
}

void Fabric::import_packet_cut(int from_row, int to_row, uint64_t cycle, const uint8_t* in,
                               size_t bytes) {
  const size_t c = static_cast<size_t>(cols());
  const DirMask links = directions_between_rows(from_row, to_row);
  uint64_t* block = link_sends_.block(from_row, cycle);
  if (bytes == 0) {
    // Nothing crossed here. A block stamped with an older cycle reads as "sent nothing";
    // one of this cycle came over the sending row's cut to its other neighbour (a row
    // between two rows of this domain): this cut's directions carried nothing.
    if (block[0] != cycle) return;
    const size_t words = link_sends_.words();
    for (Dir d : kCrossing) {
      if (links & bit(d)) std::memset(block + 1 + static_cast<size_t>(d) * words, 0, words * 8);
    }
    return;
  }
  std::memcpy(block, in, link_sends_.block_words() * sizeof(uint64_t));
  in += link_sends_.block_words() * sizeof(uint64_t);
  const size_t base = static_cast<size_t>(from_row) * c;
  for (Dir d : kCrossing) {
    if (!(links & bit(d))) continue;
    std::memcpy(&out_[out_index(static_cast<uint32_t>(base), cycle, d)], in, c * sizeof(Wavelet));
    in += c * sizeof(Wavelet);
  }
}

// Layout: the receiving row's arrival marks (row_words words), its routers' arrival
// directions (cols DirMasks), then the sending row's output registers toward the
// receiving row, per crossing direction in kCrossing order that leads there (3 of them,
// or 1 for a loop wrap; the bytes are the same), each of the cycle it was sent in.
size_t Fabric::export_cut_sends(int from_row, int to_row, uint64_t cycle, uint8_t* out) {
  check_cut(from_row, to_row);
  if (config_.packet_mode) return export_packet_cut(from_row, to_row, cycle, out);
  const size_t c = static_cast<size_t>(cols());
  const int source = cut_source(from_row, to_row);
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
    const uint64_t sent = cycle - static_cast<uint64_t>(arrival_offset_[d]);
    std::memcpy(out, &out_[out_index(static_cast<uint32_t>(base), sent, d)], c * sizeof(Wavelet));
    out += c * sizeof(Wavelet);
  }
  return cut_sends_bytes();
}

void Fabric::import_cut_sends(int from_row, int to_row, uint64_t cycle, const uint8_t* in,
                              size_t bytes) {
  check_cut(from_row, to_row);
  if (bytes != 0 && bytes != cut_sends_bytes()) {
    throw ConfigError("a cut's sends are 0 or " + std::to_string(cut_sends_bytes()) +
                      " bytes, got " + std::to_string(bytes));
  }
  if (config_.packet_mode) return import_packet_cut(from_row, to_row, cycle, in, bytes);
  const size_t c = static_cast<size_t>(cols());
  const int source = cut_source(from_row, to_row);
  if (bytes == 0) {  // nothing crossed: no posts (phase B then reads no output register)
    std::memset(arrivals_.marks(source, cycle, to_row), 0, row_words() * sizeof(uint64_t));
    std::memset(arrivals_.dirs(source, cycle) + static_cast<size_t>(to_row) * c, 0,
                c * sizeof(DirMask));
    return;
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
    const uint64_t sent = cycle - static_cast<uint64_t>(arrival_offset_[d]);
    std::memcpy(&out_[out_index(static_cast<uint32_t>(base), sent, d)], in, c * sizeof(Wavelet));
    in += c * sizeof(Wavelet);
  }
}

size_t Fabric::stall_row_at(int row) const {
  if (row < 0 || row >= rows()) {
    throw ConfigError("row must be in 0.." + std::to_string(rows() - 1) + ", got " +
                      std::to_string(row));
  }
  return static_cast<size_t>(row) * static_cast<size_t>(cols());
}

// The holds of a row's switched slots (QueueSlot::hold: directions whose senders wait),
// router by router in column order, each router's in slot order. Every domain configures
// the same switches, so both sides of a cut agree on the layout.
size_t Fabric::row_switch_slots(int row) const {
  if (row < 0 || row >= rows()) {
    throw ConfigError("row must be in 0.." + std::to_string(rows() - 1) + ", got " +
                      std::to_string(row));
  }
  size_t n = 0;
  const uint32_t base = static_cast<uint32_t>(row) * static_cast<uint32_t>(cols());
  for (uint32_t id = base; id < base + static_cast<uint32_t>(cols()); ++id) {
    for_each_slot(id, [&](const QueueSlot& s) { n += s.switch_id != kNoSwitch; });
  }
  return n;
}

void Fabric::export_row_holds(int row, uint64_t* out) const {
  check_cut(row, row + 1 < rows() ? row + 1 : row - 1);
  const uint32_t base = static_cast<uint32_t>(row) * static_cast<uint32_t>(cols());
  for (uint32_t id = base; id < base + static_cast<uint32_t>(cols()); ++id) {
    for_each_slot(id, [&](const QueueSlot& s) {
      if (s.switch_id != kNoSwitch) *out++ = s.hold;
    });
  }
}

void Fabric::import_row_holds(int row, const uint64_t* in) {
  check_cut(row, row + 1 < rows() ? row + 1 : row - 1);
  const uint32_t base = static_cast<uint32_t>(row) * static_cast<uint32_t>(cols());
  for (uint32_t id = base; id < base + static_cast<uint32_t>(cols()); ++id) {
    for_each_slot(id, [&](QueueSlot& s) {
      if (s.switch_id != kNoSwitch) s.hold = static_cast<DirMask>(*in++);
    });
  }
}

}  // namespace wafersim::fabric
