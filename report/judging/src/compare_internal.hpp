#pragma once
// What compare_runs and compare_launches share: a side's rows by key, and how a row's verdict is decided.
#include <map>
#include <string>
#include <vector>

#include "ccbench/report/compare.hpp"

namespace ccbench::report::detail {

using Index = std::map<RowKey, const CaseResult*>;

/// A side's rows by key; throws UsageError (naming `side` and both files) when two of its runs hold the same row.
Index index_of(const std::vector<LoadedRun>& runs, const std::string& side);
/// SAME / FASTER / SLOWER / UNSURE from row.change and the threshold (see README "compare").
void decide(RowComparison& row, double threshold);
/// FAILED, or UNSURE "not measured on both sides", where a side did not measure the row; false where both did.
bool decide_status(RowComparison& row);

}  // namespace ccbench::report::detail
