// The exceptions every layer of the core throws. The bindings translate each one into the
// Python class of the same name (wafersim.errors), keeping the message and the category.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace wafersim {

// Whose fault an error is, so a reader knows whether to fix the program, read the docs or
// report a bug.
enum class ErrorCategory {
  usage,        // the caller's input, configuration or program is wrong
  unsupported,  // a feature deliberately not modelled (docs/unsupported_functionality.md)
  unspecified,  // the seed documents are silent and the emulator refuses to guess
  internal,     // an invariant of the emulator broke: a bug in wafersim
};

const char* category_name(ErrorCategory c) noexcept;

class WaferError : public std::runtime_error {
 public:
  explicit WaferError(const std::string& message,
                      ErrorCategory category = ErrorCategory::usage)
      : std::runtime_error(message), category_(category) {}
  ErrorCategory category() const noexcept { return category_; }

 private:
  ErrorCategory category_;
};

// A parameter or configuration value out of range or inconsistent.
class ConfigError : public WaferError {
  using WaferError::WaferError;
};

// A malformed or illegal program (assembler input, encoded instruction, DSD).
class ProgramError : public WaferError {
  using WaferError::WaferError;
};

// An access outside a memory, register file or array.
class MemoryAccessError : public WaferError {
  using WaferError::WaferError;
};

// A route that leaves the fabric, conflicts with another, or closes a dependency cycle.
class RouteError : public WaferError {
  using WaferError::WaferError;
};

// Wavelets in flight and nothing moved for the watchdog's window.
class DeadlockError : public WaferError {
 public:
  DeadlockError(const std::string& message, std::string report)
      : WaferError(message), report_(std::move(report)) {}
  const std::string& report() const noexcept { return report_; }

 private:
  std::string report_;
};

// Throws `internal` errors: use for invariants, never for user input.
[[noreturn]] void internal_error(const std::string& what);

}  // namespace wafersim
