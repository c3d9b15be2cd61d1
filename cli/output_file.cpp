/// @file cli/output_file.cpp
/// See output_file.hpp.
#include "output_file.hpp"
#include "mpi_session.hpp"

#include <cerrno>
#include <cstring>

#include <unistd.h>

#include <mcubes/atomic_file.hpp>
#include <mcubes/error.hpp>

namespace mcubes::cli {

atomic_output_file::atomic_output_file(std::string path, const std::string& option) : path_(std::move(path)) {
  MCUBES_EXPECTS(!path_.empty(), option, option == "--json" ? " needs a file name (or '-' for standard output)" : " needs a file name");
  output_target t;
  try {
    t = resolve_output(path_);
  } catch (const invalid_input& ex) {
    mcubes::detail::throw_invalid(option, ": ", ex.what());
  } catch (const error& ex) {
    mcubes::detail::throw_invalid(option, ": ", ex.what());
  }
  stream_ = t.stream;
  if (stream_) {  // opened at the end (a FIFO's open waits for its reader): its permission checked now
    if (::access(path_.c_str(), W_OK) != 0)
      mcubes::detail::throw_invalid(option, ": cannot write '", path_, "': ", std::strerror(errno));
    return;
  }
  std::string tmp;
  const int fd = make_temporary_beside(t.path, tmp);
  if (fd < 0)
    mcubes::detail::throw_invalid(option, ": cannot create a file beside '", t.path, "': ", std::strerror(errno));
  close(fd);
  unlink(tmp.c_str());
}

void atomic_output_file::write_from(
    const std::function<void(const std::function<void(const char*, std::size_t)>&)>& produce, bool durable) const {
  if (!cli_writes_files()) return;  // under mpirun: rank 0 writes
  try {
    write_file_atomically_from(path_, [&](auto&& put) { produce(put); }, durable);
  } catch (const invalid_input& ex) {  // the path changed during the run: a runtime failure
    throw error(ex.what());
  }
}

void atomic_output_file::write(const std::string& content, bool durable) const {
  if (!cli_writes_files()) return;  // under mpirun: rank 0 writes
  try {
    write_file_atomically(path_, content, durable);
  } catch (const invalid_input& ex) {  // the path changed during the run: a runtime failure
    throw error(ex.what());
  }
}

}  // namespace mcubes::cli
