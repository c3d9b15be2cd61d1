/// @file cli/mpi_session.cpp
/// The command's MPI session (mpi_session.hpp).
#include "mpi_session.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#if defined(MCUBES_HAVE_MPI)
#include <mcubes/mpi.hpp>
#endif

namespace mcubes::cli {

namespace {
#if defined(MCUBES_HAVE_MPI)
std::unique_ptr<mpi_communicator> world;
std::unique_ptr<timed_communicator> timed_world;  // world, its exchanges timed (cli_team)
int local_rank = 0;                                // among the ranks of this host
bool initialised_here = false;

// Whether an MPI launcher started this process (OpenMPI, PMI, PMIx, Slurm's PMI2): the command
// initialises MPI only then, so that a plain `mcubes ...` never pays for or depends on MPI.
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}
#endif
}  // namespace

mpi_session::mpi_session(int& argc, char**& argv) {
#if defined(MCUBES_HAVE_MPI)
  if (!launched_by_mpi()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  initialised_here = true;
  world = std::make_unique<mpi_communicator>(MPI_COMM_WORLD);
  timed_world = std::make_unique<timed_communicator>(*world);
  MPI_Comm host;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world->rank(), MPI_INFO_NULL, &host) == MPI_SUCCESS) {
    MPI_Comm_rank(host, &local_rank);
    MPI_Comm_free(&host);
  }
  if (world->rank() != 0) {  // one report: rank 0's
    std::fflush(stdout);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::close(null);
    }
  }
#else
  (void)argc, (void)argv;
#endif
}

mpi_session::~mpi_session() {
#if defined(MCUBES_HAVE_MPI)
  std::fflush(stdout);
  timed_world.reset();
  world.reset();
  if (initialised_here) MPI_Finalize();
#endif
}

const communicator* cli_team() {
#if defined(MCUBES_HAVE_MPI)
  return world && world->size() > 1 ? timed_world.get() : nullptr;
#else
  return nullptr;
#endif
}

exchange_time cli_team_exchange_time() {
#if defined(MCUBES_HAVE_MPI)
  if (timed_world) return timed_world->time();
#endif
  return {};
}

bool cli_writes_files() {
#if defined(MCUBES_HAVE_MPI)
  return !world || world->rank() == 0;
#else
  return true;
#endif
}

int cli_rank() {
#if defined(MCUBES_HAVE_MPI)
  return world ? world->rank() : 0;
#else
  return 0;
#endif
}

int cli_local_rank() {
#if defined(MCUBES_HAVE_MPI)
  return local_rank;
#else
  return 0;
#endif
}

std::string ranks_note() {
  const communicator* t = cli_team();
  return t != nullptr ? " (" + std::to_string(t->size()) + " MPI ranks)" : std::string();
}

}  // namespace mcubes::cli
