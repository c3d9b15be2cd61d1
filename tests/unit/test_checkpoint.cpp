// Checkpoints (checkpoint.hpp) and resumed runs (vegas_continue's vegas_resumption): a run resumed
// from the checkpoint of any iteration boundary, on another thread count, ends with the bits of the
// run never stopped; the file format round-trips and refuses truncated, damaged, newer and foreign
// checkpoints.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include "mcubes/checkpoint.hpp"
#include "mcubes/mcubes.hpp"
#include "support/results.hpp"

namespace {

struct peak3 {  // a peak off the grid: VEGAS+ moves samples, the map adapts
  double operator()(const mcubes::point<3>& x) const {
    double r2 = 2e-3;
    for (int j = 0; j < 3; ++j) r2 += (x[j] - 0.31) * (x[j] - 0.31);
    return 1.0 / r2;
  }
};

mcubes::vegas_options run_options(mcubes::stratification_mode mode) {
  mcubes::vegas_options o;
  o.calls_per_iteration = 30000;
  o.max_iterations = 9;
  o.adapt_iterations = 5;
  o.skip = 2;
  o.min_iterations = 3;
  o.rel_tol = 1e-9;  // every iteration runs
  o.stratification = mode;
  o.seed = 17;
  return o;
}

// One run from a uniform map on `threads` CPU threads, resumed from `from` when given; `saved`
// collects the progress at every boundary and at the end.
mcubes::result run(const mcubes::vegas_options& o, int threads, const mcubes::vegas_progress* from,
                   std::vector<mcubes::vegas_progress>* saved) {
  mcubes::cpu_backend backend(threads);
  auto map = backend.make_map<3>(mcubes::map_bins_for(o));
  mcubes::vegas_state state;
  mcubes::cube_shares<mcubes::cpu_backend> shares;
  mcubes::vegas_resumption r;
  r.from = from;
  if (saved != nullptr)
    r.save = [saved](const std::function<mcubes::vegas_progress()>& progress, bool) { saved->push_back(progress()); };
  return mcubes::vegas_continue<3>(peak3{}, mcubes::region<3>::unit(), o, backend, map, state, shares, {}, r);
}

mcubes::checkpoint make_checkpoint(const mcubes::vegas_options& o, const mcubes::vegas_progress& p) {
  mcubes::checkpoint c;
  c.integrand = "peak3";
  c.dim = 3;
  c.lower = {0, 0, 0};
  c.upper = {1, 1, 1};
  c.options = o;
  c.progress = p;
  return c;
}

TEST(Checkpoint, AResumedRunEndsWithTheBitsOfTheUninterruptedOne) {
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    SCOPED_TRACE(mcubes::to_string(mode));
    const mcubes::vegas_options o = run_options(mode);
    std::vector<mcubes::vegas_progress> saved;
    const mcubes::result whole = run(o, 2, nullptr, &saved);
    ASSERT_EQ(whole.iterations, 9);
    ASSERT_EQ(saved.size(), 9u);  // 8 boundaries and the end
    if (mode == mcubes::stratification_mode::adaptive) {
      EXPECT_FALSE(saved[5].shares.empty());
    }
    for (std::size_t k = 0; k < saved.size(); ++k) {
      SCOPED_TRACE(testing::Message() << "resumed after " << saved[k].records.size() << " iterations");
      EXPECT_EQ(saved[k].records.size(), std::min<std::size_t>(k + 1, 9));
      // through the file format, on another thread count
      const std::string bytes = mcubes::encode_checkpoint(make_checkpoint(o, saved[k]));
      const mcubes::checkpoint c = mcubes::decode_checkpoint(bytes, "test");
      EXPECT_EQ(mcubes::encode_checkpoint(c), bytes);
      EXPECT_EQ(mcubes::checkpoint_difference(c, "peak3", 3, {0, 0, 0}, {1, 1, 1}, o, false), "");
      const mcubes::result resumed = run(c.options, 3, &c.progress, nullptr);
      mcubes_test::expect_same_result(whole, resumed);
    }
  }
}

// The options table (options.hpp): every entry once, with a flag and a doc; each field survives
// the checkpoint and the run-time compiler's slots, and a changed field is named on resume (with
// force allowed for the stopping rule's fields only).
TEST(OptionsTable, EveryFieldOnceThroughTheCheckpointTheSlotsAndTheResumeCheck) {
  std::vector<std::string> names, flags;
  int n = 0;
  mcubes::vegas_options changed;  // every field away from its default
  mcubes::for_each_vegas_option([&](const mcubes::option_info& info, auto field) {
    ++n;
    names.emplace_back(info.name);
    flags.emplace_back(info.flag);
    EXPECT_EQ(std::string(info.flag).rfind("--", 0), 0u) << info.name;
    EXPECT_GT(std::string(info.doc).size(), 10u) << info.name;
    using T = std::decay_t<decltype(changed.*field)>;
    if constexpr (std::is_same_v<T, bool>) changed.*field = !(changed.*field);
    else if constexpr (std::is_same_v<T, mcubes::stratification_mode>) changed.*field = mcubes::stratification_mode::uniform;
    else changed.*field = static_cast<T>(changed.*field + 3);
    std::uint64_t slot = mcubes::option_slot(changed.*field);
    T back{};
    mcubes::from_option_slot(slot, back);
    EXPECT_TRUE(back == changed.*field) << info.name;
  });
  EXPECT_EQ(n, mcubes::vegas_option_count);
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = i + 1; j < names.size(); ++j) {
      EXPECT_NE(names[i], names[j]);
      EXPECT_NE(flags[i], flags[j]);
    }
  mcubes::checkpoint c;
  c.integrand = "t";
  c.dim = 1;
  c.lower = {0};
  c.upper = {1};
  c.options = changed;
  const mcubes::checkpoint back = mcubes::decode_checkpoint(mcubes::encode_checkpoint(c), "test");
  mcubes::for_each_vegas_option([&](const mcubes::option_info& info, auto field) {
    EXPECT_TRUE(back.options.*field == changed.*field) << info.name;
    mcubes::vegas_options one;  // the default with this one field changed: named on resume
    one.*field = changed.*field;
    mcubes::checkpoint d = c;
    d.options = one;
    for (const bool force : {false, true}) {
      const std::string diff = mcubes::checkpoint_difference(d, "t", 1, {0}, {1}, mcubes::vegas_options{}, force);
      if (force && info.stopping_rule)
        EXPECT_EQ(diff, "") << info.name;
      else
        EXPECT_NE(diff.find(std::string("its ") + info.name + " is"), std::string::npos) << info.name << ": " << diff;
    }
  });
  // alpha as the run uses it (alpha_for): auto is 1.0 under VEGAS+, so a checkpoint of alpha 1.0
  // resumes with auto, one of 1.5 (an earlier VEGAS+ default) does not; under the uniform
  // stratification auto is 1.5
  mcubes::checkpoint e = c;
  e.options = mcubes::vegas_options{};
  e.options.alpha = 1.0;
  EXPECT_EQ(mcubes::checkpoint_difference(e, "t", 1, {0}, {1}, mcubes::vegas_options{}, false), "");
  e.options.alpha = 1.5;
  EXPECT_NE(mcubes::checkpoint_difference(e, "t", 1, {0}, {1}, mcubes::vegas_options{}, false).find("its alpha is 1.5, not 1"),
            std::string::npos);
  e.options.stratification = mcubes::stratification_mode::uniform;
  mcubes::vegas_options uniform;
  uniform.stratification = mcubes::stratification_mode::uniform;
  EXPECT_EQ(mcubes::checkpoint_difference(e, "t", 1, {0}, {1}, uniform, false), "");
}

TEST(Checkpoint, DamagedTruncatedNewerAndForeignFilesAreRefused) {
  const mcubes::vegas_options o = run_options(mcubes::stratification_mode::adaptive);
  std::vector<mcubes::vegas_progress> saved;
  run(o, 2, nullptr, &saved);
  const std::string bytes = mcubes::encode_checkpoint(make_checkpoint(o, saved[4]));
  const auto refused = [](const std::string& b, const std::string& fragment) {
    try {
      mcubes::decode_checkpoint(b, "f");
      ADD_FAILURE() << "accepted; expected: " << fragment;
    } catch (const mcubes::invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  for (std::size_t cut : {std::size_t(0), std::size_t(5), std::size_t(12), bytes.size() / 2, bytes.size() - 1})
    refused(bytes.substr(0, cut), cut < 8 ? "not an mcubes checkpoint" : cut < 16 ? "truncated" : "checksum");
  for (std::size_t at : {std::size_t(20), bytes.size() / 3, bytes.size() - 6}) {
    std::string b = bytes;
    b[at] = static_cast<char>(b[at] ^ 0x10);
    refused(b, "checksum");
  }
  std::string newer = bytes.substr(0, bytes.size() - 4);
  newer[8] = 2;  // format version 2, with its own valid checksum
  const std::uint32_t crc = mcubes::detail::checkpoint_crc(newer.data(), newer.size());
  for (int i = 0; i < 4; ++i) newer.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  refused(newer, "newer mcubes");
  refused("MCUBESXX" + bytes.substr(8), "not an mcubes checkpoint");

  const mcubes::checkpoint c = mcubes::decode_checkpoint(bytes, "f");
  const std::vector<double> lo{0, 0, 0}, hi{1, 1, 1};
  EXPECT_NE(mcubes::checkpoint_difference(c, "other", 3, lo, hi, o, false).find("integrand 'peak3'"), std::string::npos);
  EXPECT_NE(mcubes::checkpoint_difference(c, "peak3", 4, lo, hi, o, false).find("dimension 3"), std::string::npos);
  EXPECT_NE(mcubes::checkpoint_difference(c, "peak3", 3, lo, {1, 2, 1}, o, false).find("axis 1"), std::string::npos);
  mcubes::vegas_options seed = o;
  seed.seed = 18;
  EXPECT_NE(mcubes::checkpoint_difference(c, "peak3", 3, lo, hi, seed, true).find("seed is 17, not 18"), std::string::npos);
  mcubes::vegas_options longer = o;
  longer.max_iterations = 20;
  EXPECT_NE(mcubes::checkpoint_difference(c, "peak3", 3, lo, hi, longer, false).find("--force"), std::string::npos);
  EXPECT_EQ(mcubes::checkpoint_difference(c, "peak3", 3, lo, hi, longer, true), "");
  // a longer run continued from a checkpoint of the shorter: the same first iterations, then more
  const mcubes::result more = run(longer, 1, &c.progress, nullptr);
  EXPECT_EQ(more.iterations, 20);
  EXPECT_EQ(more.records[3].estimate, c.progress.records[3].estimate);
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "mcubes_checkpoint_" + std::to_string(::getpid()) + "_" + name;
}

mcubes::vegas_options integrator_options(mcubes::stratification_mode mode, int threads) {
  mcubes::vegas_options o = run_options(mode);
  o.backend = mcubes::backend_kind::cpu;
  o.threads = threads;
  return o;
}

// integrator<D>::checkpoint_to, stopped by its callback after k iterations, then a new integrator
// on another thread count resumed from the file: the call ends with the bits of the one never stopped.
TEST(CheckpointIntegrator, ACallStoppedThenResumedFromItsFileHasTheUninterruptedBits) {
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    SCOPED_TRACE(mcubes::to_string(mode));
    const mcubes::vegas_options o = integrator_options(mode, 2);
    mcubes::integrator<3> whole_integ(mcubes::region<3>::unit(), o);
    const mcubes::result whole = whole_integ.integrate(peak3{});
    ASSERT_EQ(whole.iterations, 9);
    for (int k : {1, 4, 6}) {
      SCOPED_TRACE(testing::Message() << "stopped after " << k);
      const std::string path = temp_path("call.ckpt");
      {
        mcubes::integrator<3> first(mcubes::region<3>::unit(), o);
        first.checkpoint_to(path, "peak3");
        const mcubes::result part = first.integrate(peak3{}, [k](const mcubes::iteration_record& r, const mcubes::result&) {
          return r.index + 1 >= k ? mcubes::run_control::stop : mcubes::run_control::proceed;
        });
        ASSERT_EQ(part.status, mcubes::status::interrupted);
        ASSERT_EQ(part.iterations, k);
      }
      mcubes::vegas_options other = o;
      other.threads = 3;
      mcubes::integrator<3> second(mcubes::region<3>::unit(), other);
      second.resume(path, "peak3");
      EXPECT_EQ(second.checkpoint_of("peak3").progress.records.size(), static_cast<std::size_t>(k));
      mcubes_test::expect_same_result(whole, second.integrate(peak3{}));
      // its next call continues as the uninterrupted integrator's does
      mcubes::vegas_options measure = other;
      measure.adapt_iterations = 0;
      measure.skip = 0;
      measure.max_iterations = 3;
      mcubes::vegas_options measure2 = measure;
      measure2.threads = 2;
      mcubes::integrator<3> again(mcubes::region<3>::unit(), o);
      again.integrate(peak3{});
      mcubes_test::expect_same_result(again.integrate(peak3{}, measure2), second.integrate(peak3{}, measure));
      std::remove(path.c_str());
    }
  }
}

// Between calls: a trained integrator's checkpoint (through the bytes) continues in a new one, on
// another thread count, as the trained one does (map, state and VEGAS+ shares).
TEST(CheckpointIntegrator, ATrainedIntegratorsCheckpointContinuesBitwise) {
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    SCOPED_TRACE(mcubes::to_string(mode));
    mcubes::vegas_options train = integrator_options(mode, 2);
    train.max_iterations = 5;
    mcubes::integrator<3> trained(mcubes::region<3>::unit(), train);
    trained.integrate(peak3{});
    const mcubes::checkpoint c =
        mcubes::decode_checkpoint(mcubes::encode_checkpoint(trained.checkpoint_of("peak3")), "bytes");
    EXPECT_TRUE(c.progress.records.empty());
    EXPECT_EQ(c.progress.state.next_iteration, 5);
    if (mode == mcubes::stratification_mode::adaptive) { EXPECT_FALSE(c.progress.shares.empty()); }
    mcubes::vegas_options o1 = train;
    o1.threads = 1;
    mcubes::integrator<3> resumed(mcubes::region<3>::unit(), o1);
    resumed.resume(c, "peak3");
    EXPECT_EQ(resumed.edges(), trained.edges());
    mcubes::vegas_options measure = train, measure1 = o1;
    measure.adapt_iterations = measure1.adapt_iterations = 2;
    measure.skip = measure1.skip = 0;
    mcubes_test::expect_same_result(trained.integrate(peak3{}, measure), resumed.integrate(peak3{}, measure1));
    EXPECT_EQ(resumed.edges(), trained.edges());
  }
}

TEST(CheckpointIntegrator, AnotherIntegrandRegionMapOrCallIsRefused) {
  const mcubes::vegas_options o = integrator_options(mcubes::stratification_mode::adaptive, 1);
  mcubes::integrator<3> first(mcubes::region<3>::unit(), o);
  first.integrate(peak3{}, [](const mcubes::iteration_record& r, const mcubes::result&) {
    return r.index >= 2 ? mcubes::run_control::stop : mcubes::run_control::proceed;
  });
  // the checkpoint between calls (the stopped call is complete: no iteration under way)
  mcubes::checkpoint c = first.checkpoint_of("peak3");
  EXPECT_TRUE(c.progress.records.empty());
  const auto refused = [](const std::function<void()>& f, const std::string& fragment) {
    try {
      f();
      ADD_FAILURE() << "accepted; expected: " << fragment;
    } catch (const mcubes::invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  mcubes::integrator<3> other(mcubes::region<3>::unit(), o);
  refused([&] { other.resume(c, "peak4"); }, "integrand 'peak3', not 'peak4'");
  mcubes::integrator<3> wider(mcubes::region<3>({0, 0, 0}, {1, 2, 1}), o);
  refused([&] { wider.resume(c, "peak3"); }, "axis 1");
  mcubes::vegas_options bins = o;
  bins.n_bins = 64;
  mcubes::integrator<3> finer(mcubes::region<3>::unit(), bins);
  refused([&] { finer.resume(c, "peak3"); }, "bins per axis");
  refused([&] { other.resume(temp_path("missing.ckpt"), "peak3"); }, "cannot read the checkpoint");
  // a call under way continues only with its options (those that move the end aside)
  const std::string path = temp_path("refused.ckpt");
  mcubes::integrator<3> writer(mcubes::region<3>::unit(), o);
  writer.checkpoint_to(path, "peak3");
  writer.integrate(peak3{}, [](const mcubes::iteration_record& r, const mcubes::result&) {
    return r.index >= 2 ? mcubes::run_control::stop : mcubes::run_control::proceed;
  });
  mcubes::integrator<3> resumed(mcubes::region<3>::unit(), o);
  resumed.resume(path, "peak3");
  mcubes::vegas_options calls = o;
  calls.calls_per_iteration = 40000;
  refused([&] { resumed.integrate(peak3{}, calls); }, "calls_per_iteration is 30000, not 40000");
  mcubes::vegas_options longer = o;
  longer.max_iterations = 12;
  mcubes::integrator<3> resumed2(mcubes::region<3>::unit(), o);
  resumed2.resume(path, "peak3");
  const mcubes::result r = resumed2.integrate(peak3{}, longer);
  EXPECT_EQ(r.iterations, 12);
  std::remove(path.c_str());
}

// checkpoint_saver's rules, with a synthetic progress: one write at a time beside the run, a failed
// background write thrown at the next boundary (or handed to keep_going_on_failure), the end of a
// finished run written unless its write would be expensive, an interrupted end always written.
TEST(CheckpointSaver, WritesBesideTheRunOneAtATimeAndKeepsTheEndOfAnInterruptedRun) {
  const mcubes::vegas_options o = run_options(mcubes::stratification_mode::uniform);
  mcubes::checkpoint problem = make_checkpoint(o, {});
  const std::function<mcubes::vegas_progress()> progress = [] { return mcubes::vegas_progress{}; };
  std::atomic<int> writes{0}, durable{0};
  mcubes::checkpoint_schedule every;  // write whenever the last write has finished
  every.duration_factor = 0;
  {
    mcubes::checkpoint_saver slow(problem, [&](const std::string&, bool d) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ++writes;
      durable += d;
    }, every);
    slow(progress, false);  // starts a write of 100 ms
    for (int i = 0; i < 20; ++i) slow(progress, false);  // while it is in flight: nothing more
    EXPECT_EQ(writes.load(), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    slow(progress, false);  // the first has finished: a second starts
    slow(progress, true);   // the end waits for it, then writes the end state (cheap), not durably
    EXPECT_EQ(writes.load(), 3);
    EXPECT_EQ(durable.load(), 2);
  }
  // a failed write: thrown at the next boundary, or handed to keep_going_on_failure
  int calls = 0;
  mcubes::checkpoint_saver failing(problem, [&](const std::string&, bool) {
    ++calls;
    throw mcubes::error("disk full");
  }, every);
  failing(progress, false);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_THROW(failing(progress, false), mcubes::error);
  int warned = 0;
  failing.keep_going_on_failure([&](std::exception_ptr) { ++warned; });
  failing(progress, false);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  failing(progress, false);  // warned, and a new write starts
  EXPECT_EQ(warned, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_THROW(failing(progress, true), mcubes::error);  // the last write's failure ends the run
  // the end: a large checkpoint of a short finished run is skipped, an interrupted one written
  mcubes::checkpoint_schedule costly;
  costly.first_rate = 1;  // as if every byte took a second
  costly.free_seconds = 0;
  int ends = 0;
  bool interrupted = false;
  mcubes::checkpoint_saver end(problem, [&](const std::string&, bool d) { ends += 1 + 10 * d; }, costly,
                               [&] { return interrupted; });
  end(progress, false);
  end(progress, true);
  EXPECT_EQ(ends, 0);
  end.start();
  interrupted = true;
  end(progress, true);
  EXPECT_EQ(ends, 11);  // written, durably
  // the default schedule writes a small checkpoint of a short finished run
  int small = 0;
  mcubes::checkpoint_saver cheap(problem, [&](const std::string&, bool d) { small += 1 + 10 * d; });
  cheap(progress, true);
  EXPECT_EQ(small, 1);  // without fsync: the run is over
}

}  // namespace

namespace {

struct peak_at {  // parameters of a batch member: where the peak is and how wide
  double c, w;
};
struct shifted_peak {
  double operator()(const mcubes::point<3>& x, const peak_at& p) const {
    double r2 = p.w;
    for (int j = 0; j < 3; ++j) r2 += (x[j] - p.c) * (x[j] - p.c);
    return p.w / r2;
  }
};

// A batch of K peaks on `threads` CPU threads, resumed from `from` when given; `saved` collects the
// K progresses at every round and at the end.
std::vector<mcubes::result> run_batch(const mcubes::vegas_options& o, const std::vector<peak_at>& peaks, int threads,
                                      const std::vector<mcubes::vegas_progress>* from,
                                      std::vector<std::vector<mcubes::vegas_progress>>* saved) {
  mcubes::cpu_backend backend(threads);
  mcubes::batch_resumption r;
  r.from = from;
  if (saved != nullptr)
    r.save = [saved](const std::function<std::vector<mcubes::vegas_progress>()>& progress, bool) {
      saved->push_back(progress());
    };
  return mcubes::vegas_batch_with<3>(shifted_peak{}, {mcubes::region<3>::unit()}, peaks, o, backend, {}, nullptr, r);
}

std::vector<std::vector<double>> parameter_rows(const std::vector<peak_at>& peaks) {
  std::vector<std::vector<double>> rows;
  for (const peak_at& p : peaks) rows.push_back({p.c, p.w});
  return rows;
}

}  // namespace

// A batch resumed from the checkpoint of any round (rounds of probes, of main passes and of
// rescales: integrals in the middle of an iteration, and integrals that converged early), through
// the file format and on another thread count, ends with the bits of the batch never stopped.
TEST(CheckpointBatch, ABatchResumedFromAnyRoundEndsWithTheUninterruptedBits) {
  const std::vector<peak_at> five{{0.31, 1e-5}, {0.5, 0.3}, {0.72, 2e-2}, {0.1, 5e-3}, {0.45, 1.0}};
  const std::vector<peak_at> one{{0.31, 1e-3}};
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    for (const std::vector<peak_at>* peaks : {&five, &one}) {
      SCOPED_TRACE(testing::Message() << mcubes::to_string(mode) << ", K = " << peaks->size());
      mcubes::vegas_options o = run_options(mode);
      o.calls_per_iteration = 20000;
      o.rel_tol = 3e-4;  // the wide peaks converge before max_iterations, the narrow one does not
      std::vector<std::vector<mcubes::vegas_progress>> saved;
      const std::vector<mcubes::result> whole = run_batch(o, *peaks, 2, nullptr, &saved);
      ASSERT_GE(saved.size(), 3u);
      if (peaks->size() == 5) {
        std::size_t converged = 0;
        for (const mcubes::result& r : whole) converged += r.status == mcubes::status::converged;
        EXPECT_GE(converged, 1u);  // some integrals end before the others
        EXPECT_LT(converged, 5u);
      }
      mcubes::checkpoint c = make_checkpoint(o, {});
      c.parameters = parameter_rows(*peaks);
      for (std::size_t s = 0; s < saved.size(); ++s) {
        SCOPED_TRACE(testing::Message() << "resumed from save " << s);
        c.members = saved[s];
        const std::string bytes = mcubes::encode_checkpoint(c);
        const mcubes::checkpoint back = mcubes::decode_checkpoint(bytes, "test");
        EXPECT_EQ(mcubes::encode_checkpoint(back), bytes);
        EXPECT_EQ(mcubes::checkpoint_difference(back, "peak3", 3, {0, 0, 0}, {1, 1, 1}, o, false, &c.parameters), "");
        const std::vector<mcubes::result> resumed = run_batch(back.options, *peaks, 3, &back.members, nullptr);
        ASSERT_EQ(resumed.size(), whole.size());
        for (std::size_t k = 0; k < whole.size(); ++k) mcubes_test::expect_same_result(whole[k], resumed[k]);
      }
    }
  }
}

TEST(CheckpointBatch, AnotherGridOrASingleRunsCheckpointIsRefused) {
  const std::vector<peak_at> peaks{{0.31, 1e-3}, {0.5, 0.3}, {0.72, 2e-2}};
  mcubes::vegas_options o = run_options(mcubes::stratification_mode::adaptive);
  o.calls_per_iteration = 5000;
  o.max_iterations = 6;
  std::vector<std::vector<mcubes::vegas_progress>> saved;
  run_batch(o, peaks, 1, nullptr, &saved);
  mcubes::checkpoint c = make_checkpoint(o, {});
  c.parameters = parameter_rows(peaks);
  c.members = saved.back();
  const std::vector<double> lo{0, 0, 0}, hi{1, 1, 1};
  std::vector<std::vector<double>> rows = c.parameters;
  rows[2][1] = 0.021;
  EXPECT_NE(mcubes::checkpoint_difference(c, "peak3", 3, lo, hi, o, false, &rows).find("integral 2 has the parameters (0.71999999999999997, 0.02"),
            std::string::npos);
  rows.pop_back();
  EXPECT_NE(mcubes::checkpoint_difference(c, "peak3", 3, lo, hi, o, false, &rows).find("batch of 3 integrals, not 2"),
            std::string::npos);
  EXPECT_NE(mcubes::checkpoint_difference(c, "peak3", 3, lo, hi, o, false).find("not of one run"), std::string::npos);
  const mcubes::checkpoint single = make_checkpoint(o, saved.back()[0]);
  EXPECT_NE(mcubes::checkpoint_difference(single, "peak3", 3, lo, hi, o, false, &c.parameters).find("of one run, not of a batch"),
            std::string::npos);
  // a progress list of another size
  std::vector<mcubes::vegas_progress> two(saved.back().begin(), saved.back().begin() + 2);
  EXPECT_THROW(run_batch(o, peaks, 1, &two, nullptr), mcubes::invalid_input);
}

namespace {

struct peak_moments {  // three components: the peak, and two moments (the last near zero: it converges last)
  mcubes::values<3> operator()(const mcubes::point<3>& x) const {
    const double p = peak3{}(x);
    return {{p, p * x[0], p * (x[1] - 0.33)}};
  }
};

// A vector run on `threads` CPU threads, resumed from `from` when given; `saved` collects the
// progress at every boundary and at the end.
mcubes::vector_result run_vector(const mcubes::vegas_options& o, int threads, const mcubes::vector_progress* from,
                                 std::vector<mcubes::vector_progress>* saved) {
  mcubes::cpu_backend backend(threads);
  mcubes::vector_resumption r;
  r.from = from;
  if (saved != nullptr)
    r.save = [saved](const std::function<mcubes::vector_progress()>& progress, bool) { saved->push_back(progress()); };
  return mcubes::vegas_vector_with<3, 3>(peak_moments{}, mcubes::region<3>::unit(), o, backend, {}, 3, r);
}

}  // namespace

// A vector run resumed from the checkpoint of any iteration boundary, through the file format and
// on another thread count, ends with the bits of the run never stopped (every component's averages,
// the covariance, the vector chi2, every iteration); a run whose component 0 converged before the
// others goes on after a resume as it did.
TEST(CheckpointVector, AVectorRunResumedFromAnyBoundaryEndsWithTheUninterruptedBits) {
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    SCOPED_TRACE(mcubes::to_string(mode));
    mcubes::vegas_options o = run_options(mode);
    o.max_iterations = 12;
    o.rel_tol = 1e-3;  // component 0 reaches it before the others
    std::vector<mcubes::vector_progress> saved;
    const mcubes::vector_result whole = run_vector(o, 2, nullptr, &saved);
    ASSERT_GE(saved.size(), 4u);
    bool zero_first = false;  // a boundary where component 0 alone would have converged
    for (std::size_t k = 0; k < saved.size(); ++k) {
      SCOPED_TRACE(testing::Message() << "resumed after " << saved[k].run.records.size() << " iterations");
      const mcubes::iteration_record& last = saved[k].run.records.back();
      int accumulated = 0;
      for (const mcubes::iteration_record& rec : saved[k].run.records) accumulated += rec.accumulated;
      const bool zero_met = accumulated >= o.min_iterations && last.chi2_dof <= o.max_chi2_dof &&
                            last.weighted_error <= std::fmax(o.abs_tol, o.rel_tol * std::fabs(last.weighted_estimate));
      zero_first = zero_first || (k + 1 < saved.size() && zero_met);
      mcubes::checkpoint c = make_checkpoint(o, saved[k].run);
      c.components = saved[k].components;
      c.vector_iterations = saved[k].iterations;
      const std::string bytes = mcubes::encode_checkpoint(c);
      const mcubes::checkpoint back = mcubes::decode_checkpoint(bytes, "test");
      EXPECT_EQ(mcubes::encode_checkpoint(back), bytes);
      EXPECT_EQ(mcubes::checkpoint_difference(back, "peak3", 3, {0, 0, 0}, {1, 1, 1}, o, false, nullptr, 3), "");
      EXPECT_NE(mcubes::checkpoint_difference(back, "peak3", 3, {0, 0, 0}, {1, 1, 1}, o, false).find("vector integrand of 3"),
                std::string::npos);
      const mcubes::vector_progress p = mcubes::vector_progress_of(back);
      const mcubes::vector_result resumed = run_vector(back.options, 3, &p, nullptr);
      mcubes_test::expect_same(whole, resumed);
    }
    EXPECT_TRUE(zero_first) << "the test needs a boundary where component 0 met the tolerance before the others";
  }
}

// The front ends without an integrator object (mcubes::vegas_vector, mcubes::vegas_batch with a
// checkpointing): a call stopped by its callback after k iterations (rounds) leaves its checkpoint
// file (the end of a stopped call is written), and a call on another thread count continuing that
// file ends with the bits of the call never stopped; another integrand, other parameters or options
// that change the run are refused with a line naming the difference.
TEST(CheckpointFrontEnds, AVectorCallStoppedThenContinuedFromItsFileHasTheUninterruptedBits) {
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    SCOPED_TRACE(mcubes::to_string(mode));
    mcubes::vegas_options o = integrator_options(mode, 2);
    o.max_iterations = 10;
    const mcubes::vector_result whole = mcubes::vegas_vector<3>(peak_moments{}, mcubes::region<3>::unit(), o);
    ASSERT_EQ(whole.run.iterations, 10);
    const std::string path = temp_path("vector.ckpt");
    for (int k : {1, 4, 9}) {
      SCOPED_TRACE(testing::Message() << "stopped after " << k << " iterations");
      std::remove(path.c_str());
      mcubes::checkpointing write;
      write.path = path;
      write.integrand = "peak moments";
      const mcubes::vector_result part = mcubes::vegas_vector<3>(
          peak_moments{}, mcubes::region<3>::unit(), o,
          [k](const mcubes::iteration_record& rec, const mcubes::result&) {
            return rec.index + 1 >= k ? mcubes::run_control::stop : mcubes::run_control::proceed;
          },
          write);
      EXPECT_EQ(part.run.status, mcubes::status::interrupted);
      const mcubes::checkpoint c = mcubes::load_checkpoint(path);
      EXPECT_EQ(c.components, 3);
      ASSERT_EQ(c.progress.records.size(), static_cast<std::size_t>(k));
      mcubes::vegas_options other_threads = o;
      other_threads.threads = 3;
      mcubes::checkpointing cont;
      cont.integrand = "peak moments";
      cont.from = &c;
      mcubes_test::expect_same(whole, mcubes::vegas_vector<3>(peak_moments{}, mcubes::region<3>::unit(), other_threads, {}, cont));
      cont.integrand = "other moments";
      try {
        mcubes::vegas_vector<3>(peak_moments{}, mcubes::region<3>::unit(), o, {}, cont);
        ADD_FAILURE() << "another integrand was continued";
      } catch (const mcubes::invalid_input& e) {
        EXPECT_NE(std::string(e.what()).find("cannot continue this call: it is of the integrand 'peak moments', not 'other moments'"),
                  std::string::npos) << e.what();
      }
      cont.integrand = "peak moments";
      mcubes::vegas_options more = o;
      more.max_iterations = 11;
      EXPECT_THROW(mcubes::vegas_vector<3>(peak_moments{}, mcubes::region<3>::unit(), more, {}, cont), mcubes::invalid_input);
      cont.force = true;  // max_iterations only moves the end: allowed with force, the 10 first iterations unchanged
      const mcubes::vector_result longer = mcubes::vegas_vector<3>(peak_moments{}, mcubes::region<3>::unit(), more, {}, cont);
      ASSERT_EQ(longer.iterations.size(), 11u);
      for (std::size_t i = 0; i < 10; ++i)
        EXPECT_TRUE(mcubes_test::bits(longer.iterations[i].estimate[1]) == mcubes_test::bits(whole.iterations[i].estimate[1]));
    }
    std::remove(path.c_str());
  }
}

TEST(CheckpointFrontEnds, ABatchCallStoppedThenContinuedFromItsFileHasTheUninterruptedBits) {
  const std::vector<peak_at> peaks{{0.31, 1e-5}, {0.5, 0.3}, {0.72, 2e-2}, {0.1, 5e-3}, {0.45, 1.0}};
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    SCOPED_TRACE(mcubes::to_string(mode));
    mcubes::vegas_options o = integrator_options(mode, 2);
    o.calls_per_iteration = 20000;
    o.rel_tol = 3e-4;  // some integrals converge before the others
    const std::vector<mcubes::result> whole = mcubes::vegas_batch<3>(shifted_peak{}, mcubes::region<3>::unit(), peaks, o);
    const std::string path = temp_path("batch.ckpt");
    for (int stop_round : {1, 3, 7}) {
      SCOPED_TRACE(testing::Message() << "stopped after round " << stop_round);
      std::remove(path.c_str());
      mcubes::checkpointing write;
      write.path = path;
      write.integrand = "shifted peak";
      mcubes::vegas_batch<3>(
          shifted_peak{}, mcubes::region<3>::unit(), peaks, o,
          [stop_round](const mcubes::batch_progress& p) {
            return p.round >= stop_round ? mcubes::run_control::stop : mcubes::run_control::proceed;
          },
          nullptr, write);
      const mcubes::checkpoint c = mcubes::load_checkpoint(path);
      EXPECT_EQ(c.parameters, parameter_rows(peaks));  // a P of doubles: its values
      ASSERT_EQ(c.members.size(), peaks.size());
      mcubes::vegas_options other_threads = o;
      other_threads.threads = 1;
      mcubes::checkpointing cont;
      cont.integrand = "shifted peak";
      cont.from = &c;
      const std::vector<mcubes::result> resumed =
          mcubes::vegas_batch<3>(shifted_peak{}, mcubes::region<3>::unit(), peaks, other_threads, {}, nullptr, cont);
      ASSERT_EQ(resumed.size(), whole.size());
      for (std::size_t k = 0; k < whole.size(); ++k) mcubes_test::expect_same_result(whole[k], resumed[k]);
      std::vector<peak_at> moved = peaks;
      moved[3].w = 6e-3;
      try {
        mcubes::vegas_batch<3>(shifted_peak{}, mcubes::region<3>::unit(), moved, o, {}, nullptr, cont);
        ADD_FAILURE() << "a batch of other parameters was continued";
      } catch (const mcubes::invalid_input& e) {
        EXPECT_NE(std::string(e.what()).find("its integral 3 has the parameters (0.10000000000000001, 0.0050000000000000001)"),
                  std::string::npos) << e.what();
      }
    }
    std::remove(path.c_str());
  }
}

// A batch's progress may hold integrals not yet begun (a default vegas_progress: no map edges), as
// the checkpoint of a batch split over devices does: those start from the beginning, the others
// continue, and every result is the uninterrupted batch's.
TEST(CheckpointBatch, IntegralsNotYetBegunStartFromTheBeginning) {
  const std::vector<peak_at> peaks{{0.31, 1e-5}, {0.5, 0.3}, {0.72, 2e-2}};
  mcubes::vegas_options o = run_options(mcubes::stratification_mode::adaptive);
  o.calls_per_iteration = 20000;
  std::vector<std::vector<mcubes::vegas_progress>> saved;
  const std::vector<mcubes::result> whole = run_batch(o, peaks, 2, nullptr, &saved);
  ASSERT_GE(saved.size(), 4u);
  for (std::size_t not_begun : {0u, 1u, 2u}) {
    std::vector<mcubes::vegas_progress> from = saved[3];
    from[not_begun] = mcubes::vegas_progress{};
    const std::vector<mcubes::result> resumed = run_batch(o, peaks, 3, &from, nullptr);
    for (std::size_t k = 0; k < whole.size(); ++k) mcubes_test::expect_same_result(whole[k], resumed[k]);
  }
  const std::vector<mcubes::vegas_progress> none(peaks.size());
  const std::vector<mcubes::result> fresh = run_batch(o, peaks, 1, &none, nullptr);
  for (std::size_t k = 0; k < whole.size(); ++k) mcubes_test::expect_same_result(whole[k], fresh[k]);
}
