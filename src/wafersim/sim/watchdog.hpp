// The deadlock report the watchdog attaches to DeadlockError [0306]: every router queue
// that holds wavelets, which directions its head still waits for and who stalls each one,
// the endpoints that hold work (a compute element: running task and pc, blocked and
// active ids, non-empty queues, what each operand waits on), and the first cycle of waits
// through queues and endpoints, if there is one (wait_cycle.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "wafersim/fabric/fabric.hpp"

namespace wafersim::sim {

std::string deadlock_report(const fabric::Fabric& fabric, uint64_t cycle);

}  // namespace wafersim::sim
