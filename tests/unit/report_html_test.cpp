// The HTML and Markdown reports: escaping of every name, no external resource, the charts.
#include <gtest/gtest.h>

#include <regex>

#include "kernlens/analysis/analysis.h"
#include "kernlens/profile/run_reader.h"
#include "kernlens/report/format.h"
#include "kernlens/report/html_report.h"
#include "kernlens/report/markdown_report.h"
#include "test_util.h"

namespace kernlens::report {
namespace {

// A kernel name a template library could produce, plus a script a page must never run.
const std::string kNastyName = "void k<int, \"q\">(a&b, 'c') | </script><script>alert(1)</script>";

model::Profile nasty_profile() {
  model::Profile p;
  p.inputs.push_back({"runs/<a&b>.csv", "ncu-raw", {}});
  for (double ns : {4000.0, 1000.0}) {
    model::Launch l;
    l.name = p.names.intern(ns > 2000 ? kNastyName : std::string("plain_kernel"));
    l.duration_ns = ns;
    p.launches.push_back(l);
  }
  return p;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlEscape, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(html_escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(html_escape("plain"), "plain");
}

TEST(HtmlReport, EscapesNamesAndPathsAndLoadsNothingExternal) {
  auto profile = nasty_profile();
  auto a = analysis::analyze(profile, test::builtin_classifier(), {});
  ASSERT_TRUE(a.ok());
  ReportContext ctx{{"python3", "run.py", "--tag", "<x>&y"}, 25};
  std::string html = analysis_html(profile, *a, ctx);
  EXPECT_EQ(html.find(kNastyName), std::string::npos);
  EXPECT_EQ(html.find("alert(1)</script>"), std::string::npos);
  EXPECT_NE(html.find(html_escape(kNastyName)), std::string::npos);
  EXPECT_NE(html.find("runs/&lt;a&amp;b&gt;.csv"), std::string::npos);
  EXPECT_NE(html.find("&#39;&lt;x&gt;&amp;y&#39;"), std::string::npos);  // the command, shell-quoted
  EXPECT_EQ(count(html, "<script>"), 1u);                                // only our own
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=)")));
  EXPECT_NE(html.find("id=\"roofline-missing\""), std::string::npos);  // no metrics: a note, not a chart
  EXPECT_NE(html.find("id=\"op-class-chart\""), std::string::npos);
}

TEST(MarkdownReport, NamesAreCodeSpansWithPipesEscaped) {
  auto profile = nasty_profile();
  auto a = analysis::analyze(profile, test::builtin_classifier(), {});
  ASSERT_TRUE(a.ok());
  std::string md = analysis_markdown(profile, *a, ReportContext{});
  EXPECT_NE(md.find("| 1 | ` void k<int, \"q\">(a&b, 'c') \\| </script><script>alert(1)</script> ` |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2 | ` plain_kernel ` |"), std::string::npos) << md;
  EXPECT_EQ(md.find("<svg"), std::string::npos);
}

TEST(HtmlReport, DemoRunHasRooflineDotsBetweenTheRoofs) {
  model::Profile profile;
  ingest::ReadOptions options;
  options.all_metrics = false;
  options.metrics = analysis::analysis_metric_names();
  const std::string run = std::string(KERNLENS_FIXTURES) + "/../../examples/data/runs/llama_prefill";
  ASSERT_TRUE(profile::read_profile_input(run, profile, options).ok());
  auto a = analysis::analyze(profile, test::builtin_classifier(), {});
  ASSERT_TRUE(a.ok());
  std::string html = analysis_html(profile, *a, ReportContext{profile::read_run_command(run), 25});
  auto roofline = html.substr(html.find("<svg id=\"roofline\""));
  roofline = roofline.substr(0, roofline.find("</svg>"));
  EXPECT_GE(count(roofline, "class=\"dot op-"), 10u);
  EXPECT_EQ(count(roofline, "class=\"roof compute-roof\""), 2u);  // tensor_bf16 and fp32
  EXPECT_EQ(count(roofline, "class=\"roof memory-roof\""), 1u);
  EXPECT_NE(html.find("<svg id=\"stall-chart\""), std::string::npos);
  EXPECT_NE(html.find("long_scoreboard"), std::string::npos);
  EXPECT_NE(html.find("python3 examples/workloads/llm_stages.py"), std::string::npos);
}

}  // namespace
}  // namespace kernlens::report
