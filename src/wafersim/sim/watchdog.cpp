#include "wafersim/sim/watchdog.hpp"

#include "wafersim/sim/byte_wire.hpp"
#include "wafersim/sim/wait_cycle.hpp"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

namespace wafersim::sim {

using namespace wafersim::fabric;

namespace {

constexpr size_t kMaxEntries = 10000;  // stuck queues listed in full before summarizing

std::string queue_name(const Fabric& f, unsigned key) {
  return f.config().packet_mode ? std::string("input-") + dir_name(static_cast<Dir>(key)) +
                                      " queue"
                                : "color " + std::to_string(key);
}

// Endpoints describe themselves over several lines; a queue's entry quotes the first.
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string dir_set(DirMask m) {
  std::string out = "{";
  for (DirMask x = m; x; x &= x - 1) {
    out += (out.size() > 1 ? ", " : "") + std::string(dir_name(first_dir(x)));
  }
  return out + "}";
}

// Why the switch of `color` at router `id` holds what comes from `from` (a direction its
// hold mask has): the position, what that position takes, and where `from` is a source.
std::string hold_reason(const Fabric& f, uint32_t id, unsigned color, Dir from) {
  const RouteSwitch& sw = *f.route_switch(id, static_cast<int>(color));
  std::string s = "its switch on color " + std::to_string(color) + " is in position " +
                  std::to_string(sw.pos_in) + ", whose sources are " +
                  dir_set(sw.src[sw.pos_in]) + "; " + dir_name(from) +
                  " is a source in position(s) " + position_list(sw.positions_taking(from));
  if (sw.pos_out != sw.pos_in) {
    s += " (it forwards in position " + std::to_string(sw.pos_out) +
         " until the wavelets queued before the move have left)";
  }
  return s;
}

// Senders that a switch position holds (docs/fabric.md, "Switches"): per switch, each
// direction its arrival position does not take where a sender has a wavelet of the color.
void held_senders(const WaferView& v, uint32_t id, DeadlockPart& part) {
  const Fabric& f = v.fabric();
  const Topology& t = f.topology();
  const int r = static_cast<int>(id / static_cast<uint32_t>(t.cols));
  const int c = static_cast<int>(id % static_cast<uint32_t>(t.cols));
  f.for_each_slot(id, [&](const QueueSlot& s) {
    for (DirMask m = s.hold; m; m &= m - 1) {
      const Dir d = first_dir(m);
      std::string sender;
      const int64_t nb = d == kRamp ? -1 : t.neighbour(r, c, d);
      if (nb >= 0) {
        const uint32_t from = static_cast<uint32_t>(nb);
        const unsigned count = v.count(from, s.key);
        if (count == 0 || !(v.pending(from, s.key) & bit(opposite(d)))) continue;
        sender = "router " + router_name(t, from) + "'s queue (" + std::to_string(count) + "/" +
                 std::to_string(f.config().queue_depth) + " queued) waits to send it " +
                 dir_name(opposite(d));
      } else {
        const RampEndpoint* e = f.endpoint(id, d);
        if (e == nullptr || !((e->offering() >> s.key) & 1u)) continue;
        sender = (d == kRamp ? "the ramp endpoint (" : "the edge port's endpoint (") +
                 first_line(e->describe()) + ") waits to send it";
      }
      if (part.held_senders.size() < kMaxEntries) {
        part.held_senders.push_back(
            {id, true, "  router " + router_name(t, id) + " color " + std::to_string(s.key) +
                           " from " + dir_name(d) + ": " + sender + "; " +
                           hold_reason(f, id, s.key, d) + "\n"});
      } else {
        ++part.held_senders_more;
      }
    }
  });
}

// A stuck queue's entry: what its head waits for, and who stalls or holds it there.
std::string stuck_queue(const WaferView& v, uint32_t id, unsigned key) {
  const Fabric& f = v.fabric();
  const Topology& t = f.topology();
  const int r = static_cast<int>(id / static_cast<uint32_t>(t.cols));
  const int c = static_cast<int>(id % static_cast<uint32_t>(t.cols));
  const QueueSlot& s = f.slot(id, key);
  const std::vector<Wavelet> q = f.queue_contents(id, key);
  const unsigned color = q.empty() ? key : q.front().color;
  std::string entry = "router " + router_name(t, id) + " " + queue_name(f, key) + ": " +
                      std::to_string(s.count) + "/" + std::to_string(f.config().queue_depth) +
                      " queued" +
                      (((f.stall_out(id) >> key) & 1u) ? " (stalling its sources)" : "") +
                      "; head waits for";
  const DirMask pending = s.dest & ~s.sent;
  for (DirMask p = pending; p; p &= p - 1) {
    const Dir o = first_dir(p);
    entry += "\n    ";
    entry += dir_name(o);
    if (o == kRamp || t.neighbour(r, c, o) < 0) {
      const PortAttachment* a = f.attachment(id, o);
      const bool stalled = a && a->endpoint && ((a->stall_in >> color) & 1u);
      entry += o == kRamp ? ": the ramp endpoint" : ": the edge port";
      if (!a || !a->endpoint) entry += " (none attached)";
      else entry += stalled ? " stalls color " + std::to_string(color) + " (" +
                                  first_line(a->endpoint->describe()) + ")"
                            : " (not stalling)";
      continue;
    }
    // The neighbour may be another domain's: its queue's count comes through the view,
    // its stall bits are swapped every cycle, its switches are configured everywhere.
    const uint32_t n = static_cast<uint32_t>(t.neighbour(r, c, o));
    const Router& nb = f.router(n);
    const unsigned their_key = f.config().packet_mode ? static_cast<unsigned>(opposite(o)) : key;
    const bool stalled = (f.stall_out(n) >> their_key) & 1u;
    entry += " -> router " + router_name(t, n);
    if (stalled) {
      entry += ", which stalls it: its " + queue_name(f, their_key) + " holds " +
               std::to_string(v.count(n, their_key)) + "/" + std::to_string(f.config().queue_depth);
    } else if (nb.has(their_key) && (f.slot(n, their_key).hold & bit(opposite(o)))) {
      entry += ", which holds it: " + hold_reason(f, n, their_key, opposite(o));
    } else {
      entry += " (not stalling)";
    }
  }
  return entry + "\n";
}

}  // namespace

DeadlockPart deadlock_part(const WaferView& v) {
  const Fabric& f = v.fabric();
  const Topology& t = f.topology();
  DeadlockPart part;
  size_t entries = 0;
  for (uint32_t id = 0; id < f.router_count(); ++id) {
    if (!v.owns(id)) continue;
    const Router& rt = f.router(id);
    f.for_each_slot(id, [&](const QueueSlot& s) {
      if (!s.count) return;
      if (entries++ < kMaxEntries) part.entries.push_back({id, true, stuck_queue(v, id, s.key)});
      else ++part.entries_more;
    });
    const PortAttachment& ramp = rt.ramp;
    if (ramp.endpoint && !ramp.endpoint->idle()) {
      part.entries.push_back(
          {id, false, "PE " + router_name(t, id) + " ramp: " + ramp.endpoint->describe() + "\n"});
    }
    for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
      const Dir d = first_dir(m);
      const RampEndpoint* e = f.endpoint(id, d);
      if (e && !e->idle()) {
        part.entries.push_back({id, false, "router " + router_name(t, id) + " edge port " +
                                               dir_name(d) + ": " + e->describe() + "\n"});
      }
    }
    if (f.switched_colors() != 0) held_senders(v, id, part);
  }
  part.waits = wait_graph_part(v);
  return part;
}

namespace {

// Lines of every part in router order (one router's lines come from one part, in its
// order), the first `limit` limited ones and every other; `more`: limited lines left out.
std::string merge_lines(const std::vector<const std::vector<ReportLine>*>& lists, uint64_t& more) {
  std::vector<const ReportLine*> all;
  for (const auto* l : lists) {
    for (const ReportLine& line : *l) all.push_back(&line);
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const ReportLine* a, const ReportLine* b) { return a->router < b->router; });
  std::string out;
  size_t shown = 0;
  for (const ReportLine* line : all) {
    if (line->limited && shown++ >= kMaxEntries) {
      ++more;
      continue;
    }
    out += line->text;
  }
  return out;
}

}  // namespace

std::string merge_deadlock_report(const Fabric& f, uint64_t cycle,
                                  const std::vector<DeadlockPart>& parts) {
  const Topology& t = f.topology();
  std::string out = "deadlock report at cycle " + std::to_string(cycle) + " (" + t.describe() +
                    ", queue depth " + std::to_string(f.config().queue_depth) + ")\n";
  std::vector<const std::vector<ReportLine>*> entries, held;
  std::vector<const WaitGraphPart*> waits;
  uint64_t skipped = 0, held_more = 0;
  for (const DeadlockPart& p : parts) {
    entries.push_back(&p.entries);
    held.push_back(&p.held_senders);
    waits.push_back(&p.waits);
    skipped += p.entries_more;
    held_more += p.held_senders_more;
  }
  out += merge_lines(entries, skipped);
  if (skipped) out += "... and " + std::to_string(skipped) + " more stuck queue(s)\n";
  std::string senders = merge_lines(held, held_more);
  if (held_more) senders += "  ... and " + std::to_string(held_more) + " more\n";
  if (!senders.empty()) {
    out += "senders held by a switch position (a switched color takes them only once a "
           "control wavelet moves its switch to a position with their direction as a "
           "source):\n" + senders;
  }
  out += wait_cycle_report(waits);
  return out;
}

std::string deadlock_report(const Fabric& f, uint64_t cycle) {
  const WaferView view(f);
  return merge_deadlock_report(f, cycle, {deadlock_part(view)});
}

std::string DeadlockPart::encode() const {
  ByteWriter w;
  for (const auto* lines : {&entries, &held_senders}) {
    w.u64(lines->size());
    for (const ReportLine& l : *lines) {
      w.u64((uint64_t{l.router} << 1) | (l.limited ? 1u : 0u));
      w.str(l.text);
    }
  }
  w.u64(entries_more);
  w.u64(held_senders_more);
  waits.encode(w);
  return w.take();
}

DeadlockPart DeadlockPart::decode(std::string_view bytes) {
  ByteReader r(bytes);
  DeadlockPart out;
  for (auto* lines : {&out.entries, &out.held_senders}) {
    lines->resize(r.count());
    for (ReportLine& l : *lines) {
      const uint64_t v = r.u64();
      l.router = static_cast<uint32_t>(v >> 1);
      l.limited = v & 1u;
      l.text = r.str();
    }
  }
  out.entries_more = r.u64();
  out.held_senders_more = r.u64();
  out.waits = WaitGraphPart::decode(r);
  if (!r.done()) throw ConfigError("a domain's deadlock report part has trailing bytes");
  return out;
}

}  // namespace wafersim::sim
