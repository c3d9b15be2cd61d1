/// @file cli/output_file.cpp
/// See output_file.hpp.
#include "output_file.hpp"

#include <cerrno>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

#include <mcubes/atomic_file.hpp>
#include <mcubes/error.hpp>

namespace mcubes::cli {

atomic_output_file::atomic_output_file(std::string path) : path_(std::move(path)) {
  MCUBES_EXPECTS(!path_.empty(), "--json needs a file name (or '-' for standard output)");
  struct stat st;
  if (stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    mcubes::detail::throw_invalid("--json: '", path_, "' is a directory");
  std::string tmp;
  const int fd = make_temporary_beside(path_, tmp);
  if (fd < 0) mcubes::detail::throw_invalid("--json: cannot create a file beside '", path_, "': ", std::strerror(errno));
  close(fd);
  unlink(tmp.c_str());
}

void atomic_output_file::write(const std::string& content, bool durable) const {
  write_file_atomically(path_, content, durable);
}

}  // namespace mcubes::cli
