#include "wafersim/zeroed_pages.hpp"

#include <cstdlib>
#include <new>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define WAFERSIM_HAVE_MMAP 1
#endif

namespace wafersim {

size_t page_bytes() {
#ifdef WAFERSIM_HAVE_MMAP
  const long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<size_t>(p) : 4096;
#else
  return 4096;
#endif
}

uint8_t* map_zeroed(size_t bytes) {
#ifdef WAFERSIM_HAVE_MMAP
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_NORESERVE
  flags |= MAP_NORESERVE;  // committed page by page, as pages are touched
#endif
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_NOHUGEPAGE
  // A huge page would make 2 MB resident at the first write to any byte of it.
  madvise(p, bytes, MADV_NOHUGEPAGE);
#endif
  return static_cast<uint8_t*>(p);
#else
  void* p = std::calloc(bytes, 1);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<uint8_t*>(p);
#endif
}

void unmap_zeroed(uint8_t* p, size_t bytes) {
#ifdef WAFERSIM_HAVE_MMAP
  munmap(p, bytes);
#else
  (void)bytes;
  std::free(p);
#endif
}

}  // namespace wafersim
