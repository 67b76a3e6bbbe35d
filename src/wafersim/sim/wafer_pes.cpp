// The wafer's compute elements: created on the ramp of a PE when a program is loaded there
// (so a large wafer with a few programs stays small), their configuration, and the
// per-run statistics that Wafer::run reports (counters since the run started).
#include <algorithm>
#include <exception>
#include <string>

#include "wafersim/errors.hpp"
#include "wafersim/sim/wafer.hpp"

namespace wafersim::sim {

using namespace wafersim::fabric;

namespace {

// Below this many active routers a cycle stays single-threaded (above, the simulator
// measures whether threads pay, sim/thread_choice.hpp). A PE with a compute element does
// about ten times the work of a bare router per cycle, so a wafer with compute elements
// may share earlier than the fabric's 512. Wafer.parallel_min_routers, when the user sets
// it, replaces both floors and the measuring.
constexpr size_t kParallelMinRoutersWithCes = 256;

std::string pe_label(const Topology& t, uint32_t id) { return "PE " + router_name(t, id); }

}  // namespace

void Wafer::set_ce_config(const pe::CeConfig& cfg) {
  sim_.wake_sleepers();
  pe::CeConfig c = cfg;
  c.fabric_colors = fabric_.config().colors;
  pe::validate(c);
  ce_config_ = c;
}

void Wafer::check_reset_ce(uint32_t id) const {
  const Topology& t = fabric_.topology();
  if (fabric_.config().packet_mode) {
    throw ConfigError("compute elements run on the color-routed fabric; this wafer is in "
                      "packet mode (NoC studies)");
  }
  if (id >= fabric_.router_count()) {
    throw ConfigError("router id " + std::to_string(id) + " is outside the " + t.describe());
  }
  auto existing = ces_.find(id);
  if (existing != ces_.end() && !existing->second->idle()) {
    throw ConfigError(pe_label(t, id) + " is still busy; load a new program when it is idle:\n" +
                      existing->second->ce().describe_wait() +
                      (existing->second->fed_pending()
                           ? "\n  and " + std::to_string(existing->second->fed_pending()) +
                                 " wavelet(s) of host streams still to enter"
                           : std::string()));
  }
  if (existing != ces_.end() && existing->second->captured_count()) {
    throw ConfigError(pe_label(t, id) + " sent " +
                      std::to_string(existing->second->captured_count()) +
                      " wavelet(s) to the host that were not taken (stream_d2h); take them "
                      "before loading a program");
  }
  auto hp = host_ports_.find(uint64_t{id} * 16 + kRamp);
  if (hp != host_ports_.end() && (hp->second->pending() || hp->second->arrived_count())) {
    throw ConfigError(pe_label(t, id) + ": its ramp has a host port holding " +
                      std::to_string(hp->second->pending()) + " wavelet(s) to inject and " +
                      std::to_string(hp->second->arrived_count()) +
                      " uncollected arrival(s); collect them before loading a program");
  }
}

void Wafer::reset_ces(std::span<const uint32_t> ids) {
  check_reset_ces(ids);
  for (uint32_t id : ids) reset_ce(id);
}

void Wafer::check_reset_ces(std::span<const uint32_t> ids) {
  sim_.wake_sleepers();
  for (uint32_t id : ids) check_reset_ce(id);
}

int64_t Wafer::first_unresettable_ce(std::span<const uint32_t> ids) {
  sim_.wake_sleepers();
  for (uint32_t id : ids) {
    try {
      check_reset_ce(id);
    } catch (const ConfigError&) {
      return id;
    }
  }
  return -1;
}

void Wafer::reset_ce(uint32_t id) {
  const Topology& t = fabric_.topology();
  auto hp = host_ports_.find(uint64_t{id} * 16 + kRamp);
  if (hp != host_ports_.end()) {  // an unused host port stood in for the PE: replace it
    fabric_.attach(id, kRamp, nullptr);
    host_ports_.erase(hp);
  } else if (!ces_.count(id) && fabric_.endpoint(id, kRamp) != nullptr) {
    internal_error("reset_ce: unknown endpoint on the ramp of " + pe_label(t, id));
  }
  pe::CeConfig cfg = ce_config_;
  cfg.fabric_colors = fabric_.config().colors;
  cfg.row = static_cast<int>(id / static_cast<uint32_t>(t.cols));
  cfg.col = static_cast<int>(id % static_cast<uint32_t>(t.cols));
  cfg.rng_seed = ce_config_.rng_seed + id;  // distinct, reproducible streams per PE
  fabric::ColorMask capture = 0;
  if (auto old = ces_.find(id); old != ces_.end()) {  // the old compute element goes first:
    capture = old->second->capture();                 // its memory slot is the new one's
    const uint32_t old_bytes = old->second->ce().config().memory_bytes;
    fabric_.attach(id, kRamp, nullptr);
    ces_.erase(old);
    memories_.at(old_bytes)->clear(id);  // a new program starts from zeroed memory
  }
  std::unique_ptr<pe::MemoryArena>& arena = memories_[cfg.memory_bytes];
  if (!arena) arena = std::make_unique<pe::MemoryArena>(fabric_.router_count(), cfg.memory_bytes);
  auto ce = std::make_unique<CeEndpoint>(cfg, arena->slot(id));
  ce->set_capture(capture);
  fabric_.attach(id, kRamp, ce.get());
  ces_[id] = std::move(ce);  // its mark, if any, is gone below
  ce_marks_.erase(std::remove_if(ce_marks_.begin(), ce_marks_.end(),
                                 [id](const CeMark& m) { return m.id == id; }),
                  ce_marks_.end());
  sim_.set_default_parallel_min_routers(kParallelMinRoutersWithCes);
}

pe::ComputeElement* Wafer::ce(uint32_t id) {
  sim_.wake_sleepers();
  auto it = ces_.find(id);
  return it == ces_.end() ? nullptr : &it->second->ce();
}

const pe::ComputeElement* Wafer::ce(uint32_t id) const {
  auto it = ces_.find(id);
  return it == ces_.end() ? nullptr : &it->second->ce();
}

std::vector<uint32_t> Wafer::ce_ids() const {
  std::vector<uint32_t> ids;
  ids.reserve(ces_.size());
  for (const auto& [id, ce] : ces_) ids.push_back(id);
  return ids;
}

void Wafer::set_ce_trace(bool on) {
  sim_.wake_sleepers();
  ce_config_.trace = on;
  for (auto& [id, ce] : ces_) ce->ce().set_trace(on);
}

void Wafer::set_ce_profile(bool on) {
  sim_.wake_sleepers();
  ce_config_.profile = on;
  for (auto& [id, ce] : ces_) ce->ce().set_profile(on);
}

void Wafer::mark_ce_stats() {
  ce_marks_.clear();
  ce_marks_.reserve(ces_.size());
  for (auto& [id, ce] : ces_) {
    const pe::CeLiveStats* s = ce->ce().stats_if_any();
    if (s == nullptr) {  // nothing counted yet: the mark is all zero, and costs nothing
      ce_marks_.push_back({id, ce.get(), nullptr, 0, 0, 0, {}});
    } else {
      ce_marks_.push_back({id, ce.get(), std::make_unique<pe::CeCounters>(s->counters()),
                           s->task_spans.size(), s->microthread_spans.size(),
                           s->id_events.size(), s->busy_by_pc});
    }
  }
}

void Wafer::reset_ce_stats(uint32_t id) {
  sim_.wake_sleepers();
  pe::ComputeElement* c = ce(id);
  if (c == nullptr) return;
  c->reset_stats();
  for (CeMark& m : ce_marks_) {
    if (m.id == id) m = CeMark{id, m.ce, nullptr, 0, 0, 0, {}};
  }
}

pe::CeStats Wafer::run_stats_of(const CeMark& m) const {
  pe::CeStats s;
  const pe::CeLiveStats* counted = m.ce->ce().stats_if_any();
  if (counted == nullptr) return s;  // it never stepped: nothing to report
  const pe::CeLiveStats& now = *counted;
  static const pe::CeCounters zero{};
  static_cast<pe::CeCounters&>(s) =
      pe::counters_since(now.counters(), m.counters ? *m.counters : zero);
  s.task_spans.assign(now.task_spans.begin() + static_cast<ptrdiff_t>(m.task_spans),
                      now.task_spans.end());
  s.microthread_spans.assign(
      now.microthread_spans.begin() + static_cast<ptrdiff_t>(m.microthread_spans),
      now.microthread_spans.end());
  s.id_events.assign(now.id_events.begin() + static_cast<ptrdiff_t>(m.id_events),
                     now.id_events.end());
  s.busy_by_pc = now.busy_by_pc;
  for (size_t pc = 0; pc < m.busy_by_pc.size() && pc < s.busy_by_pc.size(); ++pc) {
    s.busy_by_pc[pc] -= m.busy_by_pc[pc];
  }
  return s;
}

bool Wafer::counters_only(const CeMark& m, const pe::CeLiveStats* now) {
  return now == nullptr ||
         (now->task_spans.size() == m.task_spans &&
          now->microthread_spans.size() == m.microthread_spans &&
          now->id_events.size() == m.id_events && now->busy_by_pc.empty());
}

void Wafer::ce_run_stats(const std::function<void(uint32_t, const pe::CeStats&)>& f) {
  sim_.wake_sleepers();
  for (const CeMark& m : ce_marks_) f(m.id, run_stats_of(m));
}

Wafer::RunStatsTable Wafer::ce_run_stats_table() {
  sim_.wake_sleepers();
  // Below a few thousand PEs a second thread costs more than it saves.
  constexpr size_t kPesPerThread = 4096;
  const size_t n = ce_marks_.size();
  const int parts = static_cast<int>(
      std::clamp<size_t>(n / kPesPerThread, 1, static_cast<size_t>(sim_.thread_count())));
  RunStatsTable out;
  out.ids.resize(n);
  out.ends.resize(n);
  std::vector<std::string> blobs(static_cast<size_t>(parts));
  std::vector<std::vector<std::pair<uint32_t, pe::CeStats>>> wholes(static_cast<size_t>(parts));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
  auto range = [&](int k) {
    return std::pair{n * static_cast<size_t>(k) / static_cast<size_t>(parts),
                     n * static_cast<size_t>(k + 1) / static_cast<size_t>(parts)};
  };
  // Part k packs PEs lo..hi-1 into blobs[k]; ends are relative to its part until joined.
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int k = 0; k < parts; ++k) {
    try {
      const auto [lo, hi] = range(k);
      std::string& blob = blobs[static_cast<size_t>(k)];
      for (size_t i = lo; i < hi; ++i) {
        const CeMark& m = ce_marks_[i];
        const pe::CeLiveStats* now = m.ce->ce().stats_if_any();
        out.ids[i] = m.id;
        if (!counters_only(m, now)) {
          wholes[static_cast<size_t>(k)].emplace_back(m.id, run_stats_of(m));
        } else if (now != nullptr && m.counters == nullptr) {  // all counted in this run
          blob += pe::pack_counters(now->counters());
        } else if (now != nullptr) {
          blob += pe::pack_counters(pe::counters_since(now->counters(), *m.counters));
        }
        out.ends[i] = static_cast<int64_t>(blob.size());
      }
    } catch (...) {
      errors[static_cast<size_t>(k)] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  std::vector<size_t> starts(static_cast<size_t>(parts), 0);
  for (size_t k = 1; k < blobs.size(); ++k) starts[k] = starts[k - 1] + blobs[k - 1].size();
  out.blob.resize(starts.back() + blobs.back().size());
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int k = 0; k < parts; ++k) {
    const auto [lo, hi] = range(k);
    const size_t start = starts[static_cast<size_t>(k)];
    std::copy(blobs[static_cast<size_t>(k)].begin(), blobs[static_cast<size_t>(k)].end(),
              out.blob.begin() + static_cast<ptrdiff_t>(start));
    for (size_t i = lo; i < hi; ++i) out.ends[i] += static_cast<int64_t>(start);
  }
  for (auto& part : wholes) {
    for (auto& entry : part) out.whole.push_back(std::move(entry));
  }
  return out;
}

}  // namespace wafersim::sim
