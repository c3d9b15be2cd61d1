#pragma once
/// @file checkpoint.hpp
/// Checkpoint files of a Vegas run: everything needed to continue it bit for bit after the
/// process is killed (a time limit, a pre-emption, a crash), and what it integrates, so that a
/// checkpoint of another problem is refused.
///
/// Content (checkpoint): the problem (a fingerprint text of the integrand: the suite name and its
/// parameters, the text of --expr/--body, or a tag the caller gives; the dimension and the region;
/// the numeric options, seed included) and the run's progress at an iteration boundary
/// (algorithm/vegas.hpp, vegas_progress: the state, the map, the VEGAS+ shares, the completed
/// iterations with their raw variances). No trace of the backend or its parallelism: a run resumed
/// on another backend, thread count, block size or device ends with the same bits.
///
/// Format (version 1): the 8 bytes "MCUBESCP", the format version (u32), then the fields in a fixed
/// order, every number little-endian whatever the machine (u32, u64, i32 as u32, IEEE doubles as
/// their u64 bits, bools as one byte, a string or an array as its u64 length then its items), and
/// last the CRC-32 (IEEE 802.3, Boost.CRC's crc_32_type) of every byte before it. Written
/// atomically (atomic_file.hpp: temporary file, fsync, rename), so a reader sees the previous
/// checkpoint or the new one, never a torn one.
///
/// Determinism: encode(decode(bytes)) == bytes; a run continued from the checkpoint of its k-th
/// iteration boundary ends with the result of the run never stopped (records' seconds aside).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/crc.hpp>

#include "algorithm/vegas.hpp"
#include "algorithm/vegas_batch.hpp"
#include "algorithm/vegas_vector.hpp"
#include "atomic_file.hpp"
#include "error.hpp"
#include "options.hpp"
#include "plan.hpp"

namespace mcubes {

/// The format version this library writes and the newest it reads.
inline constexpr std::uint32_t checkpoint_format_version = 1;

/// A checkpoint: the problem and the run's progress (file comment).
struct checkpoint {
  std::string integrand;             ///< fingerprint text of the integrand (compared as is)
  int dim = 0;                       ///< d
  std::vector<double> lower, upper;  ///< the region
  vegas_options options;             ///< the numeric options (execution fields are not stored)
  vegas_progress progress;           ///< where the run stands (a single run)
  /// A parameter batch (algorithm/vegas_batch.hpp, `mcubes scan`): integral k's parameter values
  /// (the batch's fingerprint beside `integrand`) and its progress (batch_resumption); the
  /// options' seed is the batch's (integral k's is batch_seed(seed, k)). Both empty for a single run.
  std::vector<std::vector<double>> parameters;
  std::vector<vegas_progress> members;
  /// A vector integrand (algorithm/vegas_vector.hpp): its n components (0: a scalar run) and every
  /// completed iteration's estimates and covariance (vector_progress, with `progress`).
  int components = 0;
  std::vector<vector_iteration> vector_iterations;
};

/// The vector run's progress that `c` holds (vector_resumption::from).
inline vector_progress vector_progress_of(const checkpoint& c) {
  vector_progress p;
  p.run = c.progress;
  p.components = c.components;
  p.iterations = c.vector_iterations;
  return p;
}

namespace detail {

/// Whether this machine stores numbers little-endian (the checkpoint's order: arrays of doubles
/// are then copied as they are).
inline bool little_endian_host() {
  const std::uint32_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 1 && sizeof(double) == 8;
}

class checkpoint_writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void i32(int v) { u32(static_cast<std::uint32_t>(v)); }
  void f64(double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, 8);
    u64(b);
  }
  void flag(bool v) { u8(v ? 1 : 0); }
  void text(const std::string& s) {
    u64(s.size());
    out_ += s;
  }
  void doubles(const std::vector<double>& v) {
    u64(v.size());
    if (little_endian_host()) {  // the file's byte order: the doubles' bytes as they are
      out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
    } else {
      for (double x : v) f64(x);
    }
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

class checkpoint_reader {
 public:
  checkpoint_reader(const std::string& bytes, std::size_t end, std::string what)
      : b_(bytes), end_(end), what_(std::move(what)) {}
  std::uint8_t u8() {
    need(1);
    return static_cast<std::uint8_t>(b_[pos_++]);
  }
  std::uint32_t u32() {
    need(4);
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(b_[pos_++])) << (8 * i);
    return v;
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(b_[pos_++])) << (8 * i);
    return v;
  }
  int i32() { return static_cast<int>(u32()); }
  double f64() {
    const std::uint64_t b = u64();
    double v;
    std::memcpy(&v, &b, 8);
    return v;
  }
  bool flag() {
    const std::uint8_t v = u8();
    MCUBES_EXPECTS(v <= 1, what_, ": a flag byte is ", static_cast<int>(v), " (a damaged checkpoint)");
    return v == 1;
  }
  std::string text() {
    const std::uint64_t n = count(1);
    std::string s = b_.substr(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }
  std::vector<double> doubles() {
    const std::uint64_t n = count(8);
    std::vector<double> v(static_cast<std::size_t>(n));
    if (little_endian_host()) {
      if (n != 0) std::memcpy(v.data(), b_.data() + pos_, static_cast<std::size_t>(n) * 8);
      pos_ += static_cast<std::size_t>(n) * 8;
    } else {
      for (double& x : v) x = f64();
    }
    return v;
  }
  /// A length of items of `size` bytes each, checked against the bytes left.
  std::uint64_t count(std::uint64_t size) {
    const std::uint64_t n = u64();
    MCUBES_EXPECTS(n <= (end_ - pos_) / size, what_, ": a length of ", n, " runs past the end (a damaged checkpoint)");
    return n;
  }
  bool at_end() const noexcept { return pos_ == end_; }

 private:
  void need(std::size_t n) {
    MCUBES_EXPECTS(end_ - pos_ >= n, what_, ": the checkpoint ends early (truncated)");
  }
  const std::string& b_;
  std::size_t end_, pos_ = 0;
  std::string what_;

 public:
  void skip(std::size_t n) {
    need(n);
    pos_ += n;
  }
};

/// A field of the options table in a message: as an ostream prints it, the stratification by name.
template <class T>
T option_text(T x) {
  return x;
}
inline const char* option_text(stratification_mode x) { return to_string(x); }
inline int option_text(bool x) { return x ? 1 : 0; }

/// The fields of the options table (options.hpp, for_each_vegas_option) in a checkpoint, in the
/// table's order: doubles as f64, 64-bit integers as u64, ints as i32, bools as a flag byte, the
/// stratification as a byte (0 adaptive, 1 uniform; any other value: a damaged checkpoint).
inline void put_option(checkpoint_writer& w, double x) { w.f64(x); }
inline void put_option(checkpoint_writer& w, std::uint64_t x) { w.u64(x); }
inline void put_option(checkpoint_writer& w, int x) { w.i32(x); }
inline void put_option(checkpoint_writer& w, bool x) { w.flag(x); }
inline void put_option(checkpoint_writer& w, stratification_mode x) { w.flag(x == stratification_mode::uniform); }
inline void get_option(checkpoint_reader& r, double& x) { x = r.f64(); }
inline void get_option(checkpoint_reader& r, std::uint64_t& x) { x = r.u64(); }
inline void get_option(checkpoint_reader& r, int& x) { x = r.i32(); }
inline void get_option(checkpoint_reader& r, bool& x) { x = r.flag(); }
inline void get_option(checkpoint_reader& r, stratification_mode& x) {
  x = r.flag() ? stratification_mode::uniform : stratification_mode::adaptive;
}
static_assert(vegas_option_count == 14,
              "a new entry of the options table changes the checkpoint format: raise checkpoint_format_version "
              "and read the layout of the older versions");

inline std::uint32_t checkpoint_crc(const char* data, std::size_t n) {
  boost::crc_32_type crc;
  crc.process_bytes(data, n);
  return crc.checksum();
}

inline void put_progress(checkpoint_writer& w, const vegas_progress& p) {
  w.i32(p.state.next_iteration);
  w.f64(p.state.reference);
  const vegas_state::allocation& a = p.state.cubes;
  w.u64(a.n_cubes);
  w.u64(a.calls);
  w.u32(a.beta16);
  w.u64(a.n_base);
  w.u64(a.n_extra_max);
  w.f64(a.scale);
  w.flag(a.has_shares);
  w.flag(a.second_in);
  w.flag(a.pending_total);
  w.flag(a.pending_count);
  w.u64(a.evaluations);
  w.doubles(p.edges);
  w.doubles(p.shares);
  w.u64(p.records.size());
  for (const iteration_record& r : p.records) {
    w.i32(r.index);
    w.f64(r.estimate);
    w.f64(r.error);
    w.flag(r.adapted);
    w.flag(r.accumulated);
    w.flag(r.underflow);
    w.f64(r.weighted_estimate);
    w.f64(r.weighted_error);
    w.f64(r.chi2_dof);
    w.f64(r.q);
    w.u64(r.n_eval);
    w.u64(r.n_nonzero);
    w.flag(r.rescaled);
    w.i32(r.top_bin_level);
    w.f64(r.seconds);
  }
  w.doubles(p.variances);
  w.f64(p.seconds);
}

inline vegas_progress get_progress(checkpoint_reader& r) {
  vegas_progress p;
  p.state.next_iteration = r.i32();
  p.state.reference = r.f64();
  vegas_state::allocation& a = p.state.cubes;
  a.n_cubes = r.u64();
  a.calls = r.u64();
  a.beta16 = r.u32();
  a.n_base = r.u64();
  a.n_extra_max = r.u64();
  a.scale = r.f64();
  a.has_shares = r.flag();
  a.second_in = r.flag();
  a.pending_total = r.flag();
  a.pending_count = r.flag();
  a.evaluations = r.u64();
  p.edges = r.doubles();
  p.shares = r.doubles();
  const std::uint64_t n_records = r.count(80);
  p.records.resize(static_cast<std::size_t>(n_records));
  for (iteration_record& rec : p.records) {
    rec.index = r.i32();
    rec.estimate = r.f64();
    rec.error = r.f64();
    rec.adapted = r.flag();
    rec.accumulated = r.flag();
    rec.underflow = r.flag();
    rec.weighted_estimate = r.f64();
    rec.weighted_error = r.f64();
    rec.chi2_dof = r.f64();
    rec.q = r.f64();
    rec.n_eval = r.u64();
    rec.n_nonzero = r.u64();
    rec.rescaled = r.flag();
    rec.top_bin_level = r.i32();
    rec.seconds = r.f64();
  }
  p.variances = r.doubles();
  p.seconds = r.f64();
  return p;
}

}  // namespace detail

namespace detail {
/// Appends the CRC-32 of every byte of `bytes` (a checkpoint or a progress without it).
inline void seal(std::string& bytes) {
  const std::uint32_t crc = checkpoint_crc(bytes.data(), bytes.size());
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
}
/// The bytes of a checkpoint file before its CRC-32 (encode_checkpoint = this, then seal).
inline std::string encode_unsealed(const checkpoint& c);
}  // namespace detail

/// The bytes of a checkpoint file (file comment: format version 1).
inline std::string encode_checkpoint(const checkpoint& c) {
  std::string bytes = detail::encode_unsealed(c);
  detail::seal(bytes);
  return bytes;
}

inline std::string detail::encode_unsealed(const checkpoint& c) {
  detail::checkpoint_writer w;
  w.bytes() = "MCUBESCP";
  w.u32(checkpoint_format_version);
  w.text(c.integrand);
  w.i32(c.dim);
  w.doubles(c.lower);
  w.doubles(c.upper);
  for_each_vegas_option([&](const option_info&, auto field) { detail::put_option(w, c.options.*field); });
  detail::put_progress(w, c.progress);
  MCUBES_EXPECTS(c.parameters.size() == c.members.size(), "a batch checkpoint needs one progress per parameter vector");
  w.u64(c.members.size());
  for (std::size_t k = 0; k < c.members.size(); ++k) {
    w.doubles(c.parameters[k]);
    detail::put_progress(w, c.members[k]);
  }
  w.i32(c.components);
  w.u64(c.vector_iterations.size());
  for (const vector_iteration& it : c.vector_iterations) {
    w.i32(it.index);
    w.flag(it.accumulated);
    w.doubles(it.estimate);
    w.doubles(it.covariance);
  }
  return std::move(w.bytes());
}

/// The checkpoint in `bytes` (`what` names them in messages, e.g. the file's path).
/// @throws invalid_input for bytes that are not a checkpoint (another magic), one of a newer
///         format version, a truncated or damaged one (the checksum, a length past the end, bytes
///         left over), or one whose sizes disagree (records and variances).
inline checkpoint decode_checkpoint(const std::string& bytes, const std::string& what) {
  MCUBES_EXPECTS(bytes.size() >= 8 && bytes.compare(0, 8, "MCUBESCP") == 0, what, ": not an mcubes checkpoint");
  MCUBES_EXPECTS(bytes.size() >= 16, what, ": the checkpoint ends early (truncated)");
  const std::size_t end = bytes.size() - 4;
  detail::checkpoint_reader crc_field(bytes, bytes.size(), what);
  crc_field.skip(end);
  const std::uint32_t stored = crc_field.u32();
  detail::checkpoint_reader r(bytes, end, what);
  r.skip(8);
  const std::uint32_t version = r.u32();
  MCUBES_EXPECTS(version <= checkpoint_format_version, what, ": written in checkpoint format ", version,
                 " by a newer mcubes; this one reads formats up to ", checkpoint_format_version);
  MCUBES_EXPECTS(version >= 1, what, ": checkpoint format 0 does not exist (a damaged checkpoint)");
  MCUBES_EXPECTS(detail::checkpoint_crc(bytes.data(), end) == stored, what,
                 ": the checksum does not match (a truncated or damaged checkpoint)");
  checkpoint c;
  c.integrand = r.text();
  c.dim = r.i32();
  c.lower = r.doubles();
  c.upper = r.doubles();
  for_each_vegas_option([&](const option_info&, auto field) { detail::get_option(r, c.options.*field); });
  c.progress = detail::get_progress(r);
  const std::uint64_t n_members = r.count(8);
  for (std::uint64_t k = 0; k < n_members; ++k) {
    c.parameters.push_back(r.doubles());
    c.members.push_back(detail::get_progress(r));
  }
  c.components = r.i32();
  const std::uint64_t n_vector = r.count(21);
  c.vector_iterations.resize(static_cast<std::size_t>(n_vector));
  for (vector_iteration& it : c.vector_iterations) {
    it.index = r.i32();
    it.accumulated = r.flag();
    it.estimate = r.doubles();
    it.covariance = r.doubles();
    MCUBES_EXPECTS(it.estimate.size() == static_cast<std::size_t>(c.components) &&
                       it.covariance.size() == it.estimate.size() * it.estimate.size(),
                   what, ": a vector iteration without ", c.components, " components (a damaged checkpoint)");
  }
  MCUBES_EXPECTS(c.components >= 0 && (c.components > 0 || c.vector_iterations.empty()) &&
                     (c.components == 0 || c.vector_iterations.size() == c.progress.records.size()),
                 what, ": ", c.vector_iterations.size(), " vector iterations for ", c.progress.records.size(),
                 " records (a damaged checkpoint)");
  MCUBES_EXPECTS(r.at_end(), what, ": bytes after the checkpoint's last field (a damaged checkpoint)");
  for (std::size_t k = 0; k <= c.members.size(); ++k) {
    const vegas_progress& p = k == c.members.size() ? c.progress : c.members[k];
    MCUBES_EXPECTS(p.variances.size() == p.records.size(), what, ": ", p.records.size(), " iterations but ",
                   p.variances.size(), " variances (a damaged checkpoint)");
  }
  MCUBES_EXPECTS(c.dim >= 1 && c.lower.size() == static_cast<std::size_t>(c.dim) &&
                     c.upper.size() == static_cast<std::size_t>(c.dim),
                 what, ": the region does not have ", c.dim, " axes (a damaged checkpoint)");
  return c;
}

/// A vegas_progress alone as bytes ("MCUBESPG", the format version, its fields as in a checkpoint,
/// the CRC-32): how a run's progress crosses the run-time compiler's interface (jit/abi.hpp).
inline std::string encode_progress(const vegas_progress& p) {
  detail::checkpoint_writer w;
  w.bytes() = "MCUBESPG";
  w.u32(checkpoint_format_version);
  detail::put_progress(w, p);
  const std::uint32_t crc = detail::checkpoint_crc(w.bytes().data(), w.bytes().size());
  w.u32(crc);
  return std::move(w.bytes());
}

/// The progress in bytes of encode_progress. @throws invalid_input as decode_checkpoint.
namespace detail {
/// A reader of `bytes` sealed as encode_progress(es) seals them (`magic`, the format version, the
/// fields, the CRC-32), positioned after the version, its end before the CRC. @throws
/// invalid_input (naming `what` and `kind`) for other bytes, a checksum or a version that differs.
inline checkpoint_reader sealed_reader(const std::string& bytes, const char* magic, std::size_t min_size,
                                       const std::string& what, const char* kind) {
  MCUBES_EXPECTS(bytes.size() >= min_size && bytes.compare(0, 8, magic) == 0, what, ": not ", kind);
  const std::size_t end = bytes.size() - 4;
  checkpoint_reader crc_field(bytes, bytes.size(), what);
  crc_field.skip(end);
  const std::uint32_t stored = crc_field.u32();
  MCUBES_EXPECTS(checkpoint_crc(bytes.data(), end) == stored, what, ": the checksum does not match");
  checkpoint_reader r(bytes, end, what);
  r.skip(8);
  MCUBES_EXPECTS(r.u32() == checkpoint_format_version, what, ": another format version");
  return r;
}
}  // namespace detail

inline vegas_progress decode_progress(const std::string& bytes, const std::string& what) {
  detail::checkpoint_reader r = detail::sealed_reader(bytes, "MCUBESPG", 16, what, "a run's progress");
  vegas_progress p = detail::get_progress(r);
  MCUBES_EXPECTS(r.at_end() && p.variances.size() == p.records.size(), what, ": a damaged progress");
  return p;
}

/// The progresses of a batch's K integrals as bytes ("MCUBESPB", the format version, K, each as in
/// a checkpoint, the CRC-32): how a batch's progress crosses the run-time compiler's interface.
inline std::string encode_progresses(const std::vector<vegas_progress>& ps) {
  detail::checkpoint_writer w;
  w.bytes() = "MCUBESPB";
  w.u32(checkpoint_format_version);
  w.u64(ps.size());
  for (const vegas_progress& p : ps) detail::put_progress(w, p);
  const std::uint32_t crc = detail::checkpoint_crc(w.bytes().data(), w.bytes().size());
  w.u32(crc);
  return std::move(w.bytes());
}

/// The progresses in bytes of encode_progresses. @throws invalid_input as decode_checkpoint.
inline std::vector<vegas_progress> decode_progresses(const std::string& bytes, const std::string& what) {
  detail::checkpoint_reader r = detail::sealed_reader(bytes, "MCUBESPB", 24, what, "a batch's progress");
  const std::uint64_t k = r.u64();
  MCUBES_EXPECTS(k <= bytes.size(), what, ": a damaged batch progress");
  std::vector<vegas_progress> ps;
  ps.reserve(static_cast<std::size_t>(k));
  for (std::uint64_t i = 0; i < k; ++i) {
    ps.push_back(detail::get_progress(r));
    MCUBES_EXPECTS(ps.back().variances.size() == ps.back().records.size(), what, ": a damaged batch progress");
  }
  MCUBES_EXPECTS(r.at_end(), what, ": a damaged batch progress");
  return ps;
}

/// Writes `c` to `path` atomically and durably (atomic_file.hpp). @throws as write_file_atomically.
inline void save_checkpoint(const std::string& path, const checkpoint& c) {
  write_file_atomically(path, encode_checkpoint(c), true);
}

/// Reads the checkpoint at `path`. @throws invalid_input for a file that cannot be read (naming the
/// path) and as decode_checkpoint.
inline checkpoint load_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  MCUBES_EXPECTS(in.good(), "cannot read the checkpoint '", path, "'");
  std::ostringstream s;
  s << in.rdbuf();
  MCUBES_EXPECTS(!in.bad(), "cannot read the checkpoint '", path, "'");
  return decode_checkpoint(s.str(), "checkpoint '" + path + "'");
}

/// When a running Vegas writes its checkpoint (checkpoint_saver): at an iteration boundary once
/// the last write has finished and at least `every_seconds` and at least `duration_factor` times
/// that write's duration (taking and encoding the progress, which the run waits for, then the
/// CRC-32 and the write, beside the run) have passed since it ended, so that writing takes at most
/// 1 / (1 + duration_factor) of the run's time (2 % with the default 50) whatever the number of
/// iterations and the checkpoint's size; before the first write, as if one had been made at the
/// run's start at `first_rate` bytes/s (a VEGAS+ grid of millions of sub-cubes is tens of MB: its
/// first write waits accordingly).
///
/// The end of a run that finished by itself (converged or at max_iterations) is written when its
/// cost (assumed at `first_rate`) is at most `free_seconds` or 1 / duration_factor of the run's
/// time, whatever was written before (the last iteration is never offered at a boundary, and a
/// boundary write may have been skipped while another was in flight): every finished run leaves
/// its end state, except a short one whose checkpoint is large (a VEGAS+ grid of millions of
/// sub-cubes in a run of seconds), for which rerunning costs less than writing; that one keeps its
/// last boundary write, if any, which a resume continues to the same bits.
struct checkpoint_schedule {
  double every_seconds = 0;     ///< seconds between writes, at least (>= 0)
  double duration_factor = 50;  ///< times the last write's duration, at least (>= 0)
  double first_rate = 50e6;     ///< bytes/s assumed for the write before the first (> 0)
  double free_seconds = 0.1;    ///< a finished run's only write costing at most this is made (>= 0)
};

/// The size in bytes of a checkpoint of a `dim`-dimensional run with options `opt` (its map and,
/// for VEGAS+, its sub-cubes' shares; the records aside): what checkpoint_schedule's first write
/// is assumed to cost. @throws invalid_input as plan_vegas.
inline double checkpoint_bytes(int dim, const vegas_options& opt) {
  const vegas_plan plan = plan_vegas(dim, opt, 1);
  return 8.0 * (static_cast<double>(dim) * (map_bins_for(opt) + 1) +
                (plan.grid.adaptive() ? static_cast<double>(plan.grid.n_cubes) : 0.0));
}

/// Writes the checkpoints of one run: the `save` of a vegas_resumption (vegas_continue calls it
/// at every iteration boundary and at the end; for a parameter batch, batch_save() of a
/// batch_resumption, at every round and at the end) that encodes `problem` with the run's progress and
/// hands the bytes to `write(bytes, durable)` (an atomic write: atomic_file.hpp; fsync first when
/// `durable`).
///
/// When: at a boundary when the schedule says so; at the end of the run when it was interrupted
/// (`interrupted()` true: what a resume continues) or, for a run that finished by itself, when
/// the write is cheap (checkpoint_schedule: free_seconds and duration_factor; what a resume with
/// more iterations extends).
///
/// Cost: the run itself waits only for the progress to be taken (the map and the VEGAS+ shares
/// copied from the backend) and encoded; the CRC-32 and the write (with its fsync) run on a thread
/// of their own while the run goes on, one write at a time (a boundary while a write is in flight
/// writes nothing), and the schedule spaces writes by `duration_factor` times the whole write
/// (the wait and the rest): the run waits less than 1 / (1 + duration_factor) of its time, and
/// the writer works at most that share of it. The end of a run waits for a write in flight; an interrupted run's end state is
/// written durably, a finished run's without fsync (the run is over: a crash of the machine before
/// the data reach the disk leaves the previous checkpoint or a file the CRC refuses).
///
/// Determinism: writing changes nothing of the run. @throws (at the next boundary, or at the end)
/// whatever `write` threw; the run then ends with that exception and the previous checkpoint stays.
class checkpoint_saver {
 public:
  /// `problem`: the identity every checkpoint carries (its progress is replaced at each write).
  /// The schedule's clock starts now (start() restarts it). @throws invalid_input for a schedule
  /// with a negative interval or factor or a non-positive rate, or as checkpoint_bytes.
  checkpoint_saver(checkpoint problem, std::function<void(const std::string& bytes, bool durable)> write,
                   const checkpoint_schedule& schedule = {}, std::function<bool()> interrupted = {})
      : problem_(std::move(problem)),
        write_(std::move(write)),
        schedule_(schedule),
        interrupted_(std::move(interrupted)),
        first_bytes_(checkpoint_bytes(problem_.dim, problem_.options) *
                     static_cast<double>(std::max<std::size_t>(1, problem_.parameters.size()))) {
    MCUBES_EXPECTS(schedule.every_seconds >= 0 && schedule.duration_factor >= 0 && schedule.first_rate > 0 &&
                       schedule.free_seconds >= 0,
                   "a checkpoint schedule needs every_seconds >= 0, duration_factor >= 0, first_rate > 0 and "
                   "free_seconds >= 0");
    start();
  }
  checkpoint_saver(const checkpoint_saver&) = delete;
  checkpoint_saver& operator=(const checkpoint_saver&) = delete;
  /// Waits for a write in flight (its failure, if any, is dropped: the run has ended otherwise).
  ~checkpoint_saver() {
    if (writer_.joinable()) writer_.join();
  }
  /// Restarts the schedule's clock (the run starts now; nothing written yet).
  void start() {
    started_ = last_end_ = now();
    last_cost_ = first_bytes_ / schedule_.first_rate;
    written_ = false;
  }
  /// vegas_resumption::save.
  void operator()(const std::function<vegas_progress()>& progress, bool ended) {
    step([&] { problem_.progress = progress(); }, ended);
  }
  /// vector_resumption::save (algorithm/vegas_vector.hpp): the progress becomes the problem's
  /// `progress`, `components` and `vector_iterations` at each write.
  void vector(const std::function<vector_progress()>& progress, bool ended) {
    step([&] {
      vector_progress p = progress();
      problem_.progress = std::move(p.run);
      problem_.components = p.components;
      problem_.vector_iterations = std::move(p.iterations);
    }, ended);
  }
  /// batch_resumption::save (algorithm/vegas_batch.hpp): the problem's `parameters` name the K
  /// integrals, whose progresses become its `members` at each write.
  void batch(const std::function<std::vector<vegas_progress>()>& progress, bool ended) {
    step([&] {
      problem_.members = progress();
      MCUBES_EXPECTS(problem_.members.size() == problem_.parameters.size(), "a batch checkpoint of ",
                     problem_.parameters.size(), " integrals was handed ", problem_.members.size(), " progresses");
    }, ended);
  }

 private:
  template <class Take>
  void step(const Take& take, bool ended) {
    if (splits(team_)) {  // rank 0 decides; every rank takes the progress (a collective); rank 0 writes
      bool go = false, stopped = false;
      std::exception_ptr failure;
      if (ended) {  // the run's end: stopped if any rank was asked to stop (the end state is then written)
        const unsigned char asked = interrupted_ && interrupted_() ? 1 : 0;
        team_stopped_ = false;
        for (const auto& m : team_exchange(*team_, nullptr, false, std::vector<unsigned char>{asked}))
          team_stopped_ = team_stopped_ || (!m.empty() && m[0] != 0);
      }
      if (team_->rank() == 0) {
        try {
          go = due(ended, stopped);
        } catch (...) {
          failure = std::current_exception();
        }
      }
      const unsigned char mine[2] = {static_cast<unsigned char>(go), static_cast<unsigned char>(stopped)};
      std::vector<unsigned char> payload(mine, mine + 2);
      const auto all = team_exchange(*team_, failure, false, payload);
      MCUBES_EXPECTS(all[0].size() == 2, "checkpoint_saver: rank 0's decision is missing");
      if (all[0][0] == 0) return;
      take();
      if (team_->rank() == 0) {
        put(ended, all[0][1] != 0);
      } else {
        problem_.progress = vegas_progress{};
        problem_.members.clear();
        problem_.vector_iterations.clear();
      }
      return;
    }
    bool stopped = false;
    if (!due(ended, stopped)) return;
    take();
    put(ended, stopped);
  }

  // Whether a checkpoint is written at this boundary (and whether the run was stopped): waits for
  // the write in flight where one must be, and hands on its failure.
  bool due(bool ended, bool& stopped) {
    if (writer_.joinable()) {
      if (!ended && !done_.load(std::memory_order_acquire)) return false;  // one write at a time
      writer_.join();
      if (failure_) {
        const std::exception_ptr f = std::exchange(failure_, nullptr);
        if (!on_failure_) std::rethrow_exception(f);
        on_failure_(f);  // the run goes on; the next write is due as if this one had succeeded,
        written_ = false;  // as if none had been written (written())
      }
      last_end_ = write_end_;
      last_cost_ = waited_ + write_seconds_;  // the whole write: what the run waited for, then the rest
    }
    const double t = now();
    stopped = ended && (team_stopped_ || (interrupted_ && interrupted_()));
    const double cost = first_bytes_ / schedule_.first_rate;
    const bool must = ended && (stopped || cost <= schedule_.free_seconds || schedule_.duration_factor * cost <= t - started_);
    if (!must && (ended || t - last_end_ < schedule_.every_seconds || t - last_end_ < schedule_.duration_factor * last_cost_))
      return false;
    decided_ = t;
    return true;
  }

  // Encodes the progress taken and writes it (the last write in this thread, the others beside).
  void put(bool ended, bool stopped) {
    const double t = decided_;
    std::string bytes = detail::encode_unsealed(problem_);
    problem_.progress = vegas_progress{};
    problem_.members.clear();
    problem_.vector_iterations.clear();
    written_ = true;
    if (ended) {  // the last write: in this thread, durable when the run was interrupted
      detail::seal(bytes);
      write_(bytes, stopped);
      return;
    }
    const double handed = now();
    waited_ = handed - t;  // what the run waits for: taking and encoding the progress
    done_.store(false, std::memory_order_relaxed);
    writer_ = std::thread([this, handed, bytes = std::move(bytes)]() mutable {
      try {
        detail::seal(bytes);  // the CRC-32 and the write beside the run
        write_(bytes, true);
      } catch (...) {
        failure_ = std::current_exception();
      }
      write_end_ = now();
      write_seconds_ = write_end_ - handed;
      done_.store(true, std::memory_order_release);
    });
  }
 public:
  /// Makes a failed write during the run (not the last) call `fn` with its exception instead of
  /// ending the run (the command warns and goes on); the last write's failure is still thrown.
  void keep_going_on_failure(std::function<void(std::exception_ptr)> fn) { on_failure_ = std::move(fn); }
  /// Whether a checkpoint was written (or handed to the writer) since start().
  bool written() const noexcept { return written_; }
  /// Makes the saver one of a team's (execution::team, backend/team.hpp), or alone (null): every
  /// rank's saver is called at the same boundaries; rank 0's schedule decides for all, every rank
  /// then takes its progress (a collective: the VEGAS+ shares are gathered), and rank 0 alone
  /// writes. The other ranks' `write` is never called. Not owned.
  void set_team(const communicator* team) noexcept { team_ = team; }
  /// The save function of a vegas_resumption that calls this saver (which must outlive the run).
  std::function<void(const std::function<vegas_progress()>&, bool)> save() {
    return [this](const std::function<vegas_progress()>& progress, bool ended) { (*this)(progress, ended); };
  }
  /// The save function of a vector_resumption that calls this saver (which must outlive the run).
  std::function<void(const std::function<vector_progress()>&, bool)> vector_save() {
    return [this](const std::function<vector_progress()>& progress, bool ended) { vector(progress, ended); };
  }
  /// The save function of a batch_resumption that calls this saver (which must outlive the batch).
  std::function<void(const std::function<std::vector<vegas_progress>()>&, bool)> batch_save() {
    return [this](const std::function<std::vector<vegas_progress>()>& progress, bool ended) { batch(progress, ended); };
  }

 private:
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  checkpoint problem_;
  std::function<void(const std::string&, bool)> write_;
  checkpoint_schedule schedule_;
  std::function<bool()> interrupted_;
  std::function<void(std::exception_ptr)> on_failure_;
  double first_bytes_;
  double started_ = 0, last_end_ = 0, last_cost_ = 0;
  bool written_ = false;
  std::thread writer_;               // the write in flight, if any
  std::atomic<bool> done_{true};     // it has finished
  std::exception_ptr failure_;       // what it threw (read after join)
  double waited_ = 0;                // the run's wait at the write in flight
  double write_end_ = 0;             // when it finished (read after join)
  double write_seconds_ = 0;         // how long its sealing and writing took (read after join)
  double decided_ = 0;               // when due() decided the write under way
  const communicator* team_ = nullptr;  // set_team
  bool team_stopped_ = false;           // some rank of the team was asked to stop (at the run's end)
};

/// How the checkpoint `c` differs from the problem of a run (integrand fingerprint, dimension,
/// region, options; n_bins compared as map_bins_for resolves it): "" when it continues that
/// problem, else one sentence naming the first difference. With `force`, the options that only
/// move the end of the run may differ: max_iterations, min_iterations, rel_tol, abs_tol and
/// max_chi2_dof (the run then continues with the new ones). `parameters`: null for a single run;
/// for a parameter batch, its integrals' parameter vectors, compared with the checkpoint's
/// (checkpoint::parameters: their number, then each value, every bit). `components`: 0 for a
/// scalar integrand, n for a vector one (checkpoint::components).
inline std::string checkpoint_difference(const checkpoint& c, const std::string& integrand, int dim,
                                         const std::vector<double>& lower, const std::vector<double>& upper,
                                         const vegas_options& opt, bool force,
                                         const std::vector<std::vector<double>>* parameters = nullptr,
                                         int components = 0) {
  std::ostringstream why;
  const auto num = [](double x) {
    std::ostringstream s;
    s.precision(17);
    s << x;
    return s.str();
  };
  const auto values = [&](const std::vector<double>& v) {
    std::string t = "(";
    for (std::size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + num(v[i]);
    return t + ")";
  };
  if (c.components != components)
    return c.components == 0 ? "it is of a scalar integrand, not of one of " + std::to_string(components) + " components"
           : components == 0 ? "it is of a vector integrand of " + std::to_string(c.components) + " components, not of a scalar one"
                             : "it is of a vector integrand of " + std::to_string(c.components) + " components, not " +
                                   std::to_string(components);
  if (parameters == nullptr && !c.members.empty())
    return "it is of a batch of " + std::to_string(c.members.size()) + " integrals (a scan), not of one run";
  if (parameters != nullptr) {
    if (c.members.empty()) return "it is of one run, not of a batch of " + std::to_string(parameters->size()) + " integrals";
    if (c.parameters.size() != parameters->size())
      return "it is of a batch of " + std::to_string(c.parameters.size()) + " integrals, not " +
             std::to_string(parameters->size());
    for (std::size_t k = 0; k < parameters->size(); ++k) {
      const std::vector<double>& was = c.parameters[k];
      const std::vector<double>& now = (*parameters)[k];
      bool same = was.size() == now.size();
      for (std::size_t i = 0; same && i < was.size(); ++i)
        same = std::memcmp(&was[i], &now[i], sizeof(double)) == 0;
      if (!same)
        return "its integral " + std::to_string(k) + " has the parameters " + values(was) + ", not " + values(now);
    }
  }
  if (c.integrand != integrand) return "it is of the integrand '" + c.integrand + "', not '" + integrand + "'";
  if (c.dim != dim) return "it is of dimension " + std::to_string(c.dim) + ", not " + std::to_string(dim);
  for (int j = 0; j < dim; ++j)
    if (c.lower[static_cast<std::size_t>(j)] != lower[static_cast<std::size_t>(j)] ||
        c.upper[static_cast<std::size_t>(j)] != upper[static_cast<std::size_t>(j)])
      return "its region's axis " + std::to_string(j) + " is [" + num(c.lower[static_cast<std::size_t>(j)]) + ", " +
             num(c.upper[static_cast<std::size_t>(j)]) + "], not [" + num(lower[static_cast<std::size_t>(j)]) + ", " +
             num(upper[static_cast<std::size_t>(j)]) + "]";
  // every field of the options table as the run uses it (n_bins and alpha resolved, beta only under
  // VEGAS+), the fields that define the samples first, then the stopping rule's (force lets those differ)
  const auto effective = [](vegas_options o) {
    o = with_resolved_defaults(o);
    if (o.stratification != stratification_mode::adaptive) o.beta = 0;
    return o;
  };
  vegas_options a = effective(c.options), b = effective(opt);
  if (a.stratification != b.stratification) a.alpha = c.options.alpha, b.alpha = opt.alpha;  // named, not the alpha it implies
  std::string diff;
  for (const bool stopping : {false, true})
    for_each_vegas_option([&](const option_info& info, auto field) {
      if (!diff.empty() || info.stopping_rule != stopping || a.*field == b.*field || (stopping && force)) return;
      std::ostringstream s;
      s.precision(17);
      s << "its " << info.name << " is " << detail::option_text(a.*field) << ", not " << detail::option_text(b.*field)
        << (stopping ? " (--force allows this change)" : "");
      diff = s.str();
    });
  return diff;
}

/// The save function (vegas_resumption::save) of member team.rank() of a team whose checkpoints
/// are decided and written by member 0's `leader` alone (a save function that takes the progress
/// only when it writes, e.g. a program's checkpoint_saver behind the run-time compiler's
/// interface, not joined to the team): member 0 tells the others, before taking the progress
/// (a collective: the VEGAS+ shares are gathered), whether `leader` takes it; the others then take
/// theirs and drop it. Every member's run must use this function. A failure of `leader` reaches
/// every member (team_failure). Changes no number of the run.
inline std::function<void(const std::function<vegas_progress()>&, bool)> team_member_save(
    const communicator& team, std::function<void(const std::function<vegas_progress()>&, bool)> leader) {
  return [&team, leader = std::move(leader)](const std::function<vegas_progress()>& progress, bool ended) {
    if (team.rank() != 0) {
      const auto all = team_exchange(team, nullptr, false, {});
      MCUBES_EXPECTS(!all.empty() && all[0].size() == 1, "a team's checkpoint: member 0's decision is missing");
      if (all[0][0] != 0) (void)progress();
      return;
    }
    bool told = false;
    try {
      leader(
          [&] {
            told = true;
            team_exchange(team, nullptr, false, {1});
            return progress();
          },
          ended);
    } catch (...) {
      if (!told) team_exchange(team, std::current_exception(), false, {});  // rethrows here, team_failure there
      throw;
    }
    if (!told) team_exchange(team, nullptr, false, {0});
  };
}

/// Checkpoints of one call of an entry that keeps no integrator object (methods.hpp's
/// vegas_vector and vegas_batch, the Python module's expression and vector runs): the file the
/// call writes and the checkpoint it continues. The integrator class has its own
/// (integrator::checkpoint_to and resume).
struct checkpointing {
  /// The file the call writes its checkpoints to ("": none), atomically, at its boundaries by
  /// `schedule` and at its end when it was stopped (checkpoint_saver).
  std::string path;
  /// The integrand's fingerprint: any text naming it and its parameters (written; `from`'s must be
  /// the same text).
  std::string integrand;
  checkpoint_schedule schedule{};
  /// The checkpoint the call continues (null: from the start); not owned.
  const checkpoint* from = nullptr;
  /// Let the options that only move the end of the run differ from `from`'s (checkpoint_difference).
  bool force = false;
  /// Whether the call writes or continues a checkpoint.
  bool active() const noexcept { return !path.empty() || from != nullptr; }
};

namespace detail {
/// A batch member's parameter values as a checkpoint keeps them (checkpoint::parameters): the bytes
/// of `p` read as doubles (the last one zero-padded), so that a P made of doubles gives its values
/// and any other P its exact bytes.
template <class P>
std::vector<double> parameter_values(const P& p) {
  static_assert(std::is_trivially_copyable_v<P>, "mcubes: the parameters of a batch must be trivially copyable");
  std::vector<double> v((sizeof(P) + sizeof(double) - 1) / sizeof(double), 0.0);
  std::memcpy(v.data(), &p, sizeof(P));
  return v;
}
}  // namespace detail

/// One call's checkpoints (checkpointing) for the problem `problem` (its integrand text, dimension,
/// region, options, and for a batch its parameters, for a vector integrand its components; no
/// progress): checks the checkpoint to continue against it and owns the saver of the file. Make
/// one per call, before it runs, and hand the call single(), vector() or batch().
/// Determinism: as the run's resumption (a continued call ends with the bits of the call never
/// stopped); writing changes nothing of the run.
class call_checkpoints {
 public:
  /// `interrupted()`: whether the call was stopped (its end is then written durably).
  /// @throws invalid_input when cp.from is of another problem: "`what`: cannot continue this call:
  ///         <the first difference>" (checkpoint_difference, cp.force).
  call_checkpoints(const checkpointing& cp, checkpoint problem, std::function<bool()> interrupted,
                   const std::string& what = "the checkpoint") {
    if (cp.from != nullptr) {
      const std::string diff =
          checkpoint_difference(*cp.from, problem.integrand, problem.dim, problem.lower, problem.upper, problem.options,
                                cp.force, problem.parameters.empty() ? nullptr : &problem.parameters, problem.components);
      MCUBES_EXPECTS(diff.empty(), what, ": cannot continue this call: ", diff);
      from_ = cp.from;
      if (from_->components > 0) vector_from_ = vector_progress_of(*from_);
    }
    if (!cp.path.empty()) {
      const std::string path = cp.path;
      saver_.emplace(
          std::move(problem), [path](const std::string& bytes, bool durable) { write_file_atomically(path, bytes, durable); },
          cp.schedule, std::move(interrupted));
    }
  }
  /// The resumption of a single run (vegas_with, vegas_continue).
  vegas_resumption single() {
    vegas_resumption r;
    if (from_ != nullptr) r.from = &from_->progress;
    if (saver_) r.save = saver_->save();
    return r;
  }
  /// The resumption of a vector run (vegas_vector_with).
  vector_resumption vector() {
    vector_resumption r;
    if (from_ != nullptr) r.from = &vector_from_;
    if (saver_) r.save = saver_->vector_save();
    return r;
  }
  /// The resumption of a batch (vegas_batch_with, vegas_batch_on_devices).
  batch_resumption batch() {
    batch_resumption r;
    if (from_ != nullptr) r.from = &from_->members;
    if (saver_) r.save = saver_->batch_save();
    return r;
  }
  /// The saver (null without a file): set_team, keep_going_on_failure.
  checkpoint_saver* saver() noexcept { return saver_ ? &*saver_ : nullptr; }

 private:
  const checkpoint* from_ = nullptr;
  vector_progress vector_from_;
  std::optional<checkpoint_saver> saver_;
};

}  // namespace mcubes
