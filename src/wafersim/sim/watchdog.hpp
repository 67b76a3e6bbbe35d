// The deadlock report the watchdog attaches to DeadlockError [0306]: every router queue
// that holds wavelets, which directions its head still waits for and who stalls each one,
// and the endpoints that hold work.
#pragma once

#include <cstdint>
#include <string>

#include "wafersim/fabric/fabric.hpp"

namespace wafersim::sim {

std::string deadlock_report(const fabric::Fabric& fabric, uint64_t cycle);

}  // namespace wafersim::sim
