#pragma once
// Natural order of device names: "mlx5_2" < "mlx5_10", "eth1" < "eth10". Internal.
#include <cctype>
#include <string_view>

namespace ccbench::topo::detail {

inline bool name_less(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ie = i;
      std::size_t je = j;
      while (ie < a.size() && digit(a[ie])) {
        ++ie;
      }
      while (je < b.size() && digit(b[je])) {
        ++je;
      }
      const auto na = a.substr(i, ie - i);
      const auto nb = b.substr(j, je - j);
      if (na.size() != nb.size()) {
        return na.size() < nb.size();
      }
      if (na != nb) {
        return na < nb;
      }
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) {
        return a[i] < b[j];
      }
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace ccbench::topo::detail
