#pragma once
/// @file cli/mpi_session.hpp
/// The command under mpirun: MPI initialised where a launcher started the process (OpenMPI's
/// mpirun, or a PMI/PMIx launcher such as srun), the ranks of MPI_COMM_WORLD as the team of every
/// run (execution::team, backend/team.hpp), and rank 0 as the only one that prints on stdout and
/// writes files. A build without MPI (MCUBES_ENABLE_MPI=OFF, or no MPI found) is one process.

#include <string>

#include <mcubes/backend/team.hpp>

namespace mcubes::cli {

/// Initialises MPI when the process was started by an MPI launcher (and the build has MPI), for
/// the lifetime of the object (MPI_Finalize in the destructor); on ranks other than 0, stdout is
/// sent to /dev/null. One per process, made first in main().
class mpi_session {
 public:
  mpi_session(int& argc, char**& argv);
  ~mpi_session();
  mpi_session(const mpi_session&) = delete;
  mpi_session& operator=(const mpi_session&) = delete;
};

/// The team of the runs: MPI_COMM_WORLD when more than one rank runs, else null.
const communicator* cli_team();

/// Whether this process writes the output files (--json, --checkpoint, --npy): rank 0, or the one process.
bool cli_writes_files();

/// The exchanges of cli_team() so far (timed_communicator); zero for one process.
exchange_time cli_team_exchange_time();

/// This process's rank (0 for one process).
int cli_rank();

/// This process's rank among the ranks of its host (MPI_Comm_split_type shared; 0 for one
/// process): under mpirun with the CUDA backend, each rank takes device cli_local_rank() modulo
/// the devices present.
int cli_local_rank();

/// "" for one process, else " (R MPI ranks)".
std::string ranks_note();

}  // namespace mcubes::cli
