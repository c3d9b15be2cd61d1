#pragma once
/// @file cli/output_file.hpp
/// The command's output files (--json): a path checked up front, then replaced atomically at each
/// write by the library's write_file_atomically (include/mcubes/atomic_file.hpp).

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
