#pragma once
// One table per enum names its values, for both directions: a command-line word to a value
// and a value to its word, so that the two cannot drift apart.
#include <cstddef>
#include <optional>
#include <string_view>

namespace j2k {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

/// The name of `value` in `table`; `otherwise` when the table lacks it.
template <typename E, std::size_t N>
constexpr const char* name_of(const EnumName<E> (&table)[N], E value, const char* otherwise = "?") noexcept {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return otherwise;
}

/// The value named `name` in `table` (exact spelling), or nothing.
template <typename E, std::size_t N>
constexpr std::optional<E> value_of(const EnumName<E> (&table)[N], std::string_view name) noexcept {
  for (const auto& e : table)
    if (name == e.name) return e.value;
  return std::nullopt;
}

}  // namespace j2k
