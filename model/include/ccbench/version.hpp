#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ccbench {
std::string_view tool_version();    // "0.1.0"
std::string_view git_revision();    // "abc1234" or "abc1234-dirty"; "unknown" outside git
std::string_view version_string();  // "ccbench 0.1.0 (git abc1234)"

/// The file of the shared library that holds `symbol`, links resolved ("/usr/lib/x86_64-linux-gnu/
/// libmpi.so.40.30.4"): what the dynamic loader chose, so LD_LIBRARY_PATH shows. Empty when the
/// symbol is in the program itself (linked statically) or cannot be told.
std::string library_file_of(const void* symbol);

/// What --version prints: "PROGRAM: ccbench 0.1.0 (git abc1234)", then a line per library, in the
/// order given ("  nccl   2.28.9 loaded from ..., built with 2.28.9").
using LibraryLines = std::vector<std::pair<std::string, std::string>>;
std::string version_text(std::string_view program, const LibraryLines& libraries);
}  // namespace ccbench
