#pragma once
/// @file cli/parse.hpp
/// The one number grammar of every `mcubes` command. Every numeric option is taken as text and
/// read here, so that `integrate` and `pi` (and any later command) accept exactly the same forms:
///
///  - integers (parse_int): an optional '-', then decimal digits: "10", "-3", or the forms of a
///    count when the value is an exact integer: "1e9", "2.5e3", "-1e2". A leading zero is decimal
///    ("010" is ten, never octal); no hexadecimal, no spaces, no '+';
///  - counts (parse_count: calls, samples, seeds): a non-negative integer written as decimal digits,
///    optionally with a fraction and a decimal exponent, as long as the value is an exact integer
///    below 2^64: "1000000", "1e6", "2.5e6", "18446744073709551615";
///  - reals (parse_real: tolerances, alpha): a finite decimal number as strtod reads it ("1e-3",
///    ".5", "2"), but no hexadecimal floats, no "inf"/"nan", no spaces, nothing after the number.
///
/// An empty value, trailing characters, or a value out of range: mcubes::invalid_input with one
/// line naming the option and the text ("--skip must be an integer, got ''").

#include <cstdint>
#include <string>
#include <vector>

namespace mcubes::cli {

/// Reads a decimal integer in [min, max]. @throws invalid_input otherwise.
long long parse_int(const std::string& text, const std::string& option, long long min, long long max);

/// Reads a count (see the file comment) in [min, max]. @throws invalid_input otherwise.
std::uint64_t parse_count(const std::string& text, const std::string& option, std::uint64_t min = 0,
                          std::uint64_t max = ~std::uint64_t(0));

/// Reads a finite real in [min, max] (-DBL_MAX..DBL_MAX: any finite real). @throws invalid_input otherwise.
double parse_real(const std::string& text, const std::string& option, double min, double max);

/// Reads a size in bytes: a count with an optional binary suffix K, M, G or T (KiB, MiB, GiB, TiB;
/// "512M", "8G", "1e9"). @throws invalid_input otherwise.
std::uint64_t parse_bytes(const std::string& text, const std::string& option);

/// "1.5 GiB", "12 MiB", "800 B": a byte count for messages.
std::string format_bytes(double bytes);

/// "3.2 s", "4.1 min", "2.3 h", "1.9 years": a duration in seconds for messages.
std::string format_duration(double seconds);

}  // namespace mcubes::cli

#include <mcubes/options.hpp>

namespace mcubes::cli {

/// The options every command shares, with the same grammar and defaults: --backend (cpu, cuda or
/// auto; default auto: the GPU when one is present), --seed (a count; default mcubes::default_seed),
/// --threads (at least 1; absent: all cores) and --threads-per-block (a power of two in [32, 1024];
/// default 256).
struct common_args {
  std::string backend = "auto";
  std::string seed = std::to_string(default_seed);
  std::string threads;  ///< empty: all cores
  std::string threads_per_block = "256";
  std::string devices;  ///< --devices: empty (device 0), "all", or ordinals "0,1,2"
};

/// The common options, read and checked.
struct common_values {
  backend_kind backend = backend_kind::automatic;
  std::uint64_t seed = default_seed;
  int threads = 0;  ///< 0: all cores
  int threads_per_block = 256;
  /// --devices: the CUDA ordinals in the order given (a repeat: another stream of that device),
  /// empty: device 0 alone; all_devices: every device present (resolve_devices, run_backend.hpp).
  std::vector<int> devices;
  bool all_devices = false;
};

/// Reads and checks the common options. @throws invalid_input naming the option.
common_values parse_common(const common_args& a, bool threads_given);

}  // namespace mcubes::cli
