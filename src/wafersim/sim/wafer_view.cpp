#include "wafersim/sim/wafer_view.hpp"

#include "wafersim/sim/byte_wire.hpp"

namespace wafersim::sim {

using namespace wafersim::fabric;

DeadlockFacts deadlock_facts(const Fabric& f, const std::vector<uint8_t>& owned_rows) {
  DeadlockFacts out;
  const Topology& t = f.topology();
  for (int r = 0; r < t.rows; ++r) {
    if (!owned_rows.empty() && !owned_rows[static_cast<size_t>(r)]) continue;
    for (int c = 0; c < t.cols; ++c) {
      const uint32_t id = static_cast<uint32_t>(r * t.cols + c);
      f.for_each_slot(id, [&](const QueueSlot& s) {
        if (s.count) {
          out.queues.push_back({id, s.key, s.count, static_cast<DirMask>(s.dest & ~s.sent)});
        }
      });
      const Router& rt = f.router(id);
      const RampEndpoint* e = rt.ramp.endpoint;
      if (e && !e->idle()) {
        std::vector<EndpointWait> w;
        e->waits(w);
        if (!w.empty()) out.waiting_pes.push_back(id);
      }
      for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
        const Dir d = first_dir(m);
        const RampEndpoint* p = f.endpoint(id, d);
        if (p && !p->idle()) out.busy_ports.push_back((uint64_t{id} << 8) | d);
      }
    }
  }
  return out;
}

std::vector<uint8_t> rows_of(const Fabric& f, const std::vector<std::pair<int, int>>& blocks) {
  if (blocks.empty()) return {};
  std::vector<uint8_t> owned(static_cast<size_t>(f.rows()), 0);
  for (auto [lo, hi] : blocks) {
    for (int r = lo; r < hi; ++r) owned[static_cast<size_t>(r)] = 1;
  }
  return owned;
}

std::string DeadlockFacts::encode() const {
  ByteWriter w;
  w.u64(queues.size());
  for (const QueueFact& q : queues) {
    w.u64(q.router);
    w.u64((uint64_t{q.key} << 32) | (uint64_t{q.count} << 16) | q.pending);
  }
  w.u64(waiting_pes.size());
  for (uint32_t id : waiting_pes) w.u64(id);
  w.u64(busy_ports.size());
  for (uint64_t p : busy_ports) w.u64(p);
  return w.take();
}

DeadlockFacts DeadlockFacts::decode(std::string_view bytes) {
  ByteReader r(bytes);
  DeadlockFacts out;
  out.queues.resize(r.count());
  for (QueueFact& q : out.queues) {
    q.router = static_cast<uint32_t>(r.u64());
    const uint64_t v = r.u64();
    q.key = static_cast<uint8_t>(v >> 32);
    q.count = static_cast<uint8_t>(v >> 16);
    q.pending = static_cast<DirMask>(v);
  }
  out.waiting_pes.resize(r.count());
  for (uint32_t& id : out.waiting_pes) id = static_cast<uint32_t>(r.u64());
  out.busy_ports.resize(r.count());
  for (uint64_t& p : out.busy_ports) p = r.u64();
  if (!r.done()) throw ConfigError("a domain's deadlock facts have trailing bytes");
  return out;
}

WaferView::WaferView(const Fabric& f) : f_(f) { add(deadlock_facts(f, {})); }

WaferView::WaferView(const Fabric& f, std::vector<uint8_t> owned_rows,
                     const std::vector<DeadlockFacts>& every)
    : f_(f), owned_(std::move(owned_rows)) {
  for (const DeadlockFacts& facts : every) add(facts);
}

void WaferView::add(const DeadlockFacts& facts) {
  for (const QueueFact& q : facts.queues) queues_[(uint64_t{q.router} << 8) | q.key] = q;
  waiting_.insert(facts.waiting_pes.begin(), facts.waiting_pes.end());
  busy_ports_.insert(facts.busy_ports.begin(), facts.busy_ports.end());
}

unsigned WaferView::count(uint32_t id, unsigned key) const {
  const auto it = queues_.find((uint64_t{id} << 8) | key);
  return it == queues_.end() ? 0 : it->second.count;
}

DirMask WaferView::pending(uint32_t id, unsigned key) const {
  const auto it = queues_.find((uint64_t{id} << 8) | key);
  return it == queues_.end() ? 0 : it->second.pending;
}

}  // namespace wafersim::sim
