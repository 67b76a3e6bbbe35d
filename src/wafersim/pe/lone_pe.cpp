#include "wafersim/pe/lone_pe.hpp"

#include <algorithm>

#include "wafersim/errors.hpp"

namespace wafersim::pe {

using fabric::ColorMask;
using fabric::Wavelet;

LonePe::LonePe(const CeConfig& cfg, ColorMask loopback, int router_queue_depth)
    : ce_(cfg), loopback_(loopback), depth_(router_queue_depth) {
  if (router_queue_depth < 1 || router_queue_depth > 64) {
    throw ConfigError("router_queue_depth must be in 1..64, got " +
                      std::to_string(router_queue_depth));
  }
  const ColorMask fabric = cfg.fabric_colors >= 64 ? ~ColorMask{0}
                                                   : (ColorMask{1} << cfg.fabric_colors) - 1;
  if (loopback & ~fabric) {
    throw ConfigError("loopback colors must be fabric colors (0.." +
                      std::to_string(cfg.fabric_colors - 1) +
                      "): local colors never leave the CE");
  }
}

void LonePe::check_color(int color, const char* what) const {
  if (color < 0 || color >= ce_.config().fabric_colors) {
    throw ConfigError(std::string(what) + ": color " + std::to_string(color) +
                      " is not a fabric color (0.." +
                      std::to_string(ce_.config().fabric_colors - 1) +
                      "); local colors come only from the CE itself");
  }
}

void LonePe::inject(int color, std::span<const uint32_t> data, std::span<const uint16_t> index,
                    std::span<const uint8_t> ctrl, uint64_t start, uint32_t interval) {
  check_color(color, "inject");
  if ((!index.empty() && index.size() != data.size()) ||
      (!ctrl.empty() && ctrl.size() != data.size())) {
    throw ConfigError("inject: index and ctrl must be empty or as long as data (" +
                      std::to_string(data.size()) + ")");
  }
  if (interval < 1) throw ConfigError("inject: interval must be >= 1 cycle");
  auto& q = inject_q_[static_cast<size_t>(color)];
  for (size_t k = 0; k < data.size(); ++k) {
    Pending p;
    p.due = start + k * interval;
    p.wavelet.color = static_cast<uint8_t>(color);
    p.wavelet.data = data[k];
    p.wavelet.index = index.empty() ? 0 : index[k];
    p.wavelet.ctrl = !ctrl.empty() && ctrl[k] != 0;
    p.wavelet.injected_cycle = static_cast<uint32_t>(p.due);
    q.push_back(p);
  }
  if (!data.empty()) waiting_ |= ColorMask{1} << color;
}

int LonePe::pending_injections(int color) const {
  check_color(color, "pending_injections");
  return static_cast<int>(inject_q_[static_cast<size_t>(color)].size());
}

void LonePe::set_sink_stalled(int color, bool stalled) {
  check_color(color, "set_sink_stalled");
  const ColorMask bit = ColorMask{1} << color;
  sink_stalled_ = stalled ? (sink_stalled_ | bit) : (sink_stalled_ & ~bit);
  stall_to_ramp_ = stalled ? (stall_to_ramp_ | bit) : (stall_to_ramp_ & ~bit);
}

const std::vector<SinkRecord>& LonePe::sink(int color) const {
  check_color(color, "sink");
  return sinks_[static_cast<size_t>(color)];
}

void LonePe::clear_sinks() {
  for (auto& s : sinks_) s.clear();
}

void LonePe::one_cycle() {
  // Phase A: the CE runs and may hand one wavelet to the on ramp.
  if (auto w = ce_.step(cycle_, stall_to_ramp_)) {
    const int c = w->color;
    if ((loopback_ >> c) & 1u) {
      auto& q = router_q_[static_cast<size_t>(c)];
      if (static_cast<int>(q.size()) >= depth_) {
        internal_error("lone PE: the CE sent color " + std::to_string(c) +
                       " into a full router queue despite the stall");
      }
      q.push_back(*w);
      waiting_ |= ColorMask{1} << c;
    } else {
      sinks_[static_cast<size_t>(c)].push_back({cycle_, *w});
    }
  }
  // Phase B: at most one wavelet on the off ramp, for a color the CE does not stall
  // (loopback traffic first, then injected traffic, round robin over colors).
  const int n = ce_.config().fabric_colors;
  const ColorMask candidates = waiting_ & ~ce_.stall_to_router();
  if (candidates) {
    for (int k = 0; k < n; ++k) {
      const int c = (off_rr_ + k) % n;
      if (!((candidates >> c) & 1u)) continue;
      auto& rq = router_q_[static_cast<size_t>(c)];
      auto& iq = inject_q_[static_cast<size_t>(c)];
      Wavelet w;
      if (!rq.empty()) {
        w = rq.front();
        rq.pop_front();
      } else if (!iq.empty() && iq.front().due <= cycle_) {
        w = iq.front().wavelet;
        iq.pop_front();
      } else {
        continue;
      }
      if (rq.empty() && iq.empty()) waiting_ &= ~(ColorMask{1} << c);
      ce_.accept_offramp(w);
      ++deliveries_;
      off_rr_ = (c + 1) % n;
      break;
    }
  }
  ce_.finish_cycle();
  // The router's stall toward the on ramp: a loopback queue above depth-1 [0333], or a
  // stalled sink.
  ColorMask s = sink_stalled_;
  for (ColorMask m = loopback_ & waiting_; m; m &= m - 1) {
    const int c = __builtin_ctzll(m);
    if (static_cast<int>(router_q_[static_cast<size_t>(c)].size()) > depth_ - 1) s |= ColorMask{1} << c;
  }
  stall_to_ramp_ = s;
  ++cycle_;
}

// With nothing to deliver (no loopback or injected wavelet, now or due later) and a CE
// only counting the cycles of a bulk vector operation, those cycles change nothing on the
// bench: the CE runs them at once.
uint64_t LonePe::skip(uint64_t limit) {
  if (waiting_ != 0) return 0;
  const uint64_t n = std::min(limit, ce_.countable_cycles());
  if (n == 0) return 0;
  ce_.skip_cycles(cycle_, n);
  cycle_ += n;
  return n;
}

void LonePe::run(uint64_t cycles) {
  for (uint64_t i = 0; i < cycles;) {
    if (const uint64_t n = skip(cycles - i)) {
      i += n;
      continue;
    }
    one_cycle();
    ++i;
  }
}

bool LonePe::in_flight() const { return waiting_ != 0; }

bool LonePe::future_injection() const {
  for (const auto& q : inject_q_) {
    if (!q.empty() && q.front().due > cycle_) return true;
  }
  return false;
}

bool LonePe::run_until_idle(uint64_t max_cycles, uint64_t watchdog) {
  for (uint64_t i = 0; i < max_cycles; ++i) {
    if (ce_.idle() && !in_flight()) return true;
    // Skipped cycles each made progress, as the last of them did.
    if (const uint64_t n = skip(max_cycles - i)) {
      i += n - 1;
    } else {
      one_cycle();
    }
    const uint64_t now = ce_.progress() + deliveries_;
    if (now != last_progress_ || future_injection()) {
      last_progress_ = now;
      still_ = 0;
    } else if (watchdog > 0 && ++still_ >= watchdog) {
      throw DeadlockError("lone PE: nothing moved for " + std::to_string(watchdog) +
                              " cycles (cycle " + std::to_string(cycle_) + ")",
                          describe_wait());
    }
  }
  return ce_.idle() && !in_flight();
}

std::string LonePe::describe_wait() const {
  std::string s = ce_.describe_wait();
  for (int c = 0; c < kMaxFabricColors; ++c) {
    const size_t r = router_q_[static_cast<size_t>(c)].size();
    const size_t p = inject_q_[static_cast<size_t>(c)].size();
    if (r) s += "\n  loopback router queue of color " + std::to_string(c) + ": " + std::to_string(r);
    if (p) s += "\n  injections not yet accepted on color " + std::to_string(c) + ": " + std::to_string(p);
    if ((sink_stalled_ >> c) & 1u) s += "\n  the bench's sink refuses color " + std::to_string(c);
  }
  return s;
}

}  // namespace wafersim::pe
