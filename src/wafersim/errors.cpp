#include "wafersim/errors.hpp"

namespace wafersim {

const char* category_name(ErrorCategory c) noexcept {
  switch (c) {
    case ErrorCategory::usage: return "usage";
    case ErrorCategory::unsupported: return "unsupported";
    case ErrorCategory::unspecified: return "unspecified";
    case ErrorCategory::internal: return "internal";
  }
  return "internal";
}

void internal_error(const std::string& what) {
  throw WaferError("internal error (please report): " + what, ErrorCategory::internal);
}

}  // namespace wafersim
