#include "png_image.hpp"

#include <png.h>

#include <array>
#include <csetjmp>
#include <stdexcept>

namespace ccbench::report::detail {

namespace {

extern "C" void append_png(png_structp png, png_bytep data, png_size_t length) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), length);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

extern "C" void flush_nothing(png_structp /*png*/) {}

}  // namespace

std::string png_rgb(int width, int height, const std::vector<std::uint8_t>& rgb) {
  if (width <= 0 || height <= 0 ||
      rgb.size() != static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3) {
    throw std::runtime_error("png: the pixels do not fill the image");
  }
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png == nullptr ? nullptr : png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    throw std::runtime_error("png: out of memory");
  }
  std::string out;
  std::vector<png_bytep> rows(static_cast<std::size_t>(height));
  for (int y = 0; y < height; ++y) {
    // libpng reads the rows only; its API takes them as non-const.
    rows[static_cast<std::size_t>(y)] = const_cast<png_bytep>(  // NOLINT(cppcoreguidelines-pro-type-const-cast)
        rgb.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(width) * 3);
  }
  // libpng reports errors by longjmp; nothing with a destructor is made between here and the end.
  if (setjmp(png_jmpbuf(png)) != 0) {  // NOLINT(cert-err52-cpp)
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("png: libpng could not write the image");
  }
  png_set_write_fn(png, &out, append_png, flush_nothing);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_rows(png, info, rows.data());
  png_write_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

std::string base64(std::string_view bytes) {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t left = bytes.size() - i;
    std::uint32_t chunk = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16U;
    if (left > 1) {
      chunk |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8U;
    }
    if (left > 2) {
      chunk |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
    }
    out += kAlphabet[(chunk >> 18U) & 63U];
    out += kAlphabet[(chunk >> 12U) & 63U];
    out += left > 1 ? kAlphabet[(chunk >> 6U) & 63U] : '=';
    out += left > 2 ? kAlphabet[chunk & 63U] : '=';
  }
  return out;
}

}  // namespace ccbench::report::detail
