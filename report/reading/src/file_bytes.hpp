#pragma once
// The bytes of an open file as an input iterator, read in blocks: a parser streams a result file of any size
// without holding it whole.
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace ccbench::report::detail {

class FileBytes {
 public:
  static constexpr std::size_t kBlock = std::size_t{1} << 20;

  explicit FileBytes(int fd) : m_fd(fd), m_buffer(kBlock) {}

  /// The byte at the read position; -1 at the end of the file. Throws std::system_error on a read error.
  int peek() {
    if (m_pos == m_len && !fill()) {
      return -1;
    }
    return static_cast<unsigned char>(m_buffer[m_pos]);
  }
  void advance() {
    ++m_pos;
    ++m_consumed;
  }
  [[nodiscard]] std::uint64_t consumed() const { return m_consumed; }

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = char;

    Iterator() = default;
    explicit Iterator(FileBytes* bytes) : m_bytes(bytes) {}
    char operator*() const { return static_cast<char>(m_bytes->peek()); }
    Iterator& operator++() {
      m_bytes->advance();
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      m_bytes->advance();
      return before;
    }
    bool operator==(const Iterator& other) const { return at_end() == other.at_end(); }
    bool operator!=(const Iterator& other) const { return !(*this == other); }

   private:
    [[nodiscard]] bool at_end() const { return m_bytes == nullptr || m_bytes->peek() < 0; }
    FileBytes* m_bytes = nullptr;
  };
  Iterator begin() { return Iterator(this); }
  static Iterator end() { return {}; }

 private:
  bool fill() {
    for (;;) {
      const ssize_t n = ::read(m_fd, m_buffer.data(), m_buffer.size());
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0) {
        throw std::system_error(errno, std::generic_category(), "cannot read");
      }
      m_pos = 0;
      m_len = static_cast<std::size_t>(n);
      return n > 0;
    }
  }

  int m_fd;
  std::vector<char> m_buffer;
  std::size_t m_pos = 0;
  std::size_t m_len = 0;
  std::uint64_t m_consumed = 0;
};

}  // namespace ccbench::report::detail
