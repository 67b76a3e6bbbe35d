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

// A chunk's word: generation (low 30 bits), first item, end.
constexpr int kItemBits = 17;
constexpr uint64_t kItemMask = (uint64_t{1} << kItemBits) - 1;
constexpr uint32_t kGenMask = (uint32_t{1} << (64 - 2 * kItemBits)) - 1;

inline uint64_t chunk_word(uint32_t gen, uint32_t first, uint32_t end) {
  return (uint64_t{gen} << (2 * kItemBits)) | (uint64_t{first} << kItemBits) | end;
}

}  // namespace

RowTeam::~RowTeam() { stop(); }

bool RowTeam::take(int j, uint32_t gen, bool front, int& item) {
  std::atomic<uint64_t>& word = chunks_[static_cast<size_t>(j)].word;
  uint64_t w = word.load(std::memory_order_acquire);
  for (;;) {
    if ((w >> (2 * kItemBits)) != gen) return false;  // a later job (or none yet)
    const auto first = static_cast<uint32_t>((w >> kItemBits) & kItemMask);
    const auto end = static_cast<uint32_t>(w & kItemMask);
    if (first >= end) return false;
    const uint64_t next = front ? chunk_word(gen, first + 1, end) : chunk_word(gen, first, end - 1);
    if (word.compare_exchange_weak(w, next, std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
      item = static_cast<int>(front ? first : end - 1);
      return true;
    }
  }
}

void RowTeam::work(int k, uint32_t gen) {
  uint32_t finished = 0;
  int item;
  while (take(k, gen, true, item)) {
    body_(ctx_, item);
    ++finished;
  }
  for (int d = 1; d < team_size_; ++d) {
    const int j = (k + d) % team_size_;
    while (take(j, gen, false, item)) {
      body_(ctx_, item);
      ++finished;
    }
  }
  if (finished == 0) return;
  // The last item of the job wakes the caller if it sleeps.
  if (done_.fetch_add(finished, std::memory_order_acq_rel) + finished == n_) wake_sleepers();
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
    work(k, seen & kGenMask);
  }
}

void RowTeam::start(int threads) {
  stop();
  owner_pid_ = static_cast<long>(getpid());
  stopping_ = false;
  generation_.store(0);
  team_size_ = threads;
  chunks_ = std::make_unique<Chunk[]>(static_cast<size_t>(threads));
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

void RowTeam::dispatch(int threads, int n, Body body, void* ctx) {
  if (threads <= 1 || n <= 1 || static_cast<uint64_t>(n) > kItemMask) {  // (rows <= 65,536)
    for (int i = 0; i < n; ++i) body(ctx, i);
    return;
  }
  if (static_cast<int>(workers_.size()) != threads - 1 ||
      owner_pid_ != static_cast<long>(getpid())) {
    start(threads);
  }
  body_ = body;
  ctx_ = ctx;
  n_ = static_cast<uint32_t>(n);
  done_.store(0, std::memory_order_relaxed);
  const uint32_t generation = generation_.load(std::memory_order_relaxed) + 1;
  const uint32_t gen = generation & kGenMask;
  // OpenMP's static schedule: the first n % threads chunks get one more.
  const int q = n / threads, r = n % threads;
  for (int k = 0, first = 0; k < threads; ++k) {
    const int end = first + q + (k < r ? 1 : 0);
    chunks_[static_cast<size_t>(k)].word.store(
        chunk_word(gen, static_cast<uint32_t>(first), static_cast<uint32_t>(end)),
        std::memory_order_release);
    first = end;
  }
  generation_.store(generation, std::memory_order_seq_cst);
  wake_sleepers();
  work(0, gen);
  // Only the items other threads took are left; they are being run.
  for (uint32_t d = done_.load(std::memory_order_acquire); d != n_;
       d = done_.load(std::memory_order_acquire)) {
    wait_change(done_, d, master_budget_);
  }
}

}  // namespace wafersim::sim
