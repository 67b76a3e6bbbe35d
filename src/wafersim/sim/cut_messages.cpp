// Packing the per-cycle messages between neighbouring domains (cut_messages.hpp).
#include "wafersim/sim/cut_messages.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "wafersim/errors.hpp"

namespace wafersim::sim {

namespace {

std::vector<int> distinct(const std::vector<std::pair<int, int>>& cuts, bool mine) {
  std::vector<int> out;
  for (auto [a, b] : cuts) {
    const int r = mine ? a : b;
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

[[noreturn]] void short_message(const char* what, size_t need, size_t have) {
  throw WaferError(std::string("a neighbour's ") + what + " message is cut short: " +
                   std::to_string(need) + " units needed, " + std::to_string(have) + " given");
}

}  // namespace

CutMessages::CutMessages(fabric::Fabric& fabric,
                         std::vector<std::vector<std::pair<int, int>>> neighbours)
    : fabric_(fabric) {
  for (auto& cuts : neighbours) {
    for (auto [mine, theirs] : cuts) fabric_.check_cut(mine, theirs);
    Neighbour n;
    n.mine = distinct(cuts, true);
    n.theirs = distinct(cuts, false);
    n.cuts = std::move(cuts);
    nb_.push_back(std::move(n));
  }
}

const CutMessages::Neighbour& CutMessages::at(size_t k) const {
  if (k >= nb_.size()) {
    throw ConfigError("neighbour " + std::to_string(k) + " of " + std::to_string(nb_.size()));
  }
  return nb_[k];
}

size_t CutMessages::sends_capacity(size_t k) const {
  return at(k).cuts.size() * (1 + fabric_.cut_sends_bytes());
}

size_t CutMessages::write_sends(size_t k, uint64_t cycle, uint8_t* out, size_t capacity) {
  const Neighbour& n = at(k);
  if (capacity < sends_capacity(k)) short_message("sends", sends_capacity(k), capacity);
  size_t used = n.cuts.size();
  for (size_t i = 0; i < n.cuts.size(); ++i) {
    const size_t bytes = fabric_.export_cut_sends(n.cuts[i].first, n.cuts[i].second, cycle,
                                                  out + used);
    out[i] = bytes != 0;
    used += bytes;
  }
  return used;
}

void CutMessages::read_sends(size_t k, uint64_t cycle, const uint8_t* in, size_t bytes) {
  const Neighbour& n = at(k);
  const size_t each = fabric_.cut_sends_bytes();
  size_t used = n.cuts.size();
  if (bytes < used) short_message("sends", used, bytes);
  for (size_t i = 0; i < n.cuts.size(); ++i) {
    const auto [mine, theirs] = n.cuts[i];
    if (in[i] == 0) {
      fabric_.import_cut_sends(theirs, mine, cycle, nullptr, 0);
      continue;
    }
    if (bytes < used + each) short_message("sends", used + each, bytes);
    fabric_.import_cut_sends(theirs, mine, cycle, in + used, each);
    used += each;
  }
}

void CutMessages::count_holds() {
  if (holds_version_ == fabric_.routes_version()) return;
  holds_version_ = fabric_.routes_version();
  for (Neighbour& n : nb_) {
    n.mine_holds.clear();
    n.theirs_holds.clear();
    for (int r : n.mine) n.mine_holds.push_back(fabric_.row_switch_slots(r));
    for (int r : n.theirs) n.theirs_holds.push_back(fabric_.row_switch_slots(r));
  }
}

size_t CutMessages::border_capacity(size_t k) {
  at(k);
  count_holds();
  const Neighbour& n = nb_[k];
  const size_t row = fabric_.stall_row_words() + static_cast<size_t>(fabric_.cols());
  size_t mine = n.mine.size() * row, theirs = n.theirs.size() * row;
  for (size_t h : n.mine_holds) mine += h;
  for (size_t h : n.theirs_holds) theirs += h;
  return std::max(mine, theirs);
}

size_t CutMessages::write_borders(size_t k, uint64_t* out, size_t capacity) {
  const size_t need = border_capacity(k);
  if (capacity < need) short_message("border", need, capacity);
  const Neighbour& n = nb_[k];
  const size_t cols = static_cast<size_t>(fabric_.cols());
  const size_t words = fabric_.stall_row_words();
  uint64_t* o = out;
  for (size_t i = 0; i < n.mine.size(); ++i) {
    const uint64_t* stalls = fabric_.stall_row(n.mine[i]);
    uint64_t* bitmap = o;
    std::fill(bitmap, bitmap + words, uint64_t{0});
    o += words;
    for (size_t w = 0; w < words; ++w) {  // (most rows stall nowhere: 64 words at a time)
      const size_t lo = w * 64, hi = std::min(cols, lo + 64);
      uint64_t any = 0;
      for (size_t c = lo; c < hi; ++c) any |= stalls[c];
      if (any == 0) continue;
      for (size_t c = lo; c < hi; ++c) {
        if (stalls[c] == 0) continue;
        bitmap[w] |= uint64_t{1} << (c - lo);
        *o++ = stalls[c];
      }
    }
    if (n.mine_holds[i] != 0) {
      fabric_.export_row_holds(n.mine[i], o);
      o += n.mine_holds[i];
    }
  }
  return static_cast<size_t>(o - out);
}

void CutMessages::read_borders(size_t k, const uint64_t* in, size_t words_given) {
  at(k);
  count_holds();
  const Neighbour& n = nb_[k];
  const size_t cols = static_cast<size_t>(fabric_.cols());
  const size_t words = fabric_.stall_row_words();
  size_t used = 0;
  for (size_t i = 0; i < n.theirs.size(); ++i) {
    if (words_given < used + words) short_message("border", used + words, words_given);
    const uint64_t* bitmap = in + used;
    size_t set = 0;
    for (size_t w = 0; w < words; ++w) set += static_cast<size_t>(std::popcount(bitmap[w]));
    const size_t end = used + words + set + n.theirs_holds[i];
    if (words_given < end) short_message("border", end, words_given);
    const uint64_t* value = bitmap + words;
    uint64_t* stalls = fabric_.stall_row(n.theirs[i]);
    for (size_t w = 0; w < words; ++w) {
      const size_t lo = w * 64, hi = std::min(cols, lo + 64);
      if (bitmap[w] == 0) {
        std::fill(stalls + lo, stalls + hi, uint64_t{0});
        continue;
      }
      for (size_t c = lo; c < hi; ++c) stalls[c] = (bitmap[w] >> (c - lo)) & 1 ? *value++ : 0;
    }
    if (n.theirs_holds[i] != 0) fabric_.import_row_holds(n.theirs[i], value);
    used = end;
  }
}

}  // namespace wafersim::sim
