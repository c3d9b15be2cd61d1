// multi-device-bench: one integral on 1, 2, ..., G GPUs of one process (vegas_on_devices), side by
// side in one run: evaluations/s per iteration (median over the timed iterations, the first
// iteration with the bin-scale probe left out) and whether every result is bitwise the one-GPU
// result. f4 8-D adapting (uniform and VEGAS+) and fA 6-D non-adapting, as mcubes-bench throughput.
//   multi-device-bench [--max-devices G] [--f4-calls N] [--fA-calls N] [--iterations K]
#include <mcubes/cuda.cuh>
#include <mcubes/suite.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool same_run(const mcubes::result& a, const mcubes::result& b) {
  if (!same_bits(a.estimate, b.estimate) || !same_bits(a.error, b.error) || a.records.size() != b.records.size()) return false;
  for (std::size_t i = 0; i < a.records.size(); ++i)
    if (!same_bits(a.records[i].estimate, b.records[i].estimate) || !same_bits(a.records[i].error, b.records[i].error))
      return false;
  return true;
}

template <int D, class F>
void row(const char* label, const F& f, const mcubes::region<D>& reg, const mcubes::vegas_options& o, int max_devices) {
  mcubes::result one;
  double base = 0;
  for (int g = 1; g <= max_devices; ++g) {
    std::vector<int> devices;
    for (int d = 0; d < g; ++d) devices.push_back(d);
    mcubes::vegas_on_devices<D>(f, reg, o, devices);  // warm-up (allocations, occupancy queries)
    const mcubes::result r = mcubes::vegas_on_devices<D>(f, reg, o, devices);
    std::vector<double> rate;
    for (const auto& rec : r.records)
      if (rec.index > 0) rate.push_back(static_cast<double>(rec.n_eval) / rec.seconds);
    const double m = median(rate);
    if (g == 1) {
      one = r;
      base = m;
    }
    std::printf("%-40s G=%d  %.4g evaluations/s per iteration  %.3f x one GPU (%.2f of G x)  %s  estimate %.17g\n", label, g, m,
                m / base, m / base / g, g == 1 ? "reference" : (same_run(r, one) ? "SAME BITS" : "DIFFERENT BITS"),
                r.estimate);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int max_devices = mcubes::cuda_device_count();
  double f4_calls = 4e9, fA_calls = 8e9;
  int iterations = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--max-devices") max_devices = std::min(max_devices, std::atoi(argv[i + 1]));
    else if (k == "--f4-calls") f4_calls = std::atof(argv[i + 1]);
    else if (k == "--fA-calls") fA_calls = std::atof(argv[i + 1]);
    else if (k == "--iterations") iterations = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "multi-device-bench: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  std::printf("multi-device-bench: %d visible device(s); %d iterations per run\n", mcubes::cuda_device_count(), iterations);
  mcubes::vegas_options a;
  a.backend = mcubes::backend_kind::cuda;
  a.calls_per_iteration = static_cast<std::uint64_t>(f4_calls);
  a.max_iterations = iterations;
  a.adapt_iterations = iterations;
  a.skip = 0;
  a.min_iterations = 1;
  a.rel_tol = 1e-12;
  a.stratification = mcubes::stratification_mode::uniform;
  row<8>("f4 8-D adapting, uniform", mcubes::suite::f4_gaussian{}, mcubes::region<8>::unit(), a, max_devices);
  a.stratification = mcubes::stratification_mode::adaptive;
  row<8>("f4 8-D adapting, VEGAS+", mcubes::suite::f4_gaussian{}, mcubes::region<8>::unit(), a, max_devices);
  mcubes::vegas_options n = a;
  n.calls_per_iteration = static_cast<std::uint64_t>(fA_calls);
  n.adapt_iterations = 0;
  n.stratification = mcubes::stratification_mode::uniform;
  row<6>("fA 6-D non-adapting, uniform", mcubes::suite::fA_sin_sum{}, mcubes::region<6>::cube(0, 10), n, max_devices);
  return 0;
}
