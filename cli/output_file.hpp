#pragma once
/// @file cli/output_file.hpp
/// Output files that are never seen half-written: the content goes to a temporary file in the
/// same directory (so that rename(2) is atomic), is flushed and synced, then renamed over the
/// target. An existing file is replaced only by a complete one; a failure leaves it untouched.

#include <string>

namespace mcubes::cli {

/// An output file replaced atomically at each write().
class atomic_output_file {
 public:
  /// Checks that a file can be created in the directory of `path` (and that `path` is not a
  /// directory) without touching `path`. @throws invalid_input naming the path and the reason.
  explicit atomic_output_file(std::string path);
  /// Replaces the file by `content` (temporary file, rename; fsync first when `durable`, e.g. the
  /// final record: the intermediate ones survive the process, not a crash of the machine).
  /// @throws mcubes::error naming the path and the system's reason; the previous content is then
  /// still in place.
  void write(const std::string& content, bool durable) const;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

}  // namespace mcubes::cli
