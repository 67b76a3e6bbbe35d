#include "wafersim/sim/wait_cycle.hpp"

#include <map>
#include <utility>
#include <vector>

#include "wafersim/errors.hpp"
#include "wafersim/sim/wafer_view.hpp"

namespace wafersim::sim {

using namespace wafersim::fabric;

namespace {

constexpr unsigned kEndpoint = 0xFF;  // node key of a router's ramp endpoint
constexpr size_t kMaxDeadEnds = 20;

uint64_t node(uint32_t id, unsigned key) { return (uint64_t{id} << 8) | key; }
uint32_t node_id(uint64_t n) { return static_cast<uint32_t>(n >> 8); }
unsigned node_key(uint64_t n) { return static_cast<unsigned>(n & 0xFF); }

// Where a color bound for a ramp comes from.
struct Source {
  enum class Kind : uint8_t { queue, endpoint, host } kind;
  uint64_t node;     // queue or endpoint node (host: unused)
  std::string what;  // "stuck in router ...", "which PE ... sends", "which the host sends ..."
};

// The nodes of the routers a view owns, with their edges and texts. Queue counts, waiting
// PEs and host ports' progress anywhere on the wafer come from the view; routes, switches,
// stall bits and the owned routers' endpoints from the fabric.
class WaitGraph {
 public:
  explicit WaitGraph(const WaferView& view) : v_(view), f_(view.fabric()), t_(f_.topology()) {
    for (uint32_t id = 0; id < f_.router_count(); ++id) {
      if (!v_.owns(id)) continue;
      f_.for_each_slot(id, [&](const QueueSlot& s) {
        if (s.count) nodes_.emplace(node(id, s.key), std::vector<EndpointWait>{});
      });
      const RampEndpoint* e = f_.router(id).ramp.endpoint;
      if (e && !e->idle()) {
        std::vector<EndpointWait> w;
        e->waits(w);
        if (!w.empty()) nodes_.emplace(node(id, kEndpoint), std::move(w));
      }
    }
  }

  WaitGraphPart part() const {
    WaitGraphPart out;
    size_t dead = 0;
    for (const auto& [n, waits] : nodes_) {
      WaitNode wn{n, edges(n), held(n, waits), {}};
      if (node_key(n) == kEndpoint) {
        for (const EndpointWait& w : waits) {
          if (w.kind == EndpointWait::Kind::send || w.kind == EndpointWait::Kind::held) continue;
          if (dead++ < kMaxDeadEnds) {
            wn.dead_ends.push_back("  PE " + router(node_id(n)) + " " + w.who +
                                   " waits for color " + std::to_string(w.color) + ": " +
                                   senders(node_id(n), w) + "\n");
          } else {
            ++out.dead_ends_more;
          }
        }
      }
      out.nodes.push_back(std::move(wn));
    }
    return out;
  }

 private:
  // Whether node `n` (of any domain's rows) holds wavelets or waits: a node of the graph.
  bool has(uint64_t n) const {
    const uint32_t id = node_id(n);
    return node_key(n) == kEndpoint ? v_.pe_waits(id) : v_.count(id, node_key(n)) > 0;
  }
  std::string router(uint32_t id) const { return router_name(t_, id); }
  std::string queue_name(uint32_t id, unsigned c) const {
    return "router " + router(id) + " color " + std::to_string(c) + " (" +
           std::to_string(v_.count(id, c)) + "/" + std::to_string(f_.config().queue_depth) +
           " queued)";
  }

  std::vector<WaitEdge> edges(uint64_t n) const {
    std::vector<WaitEdge> out;
    const uint32_t id = node_id(n);
    const int r = static_cast<int>(id / static_cast<uint32_t>(t_.cols));
    const int c = static_cast<int>(id % static_cast<uint32_t>(t_.cols));
    if (node_key(n) != kEndpoint) {
      const unsigned color = node_key(n);
      const QueueSlot& s = f_.slot(id, color);
      for (DirMask p = s.dest & ~s.sent; p; p &= p - 1) {
        const Dir o = first_dir(p);
        if (o == kRamp) {
          const PortAttachment& a = f_.router(id).ramp;
          if (a.endpoint && ((a.stall_in >> color) & 1u) && has(node(id, kEndpoint))) {
            out.push_back({node(id, kEndpoint),
                           queue_name(id, color) + ": its head waits for the ramp, and PE " +
                               router(id) + " does not drain its input queue of color " +
                               std::to_string(color)});
          }
          continue;
        }
        const int64_t nb = t_.neighbour(r, c, o);
        if (nb < 0) continue;  // an edge port: the host
        const uint32_t m = static_cast<uint32_t>(nb);
        if (((f_.stall_out(m) >> color) & 1u) && has(node(m, color))) {
          out.push_back({node(m, color), queue_name(id, color) + ": its head waits to go " +
                                             dir_name(o) + " to router " + router(m) +
                                             ", which stalls color " + std::to_string(color)});
        } else if (switch_holds(m, color, opposite(o))) {
          movers(m, color, queue_name(id, color) + ": its head waits to go " + dir_name(o) +
                               " to router " + router(m), out);
        }
      }
      return out;
    }
    for (const EndpointWait& w : nodes_.at(n)) {
      // Only the PE itself sends a local color; a held microthread waits for an unblock.
      if (w.kind == EndpointWait::Kind::receive_local || w.kind == EndpointWait::Kind::held) continue;
      const std::string who = "PE " + router(id) + " " + w.who;
      const unsigned color = w.color;
      if (w.kind == EndpointWait::Kind::send) {
        if (((f_.stall_out(id) >> color) & 1u) && has(node(id, color))) {
          out.push_back({node(id, color), who + ": waits to send color " + std::to_string(color) +
                                              ", which router " + router(id) + " stalls"});
        } else if (switch_holds(id, color, kRamp)) {
          movers(id, color, who + ": waits to send color " + std::to_string(color), out);
        }
        continue;
      }
      for (const Source& src : producers(id, color)) {
        if (src.kind != Source::Kind::host && has(src.node)) {
          out.push_back({src.node, who + ": waits for color " + std::to_string(color) + ", " +
                                       src.what});
        }
      }
    }
    return out;
  }

  // Whether the switch of `color` at `id` holds what comes from `from`.
  bool switch_holds(uint32_t id, unsigned color, Dir from) const {
    return f_.router(id).has(color) && (f_.slot(id, color).hold & bit(from));
  }

  // A sender held by the switch of `color` at `id` waits for a control wavelet to move
  // it, which only comes through the sources of its present position: the queues and PEs
  // upstream of `id` (not `id`'s own queue, whose wavelets were taken in already).
  void movers(uint32_t id, unsigned color, const std::string& waiter,
              std::vector<WaitEdge>& out) const {
    const std::string why = waiter + ", which router " + router(id) + "'s switch holds until a "
                            "control wavelet of color " + std::to_string(color) +
                            " moves it, ";
    for (const Source& src : producers(id, color)) {
      if (src.kind == Source::Kind::host || src.node == node(id, color) || !has(src.node)) continue;
      out.push_back({src.node, why + src.what});
    }
  }

  // Where wavelets of `color` for the ramp of `id` come from: queues on the way, sending
  // endpoints and host edge ports, traced back through the color's Src directions.
  std::vector<Source> producers(uint32_t id, unsigned color) const {
    std::vector<Source> out;
    std::vector<uint32_t> todo{id};
    std::map<uint32_t, bool> seen{{id, true}};
    while (!todo.empty()) {
      const uint32_t x = todo.back();
      todo.pop_back();
      if (!f_.router(x).has(color)) continue;
      const QueueSlot& s = f_.slot(x, color);
      if (v_.count(x, color)) {
        out.push_back({Source::Kind::queue, node(x, color), "stuck in " + queue_name(x, color)});
      }
      const int r = static_cast<int>(x / static_cast<uint32_t>(t_.cols));
      const int c = static_cast<int>(x % static_cast<uint32_t>(t_.cols));
      for (DirMask m = s.src; m; m &= m - 1) {
        const Dir d = first_dir(m);
        if (d == kRamp) {
          out.push_back(
              {Source::Kind::endpoint, node(x, kEndpoint), "which PE " + router(x) + " sends"});
          continue;
        }
        const int64_t nb = t_.neighbour(r, c, d);
        if (nb < 0) {
          const RampEndpoint* hp = f_.endpoint(x, d);
          out.push_back({Source::Kind::host, 0,
                         "which the host sends through edge port " + std::string(dir_name(d)) +
                             " of router " + router(x) +
                             (hp == nullptr          ? " (no host port there)"
                              : !v_.port_busy(x, d) ? " (nothing left to inject there)"
                                                     : " (its wavelets wait to enter)")});
          continue;
        }
        if (!seen[static_cast<uint32_t>(nb)]) {
          seen[static_cast<uint32_t>(nb)] = true;
          todo.push_back(static_cast<uint32_t>(nb));
        }
      }
    }
    return out;
  }

  // Who could send what `w` waits for.
  std::string senders(uint32_t id, const EndpointWait& w) const {
    if (w.kind == EndpointWait::Kind::receive_local) {
      return "a local color, which no router carries: only this PE's own sends of color " +
             std::to_string(w.color) + " fill that queue";
    }
    std::string from;
    for (const Source& src : producers(id, w.color)) {
      std::string note;
      if (src.kind == Source::Kind::host) note = "";
      else if (src.kind == Source::Kind::endpoint)
        note = has(src.node) ? " (it is stuck itself)" : " (it is idle or waits on nothing)";
      else continue;  // queues on the way: listed in the report above
      from += (from.empty() ? "" : "; ") + src.what + note;
    }
    return from.empty() ? "no route brings that color to this ramp" : from;
  }

  // Microthreads that a blocked id holds (block_holds_microthreads): no wait graph edge
  // leads to an unblock, so they come first.
  std::vector<std::string> held(uint64_t n, const std::vector<EndpointWait>& waits) const {
    std::vector<std::string> out;
    for (const EndpointWait& w : waits) {
      if (w.kind != EndpointWait::Kind::held) continue;
      out.push_back("  PE " + router(node_id(n)) + " " + w.who + " is held: its task id " +
                    std::to_string(w.color) + " is blocked [0390]\n");
    }
    return out;
  }

  const WaferView& v_;
  const Fabric& f_;
  const Topology& t_;
  // The owned nodes in router order: queues holding wavelets, and waiting endpoints with
  // their waits.
  std::map<uint64_t, std::vector<EndpointWait>> nodes_;
};

// The search over every domain's nodes, merged in node order.
class WaitSearch {
 public:
  explicit WaitSearch(const std::vector<const WaitGraphPart*>& parts) {
    for (const WaitGraphPart* p : parts) {
      for (const WaitNode& n : p->nodes) nodes_.emplace(n.node, &n);
      dead_ends_more_ += p->dead_ends_more;
    }
  }

  std::string report() const {
    std::string cycle = find_cycle();
    return held() + (cycle.empty() ? dead_ends() : cycle);
  }

 private:
  std::string find_cycle() const {
    // Iterative depth-first search in node order; a grey node reached again closes a cycle.
    enum : uint8_t { white, grey, black };
    std::map<uint64_t, uint8_t> state;
    for (const auto& [start, unused] : nodes_) {
      if (state[start] != white) continue;
      struct Frame {
        uint64_t n;
        const std::vector<WaitEdge>* out;
        size_t next = 0;
      };
      std::vector<Frame> stack;
      stack.push_back({start, &edges(start)});
      state[start] = grey;
      while (!stack.empty()) {
        Frame& top = stack.back();
        if (top.next == top.out->size()) {
          state[top.n] = black;
          stack.pop_back();
          continue;
        }
        const WaitEdge& e = (*top.out)[top.next++];
        const uint8_t st = state[e.to];
        if (st == grey) return describe_cycle(stack, e.to);
        if (st == white) {
          state[e.to] = grey;
          stack.push_back({e.to, &edges(e.to)});
        }
      }
    }
    return "";
  }

  // An edge leads only to a node some domain has (the facts and the parts agree).
  const std::vector<WaitEdge>& edges(uint64_t n) const {
    const auto it = nodes_.find(n);
    if (it == nodes_.end()) internal_error("a wait-graph edge leads to no domain's node");
    return it->second->edges;
  }

  template <class Stack>
  static std::string describe_cycle(const Stack& stack, uint64_t back_to) {
    size_t first = 0;
    while (stack[first].n != back_to) ++first;
    std::string s = "wait cycle (each waits for the next; the last for the first):\n";
    for (size_t i = first; i < stack.size(); ++i) {
      s += "  " + (*stack[i].out)[stack[i].next - 1].why + "\n";
    }
    return s;
  }

  std::string held() const {
    std::string s;
    for (const auto& [nd, n] : nodes_) {
      for (const std::string& line : n->held) s += line;
    }
    if (s.empty()) return "";
    return "microthreads held by a blocked id (block_holds_microthreads; an unblock of the id "
           "lets them resume):\n" + s;
  }

  std::string dead_ends() const {
    std::string s;
    size_t shown = 0, total = dead_ends_more_;
    for (const auto& [nd, n] : nodes_) {
      for (const std::string& line : n->dead_ends) {
        ++total;
        if (shown < kMaxDeadEnds) {
          s += line;
          ++shown;
        }
      }
    }
    if (s.empty()) return "";
    if (total > kMaxDeadEnds) s += "  ... and " + std::to_string(total - kMaxDeadEnds) + " more\n";
    return "no wait cycle; PEs wait for wavelets that nothing will send:\n" + s;
  }

  std::map<uint64_t, const WaitNode*> nodes_;
  uint64_t dead_ends_more_ = 0;
};

}  // namespace

WaitGraphPart wait_graph_part(const WaferView& view) {
  if (view.fabric().config().packet_mode) return {};
  return WaitGraph(view).part();
}

std::string wait_cycle_report(const std::vector<const WaitGraphPart*>& parts) {
  return WaitSearch(parts).report();
}

void WaitGraphPart::encode(ByteWriter& w) const {
  w.u64(nodes.size());
  for (const WaitNode& n : nodes) {
    w.u64(n.node);
    w.u64(n.edges.size());
    for (const WaitEdge& e : n.edges) {
      w.u64(e.to);
      w.str(e.why);
    }
    w.u64(n.held.size());
    for (const std::string& s : n.held) w.str(s);
    w.u64(n.dead_ends.size());
    for (const std::string& s : n.dead_ends) w.str(s);
  }
  w.u64(dead_ends_more);
}

WaitGraphPart WaitGraphPart::decode(ByteReader& r) {
  WaitGraphPart out;
  out.nodes.resize(r.count());
  for (WaitNode& n : out.nodes) {
    n.node = r.u64();
    n.edges.resize(r.count());
    for (WaitEdge& e : n.edges) {
      e.to = r.u64();
      e.why = r.str();
    }
    n.held.resize(r.count());
    for (std::string& s : n.held) s = r.str();
    n.dead_ends.resize(r.count());
    for (std::string& s : n.dead_ends) s = r.str();
  }
  out.dead_ends_more = r.u64();
  return out;
}

}  // namespace wafersim::sim
