#include "wafersim/fabric/host_port.hpp"

#include "wafersim/fabric/router.hpp"

#include <algorithm>
#include <bit>

namespace wafersim::fabric {

HostPort::ColorFifo& HostPort::fifo_for(uint8_t color) {
  auto it = std::lower_bound(fifos_.begin(), fifos_.end(), color,
                             [](const ColorFifo& f, uint8_t c) { return f.color < c; });
  if (it == fifos_.end() || it->color != color) {
    ColorFifo f;
    f.color = color;
    it = fifos_.insert(it, std::move(f));
  }
  return *it;
}

void HostPort::push(Wavelet w, uint64_t release) {
  ColorFifo& f = fifo_for(w.color);
  // Keep release order; equal releases keep the order they were pushed in.
  auto first = f.items.begin() + static_cast<std::ptrdiff_t>(f.head);
  auto pos = f.items.end();
  while (pos != first && std::prev(pos)->release > release) --pos;
  f.items.insert(pos, Pending{release, w});
  ++pending_;
  // The head may have changed: look again when this wavelet's release comes.
  next_release_ = std::min(next_release_, release);
}

// Re-derives which colors have a released head, and when the next head is released.
void HostPort::rescan(uint64_t cycle) {
  ready_ = 0;
  next_release_ = kNoRelease;
  for (const ColorFifo& f : fifos_) {
    if (f.empty()) continue;
    const uint64_t r = f.front().release;
    if (r <= cycle) ready_ |= ColorMask{1} << f.color;
    else next_release_ = std::min(next_release_, r);
  }
}

ColorMask HostPort::pending_colors() const {
  ColorMask m = 0;
  for (const ColorFifo& f : fifos_) {
    if (!f.empty()) m |= ColorMask{1} << f.color;
  }
  return m;
}

void HostPort::set_sink(uint32_t capacity, uint32_t drain_period) {
  capacity_ = capacity;
  drain_period_ = drain_period;
  held_.resize(kMaxColorIds, 0);
  for (int c = 0; c < kMaxColorIds; ++c) update_full(static_cast<uint8_t>(c));
}

void HostPort::update_full(uint8_t color) {
  const ColorMask b = ColorMask{1} << color;
  // Like a router queue, stall above capacity-1 held wavelets [0333], [0330].
  const uint32_t held = held_.empty() ? 0 : held_[color];
  if (capacity_ > 0 && held >= capacity_) full_ |= b;
  else full_ &= ~b;
  if (held > 0) held_any_ |= b;
  else held_any_ &= ~b;
}

std::vector<Arrival> HostPort::take() {
  std::vector<Arrival> out;
  out.swap(arrived_);
  std::fill(held_.begin(), held_.end(), 0u);
  held_any_ = 0;
  full_ = 0;
  return out;
}

// One wavelet per sink color leaves every drain period.
void HostPort::drain() {
  for (ColorMask m = held_any_; m; m &= m - 1) {
    const auto color = static_cast<uint8_t>(std::countr_zero(m));
    --held_[color];
    update_full(color);
  }
}

void HostPort::offer_next(uint64_t cycle, ColorMask candidates, Wavelet& offer) {
  // Round-robin over the released colors the router does not stall.
  const auto color = static_cast<uint8_t>(pick_round_robin(candidates, last_color_));
  ColorFifo& fifo = fifo_for(color);
  const uint64_t release = fifo.front().release;
  offer = fifo.front().wavelet;
  offer.injected_cycle = entry_stamp(release, cycle);
  waits_.add(cycle - release);
  fifo.pop_front();
  --pending_;
  last_color_ = color;
  if (fifo.empty() || fifo.front().release > cycle) {
    ready_ &= ~(ColorMask{1} << color);
    if (!fifo.empty()) next_release_ = std::min(next_release_, fifo.front().release);
  }
}

void HostPort::accept(const Wavelet& w, uint64_t cycle) {
  arrived_.push_back(Arrival{w, cycle});
  if (capacity_ > 0) {
    ++held_[w.color];
    update_full(w.color);
  }
}

std::string HostPort::describe() const {
  std::string s = "host port: " + std::to_string(pending_) + " wavelet(s) waiting to enter";
  ColorMask waiting = pending_colors();
  if (waiting) {
    s += " (colors";
    for (ColorMask m = waiting; m; m &= m - 1) (s += ' ') += std::to_string(std::countr_zero(m));
    s += ")";
  }
  if (full_) {
    s += "; sink full (capacity " + std::to_string(capacity_) + ") on colors";
    for (ColorMask m = full_; m; m &= m - 1) (s += ' ') += std::to_string(std::countr_zero(m));
  }
  return s;
}

}  // namespace wafersim::fabric
