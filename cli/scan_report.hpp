#pragma once
/// @file cli/scan_report.hpp
/// Reports of `mcubes scan`: the header, one row per grid point, the summary line and the JSON
/// record. No numerics beyond the comparison with the exact values.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <mcubes/algorithm/vegas_batch.hpp>
#include <mcubes/plan.hpp>
#include <mcubes/result.hpp>
#include <mcubes/suite.hpp>

#include "scan_grid.hpp"

namespace mcubes::cli {

/// Everything reported about one scan.
struct scan_report {
  const suite::entry* entry = nullptr;                        ///< the integrand
  int dim = 0;                                                ///< dimension d
  const scan_grid* grid = nullptr;                            ///< the ranges and K
  const std::vector<std::vector<double>>* points = nullptr;   ///< parameter values of point k (entry order)
  const std::vector<double>* exact = nullptr;                 ///< exact value at point k (entry->exact_at)
  vegas_options options;                                      ///< the run's options (seed: the run's seed)
  std::string backend;                                        ///< "cpu" or "cuda": what runs
  std::string backend_description;                            ///< e.g. "cpu (auto: no CUDA device)"
  int threads = 0;                                            ///< CPU threads, or CUDA threads per block
  vegas_plan plan;                                            ///< sub-cube grid and evaluations per iteration
  double host_bytes = 0;                                      ///< memory estimate of the host (scan_host_bytes)
  double device_bytes = 0;                                    ///< device memory of the batch (cuda; 0 on the cpu)
  std::vector<result> results;                                ///< result k of point k (empty until the end)
  /// The failure of integral k (its exception's message), empty where it did not fail; empty
  /// vector: none failed. A failed integral's row has status "failed" and no estimate.
  std::vector<std::string> failures;
  batch_progress progress;                                    ///< the last round's progress
  double seconds = 0;                                         ///< wall time of the batch so far
  /// Overrides the JSON "status" while the scan runs ("running") or after a failure ("failed");
  /// empty: from the results (overall_status).
  std::string run_state;
  std::string failure;                                        ///< the message of a failed scan
  int signal = 0;                                             ///< the signal that stopped it (2, 15), or 0
  bool json_iterations = false;                               ///< --json-iterations: each integral's iterations
};

/// Host memory of a scan of K integrals in d dimensions with n = n_bins bins per axis on T CPU
/// threads (the figure checked against the free memory), in bytes:
///   CPU: K (R + max(8 d (n + 1) + 8 (4 n + 1) + 8 d n + 16 d n (1 + W) + 2048, J))
///   GPU: K (R + max(2048, J)),  R = C(I) sizeof(iteration_record) + sizeof(result) + 160,
///        J = 2048 [+ 1536 I with --json-iterations]
/// with the results R (I = max_iterations records in a vector of capacity C(I), the power of two
/// >= I, and the grid point), and the larger of what the batch holds while it runs (the maps,
/// 8 d (n + 1), and the scratch of their adaptation, 8 (4 n + 1) + 8 d n; the bin sums of one round,
/// one array of 16-byte sums per worker and pass, W = min(T, tiles of 1024 chunks in a pass), and
/// the merged one, overflow levels, rarely used, not counted; the run state of an integral, 2 KB)
/// and the JSON record built after it (J). The constants were measured (peak resident memory). On
/// the GPU the maps and bins are in device memory (scan_device_bytes).
double scan_host_bytes(std::uint64_t K, int d, const vegas_options& o, const vegas_plan& plan, int cpu_threads,
                       bool on_cuda, bool json_iterations);

/// Device memory of a scan on the GPU (backend/cuda.cuh, cuda_backend::batch_bytes), in bytes:
///   K (8 d (n + 1) + 16 d n + about 200)
/// (per integral: its map, its 16-byte bin sums, its pass descriptor and flags; the overflow bin
/// levels, 256 d n bytes, only for an integral whose terms reach them, are not counted).
double scan_device_bytes(std::uint64_t K, int d, int n_bins);

/// The status of integral k: "failed" if it failed (r.failures), else its result's status.
std::string row_status(const scan_report& r, std::uint64_t k);

/// Number of integrals that failed.
std::size_t failed_count(const scan_report& r);

/// The overall status: "interrupted" if any integral was, else "failed" if any failed, else
/// "converged" if every one converged, else "not converged".
std::string overall_status(const scan_report& r);

/// Exit code of a finished scan: 3 if an integral failed, else 0 if every integral converged, else
/// 1 (interruption: 128 + signal, chosen by the command).
int scan_exit_code(const scan_report& r);

/// The command that integrates point k alone, bitwise as the scan did (same backend and build):
/// "mcubes integrate f4 --dim 4 --param a=8 --param u=0.7 --seed SEED --backend cpu" plus every
/// option whose value differs from integrate's default (the values as shortest round-trip decimals).
std::string reproduce_command(const scan_report& r, std::uint64_t k, std::uint64_t seed);

/// Prints the header: integrand, d, region; the grid and K; evaluations per iteration and options;
/// the seed rule; backend and memory.
void print_scan_header(std::FILE* out, const scan_report& r);

/// Prints the column titles of the rows.
void print_scan_row_header(std::FILE* out, const scan_report& r);

/// Prints the row of point k: k, the parameter values, estimate (17 significant digits: the exact
/// double), error, exact value, pull = (estimate - exact)/error, status, iterations, seed (a failed
/// integral: "-" for estimate, error and pull, status "failed").
void print_scan_row(std::FILE* out, const scan_report& r, std::uint64_t k);

/// Prints the summary: integrals per status, evaluations, time, one line per failed integral
/// ("failed: integral k (a = 1, u = 0.5; seed S): <reason>"), and the signal if one stopped the scan.
void print_scan_summary(std::FILE* out, const scan_report& r);

/// The JSON record of a scan. Keys: command ("scan"), version, integrand {name, formula, dim, any_dim,
/// lower, upper}, region, parameter_grid {order, integrals, ranges [{name, text, start, stop,
/// count}], defaults {name: value}}, options (every vegas_options field; seed = the run's seed),
/// seed_rule, evaluations_per_iteration, grid {g, sub_cubes, samples_per_cube}, backend,
/// backend_description, threads, memory {host_bytes, device_bytes}, status ("converged", "not
/// converged", "interrupted", "failed" if an integral failed; "running" during the scan, "failed"
/// after a failure of the whole scan), status_detail,
/// signal (if any), counts {status: number}, progress {round, finished, n_eval} (while running),
/// n_eval, seconds, evals_per_second, results: one object per point in grid order {index, params
/// {name: value}, seed, estimate, error, chi2_dof, q, dof, status, n_iterations, accumulated, n_eval,
/// exact, true_rel_error, pull, seconds, reproduce, and with --json-iterations iterations (the
/// fields of integrate's record)}; a failed integral has status "failed", failure (the reason) and
/// null estimate, error, chi2_dof, q, true_rel_error and pull (its iterations: those completed). Doubles are the shortest decimals that read back exactly;
/// non-finite values are null.
nlohmann::ordered_json scan_to_json(const scan_report& r);

}  // namespace mcubes::cli
