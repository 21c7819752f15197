#pragma once
// Small statistics shared by the benchmark programs (bench/*): header-only, no dependencies.
#include <algorithm>
#include <vector>

namespace j2k::bench {

/// The median of the samples (the upper one of the middle two for an even count); 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace j2k::bench
