#pragma once
// Private to model/src/result_json*.cpp: the readers' and writers' shared helpers (enums by name, optionals as null).
#include <fmt/format.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ccbench {

template <typename Enum, std::size_t N>
Enum enum_from(const nlohmann::json& j, const Enum (&values)[N], std::string_view what) {
  const auto text = j.get<std::string>();
  for (Enum v : values) {
    if (name(v) == text) {
      return v;
    }
  }
  throw std::runtime_error(fmt::format("unknown {} '{}'", what, text));
}

template <typename T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template <typename T>
std::optional<T> optional_from(const nlohmann::json& j) {
  return j.is_null() ? std::nullopt : std::optional<T>(j.get<T>());
}

}  // namespace ccbench
