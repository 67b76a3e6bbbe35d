// A persistent team of threads for the row phases of the cycle loop, waiting for work
// with a short spin before they sleep.
//
// Why not an OpenMP parallel-for per phase: a cycle has two phases, each a fork and a
// join. With threads that sleep at once (OMP_WAIT_POLICY=passive, the default wafersim
// sets) every phase pays the wake-up of a sleeping thread, about 100 us on a virtual
// machine, which is more than the phase itself on fabrics up to about 96 x 96. With
// threads that spin (the active policy) a run beside other busy processes slows down
// many times, because a spinning thread keeps the core its partner needs. Here a
// waiting thread spins for at most `spin` (default 50 us, a few phases of a mid-size
// fabric), yielding the core now and then, and then sleeps on a condition variable:
// phases that follow each other closely never sleep. Each thread adapts its own spin: a
// wait that ended in sleep halves it (down to 1/16 of `spin`), one that ended while
// spinning doubles it (up to `spin`), so on a machine where the partner thread is often
// off its core (other processes busy) the threads spin little and behave as sleeping
// ones, and on a quiet machine they spin.
//
// Work is split in contiguous chunks, chunk k on thread k (chunk 0 on the calling thread),
// as OpenMP's static schedule splits it, so a thread keeps the same rows cycle after
// cycle. A thread takes its chunk's items from the front, one at a time, and when it has
// none left takes what is left of the others' chunks from their back. So a thread that is
// late (asleep, or off its core) loses its items to the others instead of holding them
// up, and uneven items even out; the caller waits only for items already taken. Which
// thread runs an item never changes a result (the cycle loop's rows are independent).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace wafersim::sim {

class RowTeam {
 public:
  RowTeam() = default;
  ~RowTeam();
  RowTeam(const RowTeam&) = delete;
  RowTeam& operator=(const RowTeam&) = delete;

  // How long a waiting thread spins before it sleeps (0: sleep at once).
  // (Atomic: the workers read it while they wait between runs.)
  void set_spin(std::chrono::microseconds spin) { spin_us_.store(spin.count()); }
  std::chrono::microseconds spin() const { return std::chrono::microseconds(spin_us_.load()); }

  // Runs f(i) for every i in [0, n) on `threads` threads (the caller is one of them) and
  // returns when all are done. f must not throw.
  template <class F>
  void run(int threads, int n, F& f) {
    struct Thunk {
      static void call(void* ctx, int i) { (*static_cast<F*>(ctx))(i); }
    };
    dispatch(threads, n, &Thunk::call, &f);
  }

  // Threads started besides the caller (for tests and `wafersim info`).
  int workers() const { return static_cast<int>(workers_.size()); }

 private:
  using Body = void (*)(void* ctx, int item);
  void dispatch(int threads, int n, Body body, void* ctx);
  void start(int threads);
  void stop();
  void worker_loop(int k);
  // Thread k's part of job `gen` (low bits of the generation): its own chunk from the
  // front, then the others' from their back, until nothing is left to take.
  void work(int k, uint32_t gen);
  // Takes the next item of chunk j from its front (or back) while job `gen` is current.
  bool take(int j, uint32_t gen, bool front, int& item);
  // Waits until `word` differs from `old`: spins for up to `budget` (adapted, see
  // above), then sleeps.
  void wait_change(std::atomic<uint32_t>& word, uint32_t old,
                   std::chrono::nanoseconds& budget);
  // Wakes the sleepers, if any, after a word they may wait on changed.
  void wake_sleepers();

  std::vector<std::thread> workers_;
  long owner_pid_ = 0;           // a forked child has none of the parent's threads
  std::atomic<uint32_t> generation_{0};  // bumped for every job (and to stop)
  std::atomic<uint32_t> done_{0};        // items of the current job finished
  // Each thread's chunk of the current job: the generation's low 30 bits, then the first
  // and the end of the items not taken yet (17 bits each: up to 65,536 rows). Tagged with
  // the job, so a thread that wakes late cannot take items of a later job.
  struct alignas(64) Chunk {
    std::atomic<uint64_t> word{0};
  };
  std::unique_ptr<Chunk[]> chunks_;
  int team_size_ = 1;  // chunks_ entries: the caller and the workers
  std::atomic<int> sleepers_{0};         // threads asleep (or about to be) in wait_change
  // Where sleepers sleep. (std::atomic::wait lost wake-ups here: GCC 12's library left
  // 4 ms waits, a timer tick, between phases on a busy machine.)
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
  // The current job, written before generation_ is bumped; a worker reads them only
  // after it took an item of the job (the caller does not change them before every
  // item taken is done).
  Body body_ = nullptr;
  void* ctx_ = nullptr;
  uint32_t n_ = 0;
  bool stopping_ = false;
  std::atomic<int64_t> spin_us_{50};
  std::chrono::nanoseconds master_budget_{50000};  // the calling thread's adapted spin
};

}  // namespace wafersim::sim
