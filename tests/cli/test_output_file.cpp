// The command's output files (cli/output_file.hpp): the path checked before the run (a directory
// refused as bad input, a stream recognised), a write failure during the run a runtime error
// (never bad input), and the rule that spaces the rewrites of a running command's record, checked
// on a simulated clock: thousands of quick steps give a handful of writes, so the writes do not
// scale with the number of iterations.

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include <mcubes/error.hpp>

#include "output_file.hpp"

namespace {

using mcubes::cli::atomic_output_file;
using mcubes::cli::record_schedule;

/// Writes of a run of `steps` steps of `step_seconds` each whose record writes take
/// `write_seconds(i)` (i: the write's number), on a simulated clock.
template <class WriteSeconds>
int writes_of(int steps, double step_seconds, const WriteSeconds& write_seconds) {
  record_schedule schedule;
  double now = 0;
  int writes = 0;
  for (int i = 0; i < steps; ++i) {
    now += step_seconds;
    if (schedule.due(now)) {
      const double start = now;
      now += write_seconds(writes++);
      schedule.wrote(start, now);
    }
  }
  return writes;
}

TEST(RecordSchedule, TheFirstStepWritesThenAtMostOncePerInterval) {
  // 2990 steps of 1 ms (about 3 s) with writes of 1 ms: the first step, then once per second
  EXPECT_EQ(writes_of(2990, 1e-3, [](int) { return 1e-3; }), 3);
  // 29900 such steps (about 30 s): 30 writes, not 29900
  EXPECT_EQ(writes_of(29900, 1e-3, [](int) { return 1e-3; }), 30);
  // slow steps (2 s each): every step writes
  EXPECT_EQ(writes_of(10, 2.0, [](int) { return 1e-3; }), 10);
}

TEST(RecordSchedule, SlowWritesAreSpacedByTwentyTimesTheirDuration) {
  // a record whose write takes 0.5 s: the next one 10 s after it at the earliest, whatever the steps
  const int w = writes_of(100000, 1e-3, [](int) { return 0.5; });  // 100 s of steps, plus the writes
  EXPECT_LE(w, 11);
  EXPECT_GE(w, 9);
  // writes that grow with the record (1 ms more per write): the time in writes stays below 1/20 of
  // the run plus the last write
  constexpr double duration_factor = 20;  // the default
  record_schedule schedule(1.0, duration_factor);
  double now = 0, in_writes = 0, last = 0;
  for (int i = 0; i < 200000; ++i) {
    now += 1e-3;
    if (schedule.due(now)) {
      last = 1e-3 * (1 + in_writes * 1000);
      in_writes += last;
      schedule.wrote(now, now + last);
      now += last;
    }
  }
  EXPECT_LE(in_writes - last, now / duration_factor);
}

TEST(OutputFileCli, ADirectoryIsBadInputAndAStreamIsRecognised) {
  EXPECT_THROW(atomic_output_file("/"), mcubes::invalid_input);
  EXPECT_TRUE(atomic_output_file("/dev/null").stream());
  EXPECT_TRUE(atomic_output_file("/dev/stdout").stream());
  const std::string f = ::testing::TempDir() + "mcubes_output_file_" + std::to_string(::getpid()) + ".json";
  EXPECT_FALSE(atomic_output_file(f).stream());
  struct stat st;
  EXPECT_NE(::stat(f.c_str(), &st), 0);  // the check does not create the file
}

TEST(OutputFileCli, AWriteFailureDuringTheRunIsARuntimeError) {
  // the path was a file when checked; it is a directory when written: mcubes::error, not invalid_input
  const std::string p = ::testing::TempDir() + "mcubes_output_file_dir_" + std::to_string(::getpid());
  const atomic_output_file out(p);
  ASSERT_EQ(::mkdir(p.c_str(), 0755), 0);
  try {
    out.write("{}\n", false);
    ADD_FAILURE() << "no exception";
  } catch (const mcubes::invalid_input& e) {
    ADD_FAILURE() << "bad input: " << e.what();
  } catch (const mcubes::error& e) {
    EXPECT_NE(std::string(e.what()).find("it is a directory"), std::string::npos) << e.what();
  }
  ::rmdir(p.c_str());
}

}  // namespace
