#include <gtest/gtest.h>

#include "ccbench/report/text.hpp"

namespace ccbench::report {
namespace {

TEST(ReportText, HtmlEscapeCoversMarkupAndQuotes) {
  EXPECT_EQ(html_escape("<script>a&b\"c'</script>"), "&lt;script&gt;a&amp;b&quot;c&#39;&lt;/script&gt;");
  EXPECT_EQ(html_escape("plain"), "plain");
}

TEST(ReportText, XmlEscapeReplacesWhatXmlCannotHold) {
  EXPECT_EQ(xml_escape("a\x01"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(xml_escape("bad \xff byte"), "bad \xEF\xBF\xBD byte");
  EXPECT_EQ(xml_escape("tab\tok <x>"), "tab\tok &lt;x&gt;");
  EXPECT_EQ(xml_escape("µs"), "µs");  // valid UTF-8 stays
}

TEST(ReportText, CsvFieldQuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "two?lines");  // one record a line: no control character
  EXPECT_EQ(csv_field("bell\x07, tab\t"), "\"bell?, tab?\"");
}

TEST(ReportText, MarkdownEscapeKeepsMarkupAndMarksInert) {
  EXPECT_EQ(markdown_escape("<script>*x*</script>"), "&lt;script&gt;\\*x\\*&lt;/script&gt;");
  EXPECT_EQ(markdown_escape("a|b_c\nd"), "a\\|b\\_c d");
  EXPECT_EQ(markdown_escape("ctl\x01"), "ctl\xEF\xBF\xBD");
}

TEST(ReportText, PrintableDefusesTerminalEscapes) {
  EXPECT_EQ(printable("\x1b[31mred\x1b[0m"), "?[31mred?[0m");
  EXPECT_EQ(printable("h\xc3\xa9"), "h\xc3\xa9");
  EXPECT_EQ(printable("\xc3"), "?");
}

TEST(ReportText, FormatSizeUsesExactBinaryUnits) {
  EXPECT_EQ(format_size(8, SizeStyle::Binary), "8 B");
  EXPECT_EQ(format_size(4096, SizeStyle::Binary), "4 KiB");
  EXPECT_EQ(format_size(std::uint64_t{16} << 30, SizeStyle::Binary), "16 GiB");
  EXPECT_EQ(format_size(1536, SizeStyle::Binary), "1536 B");
  EXPECT_EQ(format_number(std::nullopt, 2), "-");
  EXPECT_EQ(format_number(1.005, 1), "1.0");
}

TEST(ReportText, ParseFormat) {
  EXPECT_EQ(parse_format("md"), Format::Markdown);
  EXPECT_EQ(parse_format("csv"), Format::Csv);
  EXPECT_FALSE(parse_format("xml"));
}

}  // namespace
}  // namespace ccbench::report
