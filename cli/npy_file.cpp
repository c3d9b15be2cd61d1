/// @file cli/npy_file.cpp
/// The .npy writer of `mcubes sample` (npy_file.hpp). The format: NumPy's "NEP 1" / numpy.lib.format
/// version 1.0: the magic "\x93NUMPY", version 1.0, a 2-byte little-endian header length, a Python
/// dict literal padded with spaces and a newline so that the data starts at a multiple of 64 bytes.
#include "npy_file.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace mcubes::cli {

namespace {

bool little_endian() {
  const std::uint16_t one = 1;
  unsigned char b[2];
  std::memcpy(b, &one, 2);
  return b[0] == 1;
}

std::string npy_header(std::uint64_t rows, int columns) {
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                     std::to_string(columns) + "), }";
  const std::size_t fixed = 6 + 2 + 2;  // magic, version, header length
  std::size_t total = fixed + dict.size() + 1;
  total = (total + 63) / 64 * 64;
  dict.append(total - fixed - dict.size() - 1, ' ');
  dict += '\n';
  std::string h = "\x93NUMPY";
  h += static_cast<char>(1);
  h += static_cast<char>(0);
  const std::size_t len = dict.size();
  h += static_cast<char>(len & 0xff);
  h += static_cast<char>((len >> 8) & 0xff);
  return h + dict;
}

}  // namespace

void write_weighted_npy(const atomic_output_file& out, const weighted_sampler& s) {
  const int d = s.dim();
  const std::uint64_t n = s.size();
  out.write_from(
      [&](const std::function<void(const char*, std::size_t)>& put) {
        const std::string header = npy_header(n, d + 1);
        put(header.data(), header.size());
        const std::uint64_t batch = 1 << 16;
        std::vector<double> x(static_cast<std::size_t>(batch) * static_cast<std::size_t>(d)), w(batch);
        std::vector<double> rows(static_cast<std::size_t>(batch) * static_cast<std::size_t>(d + 1));
        const bool swap = !little_endian();
        for (std::uint64_t first = 0; first < n; first += batch) {
          const std::uint64_t count = std::min(batch, n - first);
          s.fill(first, count, x.data(), w.data());
          for (std::uint64_t k = 0; k < count; ++k) {
            double* r = rows.data() + k * static_cast<std::uint64_t>(d + 1);
            std::copy(x.data() + k * static_cast<std::uint64_t>(d), x.data() + (k + 1) * static_cast<std::uint64_t>(d), r);
            r[d] = w[k];
          }
          const std::size_t bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(d + 1) * sizeof(double);
          char* p = reinterpret_cast<char*>(rows.data());
          if (swap)
            for (std::size_t b = 0; b < bytes; b += 8) std::reverse(p + b, p + b + 8);
          put(p, bytes);
        }
      },
      true);
}

}  // namespace mcubes::cli
