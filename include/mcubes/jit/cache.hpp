#pragma once
/// @file jit/cache.hpp
/// The cache of integrands compiled at run time (POSIX). Layout:
///
///   $XDG_CACHE_HOME/mcubes/ (or ~/.cache/mcubes/)   mode 0700, owned by the user
///     jit/                                          mode 0700
///       `<key>.so`    the object (a shared library)
///       `<key>.cpp`   (.cu for nvcc) the generated source it was compiled from, for reading
///       `<key>.key`   the key text, then "object-sha256 <hex>": written last
///       build.XXXXXX/   a compilation in progress (removed when it ends; its file `owner` names
///                       the process and host; one left by a compilation killed outright is
///                       removed by the next compilation, jit.hpp's remove_stale_build_folders)
///
/// `<key>` is the hex SHA-256 of the key text, which names everything that decides the object's
/// bits: the mcubes version and ABI, the backend, the compiler (resolved path and its --version),
/// the flags, the include folders, a SHA-256 of every mcubes header and the generated source, and
/// for nvcc how its steps run (nvcc_steps.hpp). A lookup reads `<key>.key`, compares the whole key text with the expected one and
/// the SHA-256 of `<key>.so` with the recorded one, and only then does the object get loaded; any
/// mismatch (a truncated or replaced file, a hash collision) is a miss and the object is compiled
/// again. Files are written to the build folder and renamed into place (atomic on one file
/// system): a reader never sees a partial object, and concurrent compilations of one key are
/// harmless (the last rename wins; both objects are equivalent).
///
/// The cache holds code that the program loads and runs: its folders must be the user's own and
/// closed to others (0700). cache_folder() creates them so, tightens a folder of the user's that
/// is open to others, and refuses one owned by someone else or a symbolic link.

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <dirent.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "../atomic_file.hpp"
#include "../error.hpp"

namespace mcubes::jit {

/// SHA-256 (FIPS 180-4) of a byte string, incremental.
class sha256 {
 public:
  sha256() { reset(); }
  void reset() {
    static const std::uint32_t init[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                          0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::copy(init, init + 8, h_);
    length_ = 0;
    used_ = 0;
  }
  void update(const void* data, std::size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    length_ += n;
    while (n > 0) {
      const std::size_t take = std::min<std::size_t>(n, 64 - used_);
      std::memcpy(block_ + used_, p, take);
      used_ += take;
      p += take;
      n -= take;
      if (used_ == 64) {
        compress(block_);
        used_ = 0;
      }
    }
  }
  void update(const std::string& s) { update(s.data(), s.size()); }
  /// The digest as 64 lowercase hex digits (the object is reset).
  std::string hex() {
    const std::uint64_t bits = length_ * 8;
    const unsigned char pad = 0x80;
    update(&pad, 1);
    const unsigned char zero = 0;
    while (used_ != 56) update(&zero, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    update(len, 8);
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (std::uint32_t w : h_)
      for (int i = 28; i >= 0; i -= 4) out += digits[(w >> i) & 15];
    reset();
    return out;
  }
  /// SHA-256 of `s` in hex.
  static std::string of(const std::string& s) {
    sha256 h;
    h.update(s);
    return h.hex();
  }

 private:
  static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void compress(const unsigned char* b) {
    static const std::uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = (std::uint32_t(b[4 * i]) << 24) | (std::uint32_t(b[4 * i + 1]) << 16) | (std::uint32_t(b[4 * i + 2]) << 8) |
             std::uint32_t(b[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h_[0], bb = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = bb;
      bb = a;
      a = t1 + t2;
    }
    h_[0] += a, h_[1] += bb, h_[2] += c, h_[3] += d, h_[4] += e, h_[5] += f, h_[6] += g, h_[7] += h;
  }
  std::uint32_t h_[8];
  unsigned char block_[64];
  std::uint64_t length_;
  std::size_t used_;
};

/// The whole content of a file; false if it cannot be read.
inline bool read_whole_file(const std::string& path, std::string& content) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  content = s.str();
  return !in.bad();
}

/// SHA-256 of every regular file under `dir` (recursively, in name order), each as its path
/// relative to `dir`, a NUL, its size, a NUL and its content: the identity of a header tree.
/// @throws error if a file cannot be read.
inline std::string hash_tree(const std::string& dir) {
  sha256 h;
  std::vector<std::string> stack{""};
  std::vector<std::string> files;
  while (!stack.empty()) {
    const std::string rel = stack.back();
    stack.pop_back();
    DIR* d = ::opendir((dir + "/" + rel).c_str());
    if (d == nullptr) throw error("cannot read the folder '" + dir + "/" + rel + "': " + std::strerror(errno));
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      const std::string r = rel.empty() ? name : rel + "/" + name;
      struct stat st;
      if (::stat((dir + "/" + r).c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) stack.push_back(r);
      else if (S_ISREG(st.st_mode)) files.push_back(r);
    }
    ::closedir(d);
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    std::string content;
    if (!read_whole_file(dir + "/" + f, content)) throw error("cannot read '" + dir + "/" + f + "'");
    h.update(f);
    h.update("\0", 1);
    h.update(std::to_string(content.size()));
    h.update("\0", 1);
    h.update(content);
  }
  return h.hex();
}

namespace detail {

/// Creates `dir` with mode 0700 if it does not exist; then checks that it is a folder (not a
/// symbolic link) owned by this user and closes it to others if it is open (chmod 0700).
/// @throws error naming the folder and the reason.
inline void private_folder(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw error("cannot create the cache folder '" + dir + "': " + std::strerror(errno));
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) throw error("cannot read the cache folder '" + dir + "': " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) throw error("the cache folder '" + dir + "' is not a folder (a symbolic link or a file)");
  if (st.st_uid != ::geteuid()) throw error("the cache folder '" + dir + "' belongs to another user");
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0)
    throw error("the cache folder '" + dir + "' is open to other users and cannot be closed: " + std::strerror(errno));
}

/// Creates the parents of `dir` (mode 0700 for the ones it makes, as XDG asks of ~/.cache).
inline void make_parents(const std::string& dir) {
  for (std::size_t at = dir.find('/', 1); at != std::string::npos; at = dir.find('/', at + 1)) {
    const std::string p = dir.substr(0, at);
    if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST)
      throw error("cannot create the folder '" + p + "': " + std::strerror(errno));
  }
}

}  // namespace detail

/// The cache's base folder: `requested` if not empty, else $XDG_CACHE_HOME/mcubes (an absolute
/// XDG_CACHE_HOME; a relative one is ignored, as the XDG specification asks), else
/// $HOME/.cache/mcubes (HOME from the password database when unset).
/// @throws error if no home folder is known.
inline std::string cache_base(const std::string& requested = {}) {
  if (!requested.empty()) return requested;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/mcubes";
  const char* home = std::getenv("HOME");
  std::string h = home != nullptr ? home : "";
  if (h.empty()) {
    if (const passwd* pw = ::getpwuid(::geteuid())) h = pw->pw_dir != nullptr ? pw->pw_dir : "";
  }
  if (h.empty() || h[0] != '/') throw error("no cache folder: set XDG_CACHE_HOME or HOME");
  return h + "/.cache/mcubes";
}

/// The folder of the compiled integrands, `<base>/jit`, made private (file comment): created with
/// its parents, mode 0700. @throws error if it cannot be made or is not the user's.
inline std::string cache_folder(const std::string& base) {
  detail::make_parents(base);
  detail::private_folder(base);
  const std::string jit = base + "/jit";
  detail::private_folder(jit);
  return jit;
}

/// A cached object, checked: `dir/<hash>.key` holds exactly `key_text` and the recorded SHA-256 of
/// `dir/<hash>.so` matches the file. Returns the object's path, or "" (a miss).
inline std::string cache_lookup(const std::string& dir, const std::string& hash, const std::string& key_text) {
  std::string recorded, object;
  if (!read_whole_file(dir + "/" + hash + ".key", recorded)) return {};
  const std::string head = key_text + "object-sha256 ";
  if (recorded.size() != head.size() + 65 || recorded.compare(0, head.size(), head) != 0 || recorded.back() != '\n')
    return {};
  const std::string path = dir + "/" + hash + ".so";
  if (!read_whole_file(path, object)) return {};
  if (sha256::of(object) != recorded.substr(head.size(), 64)) return {};
  return path;
}

/// Stores a compiled object: renames `object` (in the build folder, same file system) to
/// `dir/<hash>.so`, writes the source beside it, then the key file (atomically, last).
/// @throws error if a file cannot be written or renamed.
inline std::string cache_store(const std::string& dir, const std::string& hash, const std::string& key_text,
                               const std::string& object, const std::string& source, const std::string& source_ext) {
  std::string bytes;
  if (!read_whole_file(object, bytes)) throw error("cannot read the compiled object '" + object + "'");
  const std::string path = dir + "/" + hash + ".so";
  if (std::rename(object.c_str(), path.c_str()) != 0)
    throw error("cannot store the compiled object in '" + path + "': " + std::strerror(errno));
  write_file_atomically(dir + "/" + hash + source_ext, source, false);
  write_file_atomically(dir + "/" + hash + ".key", key_text + "object-sha256 " + sha256::of(bytes) + "\n", false);
  return path;
}

}  // namespace mcubes::jit
