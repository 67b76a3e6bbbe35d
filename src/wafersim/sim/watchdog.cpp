#include "wafersim/sim/watchdog.hpp"

#include "wafersim/sim/wait_cycle.hpp"

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
std::string held_senders(const Fabric& f) {
  const Topology& t = f.topology();
  std::string out;
  size_t n = 0;
  for (uint32_t id = 0; id < f.router_count(); ++id) {
    const int r = static_cast<int>(id / static_cast<uint32_t>(t.cols));
    const int c = static_cast<int>(id % static_cast<uint32_t>(t.cols));
    f.for_each_slot(id, [&](const QueueSlot& s) {
      for (DirMask m = s.hold; m; m &= m - 1) {
        const Dir d = first_dir(m);
        std::string sender;
        const int64_t nb = d == kRamp ? -1 : t.neighbour(r, c, d);
        if (nb >= 0) {
          const uint32_t from = static_cast<uint32_t>(nb);
          if (!f.router(from).has(s.key)) continue;
          const QueueSlot& q = f.slot(from, s.key);
          if (q.count == 0 || !((q.dest & ~q.sent) & bit(opposite(d)))) continue;
          sender = "router " + router_name(t, from) + "'s queue (" + std::to_string(q.count) +
                   "/" + std::to_string(f.config().queue_depth) + " queued) waits to send it " +
                   dir_name(opposite(d));
        } else {
          const RampEndpoint* e = f.endpoint(id, d);
          if (e == nullptr || !((e->offering() >> s.key) & 1u)) continue;
          sender = (d == kRamp ? "the ramp endpoint (" : "the edge port's endpoint (") +
                   first_line(e->describe()) + ") waits to send it";
        }
        if (n++ < kMaxEntries) {
          out += "  router " + router_name(t, id) + " color " + std::to_string(s.key) + " from " +
                 dir_name(d) + ": " + sender + "; " + hold_reason(f, id, s.key, d) + "\n";
        }
      }
    });
  }
  if (n > kMaxEntries) out += "  ... and " + std::to_string(n - kMaxEntries) + " more\n";
  if (out.empty()) return "";
  return "senders held by a switch position (a switched color takes them only once a control "
         "wavelet moves its switch to a position with their direction as a source):\n" + out;
}

}  // namespace

std::string deadlock_report(const Fabric& f, uint64_t cycle) {
  const Topology& t = f.topology();
  std::string out = "deadlock report at cycle " + std::to_string(cycle) + " (" + t.describe() +
                    ", queue depth " + std::to_string(f.config().queue_depth) + ")\n";
  size_t entries = 0, skipped = 0;
  for (uint32_t id = 0; id < f.router_count(); ++id) {
    const Router& rt = f.router(id);
    const int r = static_cast<int>(id / static_cast<uint32_t>(t.cols));
    const int c = static_cast<int>(id % static_cast<uint32_t>(t.cols));
    std::vector<unsigned> busy_keys;
    f.for_each_slot(id, [&](const QueueSlot& s) {
      if (s.count) busy_keys.push_back(s.key);
    });
    for (const unsigned key : busy_keys) {
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
        const uint32_t n = static_cast<uint32_t>(t.neighbour(r, c, o));
        const Router& nb = f.router(n);
        const unsigned their_key = f.config().packet_mode ? static_cast<unsigned>(opposite(o)) : key;
        const bool stalled = (f.stall_out(n) >> their_key) & 1u;
        entry += " -> router " + router_name(t, n);
        if (stalled) {
          const int held = nb.has(their_key) ? f.slot(n, their_key).count : 0;
          entry += ", which stalls it: its " + queue_name(f, their_key) + " holds " +
                   std::to_string(held) + "/" + std::to_string(f.config().queue_depth);
        } else if (nb.has(their_key) && (f.slot(n, their_key).hold & bit(opposite(o)))) {
          entry += ", which holds it: " + hold_reason(f, n, their_key, opposite(o));
        } else {
          entry += " (not stalling)";
        }
      }
      if (entries < kMaxEntries) {
        out += entry + "\n";
        ++entries;
      } else {
        ++skipped;
      }
    }
    const PortAttachment& ramp = rt.ramp;
    if (ramp.endpoint && !ramp.endpoint->idle()) {
      out += "PE " + router_name(t, id) + " ramp: " + ramp.endpoint->describe() + "\n";
    }
    for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
      const Dir d = first_dir(m);
      const RampEndpoint* e = f.endpoint(id, d);
      if (e && !e->idle()) {
        out += "router " + router_name(t, id) + " edge port " + dir_name(d) + ": " +
               e->describe() + "\n";
      }
    }
  }
  if (skipped) out += "... and " + std::to_string(skipped) + " more stuck queue(s)\n";
  if (f.switched_colors() != 0) out += held_senders(f);
  out += wait_cycle_report(f);
  return out;
}

}  // namespace wafersim::sim
