#pragma once
/// @file jit.hpp
/// Integrands given as text, compiled to native code at run time and run by the same engine
/// (POSIX, host code; the program needs no CUDA: dlopen is in the C library, and -ldl on glibc
/// before 2.34):
///
///   `#include <mcubes/jit.hpp>`
///   mcubes::result r = mcubes::jit::vegas(
///       mcubes::jit::expression("exp(-625*((x[0]-0.5)*(x[0]-0.5) + (x[1]-0.5)*(x[1]-0.5)))", 2),
///       mcubes::jit::box::unit(2), opts);                   // r.estimate +- r.error
///
/// The text is a C++ expression of x[0] .. x[D-1] (and D) with the `<cmath>` functions, or the body
/// of a function that returns the value (jit::body); source.hpp says what the generated functor
/// is. **The text is compiled and runs with the rights of the program**: it is code, not a formula
/// language; give it only text you would compile yourself.
///
/// How: compile() checks the text (source.hpp), generates a translation unit holding the functor
/// and the C entry points of abi.hpp, and compiles it into a shared object for the backend of the
/// options: the system C++ compiler for the CPU, nvcc for CUDA (toolchain.hpp: which compiler,
/// which flags, which headers; nvcc's steps run with the host front end beside the device
/// compilation, nvcc_steps.hpp), under a time limit. The object is cached (cache.hpp: the key, the
/// checks before loading, the folder's rights), loaded with dlopen, checked against the key it was
/// compiled under, and run: the object calls mcubes::vegas_with (plain_mc_with, midpoint_with), as
/// the library's one-call methods do, on a cpu_backend or a cuda_backend. In a program that links
/// the precompiled run-time engine (MCUBES_PRECOMPILED_JIT_ENGINE, jit/object_run.hpp), a CPU
/// integrand of a precompiled dimension becomes an object that holds the integrand only (a
/// fraction of the compiler's time; one object for every method) and the program runs the method
/// itself through the same interface: the same bits.
///
/// Determinism: a run gives bitwise the result of the same functor compiled ahead of time with the
/// project's flags and run by the one-call method with the same options and seed (on the CPU, whose
/// flags are the Release build's; tests/jit/test_jit.cpp checks it), for any number of threads.
///
/// Errors: bad text is a compile_error (an invalid_input: position and the compiler's message
/// against the user's text); a missing compiler, headers not found, a compiler past its time limit,
/// a compiler that could not write its output (no space left on the device, a quota) or an object
/// that cannot be loaded is a toolchain_error; a run throws the same exception types
/// as the ahead-of-time method (non_finite_integrand with its point, overflow_error, ...; a CUDA
/// failure as mcubes::error), and index_out_of_range for x[i] with i outside 0..D-1 met at run time.

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "algorithm/midpoint.hpp"
#include "algorithm/plain_mc.hpp"
#include "algorithm/vegas_batch.hpp"
#include "checkpoint.hpp"
#include "core/running_average.hpp"
#include "error.hpp"
#include "execution.hpp"
#include "options.hpp"
#include "result.hpp"
#include "jit/abi.hpp"
#include "jit/cache.hpp"
#include "jit/nvcc_steps.hpp"
#include "jit/object_run.hpp"
#include "jit/process.hpp"
#include "jit/source.hpp"
#include "jit/toolchain.hpp"
#if defined(MCUBES_PRECOMPILED_JIT_ENGINE)
#include "precompiled.hpp"
#endif

namespace mcubes::jit {

/// The method an object is compiled for (only that one is instantiated in it). vegas_batch: m-Cubes
/// over many parameter vectors in one batch (compiled_integrand::vegas_batch; needs parameters).
enum class method { vegas, plain_mc, midpoint, vegas_batch };

/// "vegas", "plain_mc", "midpoint", "vegas_batch".
inline const char* to_string(method m) {
  return m == method::vegas ? "vegas" : m == method::plain_mc ? "plain_mc" : m == method::midpoint ? "midpoint" : "vegas_batch";
}

/// An integration box of run-time dimension: [lower_i, upper_i] for i = 0..D-1 (region<D> with D
/// known at run time only).
struct box {
  std::vector<double> lower, upper;
  /// [0, 1]^dim.
  static box unit(int dim) { return cube(dim, 0.0, 1.0); }
  /// [a, b]^dim.
  static box cube(int dim, double a, double b) {
    box r;
    r.lower.assign(dim > 0 ? static_cast<std::size_t>(dim) : 0, a);
    r.upper.assign(dim > 0 ? static_cast<std::size_t>(dim) : 0, b);
    return r;
  }
};

/// Checks a box for dimension `dim` by the rules of region<D> (finite bounds, lower < upper, a
/// finite positive volume). @throws invalid_input naming the axis.
inline void validate(const box& b, int dim) {
  MCUBES_EXPECTS(b.lower.size() == static_cast<std::size_t>(dim) && b.upper.size() == static_cast<std::size_t>(dim),
                 "region: ", dim, " lower and upper bounds needed (one per axis), got ", b.lower.size(), " and ",
                 b.upper.size());
  double volume = 1.0;
  for (int i = 0; i < dim; ++i) {
    const double lo = b.lower[static_cast<std::size_t>(i)], hi = b.upper[static_cast<std::size_t>(i)];
    MCUBES_EXPECTS(std::isfinite(lo) && std::isfinite(hi), "region: bound of axis ", i, " is not finite (lower = ", lo,
                   ", upper = ", hi, ")");
    MCUBES_EXPECTS(lo < hi, "region: lower bound must be below upper bound on axis ", i, " (lower = ", lo,
                   ", upper = ", hi, ")");
    MCUBES_EXPECTS(std::isfinite(hi - lo), "region: width of axis ", i, " overflows");
    volume *= hi - lo;
  }
  MCUBES_EXPECTS(std::isfinite(volume) && volume > 0, "region: volume ", volume, " is not a finite positive number");
}

/// x[i] with i outside 0..D-1, met at run time (an index the compiler could not bound): x[i] was
/// NaN, so the integrand returned a non-finite value at that sample; the sample's fields are those
/// of non_finite_integrand, index() the i.
class index_out_of_range : public non_finite_integrand {
 public:
  index_out_of_range(int index, int dim, int iteration, std::uint64_t sample_index, std::vector<double> point, double value)
      : non_finite_integrand(make_message(index, dim, iteration, sample_index, point, value), iteration, sample_index,
                             point, value),  // a copy: the arguments' order is unspecified
        index_(index) {}
  /// The i of x[i].
  int index() const noexcept { return index_; }

 private:
  static std::string make_message(int index, int dim, int iteration, std::uint64_t sample, const std::vector<double>& x,
                                  double value) {
    std::ostringstream s;
    s.precision(17);
    s << "x[" << index << "] read outside x[0] .. x[" << dim - 1 << "] (D = " << dim << "): the integrand returned "
      << value << " at x = " << point_text(x) << " (iteration " << iteration << ", sample " << sample << ")";
    return s.str();
  }
  int index_;
};

/// How to compile; every field has a default.
struct compile_options {
  std::string cxx;                       ///< C++ compiler, a path or a name on PATH; empty: $CXX, else c++, else g++
  std::string nvcc;                      ///< CUDA compiler; empty: $CUDACXX, else nvcc on PATH, else /usr/local/cuda/bin/nvcc
  std::string cuda_arch;                 ///< e.g. "sm_90"; empty: the architecture of the options' device
  std::vector<std::string> extra_flags;  ///< appended to the default flags (toolchain.hpp); part of the key;
                                         ///< empty: $MCUBES_JIT_CXXFLAGS / $MCUBES_JIT_NVCCFLAGS (env_extra_flags)
  std::string include_dir;               ///< the folder holding mcubes/; empty: find_include_dir
  std::vector<std::string> system_include_dirs;  ///< more -isystem folders; empty: those of the build
  std::string cache_dir;                 ///< base folder of the cache; empty: cache_base() ($XDG_CACHE_HOME/mcubes)
  bool use_cache = true;                 ///< false: compile in a temporary folder, load, and keep nothing
  double timeout_seconds = 60;           ///< the compiler is stopped after this (toolchain_error); > 0
  std::function<bool()> cancelled;       ///< polled while the compiler runs: true stops it (compile_cancelled)
  std::function<void(const std::vector<std::string>&)> on_compile;  ///< called with the command line before
                                                                    ///< the compiler starts (a cache miss)
};

/// What compile() did.
struct compile_info {
  std::string backend;        ///< "cpu" or "cuda"
  bool cache_hit = false;     ///< the object came from the cache (after its checks)
  double compile_seconds = 0; ///< wall time of the compiler (0 on a cache hit)
  double total_seconds = 0;   ///< wall time of the whole compile(): key, lookup or compiler, load
  std::string compiler;       ///< the compiler's path
  std::string compiler_version;  ///< the first line of its --version
  std::string cuda_arch;      ///< sm_XY (cuda)
  std::string object;         ///< path of the loaded object (in the cache, or removed when use_cache is false)
  std::string key;            ///< the cache key, hex SHA-256
  std::vector<std::string> command;  ///< the compiler's command line (also on a cache hit: what it would be)
};

namespace detail {

/// Removes the files of a build folder (it has no subfolders) and the folder; errors are ignored.
inline void remove_build_folder(const std::string& path) {
  if (DIR* d = ::opendir(path.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") ::unlink((path + "/" + n).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(path.c_str());
}

/// The file of a build folder in the cache that names the compilation's process: "<pid> <host>".
inline constexpr const char build_owner_file[] = "owner";

/// This host's name ("" if unknown).
inline std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

/// Writes build_owner_file into the build folder `path` (this process on this host).
inline void mark_build_folder(const std::string& path) {
  std::ofstream(path + "/" + build_owner_file) << ::getpid() << " " << host_name() << "\n";
}

/// Removes the build folders "build.XXXXXX" of the cache folder `dir` that compilations ended
/// outright left behind (killed by SIGKILL, a crash, a power cut): a folder whose owner names a
/// process of this host that no longer runs, and a folder without an owner, or of another host,
/// last changed more than a day ago. The folder of a running compilation is left alone.
inline void remove_stale_build_folders(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> stale;
  const std::string host = host_name();
  const std::time_t now = std::time(nullptr);
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.compare(0, 6, "build.") != 0) continue;
    const std::string path = dir + "/" + n;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    long pid = 0;
    std::string owner_host;
    std::ifstream(path + "/" + build_owner_file) >> pid >> owner_host;
    const bool old = now - st.st_mtime > 24 * 3600;
    const bool ours = pid > 0 && !host.empty() && owner_host == host;
    if (ours ? (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) : old) stale.push_back(path);
  }
  ::closedir(d);
  for (const std::string& path : stale) remove_build_folder(path);
}

/// Removes a build folder and its files at the end of a scope.
class build_folder {
 public:
  explicit build_folder(std::string path) : path_(std::move(path)) {}
  build_folder(const build_folder&) = delete;
  build_folder& operator=(const build_folder&) = delete;
  ~build_folder() {
    if (!path_.empty()) remove_build_folder(path_);
  }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

/// A fresh folder "<parent>/<prefix>XXXXXX" (mode 0700). @throws toolchain_error.
inline std::string make_temporary_folder(const std::string& parent, const std::string& prefix) {
  std::string templ = parent + "/" + prefix + "XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw toolchain_error("cannot create a build folder in '" + parent + "': " + std::strerror(errno));
  return buf.data();
}

inline std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

/// The chi-square tail this program passes to objects.
inline double program_chi2_q(double chi2, int dof) { return chi2_q(chi2, dof); }

/// The loaded object: dlclose when the last owner goes.
struct loaded_object {
  void* handle = nullptr;
  mcubes_jit_run_fn run = nullptr;              ///< the entry of a single run (methods but vegas_batch)
  mcubes_jit_run_batch_fn run_batch = nullptr;  ///< the entry of a batch (method vegas_batch)
  points_api points;                            ///< a points object's entries (jit/object_run.hpp)
  const mcubes_jit_object* info = nullptr;
  ~loaded_object() {
    if (handle != nullptr) ::dlclose(handle);
  }
};

/// Loads `path` and checks it is the object compiled under `key` for this call shape. An object
/// stays mapped until the program ends (RTLD_NODELETE): a CUDA object registers its kernels with the
/// CUDA runtime, which must not see them unmapped and mapped again (repeated loads of one object
/// reuse the mapping).
/// @throws toolchain_error if it cannot be loaded or is another object.
inline std::shared_ptr<loaded_object> load(const std::string& path, const std::string& key, int dim, int method,
                                           int backend, int n_params) {
  auto obj = std::make_shared<loaded_object>();
  obj->handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (obj->handle == nullptr) {
    const char* why = ::dlerror();
    throw toolchain_error("cannot load the compiled integrand '" + path + "': " + (why != nullptr ? why : "unknown reason"));
  }
  const auto info = reinterpret_cast<mcubes_jit_object_info_fn>(::dlsym(obj->handle, "mcubes_jit_object_info"));
  bool entries = false;
  if (method == mcubes_jit_method_points) {
    obj->points.points = reinterpret_cast<mcubes_jit_points_fn>(::dlsym(obj->handle, "mcubes_jit_points"));
    obj->points.index_at = reinterpret_cast<mcubes_jit_index_at_fn>(::dlsym(obj->handle, "mcubes_jit_index_at"));
    obj->points.n_params = n_params;
    entries = obj->points.points != nullptr && obj->points.index_at != nullptr;
  } else if (method == mcubes_jit_vegas_batch) {
    obj->run_batch = reinterpret_cast<mcubes_jit_run_batch_fn>(::dlsym(obj->handle, "mcubes_jit_run_batch"));
    entries = obj->run_batch != nullptr;
  } else {
    obj->run = reinterpret_cast<mcubes_jit_run_fn>(::dlsym(obj->handle, "mcubes_jit_run"));
    entries = obj->run != nullptr;
  }
  if (info == nullptr || !entries)
    throw toolchain_error("'" + path + "' is not a compiled mcubes integrand (its entry points are missing)");
  obj->info = info();
  const mcubes_jit_object* i = obj->info;
  if (i == nullptr || i->abi_version != MCUBES_JIT_ABI_VERSION || i->dim != dim || i->method != method ||
      i->backend != backend || i->n_params != n_params || i->key == nullptr || key != i->key)
    throw toolchain_error("'" + path + "' is not the object compiled for this integrand (its key or shape differ)");
  return obj;
}

/// A compiler failure as the exception it is: the user's text (compile_error), or the toolchain.
[[noreturn]] inline void throw_compile_failure(const integrand_source& src, const compiler& c, const process_result& r,
                                               double timeout, const std::string& include_dir) {
  if (r.cancelled) throw compile_cancelled("the compilation of the integrand was interrupted");
  if (r.timed_out) {
    std::ostringstream s;
    s << "the compiler (" << c.path << ") did not finish within " << timeout
      << " s and was stopped (the time limit: compile_options::timeout_seconds, --compile-timeout of the command)";
    throw toolchain_error(s.str());
  }
  if (r.signal != 0)
    throw toolchain_error("the compiler (" + c.path + ") was killed by signal " + std::to_string(r.signal) + ": " +
                          r.output.substr(0, r.output.find('\n')));
  for (const char* full : {"No space left on device", "Disk quota exceeded", "File too large"})
    if (r.output.find(full) != std::string::npos) {  // the disk, not the text: a runtime failure
      const std::size_t at = r.output.find(full);
      const std::size_t from = r.output.rfind('\n', at);
      const std::size_t to = r.output.find('\n', at);
      const std::size_t begin = from == std::string::npos ? 0 : from + 1;
      throw toolchain_error("the compiler (" + c.path + ") could not write its output (" + full +
                            "; free space in the cache folder, or set XDG_CACHE_HOME or TMPDIR elsewhere): " +
                            r.output.substr(begin, to == std::string::npos ? std::string::npos : to - begin));
    }
  std::vector<diagnostic> d = user_diagnostics(r.output, src.name(), src.dim);
  if (d.empty() && (r.output.find("control reaches end of non-void function") != std::string::npos ||
                    r.output.find("non-void function does not return a value") != std::string::npos)) {
    int lines = 1;
    for (char ch : src.text) lines += ch == '\n';
    d.push_back(diagnostic{lines, 0, "the body can end without returning a value"});
  }
  if (!d.empty()) throw compile_error(src.name(), std::move(d), r.output);
  const std::string first = first_error_line(r.output);
  if (first.empty())
    throw toolchain_error("the compiler (" + c.path + ") failed (exit code " + std::to_string(r.exit_code) +
                          ") without an error message: " + r.output.substr(0, 400));
  const bool in_headers = first.find(include_dir + "/mcubes/") != std::string::npos ||
                          (first.find("fatal error") != std::string::npos && first.find(src.name()) == std::string::npos);
  if (in_headers) throw toolchain_error("the mcubes headers do not compile with " + c.path + ": " + first);
  throw compile_error(src.name(), {diagnostic{0, 0, "in the code generated around the text: " + first}}, r.output);
}

/// State of one run on the program's side of the C interface.
struct run_context {
  const iteration_callback* on_iteration = nullptr;
  const batch_callback* on_round = nullptr;  ///< a batch's callback (may be null)
  std::vector<iteration_record> seen;     ///< records reported so far (the callback's result so far)
  std::vector<iteration_record> records;  ///< the final result's records
  std::vector<std::vector<iteration_record>> batch_records;  ///< a batch: integral k's records
  vegas_options options;
  std::string backend;
  std::exception_ptr failure;             ///< what the callback threw (rethrown after the run)
  batch_failures* batch_failed = nullptr;  ///< a batch's per-integral failures (vegas_batch's failures)
  sampling_density* trained = nullptr;     ///< where on_density puts the trained density (may be null)
  /// vegas_resumption::save of the run (may be null): called by on_boundary_trampoline
  const std::function<void(const std::function<vegas_progress()>&, bool)>* save = nullptr;
  /// batch_resumption::save of a batch (may be null): called by on_batch_boundary_trampoline
  const std::function<void(const std::function<std::vector<vegas_progress>()>&, bool)>* batch_save = nullptr;
};

inline iteration_record from_c(const mcubes_jit_record& c) {
  iteration_record r;
  r.index = c.index;
  r.estimate = c.estimate;
  r.error = c.error;
  r.adapted = c.adapted != 0;
  r.accumulated = c.accumulated != 0;
  r.underflow = c.underflow != 0;
  r.weighted_estimate = c.weighted_estimate;
  r.weighted_error = c.weighted_error;
  r.chi2_dof = c.chi2_dof;
  r.q = c.q;
  r.n_eval = c.n_eval;
  r.n_nonzero = c.n_nonzero;
  r.rescaled = c.rescaled != 0;
  r.top_bin_level = c.top_bin_level;
  r.seconds = c.seconds;
  return r;
}

inline void fill(result& r, const mcubes_jit_summary& s) {
  r.estimate = s.estimate;
  r.error = s.error;
  r.chi2_dof = s.chi2_dof;
  r.q = s.q;
  r.dof = s.dof;
  r.status = static_cast<status>(s.status);
  r.iterations = s.iterations;
  r.accumulated = s.accumulated;
  r.n_eval = s.n_eval;
  r.seed = s.seed;
  r.seconds = s.seconds;
  r.inverse_variance_estimate = s.inverse_variance_estimate;
  r.inverse_variance_error = s.inverse_variance_error;
  r.warnings = s.warnings;
}

extern "C" inline int on_iteration_trampoline(void* context, const mcubes_jit_record* record,
                                              const mcubes_jit_summary* so_far) {
  run_context& c = *static_cast<run_context*>(context);
  try {
    c.seen.push_back(from_c(*record));
    result r;
    fill(r, *so_far);
    r.backend = c.backend;
    r.options = c.options;
    r.records = c.seen;
    return (*c.on_iteration)(c.seen.back(), r) == run_control::stop ? 1 : 0;
  } catch (...) {
    c.failure = std::current_exception();
    return 1;
  }
}

extern "C" inline void on_record_trampoline(void* context, const mcubes_jit_record* record) {
  run_context& c = *static_cast<run_context*>(context);
  try {
    c.records.push_back(from_c(*record));
  } catch (...) {
    if (!c.failure) c.failure = std::current_exception();
  }
}

extern "C" inline void on_density_trampoline(void* context, int32_t dim, int32_t n_bins, const double* edges,
                                             uint64_t g, uint64_t n_shares, const double* shares) {
  run_context& c = *static_cast<run_context*>(context);
  try {
    sampling_density& d = *c.trained;
    d.dim = dim;
    d.n_bins = n_bins;
    d.edges.assign(edges, edges + static_cast<std::size_t>(dim) * (static_cast<std::size_t>(n_bins) + 1));
    d.g = g;
    d.shares.assign(shares, shares + n_shares);
  } catch (...) {
    if (!c.failure) c.failure = std::current_exception();
  }
}

extern "C" inline void append_bytes(void* sink, const char* bytes, uint64_t n) {
  static_cast<std::string*>(sink)->append(bytes, static_cast<std::size_t>(n));
}

extern "C" inline int on_boundary_trampoline(void* context, int32_t ended, void* progress_context,
                                             mcubes_jit_progress_fn take) {
  run_context& c = *static_cast<run_context*>(context);
  try {
    const std::function<vegas_progress()> progress = [&]() -> vegas_progress {
      std::string bytes;
      if (take(progress_context, &bytes, &append_bytes) != 0)
        throw error("the compiled integrand's object could not take the run's progress");
      return decode_progress(bytes, "the compiled integrand's progress");
    };
    (*c.save)(progress, ended != 0);
    return 0;
  } catch (...) {
    if (!c.failure) c.failure = std::current_exception();
    return 1;
  }
}

extern "C" inline int on_batch_boundary_trampoline(void* context, int32_t ended, void* progress_context,
                                                   mcubes_jit_progress_fn take) {
  run_context& c = *static_cast<run_context*>(context);
  try {
    const std::function<std::vector<vegas_progress>()> progress = [&]() -> std::vector<vegas_progress> {
      std::string bytes;
      if (take(progress_context, &bytes, &append_bytes) != 0)
        throw error("the compiled integrand's object could not take the batch's progress");
      return decode_progresses(bytes, "the compiled integrand's batch progress");
    };
    (*c.batch_save)(progress, ended != 0);
    return 0;
  } catch (...) {
    if (!c.failure) c.failure = std::current_exception();
    return 1;
  }
}

extern "C" inline int on_round_trampoline(void* context, const mcubes_jit_batch_progress* progress) {
  run_context& c = *static_cast<run_context*>(context);
  try {
    batch_progress p;
    p.integrals = static_cast<std::size_t>(progress->integrals);
    p.finished = static_cast<std::size_t>(progress->finished);
    p.round = progress->round;
    p.n_eval = progress->n_eval;
    return (*c.on_round)(p) == run_control::stop ? 1 : 0;
  } catch (...) {
    c.failure = std::current_exception();
    return 1;
  }
}

extern "C" inline void on_batch_record_trampoline(void* context, uint64_t integral, const mcubes_jit_record* record) {
  run_context& c = *static_cast<run_context*>(context);
  try {
    c.batch_records.at(static_cast<std::size_t>(integral)).push_back(from_c(*record));
  } catch (...) {
    if (!c.failure) c.failure = std::current_exception();
  }
}

/// Throws the exception that the object's error fields describe (a batch's failure: a batch_error
/// naming its integral, with that exception nested, as vegas_batch_with throws).
[[noreturn]] inline void throw_run_failure(const mcubes_jit_call& c, const std::vector<double>& point) {
  if (c.error_in_batch != 0) {
    mcubes_jit_call single = c;
    single.error_in_batch = 0;
    try {
      throw_run_failure(single, point);
    } catch (const std::exception& e) {
      std::throw_with_nested(batch_error(static_cast<std::size_t>(c.error_integral), e.what()));
    }
  }
  const std::string message = c.error_message;
  switch (c.error_kind) {
    case mcubes_jit_invalid_input: throw invalid_input(message);
    case mcubes_jit_non_finite:
      throw non_finite_integrand(c.error_iteration, c.error_sample, point, c.error_value);
    case mcubes_jit_index_out_of_range:
      throw index_out_of_range(c.error_index, c.dim, c.error_iteration, c.error_sample, point, c.error_value);
    case mcubes_jit_overflow:
      throw overflow_error(c.error_iteration, c.error_sample, point, c.error_value, c.error_jacobian);
    case mcubes_jit_numerical: throw numerical_error(message);
    case mcubes_jit_out_of_memory: throw std::bad_alloc();
    case mcubes_jit_bad_call: throw toolchain_error("the compiled integrand refused the call: " + message);
    default: throw error(message.empty() ? std::string("the compiled integrand failed") : message);
  }
}

/// A batch's failing integral (mcubes_jit_batch_call::on_failure): its failure as the exception
/// throw_run_failure makes of it, kept in the context's batch_failed.
extern "C" inline void on_batch_failure_trampoline(void* context, uint64_t integral, const mcubes_jit_call* failure) {
  run_context& c = *static_cast<run_context*>(context);
  try {
    const std::vector<double> point(failure->error_point, failure->error_point + failure->dim);
    try {
      throw_run_failure(*failure, point);
    } catch (...) {
      c.batch_failed->at(static_cast<std::size_t>(integral)) = std::current_exception();
    }
  } catch (...) {
    if (!c.failure) c.failure = std::current_exception();
  }
}

/// Whether this program runs points objects (jit/object_run.hpp) of dimension `dim` itself: it
/// links the precompiled run-time engine (MCUBES_PRECOMPILED_JIT_ENGINE) and dim is one of its
/// dimensions (MCUBES_PRECOMPILED_DIMS).
inline bool runs_points_objects(int dim) {
#if defined(MCUBES_PRECOMPILED_JIT_ENGINE)
#define MCUBES_JIT_POINTS_DIM(D) if (dim == D) return true;
  MCUBES_PRECOMPILED_DIMS(MCUBES_JIT_POINTS_DIM)
#undef MCUBES_JIT_POINTS_DIM
#endif
  (void)dim;
  return false;
}

/// mcubes_jit_run of a points object: the program's run (run_points_object of the call's dimension).
inline int run_points(const points_api& api, mcubes_jit_call* call) {
#if defined(MCUBES_PRECOMPILED_JIT_ENGINE)
#define MCUBES_JIT_POINTS_RUN(D) if (call->dim == D) return run_points_object<D>(api, call);
  MCUBES_PRECOMPILED_DIMS(MCUBES_JIT_POINTS_RUN)
#undef MCUBES_JIT_POINTS_RUN
#endif
  (void)api, (void)call;
  return mcubes_jit_bad_call;
}

/// mcubes_jit_run_batch of a points object (run_points_object_batch of the call's dimension).
inline int run_points_batch(const points_api& api, mcubes_jit_batch_call* call) {
#if defined(MCUBES_PRECOMPILED_JIT_ENGINE)
#define MCUBES_JIT_POINTS_RUN(D) if (call->call.dim == D) return run_points_object_batch<D>(api, call);
  MCUBES_PRECOMPILED_DIMS(MCUBES_JIT_POINTS_RUN)
#undef MCUBES_JIT_POINTS_RUN
#endif
  (void)api, (void)call;
  return mcubes_jit_bad_call;
}

}  // namespace detail

/// An integrand compiled and loaded (compile()): runs its method any number of times, over any
/// box of its dimension, with any options and parameters. Copies share the loaded object (which
/// stays mapped until the program ends). Thread safety: runs from several threads at once are
/// independent.
class compiled_integrand {
 public:
  const integrand_source& source() const noexcept { return source_; }
  jit::method method() const noexcept { return method_; }
  /// cpu or cuda.
  backend_kind backend() const noexcept { return backend_; }
  const compile_info& info() const noexcept { return info_; }
  int dim() const noexcept { return source_.dim; }

  /// m-Cubes (mcubes::vegas) over `region` with `opt` (opt.backend is ignored: the object's backend
  /// runs; result.options is opt as given, result.backend the backend that ran); `params` are
  /// p[0..P-1]. @throws invalid_input for a bad region, options or parameter count, or an object of
  /// another method; otherwise as mcubes::vegas and index_out_of_range (jit.hpp file comment).
  ///
  /// With `trained` (non-null), *trained is set to the sampling density the run ended with (for
  /// weighted samples, core/weighted_sample.hpp; the region's bounds included) when it returns.
  ///
  /// With `resume` (vegas_resumption), the run continues a checkpointed one and hands its progress
  /// to a saver at every boundary, as vegas_continue's (the progress crosses the object's interface
  /// as encode_progress bytes: the same bits).
  result vegas(const box& region, const vegas_options& opt = {}, const iteration_callback& on_iteration = {},
               const std::vector<double>& params = {}, sampling_density* trained = nullptr,
               const vegas_resumption& resume = {}) const {
    MCUBES_EXPECTS(method_ == jit::method::vegas, "this integrand was compiled for ", to_string(method_), ", not vegas");
    validate(opt, dim());
    result r = run(region, vegas_call_options(opt), on_iteration ? &on_iteration : nullptr, params, trained, &resume);
    r.options = opt;
    return r;
  }

  /// m-Cubes over K = params.size() parameter vectors in one batch (mcubes::vegas_batch_with, an
  /// object compiled for method vegas_batch): integral k integrates the integrand with p = params[k]
  /// (P values each) over `region` with `opt` and the seed batch_seed(opt.seed, k). Result k is bitwise
  /// the result of vegas() with params[k] and that seed from an object compiled for method vegas from
  /// the same text on the same backend (the determinism contract of algorithm/vegas_batch.hpp: both
  /// evaluate with_parameters<integrand_of_parameters, parameters>, jit/source.hpp), whatever K, the
  /// threads or the block size; its options are opt with that seed. on_round runs after every round
  /// (run_control::stop ends every active integral, status interrupted).
  /// @throws invalid_input for a bad region or options, no integrals, a parameter vector of another
  /// size than P, or an object of another method; batch_error naming the lowest-index failing
  /// integral with the failure nested (the types vegas() throws: non_finite_integrand,
  /// index_out_of_range, ...); what on_round throws.
  /// With `failures` (non-null), a failing integral leaves the batch instead, as vegas_batch_with
  /// does with its `failures`: (*failures)[k] is its exception (the type vegas() would throw),
  /// result k the iterations it completed (status interrupted); the others are unchanged.
  /// With `resume` (batch_resumption), the batch continues a checkpointed one (resume.from: its K
  /// progresses) and hands every integral's progress to resume.save after every round and at its
  /// end, as vegas_batch_with's (the progresses cross the object's interface as
  /// encode_progresses bytes: the same bits). Checkpoints on several devices throw invalid_input.
  std::vector<result> vegas_batch(const box& region, const std::vector<std::vector<double>>& params,
                                  const vegas_options& opt = {}, const batch_callback& on_round = {},
                                  batch_failures* failures = nullptr, const batch_resumption& resume = {}) const {
    MCUBES_EXPECTS(method_ == jit::method::vegas_batch, "this integrand was compiled for ", to_string(method_),
                   ", not vegas_batch");
    validate(opt, dim());
    MCUBES_EXPECTS(!params.empty(), "a batch needs at least one integral (the parameter list is empty)");
    std::vector<double> flat;
    flat.reserve(params.size() * static_cast<std::size_t>(source_.n_params));
    for (std::size_t k = 0; k < params.size(); ++k) {
      MCUBES_EXPECTS(params[k].size() == static_cast<std::size_t>(source_.n_params), "the integrand takes ",
                     source_.n_params, " parameters p[0..P-1], got ", params[k].size(), " for integral ", k);
      flat.insert(flat.end(), params[k].begin(), params[k].end());
    }
    detail::run_context ctx;
    ctx.on_round = on_round ? &on_round : nullptr;
    ctx.batch_records.resize(params.size());
    std::vector<double> point(static_cast<std::size_t>(dim()), 0.0);
    std::vector<mcubes_jit_summary> summaries(params.size());
    auto call = std::make_unique<mcubes_jit_batch_call>();
    std::memset(call.get(), 0, sizeof(mcubes_jit_batch_call));
    prepare(call->call, sizeof(mcubes_jit_batch_call), region, vegas_call_options(opt), flat.data(), ctx, point);
    call->n_integrals = params.size();
    call->on_round = ctx.on_round != nullptr ? &detail::on_round_trampoline : nullptr;
    call->on_batch_record = &detail::on_batch_record_trampoline;
    call->results = summaries.data();
    if (failures != nullptr) {
      failures->assign(params.size(), nullptr);
      ctx.batch_failed = failures;
      call->on_failure = &detail::on_batch_failure_trampoline;
    }
    std::string resume_bytes;  // the batch to continue, and the saver after every round (checkpoints)
    if (resume.from != nullptr) {
      MCUBES_EXPECTS(resume.from->size() == params.size(), "the batch to continue has ", resume.from->size(),
                     " integrals, not ", params.size());
      resume_bytes = encode_progresses(*resume.from);
      call->call.resume = resume_bytes.data();
      call->call.resume_size = resume_bytes.size();
    }
    if (resume.save) {
      ctx.batch_save = &resume.save;
      call->call.on_boundary = &detail::on_batch_boundary_trampoline;
    }
    const int rc = object_->points.points != nullptr ? detail::run_points_batch(object_->points, call.get())
                                                     : object_->run_batch(call.get());
    if (ctx.failure) std::rethrow_exception(ctx.failure);
    if (rc != mcubes_jit_ok) detail::throw_run_failure(call->call, point);
    std::vector<result> out(params.size());
    for (std::size_t k = 0; k < out.size(); ++k) {
      detail::fill(out[k], summaries[k]);
      out[k].backend = ctx.backend;
      out[k].records = std::move(ctx.batch_records[k]);
      out[k].options = opt;
      out[k].options.seed = batch_seed(opt.seed, k);
    }
    return out;
  }

  /// Plain Monte Carlo (mcubes::plain_mc) over `region`. @throws as vegas() and mcubes::plain_mc.
  result plain_mc(const box& region, const plain_mc_options& opt = {}, const std::vector<double>& params = {}) const {
    MCUBES_EXPECTS(method_ == jit::method::plain_mc, "this integrand was compiled for ", to_string(method_), ", not plain_mc");
    validate(opt);
    vegas_options v;  // the interface's carrier of rel_tol, abs_tol and seed
    v.seed = opt.seed;
    v.rel_tol = opt.rel_tol;
    v.abs_tol = opt.abs_tol;
    mcubes_jit_options o = execution_of(opt);
    put_option_slots(o, v);
    o.samples = opt.samples;
    return run(region, o, nullptr, params);
  }

  /// The midpoint rule with n_per_axis points per axis (mcubes::midpoint). @throws as vegas() and
  /// mcubes::midpoint.
  result midpoint(const box& region, std::uint64_t n_per_axis, const midpoint_options& opt = {},
                  const std::vector<double>& params = {}) const {
    MCUBES_EXPECTS(method_ == jit::method::midpoint, "this integrand was compiled for ", to_string(method_), ", not midpoint");
    validate(opt);
    vegas_options v;  // the interface's carrier of rel_tol and abs_tol
    v.rel_tol = opt.rel_tol;
    v.abs_tol = opt.abs_tol;
    mcubes_jit_options o = execution_of(opt);
    put_option_slots(o, v);
    o.n_per_axis = n_per_axis;
    return run(region, o, nullptr, params);
  }

 private:
  friend compiled_integrand compile(const integrand_source&, jit::method, backend_kind, const compile_options&, int);
  compiled_integrand(integrand_source src, jit::method m, backend_kind b, compile_info info,
                     std::shared_ptr<detail::loaded_object> obj)
      : source_(std::move(src)), method_(m), backend_(b), info_(std::move(info)), object_(std::move(obj)) {}

  static mcubes_jit_options vegas_call_options(const vegas_options& opt) {
    mcubes_jit_options o = execution_of(opt);
    put_option_slots(o, opt);
    return o;
  }

  /// The options table's fields of `v` into o.vegas (jit/abi.hpp), in the table's order.
  static void put_option_slots(mcubes_jit_options& o, const vegas_options& v) {
    static_assert(vegas_option_count <= MCUBES_JIT_OPTION_SLOTS, "more options than the interface's slots");
    int k = 0;
    for_each_vegas_option([&](const option_info&, auto field) { o.vegas[k++] = option_slot(v.*field); });
    o.n_vegas = k;
  }

  static mcubes_jit_options execution_of(const execution& ex) {
    mcubes_jit_options o;
    std::memset(&o, 0, sizeof o);
    o.threads = ex.threads;
    o.cuda_threads_per_block = ex.cuda_threads_per_block;
    o.device = ex.device;
    o.stop = ex.stop;
    static_assert(sizeof(int) == sizeof(int32_t), "execution::devices crosses the interface as int32_t");
    o.devices = ex.devices.empty() ? nullptr : reinterpret_cast<const int32_t*>(ex.devices.data());
    o.n_devices = static_cast<int32_t>(ex.devices.size());
    return o;
  }

  /// The inputs of a call shared by a run and a batch (`size`: of the struct the entry takes);
  /// ctx gets the backend's name. @throws invalid_input for a bad region.
  void prepare(mcubes_jit_call& call, std::size_t size, const box& region, const mcubes_jit_options& o,
               const double* params, detail::run_context& ctx, std::vector<double>& point) const {
    validate(region, dim());
    ctx.backend = backend_ == backend_kind::cuda ? "cuda" : "cpu";
    call.abi_version = MCUBES_JIT_ABI_VERSION;
    call.size = static_cast<uint32_t>(size);
    call.method = static_cast<int32_t>(method_);
    call.dim = dim();
    call.lower = region.lower.data();
    call.upper = region.upper.data();
    call.params = source_.n_params > 0 ? params : nullptr;
    call.n_params = source_.n_params;
    call.options = o;
    call.context = &ctx;
    call.chi2_q = &detail::program_chi2_q;
    call.error_point = point.data();
  }

  result run(const box& region, const mcubes_jit_options& o, const iteration_callback* on_iteration,
             const std::vector<double>& params, sampling_density* trained = nullptr,
             const vegas_resumption* resume = nullptr) const {
    MCUBES_EXPECTS(params.size() == static_cast<std::size_t>(source_.n_params), "the integrand takes ",
                   source_.n_params, " parameters p[0..P-1], got ", params.size());
    detail::run_context ctx;
    ctx.on_iteration = on_iteration;
    std::vector<double> point(static_cast<std::size_t>(dim()), 0.0);
    auto call = std::make_unique<mcubes_jit_call>();
    std::memset(call.get(), 0, sizeof(mcubes_jit_call));
    prepare(*call, sizeof(mcubes_jit_call), region, o, params.data(), ctx, point);
    call->on_iteration = on_iteration != nullptr ? &detail::on_iteration_trampoline : nullptr;
    call->on_record = &detail::on_record_trampoline;
    ctx.trained = trained;
    call->on_density = trained != nullptr ? &detail::on_density_trampoline : nullptr;
    std::string resume_bytes;
    if (resume != nullptr && resume->from != nullptr) {
      resume_bytes = encode_progress(*resume->from);
      call->resume = resume_bytes.data();
      call->resume_size = resume_bytes.size();
    }
    if (resume != nullptr && resume->save) {
      ctx.save = &resume->save;
      call->on_boundary = &detail::on_boundary_trampoline;
    }
    const int rc = object_->points.points != nullptr ? detail::run_points(object_->points, call.get())
                                                     : object_->run(call.get());
    if (ctx.failure) std::rethrow_exception(ctx.failure);
    if (rc != mcubes_jit_ok) detail::throw_run_failure(*call, point);
    if (trained != nullptr) {
      trained->lower = region.lower;
      trained->upper = region.upper;
    }
    result r;
    detail::fill(r, call->result);
    r.backend = ctx.backend;
    r.records = std::move(ctx.records);
    return r;
  }

  integrand_source source_;
  jit::method method_ = jit::method::vegas;
  backend_kind backend_ = backend_kind::cpu;
  compile_info info_;
  std::shared_ptr<detail::loaded_object> object_;
};

/// Compiles `src` for method `m` on `backend` (cpu; cuda; automatic: cuda when the CUDA driver
/// reports a device `device` and nvcc is found, else cpu), or takes it from the cache, and loads it
/// (jit.hpp file comment; cache.hpp; toolchain.hpp). Deterministic: the same text, dimension,
/// method, backend, toolchain, flags and headers give the same key and the same object.
/// @throws invalid_input for a bad dimension or parameter count (method vegas_batch needs P >= 1);
/// compile_error for text that does
/// not compile (the checks of check_source first, then the compiler's errors at the user's line
/// and column); toolchain_error (no compiler, headers not found, the time limit, a failure outside
/// the user's text, an object that cannot be loaded; backend cuda without a device);
/// compile_cancelled; error if the cache folder cannot be used.
inline compiled_integrand compile(const integrand_source& src, method m, backend_kind backend,
                                  const compile_options& opt = {}, int device = 0) {
  const auto t0 = std::chrono::steady_clock::now();
  check_source(src);
  MCUBES_EXPECTS(m != method::vegas_batch || src.n_params >= 1,
                 "a batch (method vegas_batch) runs over parameter vectors: the integrand needs parameters (P >= 1)");
  MCUBES_EXPECTS(opt.timeout_seconds > 0 && std::isfinite(opt.timeout_seconds),
                 "the compile time limit must be a positive number of seconds, got ", opt.timeout_seconds);
  compile_info info;
  const std::string base = opt.use_cache ? cache_base(opt.cache_dir) : std::string();
  const std::string dir = opt.use_cache ? cache_folder(base) : std::string();
  const char* tmp_env = std::getenv("TMPDIR");
  const std::string tmp_root = tmp_env != nullptr && tmp_env[0] == '/' ? tmp_env : "/tmp";
  if (opt.use_cache) detail::remove_stale_build_folders(dir);
  detail::build_folder build(detail::make_temporary_folder(opt.use_cache ? dir : tmp_root,
                                                           opt.use_cache ? "build." : "mcubes-jit."));
  if (opt.use_cache) detail::mark_build_folder(build.path());

  // The backend and its compiler.
  bool cuda = backend == backend_kind::cuda;
  cuda_device dev;
  if (backend != backend_kind::cpu) {
    dev = query_cuda_device(device);
    if (backend == backend_kind::automatic) {
      cuda = dev.count > 0 && (!opt.nvcc.empty() || !detail::env_or_empty("CUDACXX").empty() ||
                               !find_program("nvcc").empty() || !find_program("/usr/local/cuda/bin/nvcc").empty());
    } else if (dev.count == 0 && opt.cuda_arch.empty()) {
      throw toolchain_error("backend cuda requested, but " + dev.why);
    }
  }
  const compiler c = cuda ? find_nvcc(opt.nvcc, opt.timeout_seconds, build.path() + "/version.txt")
                          : find_cxx(opt.cxx, opt.timeout_seconds, build.path() + "/version.txt");
  const std::string arch = cuda ? (opt.cuda_arch.empty() ? dev.arch() : opt.cuda_arch) : std::string();
  const std::string include_dir = find_include_dir(opt.include_dir);
  std::vector<std::string> system_dirs = opt.system_include_dirs.empty() ? build_system_include_dirs() : opt.system_include_dirs;
  std::vector<std::string> flags = compile_flags(c, arch);
  const std::vector<std::string> extra = opt.extra_flags.empty() ? env_extra_flags(cuda) : opt.extra_flags;
  flags.insert(flags.end(), extra.begin(), extra.end());
  std::vector<std::string> includes = {"-I" + include_dir};
  for (const std::string& d : system_dirs) {
    includes.push_back("-isystem");
    includes.push_back(d);
  }
  // A CPU object of a dimension that this program's run-time engine holds keeps the integrand only
  // (jit/object_run.hpp: any method, run by the program); any other runs its method itself.
  const bool points = !cuda && detail::runs_points_objects(src.dim);
  const int m_c = points ? static_cast<int>(mcubes_jit_method_points) : static_cast<int>(m);
  const int b_c = cuda ? mcubes_jit_cuda : mcubes_jit_cpu;
  std::string source = generate_source(src, m_c, b_c);

  // The key: everything that decides the object's bits (cache.hpp).
  std::ostringstream k;
  k << "mcubes-jit-key 1\n"
    << "mcubes " MCUBES_VERSION_STRING "\n"
    << "abi " << MCUBES_JIT_ABI_VERSION << "\n"
    << "backend " << (cuda ? "cuda " + arch : std::string("cpu")) << "\n"
    << "compiler " << c.path << "\n"
    << "compiler-version " << c.version << "\n"
    << "flags " << detail::join(flags) << "\n"
    << "includes " << detail::join(includes) << "\n"
    << "headers-sha256 " << hash_tree(include_dir + "/mcubes") << "\n"
    << "source-sha256 " << sha256::of(source) << "\n";
  if (cuda) k << "nvcc-steps " << nvcc_steps_recipe << "\n";  // how nvcc's steps run (jit/nvcc_steps.hpp)
  const std::string key_text = k.str();
  const std::string key = sha256::of(key_text);
  const std::size_t at = source.find(key_placeholder);
  source.replace(at, std::char_traits<char>::length(key_placeholder), key);

  const std::string ext = cuda ? ".cu" : ".cpp";
  const std::string unit = build.path() + "/integrand" + ext;
  const std::string built = build.path() + "/integrand.so";
  std::vector<std::string> command = {c.path};
  command.insert(command.end(), flags.begin(), flags.end());
  command.insert(command.end(), includes.begin(), includes.end());
  command.insert(command.end(), {"-o", built, unit});

  info.backend = cuda ? "cuda" : "cpu";
  info.compiler = c.path;
  info.compiler_version = c.version;
  info.cuda_arch = arch;
  info.key = key;
  info.command = command;
  std::string object = opt.use_cache ? cache_lookup(dir, key, key_text) : std::string();
  if (!object.empty()) {
    info.cache_hit = true;
  } else {
    write_file_atomically(unit, source, false);
    if (opt.on_compile) opt.on_compile(command);
    const process_result r =
        cuda ? run_nvcc(command, build.path(), key, opt.timeout_seconds, opt.cancelled)
             : run_process(command, build.path() + "/compiler.log", opt.timeout_seconds, opt.cancelled);
    info.compile_seconds = r.seconds;
    if (!r.ok()) detail::throw_compile_failure(src, c, r, opt.timeout_seconds, include_dir);
    object = opt.use_cache ? cache_store(dir, key, key_text, built, source, ext) : built;
  }
  info.object = object;
  auto loaded = detail::load(object, key, src.dim, m_c, b_c, src.n_params);
  info.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return compiled_integrand(src, m, cuda ? backend_kind::cuda : backend_kind::cpu, std::move(info), std::move(loaded));
}

/// The one-call entry: compiles `src` (or takes it from the cache) for the backend of opt
/// (opt.backend: cpu, cuda, automatic; on device opt.device) and runs m-Cubes over `region`, as
/// mcubes::vegas does for a functor compiled ahead of time. `info`, if given, receives what the
/// compilation did. @throws as compile() and compiled_integrand::vegas().
inline result vegas(const integrand_source& src, const box& region, const vegas_options& opt = {},
                    const iteration_callback& on_iteration = {}, const compile_options& copt = {},
                    compile_info* info = nullptr, const std::vector<double>& params = {}) {
  validate(opt, src.dim);
  validate(region, src.dim);
  const compiled_integrand f = compile(src, method::vegas, opt.backend, copt, opt.device);
  if (info != nullptr) *info = f.info();
  return f.vegas(region, opt, on_iteration, params);
}

/// Plain Monte Carlo of `src` over `region` (as mcubes::plain_mc). @throws as compile() and
/// compiled_integrand::plain_mc().
inline result plain_mc(const integrand_source& src, const box& region, const plain_mc_options& opt = {},
                       const compile_options& copt = {}, compile_info* info = nullptr,
                       const std::vector<double>& params = {}) {
  validate(opt);
  validate(region, src.dim);
  const compiled_integrand f = compile(src, method::plain_mc, opt.backend, copt, opt.device);
  if (info != nullptr) *info = f.info();
  return f.plain_mc(region, opt, params);
}

/// The midpoint rule of `src` over `region` with n_per_axis points per axis (as mcubes::midpoint).
/// @throws as compile() and compiled_integrand::midpoint().
inline result midpoint(const integrand_source& src, const box& region, std::uint64_t n_per_axis,
                       const midpoint_options& opt = {}, const compile_options& copt = {}, compile_info* info = nullptr,
                       const std::vector<double>& params = {}) {
  validate(opt);
  validate(region, src.dim);
  const compiled_integrand f = compile(src, method::midpoint, opt.backend, copt, opt.device);
  if (info != nullptr) *info = f.info();
  return f.midpoint(region, n_per_axis, opt, params);
}

}  // namespace mcubes::jit
