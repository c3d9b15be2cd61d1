#pragma once
/// @file cli/checkpoint_file.hpp
/// The commands' checkpoint writer (integrate and scan): a checkpoint_saver (checkpoint.hpp) on
/// the --checkpoint file, its schedule with --checkpoint-every, an interruption being a signal
/// (interrupt.hpp), and a failing write during the run warned about once on stderr while the run
/// goes on (the last write's failure is thrown).

#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include <mcubes/checkpoint.hpp>

#include "interrupt.hpp"
#include "mpi_session.hpp"
#include "output_file.hpp"

namespace mcubes::cli {

/// Makes `saver` write `problem`'s checkpoints to `file` (which must outlive it), at least
/// `every_seconds` apart; `what` ("run", "scan") names the work in the warning.
inline void open_checkpoints(std::optional<checkpoint_saver>& saver, checkpoint problem, atomic_output_file& file,
                             double every_seconds, const std::string& what) {
  checkpoint_schedule schedule;
  schedule.every_seconds = every_seconds;
  saver.emplace(
      std::move(problem), [&file](const std::string& bytes, bool durable) { file.write(bytes, durable); }, schedule,
      [] { return interrupt_signal() != 0; });
  saver->set_team(cli_team());  // under mpirun: rank 0 writes what every rank's progress makes
  auto warned = std::make_shared<bool>(false);
  saver->keep_going_on_failure([warned, what](std::exception_ptr failure) {
    if (*warned) return;
    *warned = true;
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "mcubes: warning: %s; the %s goes on (the checkpoint is written again later)\n", ex.what(),
                   what.c_str());
    }
  });
}

}  // namespace mcubes::cli
