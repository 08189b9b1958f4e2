#pragma once
// A picture for the page: an RGB image as PNG bytes (libpng), and those bytes as base64 for a data: URL.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::report::detail {

/// `rgb` holds width x height pixels, 3 bytes each, row by row. Throws std::runtime_error when libpng fails.
std::string png_rgb(int width, int height, const std::vector<std::uint8_t>& rgb);

/// RFC 4648 base64 (with padding).
std::string base64(std::string_view bytes);

}  // namespace ccbench::report::detail
