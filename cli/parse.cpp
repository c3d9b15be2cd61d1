/// @file cli/parse.cpp
/// The number grammar of the `mcubes` commands (see parse.hpp).
#include "parse.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include <mcubes/error.hpp>

namespace mcubes::cli {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

long long parse_int(const std::string& text, const std::string& option, long long min, long long max) {
  auto bad = [&]() -> long long {
    mcubes::detail::throw_invalid(option, " must be an integer in [", min, ", ", max, "], got '", text, "'");
  };
  std::size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) ++i;
  if (i == text.size()) return bad();
  if (text.find_first_of(".eE") != std::string::npos) {  // "1e9", "2.5e3": the count forms, an exact integer
    std::uint64_t m = 0;
    try {
      m = parse_count(text.substr(i), option);
    } catch (const invalid_input&) {
      return bad();
    }
    const std::uint64_t top = std::uint64_t(1) << 63;  // |value| of the most negative long long
    if (m > top || (!negative && m == top)) return bad();
    const long long value = !negative ? static_cast<long long>(m)
                            : m == top ? std::numeric_limits<long long>::min()
                                       : -static_cast<long long>(m);
    if (value < min || value > max) return bad();
    return value;
  }
  unsigned long long v = 0;
  const unsigned long long limit = 1ULL << 63;  // |value| of the most negative long long
  for (; i < text.size(); ++i) {
    if (!is_digit(text[i])) return bad();
    const unsigned d = static_cast<unsigned>(text[i] - '0');
    if (v > (limit - d) / 10) return bad();  // beyond any long long
    v = v * 10 + d;
  }
  if (!negative && v > static_cast<unsigned long long>(std::numeric_limits<long long>::max())) return bad();
  const long long value = negative ? (v == limit ? std::numeric_limits<long long>::min() : -static_cast<long long>(v))
                                   : static_cast<long long>(v);
  if (value < min || value > max) return bad();
  return value;
}

std::uint64_t parse_count(const std::string& text, const std::string& option, std::uint64_t min, std::uint64_t max) {
  const std::string form = " must be a non-negative integer (e.g. 1000000 or 1e6)";
  auto bad = [&](const std::string& why) -> std::uint64_t {
    mcubes::detail::throw_invalid(option, why, ", got '", text, "'");
  };
  std::size_t i = 0;
  std::string digits;
  while (i < text.size() && is_digit(text[i])) digits += text[i++];
  long long exp10 = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && is_digit(text[i])) {
      digits += text[i++];
      --exp10;
    }
  }
  if (digits.empty()) return bad(form);
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && text[i] == '+') ++i;
    if (i >= text.size() || !is_digit(text[i])) return bad(form);
    long long e = 0;
    while (i < text.size() && is_digit(text[i])) {
      e = e * 10 + (text[i++] - '0');
      if (e > 1000) return bad(" must be below 2^64");
    }
    exp10 += e;
  }
  if (i != text.size()) return bad(form);
  while (exp10 < 0 && digits.size() > 1 && digits.back() == '0') {  // "2.50e1" -> 25
    digits.pop_back();
    ++exp10;
  }
  if (exp10 < 0) {
    if (digits.find_first_not_of('0') != std::string::npos) return bad(" must be an integer");
    exp10 = 0;
  }
  std::uint64_t v = 0;
  const std::uint64_t top = ~std::uint64_t(0);
  for (char c : digits) {
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (v > (top - d) / 10) return bad(" must be below 2^64");
    v = v * 10 + d;
  }
  for (long long k = 0; k < exp10 && v != 0; ++k) {
    if (v > top / 10) return bad(" must be below 2^64");
    v *= 10;
  }
  if (v < min || v > max)
    mcubes::detail::throw_invalid(option, " must be in [", min, ", ", max, "], got '", text, "'");
  return v;
}

double parse_real(const std::string& text, const std::string& option, double min, double max) {
  auto bad = [&]() -> double {
    if (max == std::numeric_limits<double>::max() && min == 0)
      mcubes::detail::throw_invalid(option, " must be a finite non-negative number, got '", text, "'");
    if (max == std::numeric_limits<double>::max() && min == -max)
      mcubes::detail::throw_invalid(option, " must be a finite number, got '", text, "'");
    mcubes::detail::throw_invalid(option, " must be a finite number in [", min, ", ", max, "], got '", text, "'");
  };
  // Only the characters of a decimal number: this rejects spaces, hexadecimal ("0x1p3"), "inf" and
  // "nan" before strtod sees them.
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos) return bad();
  if (!(is_digit(text[0]) || text[0] == '.' || text[0] == '-' || text[0] == '+')) return bad();
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) return bad();
  if (errno == ERANGE && std::fabs(v) < 1)  // below the smallest normal double (a subnormal or 0)
    mcubes::detail::throw_invalid(option, " must be 0 or at least 2.2250738585072014e-308 in magnitude, got '", text, "'");
  if (errno == ERANGE) return bad();  // beyond the double range
  if (!(v >= min && v <= max)) return bad();
  return v;
}

std::uint64_t parse_bytes(const std::string& text, const std::string& option) {
  std::string number = text;
  int shift = 0;
  if (!number.empty()) {
    const char s = number.back();
    const int k = s == 'K' || s == 'k' ? 10 : s == 'M' || s == 'm' ? 20 : s == 'G' || s == 'g' ? 30 : s == 'T' || s == 't' ? 40 : 0;
    if (k) {
      shift = k;
      number.pop_back();
    }
  }
  double v = 0;
  try {
    v = std::ldexp(parse_real(number, option, 0, 0x1p62), shift);
  } catch (const invalid_input&) {
    v = -1;
  }
  if (!(v >= 1) || v > 0x1p62 || v != std::floor(v))
    mcubes::detail::throw_invalid(option, " must be a whole number of bytes from 1 to 2^62, optionally with a suffix K, M, ",
                                  "G or T (e.g. 512M, 1.5G), got '", text, "'");
  return static_cast<std::uint64_t>(v);
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.3g %s", bytes, units[u]);
  return buf;
}

std::string format_duration(double seconds) {
  char buf[48];
  if (!std::isfinite(seconds)) return "unknown";
  if (seconds < 60)
    std::snprintf(buf, sizeof buf, "%.2g s", seconds);
  else if (seconds < 3600)
    std::snprintf(buf, sizeof buf, "%.2g min", seconds / 60);
  else if (seconds < 86400 * 2)
    std::snprintf(buf, sizeof buf, "%.2g h", seconds / 3600);
  else if (seconds < 86400 * 365.25 * 2)
    std::snprintf(buf, sizeof buf, "%.3g days", seconds / 86400);
  else
    std::snprintf(buf, sizeof buf, "%.3g years", seconds / (86400 * 365.25));
  return buf;
}

}  // namespace mcubes::cli

namespace mcubes::cli {

common_values parse_common(const common_args& a, bool threads_given) {
  common_values v;
  if (a.backend == "cpu")
    v.backend = backend_kind::cpu;
  else if (a.backend == "cuda")
    v.backend = backend_kind::cuda;
  else if (a.backend == "auto")
    v.backend = backend_kind::automatic;
  else
    mcubes::detail::throw_invalid("--backend must be cpu, cuda or auto, got '", a.backend, "'");
  v.seed = parse_count(a.seed, "--seed");
  v.threads = threads_given ? static_cast<int>(parse_int(a.threads, "--threads", 1, 4096)) : 0;
  v.threads_per_block = static_cast<int>(parse_int(a.threads_per_block, "--threads-per-block", 32, 1024));
  validate_block_size(v.threads_per_block, "--threads-per-block");
  if (a.devices == "all") {
    v.all_devices = true;
  } else if (!a.devices.empty()) {
    std::size_t at = 0;
    while (true) {
      const std::size_t comma = a.devices.find(',', at);
      const std::string item = a.devices.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      MCUBES_EXPECTS(!item.empty(), "--devices takes 'all' or CUDA device ordinals separated by commas (e.g. 0,1,2), got '",
                     a.devices, "'");
      v.devices.push_back(static_cast<int>(parse_int(item, "--devices", 0, 1023)));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    MCUBES_EXPECTS(v.devices.size() <= 64, "--devices lists ", v.devices.size(), " devices, at most 64");
  }
  return v;
}

}  // namespace mcubes::cli
