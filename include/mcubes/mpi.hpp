#pragma once
/// @file mpi.hpp
/// MPI ranks as a team (backend/team.hpp): one integral, or one batch, computed by every rank of an
/// MPI communicator, with the bits of one process. Include this header (it includes <mpi.h>) and
/// link MPI (CMake: the target mcubes::mpi, or MPI::MPI_CXX); the rest of mcubes does not need MPI.
///
/// @code
///   MPI_Init(&argc, &argv);
///   mcubes::mpi_communicator team(MPI_COMM_WORLD);
///   mcubes::vegas_options opt;
///   opt.team = &team;                       // every rank: the same call, the same options
///   mcubes::result r = mcubes::vegas<4>(f, region, opt);   // the same r on every rank
///   MPI_Finalize();
/// @endcode
///
/// What is exchanged (MPI_Allgather / MPI_Allgatherv of bytes, never an MPI_SUM of doubles): per
/// pass the sums of each rank's parts of the sub-cubes (O(64 x ranks) doubles), its flags and, for
/// an adapting pass, the exact integer bin sums (D x n_bins 128-bit integers); per VEGAS+
/// allocation the parts of two reductions of the shares. Each rank keeps its own shares.
///
/// Determinism: the same seed gives the same bits for any number of ranks and any thread count per
/// rank (backend/team.hpp says why). Every rank must make the same calls with the same options and
/// integrand; a callback that stops a run (on_iteration) must decide the same on every rank.
/// Failures: an exception on one rank is rethrown there and reported on the others as team_failure
/// ("rank R: message"); a stop request (execution::stop, e.g. SIGTERM from mpirun) on any rank ends
/// every rank's run at the same iteration boundary.

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend/team.hpp"
#include "error.hpp"

namespace mcubes {

/// A team over an MPI communicator (not owned: it must outlive the object; MPI initialised with at
/// least MPI_THREAD_FUNNELED, the exchanges are made by the thread that calls the method).
class mpi_communicator final : public communicator {
 public:
  /// @throws error if MPI is not initialised or the communicator is MPI_COMM_NULL.
  explicit mpi_communicator(MPI_Comm comm) : comm_(comm) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    MCUBES_EXPECTS(initialised != 0, "mpi_communicator: MPI is not initialised (call MPI_Init first)");
    MCUBES_EXPECTS(comm != MPI_COMM_NULL, "mpi_communicator: the communicator is MPI_COMM_NULL");
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  /// MPI_Allgather of the sizes, then MPI_Allgatherv of the bytes.
  /// @throws error if a message exceeds 2^31 - 1 bytes in all, or MPI fails.
  void all_gather(const std::vector<unsigned char>& mine, std::vector<std::vector<unsigned char>>& all) const override {
    const std::uint64_t n = mine.size();
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&n, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm_), "MPI_Allgather");
    std::vector<int> counts(sizes.size()), displs(sizes.size());
    std::uint64_t total = 0;
    for (std::size_t r = 0; r < sizes.size(); ++r) {
      displs[r] = static_cast<int>(total);
      counts[r] = static_cast<int>(sizes[r]);
      total += sizes[r];
      MCUBES_EXPECTS(total <= 0x7FFFFFFFull, "mpi_communicator: an exchange of more than 2^31 - 1 bytes");
    }
    std::vector<unsigned char> buffer(static_cast<std::size_t>(total));
    check(MPI_Allgatherv(mine.data(), static_cast<int>(n), MPI_BYTE, buffer.data(), counts.data(), displs.data(), MPI_BYTE,
                         comm_),
          "MPI_Allgatherv");
    all.assign(sizes.size(), {});
    for (std::size_t r = 0; r < sizes.size(); ++r)
      all[r].assign(buffer.begin() + displs[r], buffer.begin() + displs[r] + counts[r]);
  }

 private:
  static void check(int code, const char* what) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    throw error(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
  }
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace mcubes
