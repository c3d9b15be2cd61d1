#pragma once
/// @file jit/toolchain.hpp
/// What compiles an integrand at run time (POSIX): the C++ compiler for the CPU backend and nvcc for
/// the CUDA backend (found, identified by their --version, with their flags), the include folders
/// (the mcubes headers, Random123's), and the CUDA device present (through the driver library,
/// loaded with dlopen: a program without CUDA needs none of it). Host only.
///
/// Flags. CPU: the flags of the project's Release build (-std=c++17 -O3 -DNDEBUG, no -march) with
/// -ffp-contract=off (no fused multiply-add, whatever extra flags add: the same bits as the
/// ahead-of-time build and the GPU built with --fmad=false), -fPIC -shared, hidden visibility (the
/// object exports its two entry points only, and never binds to the program's instances of the
/// library's inline functions), -Wl,--no-undefined (a function declared and not defined is an
/// error at compile time, not at load time), and diagnostics without colours or carets, columns in
/// bytes. CUDA: nvcc -std=c++17 -O1 -DNDEBUG -arch=sm_XY of the device, --expt-relaxed-constexpr
/// (as the command's CUDA build; default --fmad), -shared with a position-independent host part
/// and the shared CUDA runtime of the toolkit (rpath to its library folder). nvcc's -O sets the
/// host code's level only: the device code is the same as at -O3 (cicc and ptxas optimise at their
/// own -O3 either way), and -O1 shortens the host compilation, nvcc's largest step. Headers the unit
/// never uses are left out of every nvcc pass (-DR123_USE_SSE=0: Random123 without <x86intrin.h>,
/// which Philox does not use; -DCCCL_DISABLE_{FP16,BF16,NVFP8,NVFP6,NVFP4}_SUPPORT: CUB without
/// the half-precision and 8/6/4-bit float headers): the cubin is byte for byte the same, and the
/// first use ~15 % shorter. nvcc's steps run with the host front end beside the device compilation
/// (nvcc_steps.hpp).

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../config.hpp"
#include "../error.hpp"
#include "process.hpp"

namespace mcubes::jit {

/// The toolchain cannot compile or load an integrand: no compiler, headers not found, a compiler
/// that timed out, crashed or rejected the library's own code, an object that cannot be loaded. A
/// runtime failure (the `mcubes` command exits 3), not bad input.
class toolchain_error : public error {
 public:
  using error::error;
};

/// The compilation was stopped because compile_options::cancelled returned true.
class compile_cancelled : public error {
 public:
  using error::error;
};

/// A compiler, found and identified.
struct compiler {
  enum family_t { gcc, clang, nvcc, other };
  std::string path;     ///< the executable (as found on PATH or given)
  std::string version;  ///< the first line of its --version output
  family_t family = other;
};

namespace detail {

/// The first line of `path --version` (run once per process and path), and the family it names.
/// @throws toolchain_error if it does not run within `timeout` seconds or fails.
inline compiler identify(const std::string& path, double timeout, const std::string& scratch) {
  static std::mutex m;
  static std::map<std::string, compiler> known;
  {
    std::lock_guard<std::mutex> lock(m);
    const auto it = known.find(path);
    if (it != known.end()) return it->second;
  }
  const process_result r = run_process({path, "--version"}, scratch, timeout);
  ::unlink(scratch.c_str());
  if (r.timed_out)
    throw toolchain_error("'" + path + " --version' did not finish within " + std::to_string(static_cast<int>(timeout)) + " s");
  if (!r.ok()) throw toolchain_error("'" + path + " --version' failed: " + r.output.substr(0, r.output.find('\n')));
  compiler c;
  c.path = path;
  c.version = r.output.substr(0, r.output.find('\n'));
  const std::string& all = r.output;
  if (all.find("nvcc") != std::string::npos || all.find("NVIDIA") != std::string::npos) c.family = compiler::nvcc;
  else if (all.find("clang") != std::string::npos) c.family = compiler::clang;
  else if (all.find("Free Software Foundation") != std::string::npos || all.find("GCC") != std::string::npos ||
           all.find("g++") != std::string::npos) c.family = compiler::gcc;
  std::lock_guard<std::mutex> lock(m);
  known[path] = c;
  return c;
}

inline std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

/// The words of environment variable `name` (split at blanks: spaces, tabs, new lines; no quoting),
/// or none where it is unset or blank.
inline std::vector<std::string> env_words(const char* name) {
  std::vector<std::string> words;
  const std::string v = env_or_empty(name);
  std::size_t i = 0;
  while (i < v.size()) {
    while (i < v.size() && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n')) ++i;
    std::size_t j = i;
    while (j < v.size() && v[j] != ' ' && v[j] != '\t' && v[j] != '\n') ++j;
    if (j > i) words.push_back(v.substr(i, j - i));
    i = j;
  }
  return words;
}

}  // namespace detail

/// The extra flags of a compilation when compile_options::extra_flags is empty: the words of
/// $MCUBES_JIT_CXXFLAGS for the C++ compiler, of $MCUBES_JIT_NVCCFLAGS for nvcc (split at blanks,
/// no quoting; none where unset). They come after compile_flags(), so a later -O1 overrides -O3;
/// they are part of the cache key. Flags that change floating-point semantics (-ffast-math,
/// -ffp-contract=fast, nvcc's --use_fast_math) change the bits and are the user's choice; the
/// library does not check them.
inline std::vector<std::string> env_extra_flags(bool cuda) {
  return detail::env_words(cuda ? "MCUBES_JIT_NVCCFLAGS" : "MCUBES_JIT_CXXFLAGS");
}

/// The C++ compiler: `requested` if not empty (a path or a name on PATH), else $CXX, else c++, else
/// g++ on PATH. A $CXX that is set but names no executable program is refused (never silently
/// replaced by another compiler). `scratch` is a file the --version output may be written to.
/// @throws toolchain_error naming where it looked and what to install when none is found, or the
///         $CXX that was not found.
inline compiler find_cxx(const std::string& requested, double timeout, const std::string& scratch) {
  if (!requested.empty()) {
    const std::string p = find_program(requested);
    if (p.empty()) throw toolchain_error("the C++ compiler '" + requested + "' was not found");
    return detail::identify(p, timeout, scratch);
  }
  const std::string env = detail::env_or_empty("CXX");
  std::string p = env.empty() ? std::string() : find_program(env);
  if (!env.empty() && p.empty())
    throw toolchain_error("the C++ compiler of $CXX, '" + env +
                          "', was not found (an executable path, or a program on PATH): install it, or unset CXX "
                          "to use c++ or g++");
  if (p.empty()) p = find_program("c++");
  if (p.empty()) p = find_program("g++");
  if (p.empty())
    throw toolchain_error("no C++ compiler found (looked for $CXX" +
                          (env.empty() ? std::string(" (unset)") : " ('" + env + "', not found)") +
                          ", c++ and g++ on PATH): install g++ (Debian: apt-get install g++)");
  return detail::identify(p, timeout, scratch);
}

/// The CUDA compiler: `requested` if not empty, else $CUDACXX, else nvcc on PATH, else
/// /usr/local/cuda/bin/nvcc. A $CUDACXX that is set but names no executable program is refused.
/// @throws toolchain_error naming where it looked and what to install, or the $CUDACXX not found.
inline compiler find_nvcc(const std::string& requested, double timeout, const std::string& scratch) {
  if (!requested.empty()) {
    const std::string p = find_program(requested);
    if (p.empty()) throw toolchain_error("the CUDA compiler '" + requested + "' was not found");
    return detail::identify(p, timeout, scratch);
  }
  const std::string env = detail::env_or_empty("CUDACXX");
  std::string p = env.empty() ? std::string() : find_program(env);
  if (!env.empty() && p.empty())
    throw toolchain_error("the CUDA compiler of $CUDACXX, '" + env +
                          "', was not found (an executable path, or a program on PATH): install it, or unset "
                          "CUDACXX to use nvcc");
  if (p.empty()) p = find_program("nvcc");
  if (p.empty()) p = find_program("/usr/local/cuda/bin/nvcc");
  if (p.empty())
    throw toolchain_error("no CUDA compiler found (looked for $CUDACXX" +
                          (env.empty() ? std::string(" (unset)") : " ('" + env + "', not found)") +
                          ", nvcc on PATH and /usr/local/cuda/bin/nvcc): install the CUDA toolkit "
                          "(NVIDIA's cuda-toolkit packages; Debian: apt-get install nvidia-cuda-toolkit)");
  return detail::identify(p, timeout, scratch);
}

/// The flags for compiling a generated unit into `output` (the source file comes last). Every
/// object is linked with --exclude-libs,ALL: where the compiler links its C++ runtime statically
/// (a GCC built without a shared libstdc++), the object's copy must not be exported, or in a
/// process that also has the shared libstdc++ (Python with NumPy) part of its calls bind to the
/// other copy and formatting an error message crashes.
inline std::vector<std::string> compile_flags(const compiler& c, const std::string& cuda_arch) {
  if (c.family == compiler::nvcc) {
    // -O1: nvcc's -O is the host code's level only; the device code (cicc, ptxas at their -O3) is
    // byte for byte the same as with -O3, and the host part of a GPU run (a few operations per
    // iteration, no floating-point reassociation or contraction at any level) gives the same bits.
    // The host compilation is the largest step of nvcc's; -O1 makes the first use ~15 % faster.
    // The -D flags leave out headers that no pass uses (file comment): same cubin, less to parse
    // for cudafe++, cicc and the host compiler alike.
    std::vector<std::string> f = {"-std=c++17", "-O1", "-DNDEBUG", "-arch=" + cuda_arch, "--expt-relaxed-constexpr",
                                  "-shared", "-Xcompiler=-fPIC,-fvisibility=hidden,-fdiagnostics-color=never",
                                  "-cudart=shared", "-DR123_USE_SSE=0", "-DCCCL_DISABLE_FP16_SUPPORT",
                                  "-DCCCL_DISABLE_BF16_SUPPORT", "-DCCCL_DISABLE_NVFP8_SUPPORT",
                                  "-DCCCL_DISABLE_NVFP6_SUPPORT", "-DCCCL_DISABLE_NVFP4_SUPPORT",
                                  "-Xlinker=--exclude-libs,ALL"};
    char resolved[PATH_MAX];
    if (::realpath(c.path.c_str(), resolved) != nullptr) {  // <toolkit>/bin/nvcc -> <toolkit>/lib64
      std::string root = resolved;
      root = root.substr(0, root.rfind('/'));
      root = root.substr(0, root.rfind('/'));
      f.push_back("-Xlinker=-rpath," + root + "/lib64");
    }
    return f;
  }
  std::vector<std::string> f = {"-std=c++17", "-O3", "-DNDEBUG", "-ffp-contract=off", "-fPIC", "-shared", "-pthread",
                                "-fvisibility=hidden"};
  if (c.family == compiler::gcc) {
    for (const char* d : {"-Werror=return-type", "-Wl,--no-undefined", "-Wl,--exclude-libs,ALL", "-fno-diagnostics-show-caret",
                          "-fdiagnostics-color=never", "-fdiagnostics-column-unit=byte", "-fmessage-length=0"})
      f.emplace_back(d);
  } else if (c.family == compiler::clang) {
    for (const char* d : {"-Werror=return-type", "-Wl,--no-undefined", "-Wl,--exclude-libs,ALL", "-fno-caret-diagnostics",
                          "-fno-color-diagnostics"})
      f.emplace_back(d);
  }
  return f;
}

/// The Random123 (and other) include folders of the build, when they are not the compiler's own
/// (MCUBES_JIT_SYSTEM_INCLUDE_DIRS, a ':'-separated list the build may define). /usr/include and
/// /usr/local/include are left out: they are every compiler's own, and `-isystem /usr/include`
/// breaks nvcc's host compilation (`<cmath>`'s `#include_next <math.h>` no longer finds the C header).
inline std::vector<std::string> build_system_include_dirs() {
  std::vector<std::string> dirs;
#if defined(MCUBES_JIT_SYSTEM_INCLUDE_DIRS)
  const std::string list = MCUBES_JIT_SYSTEM_INCLUDE_DIRS;
  std::size_t start = 0;
  while (start < list.size()) {
    std::size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    const std::string dir = list.substr(start, end - start);
    if (!dir.empty() && dir != "/usr/include" && dir != "/usr/include/" && dir != "/usr/local/include" &&
        dir != "/usr/local/include/")
      dirs.push_back(dir);
    start = end + 1;
  }
#endif
  return dirs;
}

namespace detail {

/// Whether `dir` holds the mcubes headers of this version (mcubes/jit/entry.hpp, and
/// mcubes/config.hpp with this MCUBES_VERSION_STRING).
inline bool headers_of_this_version(const std::string& dir) {
  struct stat st;
  if (dir.empty() || ::stat((dir + "/mcubes/jit/entry.hpp").c_str(), &st) != 0) return false;
  std::ifstream in(dir + "/mcubes/config.hpp");
  const std::string want = "#define MCUBES_VERSION_STRING \"" MCUBES_VERSION_STRING "\"";
  for (std::string l; std::getline(in, l);)
    if (l == want) return true;
  return false;
}

/// The folder of this program's executable, or "".
inline std::string executable_folder() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  buf[n] = '\0';
  std::string p = buf;
  return p.substr(0, p.rfind('/'));
}

}  // namespace detail

/// The folder that holds mcubes/ (the headers the generated unit includes): `requested` if not
/// empty, else $MCUBES_INCLUDE_DIR, else `<prefix>/include` of an installed program (the executable
/// in `<prefix>/bin`), else the headers this program was compiled with (this file's folder, when the
/// compiler named it by an absolute path). Candidates other than the first two are taken only if
/// they hold the headers of this mcubes version.
/// @throws toolchain_error if none is found (or a requested folder lacks them).
inline std::string find_include_dir(const std::string& requested) {
  std::string given = requested.empty() ? detail::env_or_empty("MCUBES_INCLUDE_DIR") : requested;
  if (!given.empty()) {
    if (!detail::headers_of_this_version(given))
      throw toolchain_error("'" + given + "' does not hold the mcubes " MCUBES_VERSION_STRING
                            " headers (mcubes/jit/entry.hpp, mcubes/config.hpp)" +
                            std::string(requested.empty() ? " (from MCUBES_INCLUDE_DIR)" : ""));
    return given;
  }
  std::vector<std::string> candidates;
  const std::string exe = detail::executable_folder();
  if (!exe.empty()) candidates.push_back(exe + "/../include");
  const std::string here = __FILE__;  // <dir>/mcubes/jit/toolchain.hpp
  const std::string tail = "/mcubes/jit/toolchain.hpp";
  if (!here.empty() && here[0] == '/' && here.size() > tail.size() &&
      here.compare(here.size() - tail.size(), tail.size(), tail) == 0)
    candidates.push_back(here.substr(0, here.size() - tail.size()));
  for (const std::string& c : candidates)
    if (detail::headers_of_this_version(c)) {
      char resolved[PATH_MAX];
      return ::realpath(c.c_str(), resolved) != nullptr ? std::string(resolved) : c;
    }
  std::string looked;
  for (const std::string& c : candidates) looked += (looked.empty() ? "" : ", ") + c;
  throw toolchain_error("the mcubes " MCUBES_VERSION_STRING " headers were not found (looked in " +
                        (looked.empty() ? std::string("no folder") : looked) +
                        "): set MCUBES_INCLUDE_DIR to the folder that holds mcubes/");
}

/// A CUDA device as the driver sees it.
struct cuda_device {
  int count = 0;            ///< devices present (0 without a driver)
  std::string name;         ///< the device's name
  int major = 0, minor = 0; ///< compute capability
  std::string why;          ///< why there is none, when count is 0
  /// "sm_<major><minor>".
  std::string arch() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};

/// Device `ordinal` through the CUDA driver library (libcuda.so.1, loaded with dlopen; it stays
/// loaded), queried once per process and ordinal. Never throws: no driver or no device gives count 0
/// with the reason.
inline cuda_device query_cuda_device(int ordinal = 0) {
  static std::mutex m;
  static std::map<int, cuda_device> known;
  std::lock_guard<std::mutex> lock(m);
  const auto it = known.find(ordinal);
  if (it != known.end()) return it->second;
  cuda_device d;
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    d.why = "no CUDA driver (libcuda.so.1)";
    return known[ordinal] = d;
  }
  using init_fn = int (*)(unsigned);
  using count_fn = int (*)(int*);
  using get_fn = int (*)(int*, int);
  using attr_fn = int (*)(int*, int, int);
  using name_fn = int (*)(char*, int, int);
  const auto init = reinterpret_cast<init_fn>(::dlsym(lib, "cuInit"));
  const auto count = reinterpret_cast<count_fn>(::dlsym(lib, "cuDeviceGetCount"));
  const auto get = reinterpret_cast<get_fn>(::dlsym(lib, "cuDeviceGet"));
  const auto attr = reinterpret_cast<attr_fn>(::dlsym(lib, "cuDeviceGetAttribute"));
  const auto name = reinterpret_cast<name_fn>(::dlsym(lib, "cuDeviceGetName"));
  int n = 0, dev = 0;
  if (init == nullptr || count == nullptr || get == nullptr || attr == nullptr || name == nullptr || init(0) != 0 ||
      count(&n) != 0 || n == 0) {
    d.why = "no CUDA device";
    return known[ordinal] = d;
  }
  if (ordinal < 0 || ordinal >= n || get(&dev, ordinal) != 0) {
    d.why = "no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(n) + " present)";
    return known[ordinal] = d;
  }
  char buf[256] = {};
  const int cc_major = 75, cc_minor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR
  if (attr(&d.major, cc_major, dev) != 0 || attr(&d.minor, cc_minor, dev) != 0 || name(buf, sizeof buf - 1, dev) != 0) {
    d.why = "the CUDA driver did not describe device " + std::to_string(ordinal);
    return known[ordinal] = d;
  }
  d.count = n;
  d.name = buf;
  return known[ordinal] = d;
}

}  // namespace mcubes::jit
