#pragma once
/// @file backend/worker_pool.hpp
/// The host worker threads of a backend, made once and kept: the CPU backend's passes, reductions
/// and a batch's host work all run on its one pool (backend/cpu.hpp); the CUDA backend keeps one
/// for a batch's host work (backend/cuda.cuh). The algorithm layer creates no threads: it asks its
/// backend for host_workers().
///
/// run(n, fn) calls fn(w) for every w in [0, n) (n at most size(); more are capped), each on its
/// own worker at once, and returns when all have returned; the calling thread is worker 0, the
/// others are started on first use and then wait for the next job. A job is run by one caller at a
/// time (a second caller waits for the first). A run() made from inside a job of the same pool
/// (a reduction inside a batch's host work) runs its fn(0) .. fn(n - 1) one after the other on the
/// calling thread, so nested use never deadlocks; the callers' work functions take work from
/// shared counters and never wait for a particular worker, so both orders compute the same.
/// Determinism: which thread runs which w never changes a result (every caller's partial sums are
/// merged in a fixed order or exactly).
/// @throws the first exception thrown by a fn(w) (in time), once all have returned.

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mcubes {

/// Host threads for a batch's host work where the backend's own threads are on a device (the CUDA
/// backend): the hardware threads, at most 8.
inline int host_worker_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(std::min(8u, hw));
}

class worker_pool {
 public:
  /// A pool of at most `workers` workers (at least 1; the caller counts as one). No thread is
  /// started here.
  explicit worker_pool(int workers) : size_(std::max(1, workers)) {}
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;
  ~worker_pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  /// Largest number of workers of a job.
  int size() const noexcept { return size_; }

  /// Calls fn(w) for w in [0, min(n, size())) concurrently (file comment). @throws as fn.
  template <class Fn>
  void run(int n, const Fn& fn) {
    n = std::min(n, size_);
    if (n <= 0) return;
    if (n == 1 || serving() == this) {  // one worker, or nested in a job of this pool: in order, here
      for (int w = 0; w < n; ++w) fn(w);
      return;
    }
    std::lock_guard<std::mutex> one_job(job_mutex_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (static_cast<int>(threads_.size()) + 1 < n) {
        const int w = static_cast<int>(threads_.size()) + 1;
        threads_.emplace_back([this, w] { loop(w); });
      }
      job_ = [&fn](int w) { fn(w); };
      n_ = n;
      pending_ = n - 1;
      failure_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    std::exception_ptr mine;
    {
      const serving_scope scope(this);
      try {
        fn(0);
      } catch (...) {
        mine = std::current_exception();
      }
    }
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
    if (!mine) mine = failure_;
    failure_ = nullptr;
    lock.unlock();
    if (mine) std::rethrow_exception(mine);
  }

 private:
  /// The pool whose job this thread runs now (null: none).
  static worker_pool*& serving() {
    static thread_local worker_pool* current = nullptr;
    return current;
  }
  struct serving_scope {
    worker_pool* saved;
    explicit serving_scope(worker_pool* p) : saved(serving()) { serving() = p; }
    ~serving_scope() { serving() = saved; }
  };

  void loop(int w) {
    std::uint64_t seen = 0;
    for (;;) {
      std::function<void(int)> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return quit_ || generation_ != seen; });
        if (quit_) return;
        seen = generation_;
        if (w >= n_) continue;  // not a worker of this job
        job = job_;
      }
      std::exception_ptr failed;
      {
        const serving_scope scope(this);
        try {
          job(w);
        } catch (...) {
          failed = std::current_exception();
        }
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (failed && !failure_) failure_ = failed;
      if (--pending_ == 0) done_.notify_one();
    }
  }

  int size_;
  std::vector<std::thread> threads_;
  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::function<void(int)> job_;
  int n_ = 0, pending_ = 0;
  std::uint64_t generation_ = 0;
  std::exception_ptr failure_;
  bool quit_ = false;
};

}  // namespace mcubes
