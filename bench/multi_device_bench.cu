// multi-device-bench: one integral on 1, 2, ..., G GPUs of one process (vegas_on_devices), side by
// side in one run: evaluations/s per iteration (median over the timed iterations, the first
// iteration with the bin-scale probe left out), the exchange time per iteration (the first
// device's wall time in the team's exchanges, waits for the slowest device included) and whether
// every result is bitwise the one-GPU result. f4 8-D adapting (uniform and VEGAS+) and fA 6-D
// non-adapting, as mcubes-bench throughput; then a batch of K 4-D integrals (a Gaussian whose
// centre is the parameter) split over the devices (vegas_batch with execution::devices): its
// evaluations/s over the whole batch's wall time (the median of three batches).
//   multi-device-bench [--max-devices G] [--f4-calls N] [--fA-calls N] [--iterations K]
//                      [--batch K (0: none)] [--batch-calls N] [--block B] [--per-iteration 1]
//                      [--only TEXT (the rows whose label contains it)]
#include <mcubes/cuda.cuh>
#include <mcubes/suite.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool per_iteration = false;  // --per-iteration 1: print every iteration's rate too
std::string only;             // --only TEXT: the rows whose label contains TEXT

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
  if (std::string(label).find(only) == std::string::npos) return;
  mcubes::result one;
  double base = 0;
  for (int g = 1; g <= max_devices; ++g) {
    std::vector<int> devices;
    for (int d = 0; d < g; ++d) devices.push_back(d);
    mcubes::vegas_on_devices<D>(f, reg, o, devices);  // warm-up (allocations, occupancy queries)
    mcubes::exchange_time exchanged;
    const mcubes::result r = mcubes::vegas_on_devices<D>(f, reg, o, devices, {}, &exchanged);
    std::vector<double> rate;
    for (const auto& rec : r.records)
      if (rec.index > 0) rate.push_back(static_cast<double>(rec.n_eval) / rec.seconds);
    const double m = median(rate);
    if (g == 1) {
      one = r;
      base = m;
    }
    if (per_iteration) {  // every iteration's rate (the first's includes the bin-scale probe)
      std::printf("  per iteration:");
      for (const auto& rec : r.records) std::printf(" %.3g", static_cast<double>(rec.n_eval) / rec.seconds);
      std::printf("\n");
    }
    std::printf("%-40s G=%d  %.4g evaluations/s per iteration  %.3f x one GPU (%.2f of G x)  exchange %.3f ms per "
                "iteration  %s  estimate %.17g\n",
                label, g, m, m / base, m / base / g, 1e3 * exchanged.seconds / std::max<std::size_t>(1, r.records.size()),
                g == 1 ? "reference" : (same_run(r, one) ? "SAME BITS" : "DIFFERENT BITS"), r.estimate);
    std::fflush(stdout);
  }
}

struct centred_gaussian {  // exp(-50 |x - c|^2) on [0, 1]^4, the centre c the parameter
  __host__ __device__ double operator()(const mcubes::point<4>& x, const double& c) const {
    double r2 = 0;
    for (int j = 0; j < 4; ++j) r2 += (x[j] - c) * (x[j] - c);
    return exp(-50 * r2);
  }
};

void batch_row(std::size_t K, const mcubes::vegas_options& o, int max_devices) {
  std::vector<double> centres;
  for (std::size_t k = 0; k < K; ++k) centres.push_back(0.25 + 0.5 * static_cast<double>(k) / static_cast<double>(K));
  std::vector<mcubes::result> one;
  double base = 0;
  for (int g = 1; g <= max_devices; ++g) {
    mcubes::vegas_options og = o;
    for (int d = 0; d < g; ++d) og.devices.push_back(d);
    mcubes::vegas_batch<4>(centred_gaussian{}, mcubes::region<4>::unit(), centres, og);  // warm-up
    std::vector<double> times;  // the median of three timed batches
    std::vector<mcubes::result> rs;
    for (int rep = 0; rep < 3; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      rs = mcubes::vegas_batch<4>(centred_gaussian{}, mcubes::region<4>::unit(), centres, og);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    const double seconds = median(times);
    std::uint64_t n_eval = 0;
    for (const auto& r : rs) n_eval += r.n_eval;
    const double rate = static_cast<double>(n_eval) / seconds;
    bool same = true;
    if (g == 1) {
      one = rs;
      base = rate;
    } else {
      for (std::size_t k = 0; k < K; ++k) same = same && same_run(rs[k], one[k]);
    }
    std::printf("batch of %zu 4-D integrals, %llu calls each  G=%d  %.4g evaluations/s (%.3f s)  %.3f x one GPU (%.2f of "
                "G x)  %s\n",
                K, static_cast<unsigned long long>(o.calls_per_iteration), g, rate, seconds, rate / base, rate / base / g,
                g == 1 ? "reference" : (same ? "SAME BITS" : "DIFFERENT BITS"));
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int max_devices = mcubes::cuda_device_count();
  double f4_calls = 4e9, fA_calls = 8e9;
  int iterations = 5;
  std::size_t batch = 4096;
  double batch_calls = 1e5;
  int block = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--max-devices") max_devices = std::min(max_devices, std::atoi(argv[i + 1]));
    else if (k == "--f4-calls") f4_calls = std::atof(argv[i + 1]);
    else if (k == "--fA-calls") fA_calls = std::atof(argv[i + 1]);
    else if (k == "--iterations") iterations = std::atoi(argv[i + 1]);
    else if (k == "--batch") batch = static_cast<std::size_t>(std::atol(argv[i + 1]));
    else if (k == "--batch-calls") batch_calls = std::atof(argv[i + 1]);
    else if (k == "--only") only = argv[i + 1];
    else if (k == "--per-iteration") per_iteration = std::atoi(argv[i + 1]) != 0;
    else if (k == "--block") block = std::atoi(argv[i + 1]);  // CUDA threads per block (never changes a result)
    else {
      std::fprintf(stderr, "multi-device-bench: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  std::printf("multi-device-bench: %d visible device(s); %d iterations per run; %d threads per block\n",
              mcubes::cuda_device_count(), iterations, block);
  mcubes::vegas_options a;
  a.backend = mcubes::backend_kind::cuda;
  a.cuda_threads_per_block = block;
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
  if (batch > 0) {
    mcubes::vegas_options b = a;  // every integral runs its `iterations` iterations (no early convergence)
    b.calls_per_iteration = static_cast<std::uint64_t>(batch_calls);
    b.stratification = mcubes::stratification_mode::adaptive;
    batch_row(batch, b, max_devices);
  }
  return 0;
}
