/// @file cli/output_file.cpp
/// See output_file.hpp.
#include "output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mcubes/error.hpp>

namespace mcubes::cli {

namespace {

/// A unique temporary file beside `path`: "<path>.tmp.XXXXXX"; returns the descriptor (or -1 with
/// errno) and sets `name`.
int make_temporary(const std::string& path, std::string& name) {
  std::vector<char> buf(path.begin(), path.end());
  const char suffix[] = ".tmp.XXXXXX";
  buf.insert(buf.end(), suffix, suffix + sizeof suffix);  // with the terminating 0
  const int fd = mkstemp(buf.data());
  name = buf.data();
  return fd;
}

}  // namespace

atomic_output_file::atomic_output_file(std::string path) : path_(std::move(path)) {
  MCUBES_EXPECTS(!path_.empty(), "--json needs a file name (or '-' for standard output)");
  struct stat st;
  if (stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    mcubes::detail::throw_invalid("--json: '", path_, "' is a directory");
  std::string tmp;
  const int fd = make_temporary(path_, tmp);
  if (fd < 0) mcubes::detail::throw_invalid("--json: cannot create a file beside '", path_, "': ", std::strerror(errno));
  close(fd);
  unlink(tmp.c_str());
}

void atomic_output_file::write(const std::string& content, bool durable) const {
  std::string tmp;
  const int fd = make_temporary(path_, tmp);
  if (fd < 0) throw error("cannot write '" + path_ + "': " + std::strerror(errno));
  fchmod(fd, 0644 & ~[] { const mode_t m = umask(0); umask(m); return m; }());
  const char* p = content.data();
  std::size_t left = content.size();
  int err = 0;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (err == 0 && durable && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), path_.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());
    throw error("cannot write '" + path_ + "': " + std::strerror(err) + " (the previous content is unchanged)");
  }
}

}  // namespace mcubes::cli
