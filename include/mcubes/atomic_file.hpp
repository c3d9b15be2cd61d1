#pragma once
/// @file atomic_file.hpp
/// Output files that are never seen half-written (POSIX), and output paths that are not files.
///
/// What a path is decides how it is written (resolve_output, from lstat(2) along the path's chain
/// of symbolic links):
///   - absent, or a regular file: the content goes to a unique temporary file in the same directory
///     ("<path>.tmp.XXXXXX" from mkstemp, so that rename(2) is atomic and concurrent writers never
///     collide), is written in full, optionally synced, then renamed over the path. An existing file
///     is replaced only by a complete one; a failure removes the temporary file and leaves the file
///     untouched. New files get mode 0644 less the process umask.
///   - a symbolic link (or a chain of them, absolute or relative): followed to its final target,
///     which is replaced as above (the temporary file beside the final target); the links stay
///     links. A dangling link creates its target (its directory must exist).
///   - a character device (/dev/null, a terminal), a FIFO, or a descriptor link (/dev/stdout,
///     /dev/fd/N, /proc/self/fd/N, whatever the descriptor is open on, a pipe or a file): a stream,
///     written straight through (opened for appending; there is nothing to replace, so nothing is
///     atomic and nothing is synced). A FIFO's open waits for its reader.
///   - anything else (a directory, a socket, a block device, a link chain of more than 40 links):
///     refused with unwritable_output naming the path and why; nothing is written.
/// The one owner of this mechanism: the library's map files (map_io.hpp), the run-time compiler's
/// cache and the command's JSON records use it.

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.hpp"

namespace mcubes {

/// An output path that cannot be written as a file: a directory, a socket, a block device, a link
/// chain too long, or a descriptor link to something that is not a stream or a file. Bad input
/// (derives from invalid_input); what() is "cannot write '<path>': <reason>".
class unwritable_output : public invalid_input {
 public:
  unwritable_output(std::string path, std::string reason)
      : invalid_input("cannot write '" + path + "': " + reason), path_(std::move(path)), reason_(std::move(reason)) {}
  /// The path as given.
  const std::string& path() const noexcept { return path_; }
  /// Why, e.g. "it is a directory", "its link target '/x' is a socket".
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string path_, reason_;
};

/// How an output path is written (resolve_output).
struct output_target {
  /// true: a character device, a FIFO or a descriptor link, written straight through at `path`;
  /// false: a regular file (or none yet) at `path`, replaced atomically.
  bool stream = false;
  /// The path to write: the given one for a stream; for a file, the final target of its links
  /// (the given path itself when it is not a link).
  std::string path;
};

namespace detail {

/// What a file type is, for messages.
inline const char* file_type_text(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

/// Whether `link` (a symbolic link) is a descriptor link: an entry of /proc/<pid>/fd or
/// /proc/<pid>/task/<tid>/fd (/dev/fd, /dev/stdout lead there), whose target is the descriptor's
/// open file, not a path to follow by its text (e.g. "pipe:[1234]").
inline bool is_descriptor_link(const std::string& link) {
  const std::size_t slash = link.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : link.substr(0, slash);
  char* real = ::realpath(dir.c_str(), nullptr);
  if (real == nullptr) return false;
  const std::string d = real;
  std::free(real);
  if (d.rfind("/proc/", 0) != 0 || d.size() < 4 || d.compare(d.size() - 3, 3, "/fd") != 0) return false;
  // /proc/<x>/fd or /proc/<x>/task/<y>/fd
  std::size_t parts = 0;
  for (char c : d.substr(6)) parts += c == '/';
  return parts == 1 || (parts == 3 && d.find("/task/") != std::string::npos);
}

}  // namespace detail

/// Follows `path` (lstat, then readlink for each symbolic link, a relative target taken from the
/// link's directory) and says how it is written (file comment).
/// @throws unwritable_output for a directory, a socket, a block device, a chain of more than 40
///         links, or a descriptor link to something else than a FIFO, a character device or a
///         regular file; error for a path whose lstat or readlink fails otherwise than with ENOENT
///         or ENOTDIR (e.g. permission denied), naming the path and the system's reason.
inline output_target resolve_output(const std::string& path) {
  MCUBES_EXPECTS(!path.empty(), "an output file needs a non-empty path");
  std::string p = path;
  for (int hop = 0; hop <= 40; ++hop) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      // absent (or under something that is not a directory): to be created, which then fails if
      // its directory does not exist
      if (errno == ENOENT || errno == ENOTDIR) return {false, p};
      throw error("cannot write '" + path + "': " + (p == path ? "" : "its link target '" + p + "': ") + std::strerror(errno));
    }
    const std::string what = p == path ? "it is " : "its link target '" + p + "' is ";
    if (S_ISREG(st.st_mode)) return {false, p};
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return {true, path};
    if (!S_ISLNK(st.st_mode)) throw unwritable_output(path, what + detail::file_type_text(st.st_mode));
    if (detail::is_descriptor_link(p)) {  // /proc/self/fd/N: the descriptor's open file
      struct stat open_file;
      if (::stat(p.c_str(), &open_file) != 0)
        throw error("cannot write '" + path + "': descriptor link '" + p + "': " + std::strerror(errno));
      if (S_ISCHR(open_file.st_mode) || S_ISFIFO(open_file.st_mode) || S_ISREG(open_file.st_mode)) return {true, path};
      throw unwritable_output(path, "its descriptor link '" + p + "' is open on " + detail::file_type_text(open_file.st_mode));
    }
    std::vector<char> buf(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : PATH_MAX) + 1);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size());
    if (n < 0) throw error("cannot write '" + path + "': cannot read the link '" + p + "': " + std::strerror(errno));
    if (static_cast<std::size_t>(n) >= buf.size())
      throw error("cannot write '" + path + "': the link '" + p + "' changed while it was read");
    const std::string target(buf.data(), static_cast<std::size_t>(n));
    if (!target.empty() && target[0] == '/') {
      p = target;
    } else {
      const std::size_t slash = p.find_last_of('/');
      p = (slash == std::string::npos ? std::string() : p.substr(0, slash + 1)) + target;
    }
  }
  throw unwritable_output(path, "more than 40 symbolic links to follow");
}

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

namespace detail {

/// Writes all of data[0..size) to `fd`; returns 0 or the errno of the failure.
inline int write_all(int fd, const char* data, std::size_t size) {
  const char* p = data;
  std::size_t left = size;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace detail

/// Writes the bytes that `produce` puts to the output `path` as resolve_output says (file
/// comment): produce(put) calls put(data, size) for each piece in order (content of any size in
/// bounded memory); a stream gets the pieces straight through; a file (or a link's final target) is
/// replaced atomically, with `durable` synced (fsync) before the rename (the content then survives
/// a crash of the machine, not only of the process). What produce throws leaves a file unchanged.
/// @throws unwritable_output for a path that is neither a file nor a stream (nothing written);
///         error naming the path and the system's reason if the write fails (a file's previous
///         content is then unchanged; a stream may have taken part of the content); whatever
///         produce throws.
template <class Produce>
void write_file_atomically_from(const std::string& path, Produce&& produce, bool durable) {
  const output_target t = resolve_output(path);
  if (t.stream) {
    int fd;
    do fd = ::open(t.path.c_str(), O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) throw error("cannot write '" + path + "': " + std::strerror(errno));
    int err = 0;
    try {
      produce([&](const char* data, std::size_t size) {
        if (err == 0) err = detail::write_all(fd, data, size);
      });
    } catch (...) {
      ::close(fd);
      throw;
    }
    if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
    if (err != 0) throw error("cannot write '" + path + "': " + std::strerror(err));
    return;
  }
  const std::string where = t.path == path ? "'" + path + "'" : "'" + path + "' (link target '" + t.path + "')";
  std::string tmp;
  const int fd = make_temporary_beside(t.path, tmp);
  if (fd < 0) throw error("cannot write " + where + ": " + std::strerror(errno));
  fchmod(fd, 0644 & ~[] { const mode_t m = umask(0); umask(m); return m; }());
  int err = 0;
  try {
    produce([&](const char* data, std::size_t size) {
      if (err == 0) err = detail::write_all(fd, data, size);
    });
  } catch (...) {
    close(fd);
    unlink(tmp.c_str());
    throw;
  }
  if (err == 0 && durable && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), t.path.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());
    throw error("cannot write " + where + ": " + std::strerror(err) + " (the previous content is unchanged)");
  }
}

/// Writes `content` to the output `path` (write_file_atomically_from with one piece).
/// @throws as write_file_atomically_from.
inline void write_file_atomically(const std::string& path, const std::string& content, bool durable) {
  write_file_atomically_from(path, [&](auto&& put) { put(content.data(), content.size()); }, durable);
}

}  // namespace mcubes
