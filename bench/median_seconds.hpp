#pragma once
// Wall time of a whole call for the benchmark programs: one warm-up call, then the median of
// `runs` timed calls (steady clock around the call; the library's calls synchronise the device
// before they return).
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

inline double median_seconds(int runs, const std::function<void()>& fn) {
  fn();  // warm-up
  std::vector<double> s;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}
