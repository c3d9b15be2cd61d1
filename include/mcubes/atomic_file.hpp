#pragma once
/// @file atomic_file.hpp
/// Files that are never seen half-written (POSIX): the content goes to a unique temporary file in
/// the same directory ("<path>.tmp.XXXXXX" from mkstemp, so that rename(2) is atomic and concurrent
/// writers never collide), is written in full, optionally synced, then renamed over the target. An
/// existing file is replaced only by a complete one; a failure removes the temporary file and leaves
/// the target untouched. New files get mode 0644 less the process umask. The one owner of this
/// mechanism: the library's map files (map_io.hpp) and the command's JSON records use it.

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "error.hpp"

namespace mcubes {

/// A unique temporary file beside `path` ("<path>.tmp.XXXXXX", mode 0600); returns its descriptor
/// (or -1 with errno set) and its name in `name`.
inline int make_temporary_beside(const std::string& path, std::string& name) {
  std::vector<char> buf(path.begin(), path.end());
  const char suffix[] = ".tmp.XXXXXX";
  buf.insert(buf.end(), suffix, suffix + sizeof suffix);  // with the terminating 0
  const int fd = mkstemp(buf.data());
  name = buf.data();
  return fd;
}

/// Replaces the file `path` by `content` atomically (file comment); with `durable`, fsync before
/// the rename (the content then survives a crash of the machine, not only of the process).
/// @throws error naming the path and the system's reason; the previous content is then unchanged.
inline void write_file_atomically(const std::string& path, const std::string& content, bool durable) {
  std::string tmp;
  const int fd = make_temporary_beside(path, tmp);
  if (fd < 0) throw error("cannot write '" + path + "': " + std::strerror(errno));
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
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());
    throw error("cannot write '" + path + "': " + std::strerror(err) + " (the previous content is unchanged)");
  }
}

}  // namespace mcubes
