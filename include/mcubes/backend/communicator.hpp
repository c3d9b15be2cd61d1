#pragma once
/// @file backend/communicator.hpp
/// The exchanges of a team of processes or threads (backend/team.hpp: one integral with the bits
/// of one process): the communicator interface, the failures an exchange reports, a timed
/// communicator, a team of threads of one process (thread_team: one per GPU, or CPU backends in
/// the tests), a team of teams (nested_communicator: the GPUs of each MPI rank) and the byte
/// packing of their messages. What is exchanged, and when, is team.hpp's.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "../error.hpp"

namespace mcubes {

/// The exchanges a team of processes needs, whatever carries them (mcubes/mpi.hpp: MPI). Every
/// rank calls each operation in the same order (a collective). Implementations must be usable
/// from the thread that runs the method (one thread at a time).
class communicator {
 public:
  virtual ~communicator() = default;
  /// This process's rank in [0, size()).
  virtual int rank() const = 0;
  /// Number of ranks (>= 1).
  virtual int size() const = 0;
  /// Gathers each rank's `mine` into all[r] (r = the rank), on every rank. Sizes may differ.
  /// @throws error if the transport fails.
  virtual void all_gather(const std::vector<unsigned char>& mine, std::vector<std::vector<unsigned char>>& all) const = 0;
};

/// A rank's failure, as seen by the other ranks of the team: "rank R: MESSAGE".
class team_failure : public error {
 public:
  team_failure(int rank, const std::string& message)
      : error("rank " + std::to_string(rank) + ": " + message), rank_(rank) {}
  /// The rank that failed first (the lowest failing rank).
  int rank() const noexcept { return rank_; }

 private:
  int rank_;
};

/// What a thread_team member's exchange throws once another member's thread has failed outside
/// an exchange (thread_team::abandon): the exchange cannot complete.
class team_abandoned : public error {
 public:
  team_abandoned() : error("a member of the thread team has failed") {}
};

/// The time a rank spent in its team's exchanges (timed_communicator).
struct exchange_time {
  double seconds = 0;           ///< wall time inside all_gather, waiting for the slowest rank included
  std::uint64_t exchanges = 0;  ///< all_gather calls
  std::uint64_t bytes = 0;      ///< bytes received (every rank's payload, this rank's own included)
};

/// A communicator that forwards to `inner` and times each exchange (exchange_time): what the
/// command and the benchmarks report as the cost of a team. Same thread rule as `inner`.
class timed_communicator final : public communicator {
 public:
  explicit timed_communicator(const communicator& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  void all_gather(const std::vector<unsigned char>& mine, std::vector<std::vector<unsigned char>>& all) const override {
    const auto start = std::chrono::steady_clock::now();
    inner_.all_gather(mine, all);
    time_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++time_.exchanges;
    for (const auto& a : all) time_.bytes += a.size();
  }
  /// The exchanges so far.
  const exchange_time& time() const noexcept { return time_; }

 private:
  const communicator& inner_;
  mutable exchange_time time_;
};

/// A team of n threads of one process (one per GPU: vegas_on_devices; or CPU backends, as in the
/// tests): member(r) is rank r's communicator, whose all_gather meets the other members' through
/// shared memory. Each member is used by one thread. A member whose thread fails outside an
/// exchange calls abandon(): every exchange then under way or to come throws instead of waiting.
class thread_team {
 public:
  /// @throws invalid_input if n < 1.
  explicit thread_team(int n) : shared_(std::make_shared<state>()) {
    MCUBES_EXPECTS(n >= 1, "a thread team needs at least one member, got ", n);
    shared_->slots.assign(static_cast<std::size_t>(n), {});
    for (int r = 0; r < n; ++r) members_.push_back(member_comm(shared_, r, n));
  }
  /// Rank r's communicator (valid while the team lives).
  const communicator& member(int r) const { return members_.at(static_cast<std::size_t>(r)); }
  int size() const noexcept { return static_cast<int>(members_.size()); }
  /// Runs fn(r, member(r)) for every member, member 0 on the calling thread (so that a member 0
  /// that also talks to MPI does so from the thread that initialised it: nested_communicator) and
  /// the others on one new thread each, and waits for all. A member whose fn throws abandons the
  /// team (the others' exchanges throw team_abandoned instead of waiting); then the failure itself
  /// is rethrown: the lowest rank's exception that is not an echo of another's (team_failure,
  /// team_abandoned), else the lowest rank's.
  template <class Fn>
  void run_each(const Fn& fn) {
    const int n = size();
    std::vector<std::exception_ptr> failures(static_cast<std::size_t>(n));
    const auto one = [&](int r) {
      try {
        fn(r, member(r));
      } catch (...) {
        failures[static_cast<std::size_t>(r)] = std::current_exception();
        abandon();
      }
    };
    std::vector<std::thread> threads;
    for (int r = 1; r < n; ++r) threads.emplace_back(one, r);
    one(0);
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : failures) {
      if (!e) continue;
      try {
        std::rethrow_exception(e);
      } catch (const team_failure&) {
      } catch (const team_abandoned&) {
      }
    }
    for (const std::exception_ptr& e : failures)
      if (e) std::rethrow_exception(e);
  }
  /// Makes every exchange under way or to come throw team_abandoned (a member's thread has failed).
  void abandon() {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->broken = true;
    shared_->wake.notify_all();
  }

 private:
  struct state {
    std::mutex mutex;
    std::condition_variable wake;
    std::vector<std::vector<unsigned char>> slots, published;
    int arrived = 0;
    std::uint64_t round = 0;
    bool broken = false;
  };
  class member_comm final : public communicator {
   public:
    member_comm(std::shared_ptr<state> s, int rank, int size) : s_(std::move(s)), rank_(rank), size_(size) {}
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    void all_gather(const std::vector<unsigned char>& mine, std::vector<std::vector<unsigned char>>& all) const override {
      std::unique_lock<std::mutex> lock(s_->mutex);
      if (s_->broken) throw team_abandoned();
      s_->slots[static_cast<std::size_t>(rank_)] = mine;
      if (++s_->arrived == size_) {  // the last one publishes the round
        s_->published = std::move(s_->slots);
        s_->slots.assign(static_cast<std::size_t>(size_), {});
        s_->arrived = 0;
        ++s_->round;
        s_->wake.notify_all();
      } else {
        const std::uint64_t round = s_->round;
        s_->wake.wait(lock, [&] { return s_->round != round || s_->broken; });
        if (s_->round == round) throw team_abandoned();
      }
      all = s_->published;  // valid until every member has deposited for the next round
    }

   private:
    std::shared_ptr<state> s_;
    int rank_, size_;
  };
  std::shared_ptr<state> shared_;
  std::vector<member_comm> members_;
};

/// Appends the bytes of a trivially copyable value.
template <class T>
void put_bytes(std::vector<unsigned char>& out, const T* p, std::size_t n = 1) {
  static_assert(std::is_trivially_copyable_v<T>, "team exchanges carry trivially copyable values");
  const std::size_t at = out.size(), bytes = n * sizeof(T);
  out.resize(at + bytes);
  if (bytes != 0) std::memcpy(out.data() + at, static_cast<const void*>(p), bytes);
}

/// Reads n values at `at` (advanced). @throws error if the message is too short.
template <class T>
void take_bytes(const std::vector<unsigned char>& in, std::size_t& at, T* p, std::size_t n = 1) {
  static_assert(std::is_trivially_copyable_v<T>, "team exchanges carry trivially copyable values");
  MCUBES_EXPECTS(at + n * sizeof(T) <= in.size(), "team exchange: a rank's message is shorter than expected");
  std::memcpy(static_cast<void*>(p), in.data() + at, n * sizeof(T));
  at += n * sizeof(T);
}

/// A team of teams: the members of a thread_team (`local`: one per GPU of this process) in each
/// rank of an outer team (`outer`: MPI ranks), numbered rank-major: outer rank q's local member g
/// is rank (the members of the outer ranks before q) + g of sizes summed over the outer ranks
/// (which may differ). Each all_gather gathers the local members' payloads, then local member 0
/// exchanges them with the other outer ranks (the only member that calls `outer`: run it on the
/// thread that may call MPI, as thread_team::run_each does), then hands the whole to its local
/// members: every member gets every member's payload in rank order, as any communicator. Two
/// local exchanges and one outer exchange per call. The constructor is a collective of the local
/// members (and of the outer ranks, through member 0).
class nested_communicator final : public communicator {
 public:
  /// @throws as the exchanges.
  nested_communicator(const communicator& outer, const communicator& local) : outer_(outer), local_(local) {
    std::vector<std::uint64_t> members;  // local members of each outer rank
    std::vector<unsigned char> mine;
    if (local_.rank() == 0) {
      const std::uint64_t g = static_cast<std::uint64_t>(local_.size());
      put_bytes(mine, &g);
      std::vector<std::vector<unsigned char>> all;
      outer_.all_gather(mine, all);
      mine.clear();
      for (const auto& a : all) {
        std::size_t at = 0;
        std::uint64_t n = 0;
        take_bytes(a, at, &n);
        put_bytes(mine, &n);
      }
    }
    std::vector<std::vector<unsigned char>> shared;
    local_.all_gather(mine, shared);
    members.resize(shared[0].size() / sizeof(std::uint64_t));
    std::size_t at = 0;
    take_bytes(shared[0], at, members.data(), members.size());
    MCUBES_EXPECTS(members.size() == static_cast<std::size_t>(outer_.size()), "nested team: ", members.size(),
                   " outer ranks, not ", outer_.size());
    for (std::size_t q = 0; q < members.size(); ++q) {
      if (static_cast<int>(q) == outer_.rank()) rank_ = size_ + local_.rank();
      size_ += static_cast<int>(members[q]);
    }
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_gather(const std::vector<unsigned char>& mine, std::vector<std::vector<unsigned char>>& all) const override {
    std::vector<std::vector<unsigned char>> here;
    local_.all_gather(mine, here);
    std::vector<unsigned char> whole;  // member 0: every member's payload, as counts and bytes
    if (local_.rank() == 0) {
      std::vector<std::vector<unsigned char>> ranks;
      outer_.all_gather(pack(here), ranks);
      std::vector<std::vector<unsigned char>> every;
      for (const auto& q : ranks) {
        std::vector<std::vector<unsigned char>> members = unpack(q);
        for (auto& m : members) every.push_back(std::move(m));
      }
      whole = pack(every);
    }
    local_.all_gather(whole, here);
    all = unpack(here[0]);
    MCUBES_EXPECTS(all.size() == static_cast<std::size_t>(size_), "nested team: ", all.size(), " payloads for ", size_,
                   " members");
  }

 private:
  static std::vector<unsigned char> pack(const std::vector<std::vector<unsigned char>>& items) {
    std::vector<unsigned char> out;
    const std::uint64_t n = items.size();
    put_bytes(out, &n);
    for (const auto& i : items) {
      const std::uint64_t k = i.size();
      put_bytes(out, &k);
      put_bytes(out, i.data(), i.size());
    }
    return out;
  }
  static std::vector<std::vector<unsigned char>> unpack(const std::vector<unsigned char>& in) {
    std::size_t at = 0;
    std::uint64_t n = 0;
    take_bytes(in, at, &n);
    std::vector<std::vector<unsigned char>> items(static_cast<std::size_t>(n));
    for (auto& i : items) {
      std::uint64_t k = 0;
      take_bytes(in, at, &k);
      i.resize(static_cast<std::size_t>(k));
      take_bytes(in, at, i.data(), i.size());
    }
    return items;
  }
  const communicator& outer_;
  const communicator& local_;
  int rank_ = 0, size_ = 0;
};

}  // namespace mcubes
