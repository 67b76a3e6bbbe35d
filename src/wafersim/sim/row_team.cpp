#include "wafersim/sim/row_team.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace wafersim::sim {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

RowTeam::~RowTeam() { stop(); }

void RowTeam::chunk(int k, int& begin, int& end) const {
  if (bounds_ != nullptr) {
    begin = bounds_[k];
    end = bounds_[k + 1];
    return;
  }
  // OpenMP's static schedule: the first n % threads chunks get one more.
  const int q = n_ / threads_, r = n_ % threads_;
  begin = k * q + (k < r ? k : r);
  end = begin + q + (k < r ? 1 : 0);
}

void RowTeam::wait_change(std::atomic<uint32_t>& word, uint32_t old,
                          std::chrono::nanoseconds& budget) {
  using Clock = std::chrono::steady_clock;
  const std::chrono::nanoseconds most = spin(), least = most / 16;
  budget = std::clamp(budget, least, most);
  if (budget.count() > 0) {
    const Clock::time_point until = Clock::now() + budget;
    for (unsigned round = 1;; ++round) {
      for (int i = 0; i < 64; ++i) {
        if (word.load(std::memory_order_acquire) != old) {
          budget = std::min(most, budget * 2);
          return;
        }
        cpu_relax();
      }
      if (Clock::now() >= until) break;
      // Now and then give the core away: on a loaded machine the thread this one waits
      // for may need it.
      if (round % 16 == 0) std::this_thread::yield();
    }
  }
  // Announce the sleep before the last look (seq_cst on both sides): either this thread
  // sees the new value, or the writer sees a sleeper and wakes it.
  budget = std::max(least, budget / 2);
  std::unique_lock<std::mutex> lock(sleep_mutex_);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  wake_.wait(lock, [&] { return word.load(std::memory_order_seq_cst) != old; });
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void RowTeam::wake_sleepers() {
  // The writer changed the word (seq_cst) before looking here: a sleeper that announced
  // itself before that looks at the word under the mutex, which this takes before it
  // notifies, so the notification cannot fall between its look and its sleep.
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
  { std::lock_guard<std::mutex> lock(sleep_mutex_); }
  wake_.notify_all();
}

void RowTeam::worker_loop(int k) {
  uint32_t seen = 0;
  std::chrono::nanoseconds budget = spin();
  for (;;) {
    wait_change(generation_, seen, budget);
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_) return;
    int begin, end;
    chunk(k, begin, end);
    if (begin < end) body_(ctx_, begin, end);
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1) wake_sleepers();
  }
}

void RowTeam::start(int threads) {
  stop();
  owner_pid_ = static_cast<long>(getpid());
  stopping_ = false;
  generation_.store(0);
  workers_.reserve(static_cast<size_t>(threads - 1));
  // The workers block every signal (they inherit the mask they are created with): a
  // signal sent to the process (Ctrl-C) then goes to the application's own threads, as
  // Python expects, never to a thread of ours sleeping between phases.
  struct BlockSignals {
    sigset_t old;
    BlockSignals() {
      sigset_t all;
      sigfillset(&all);
      pthread_sigmask(SIG_SETMASK, &all, &old);
    }
    ~BlockSignals() { pthread_sigmask(SIG_SETMASK, &old, nullptr); }
  } blocked;
  for (int k = 1; k < threads; ++k) workers_.emplace_back([this, k] { worker_loop(k); });
}

void RowTeam::stop() {
  if (workers_.empty()) return;
  if (owner_pid_ != static_cast<long>(getpid())) {
    // A forked child: the threads are the parent's; forget them without touching them.
    new std::vector<std::thread>(std::move(workers_));  // never joined nor destroyed
    workers_.clear();
    // A parent's worker may have held the mutex at the fork: start the child's afresh.
    new (&sleep_mutex_) std::mutex;
    new (&wake_) std::condition_variable;
    sleepers_.store(0);
    return;
  }
  stopping_ = true;
  generation_.fetch_add(1, std::memory_order_seq_cst);
  wake_sleepers();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void RowTeam::dispatch(int threads, int n, Body body, void* ctx, const int* bounds) {
  if (threads <= 1 || n <= 1) {
    body(ctx, 0, n);
    return;
  }
  if (static_cast<int>(workers_.size()) != threads - 1 ||
      owner_pid_ != static_cast<long>(getpid())) {
    start(threads);
  }
  body_ = body;
  ctx_ = ctx;
  n_ = n;
  threads_ = threads;
  bounds_ = bounds;
  pending_.store(static_cast<uint32_t>(threads - 1), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  wake_sleepers();
  int begin, end;
  chunk(0, begin, end);
  if (begin < end) body(ctx, begin, end);
  for (uint32_t left = pending_.load(std::memory_order_acquire); left != 0;
       left = pending_.load(std::memory_order_acquire)) {
    wait_change(pending_, left, master_budget_);
  }
}

}  // namespace wafersim::sim
