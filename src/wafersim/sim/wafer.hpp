// A wafer as the simulator runs it: the fabric, the endpoints on its ramps and border links
// (host ports today; compute elements later), and the cycle loop. Host I/O goes through
// whole arrays, never one wavelet per call.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "wafersim/fabric/fabric.hpp"
#include "wafersim/fabric/host_port.hpp"
#include "wafersim/sim/simulator.hpp"

namespace wafersim::sim {

struct WaferConfig {
  fabric::FabricConfig fabric;
  int threads = 0;            // 0: OpenMP default
  uint64_t watchdog = 10000;  // cycles without progress before DeadlockError
};

// Equal-length columns, one row per wavelet to inject.
struct InjectBatch {
  std::span<const uint32_t> router;
  std::span<const uint8_t> port;    // fabric::kRamp, or the direction of a border edge port
  std::span<const uint8_t> color;
  std::span<const uint32_t> data;
  std::span<const uint16_t> index;
  std::span<const uint8_t> ctrl;
  std::span<const int64_t> release;  // cycle to release at; earlier than now means now
  std::span<const uint32_t> dest;    // packet mode: destination router; else empty
};

// What arrived at host ports, one entry per wavelet, ordered by arrival cycle then port.
struct Collected {
  std::vector<uint32_t> router;
  std::vector<uint8_t> port;
  std::vector<uint8_t> color;
  std::vector<uint32_t> data;
  std::vector<uint16_t> index;
  std::vector<uint8_t> ctrl;
  std::vector<uint16_t> hops;
  std::vector<uint64_t> injected;
  std::vector<uint64_t> arrived;
};

class Wafer {
 public:
  explicit Wafer(const WaferConfig& config);
  Wafer(const Wafer&) = delete;
  Wafer& operator=(const Wafer&) = delete;

  fabric::Fabric& fabric() { return fabric_; }
  const fabric::Fabric& fabric() const { return fabric_; }
  Simulator& simulator() { return sim_; }

  // Route consistency and cycles (RouteError), then attaches a host port wherever a route
  // starts or ends at a ramp or edge port that has no endpoint yet.
  void check_routes();

  void inject(const InjectBatch& batch);
  // Per-color sink capacity (0: unlimited) and drain period of a host port.
  void set_sink(uint32_t router, fabric::Dir port, uint32_t capacity, uint32_t drain_period);
  // Takes what arrived (router < 0: at every host port; else only at (router, port)).
  Collected collect(int64_t router, int port);
  uint64_t pending_injections() const;

  RunResult run(uint64_t max_cycles);

  // Counters since construction or the last reset (docs/fabric.md).
  void reset_counters();
  uint64_t counters_since() const { return counters_since_; }

 private:
  fabric::HostPort& host_port(uint32_t router, fabric::Dir port);
  void prepare();
  void attach_endpoints();

  fabric::Fabric fabric_;
  Simulator sim_;
  std::map<uint64_t, std::unique_ptr<fabric::HostPort>> host_ports_;  // key: router*16+port
  uint64_t checked_version_ = fabric::kNever;
  uint64_t counters_since_ = 0;
};

}  // namespace wafersim::sim
