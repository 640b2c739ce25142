// The HTML and Markdown reports: escaping of every name, no external resource, the charts.
#include <gtest/gtest.h>

#include <regex>

#include "kernlens/analysis/analysis.h"
#include "kernlens/load/load.h"
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
  p.inputs.push_back({"runs/<a&b>.csv", model::InputFormat::kNcuRawCsv, "", {}, {}});
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
  // No metrics: the roofline is left out, and one line says which input would draw it.
  EXPECT_EQ(html.find("<section id=\"roofline-section\""), std::string::npos);
  EXPECT_NE(html.find("<li id=\"missing-roofline\"><b>Roofline"), std::string::npos);
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
  const std::string run = std::string(KERNLENS_FIXTURES) + "/../../examples/data/runs/llama_prefill";
  auto loaded = load::load({run}, test::builtin_classifier());
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  std::string html = analysis_html(loaded->profile, loaded->analysis, ReportContext{loaded->command(), 25});
  auto roofline = html.substr(html.find("<svg id=\"roofline\""));
  roofline = roofline.substr(0, roofline.find("</svg>"));
  EXPECT_GE(count(roofline, "class=\"dot op-"), 10u);
  EXPECT_EQ(count(roofline, "class=\"roof compute-roof\""), 2u);  // tensor_bf16 and fp32
  EXPECT_EQ(count(roofline, "class=\"roof memory-roof\""), 1u);
  EXPECT_NE(html.find("<svg id=\"stall-chart\""), std::string::npos);
  EXPECT_NE(html.find("long_scoreboard"), std::string::npos);
  EXPECT_NE(html.find("python3 examples/workloads/llm_stages.py"), std::string::npos);
}

struct RunReport {
  model::Profile profile;
  analysis::Analysis analysis;
  std::string html;
};

RunReport run_report(const std::string& name, const analysis::AnalysisOptions& options = {}) {
  const std::string run = std::string(KERNLENS_FIXTURES) + "/../../examples/data/runs/" + name;
  auto loaded = load::load({run}, test::builtin_classifier(), load::LoadOptions{options, {}});
  EXPECT_TRUE(loaded.ok()) << loaded.error().to_string();
  RunReport r{std::move(loaded->profile), std::move(loaded->analysis), ""};
  r.html = analysis_html(r.profile, r.analysis, ReportContext{loaded->command(), 25});
  return r;
}

// The <section> with this id, or "".
std::string section_of(const std::string& html, const std::string& id) {
  auto at = html.find("<section id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</section>", at) - at);
}

// An Nsight Compute run has no timeline: the report says so once, with the input that would
// fill it, and its stage table has no empty wall-time columns (issue 21 found it said so
// twice, in different words, over an empty table).
TEST(HtmlReport, NcuRunSaysOnceWhichInputWouldGiveTheTimeline) {
  auto r = run_report("llama_prefill");
  EXPECT_EQ(count(r.html, "timeline"), count(section_of(r.html, "missing"), "timeline"));
  EXPECT_NE(r.html.find("<li id=\"missing-timeline\"><b>GPU timeline"), std::string::npos);
  EXPECT_NE(section_of(r.html, "missing").find("needs a timeline: kernlens profile --discovery tracer"), std::string::npos);
  EXPECT_EQ(r.html.find("No GPU timeline"), std::string::npos);
  EXPECT_EQ(section_of(r.html, "timeline-section"), "");
  std::string stages = section_of(r.html, "stage-table");
  EXPECT_EQ(stages.find("GPU wall"), std::string::npos);
  EXPECT_NE(stages.find(">MFU</th>"), std::string::npos);
}

TEST(HtmlReport, TracerRunStagesHaveWallBusyAndSayHowEachFigureWasObtained) {
  analysis::AnalysisOptions options;
  options.work.params = 1e8;
  options.work.tokens = {{"prefill", 128}};
  auto r = run_report("llama_decode_tracer", options);
  std::string stages = section_of(r.html, "stage-table");
  for (std::string header : {"GPU wall", "Busy", "MFU", "ncu metrics"}) {
    EXPECT_NE(stages.find(">" + header + "</th>"), std::string::npos) << header;
  }
  EXPECT_NE(stages.find("title=\"measured on the timeline: the union of the stage"), std::string::npos);
  // prefill's FLOPs from 2 x params x tokens: analytic; its MFU divides by the bf16 peak, an
  // assumption. Each is marked, explained on hover and in the footnote.
  EXPECT_TRUE(std::regex_search(stages, std::regex("title=\"analytic: 2 x params x tokens[^\"]*\">[0-9.]+ GFLOP<sup class=\"how\">a</sup>")))
      << stages;
  EXPECT_TRUE(std::regex_search(stages, std::regex("title=\"assumed: [^\"]*tensor_bf16 assumed[^\"]*\">[0-9.]+%<sup class=\"how\">\\*</sup>")))
      << stages;
  EXPECT_NE(stages.find("<sup class=\"how\">a</sup> analytic: from the model"), std::string::npos);
  EXPECT_NE(stages.find("<sup class=\"how\">*</sup> rests on an assumption"), std::string::npos);
  // decode has no FLOPs: its MFU cell says why.
  EXPECT_NE(stages.find("title=\"no MFU: FLOPs not measured"), std::string::npos);
  EXPECT_EQ(section_of(r.html, "missing").find("timeline"), std::string::npos);
}

TEST(HtmlReport, KernelTableShowsBaseNamesWithTheFullNameOnHoverAndInDetails) {
  auto r = run_report("llama_decode_tracer");
  std::string kernels = section_of(r.html, "top-kernels");
  const std::string full = html_escape(analysis::shown_name(r.profile, r.analysis.agg.kernels[1]));
  const std::string base = html_escape(r.analysis.agg.families[r.analysis.agg.kernels[1].family].cls.base_name);
  ASSERT_NE(full, base);
  EXPECT_NE(kernels.find("<td class=\"code\" title=\"" + full + "\">" + base + "</td>"), std::string::npos) << base;
  EXPECT_NE(kernels.find("<dt>Name</dt><dd>" + full + "</dd>"), std::string::npos);
  EXPECT_EQ(count(kernels, "<tr class=\"has-details\">"), count(kernels, "<tr class=\"details\" hidden>"));
  EXPECT_EQ(count(kernels, "<tr class=\"has-details\">"), 25u);
}

TEST(HtmlReport, TimelineLaneLabelsKeepTheirLeaf) {
  model::Profile p;
  model::StageKey key;
  for (auto name : {"step", "CCCL", "cub::DeviceReduce::Sum_with_a_very_long_name_that_goes_on"}) {
    key.push_pop.push_back(model::NvtxRange{"", name, model::RangeKind::kPushPop});
  }
  auto stage = p.intern_stage(key);
  model::Launch l;
  l.name = p.names.intern("k");
  l.start_ns = 1000;
  l.duration_ns = 500;
  l.stage = stage;
  p.launches.push_back(l);
  p.stage_ranges.push_back(model::StageRange{stage, 1000, 1500, 0});
  auto a = analysis::analyze(p, test::builtin_classifier(), {});
  ASSERT_TRUE(a.ok());
  std::string html = analysis_html(p, *a, ReportContext{});
  std::string timeline = section_of(html, "timeline-section");
  EXPECT_NE(timeline.find("<title>step/CCCL/cub::DeviceReduce::Sum_with_a_very_long_name_that_goes_on</title>"),
            std::string::npos);
  // The lines: the first range, "…" for the middle, then the whole leaf over the next lines.
  std::string label = timeline.substr(timeline.find("<text", timeline.find("<title>step/")));
  label = label.substr(0, label.find("</text>"));
  std::vector<std::string> lines;
  const std::regex tspan(">([^<]*)</tspan>");
  for (auto it = std::sregex_iterator(label.begin(), label.end(), tspan); it != std::sregex_iterator(); ++it) {
    lines.push_back((*it)[1]);
  }
  ASSERT_GE(lines.size(), 3u) << label;
  EXPECT_EQ(lines[0], "step/\xE2\x80\xA6/");
  std::string leaf;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_LE(display_width(lines[i]), 44u);
    leaf += lines[i];
  }
  EXPECT_EQ(leaf, "cub::DeviceReduce::Sum_with_a_very_long_name_that_goes_on");
}

// The ranks section of a multi-rank report (issue 17): one overlap bar per rank and per stage
// of it, compute then communication under compute then exposed, widths in proportion.
TEST(HtmlReport, MultiRankReportHasAnOverlapBarPerRank) {
  auto loaded = load::load({test::fixture("multirank/hta_sendrecv_rank-0.json.gz"),
                            test::fixture("multirank/hta_sendrecv_rank-1.json.gz")},
                           test::builtin_classifier());
  ASSERT_TRUE(loaded.ok());
  std::string html = analysis_html(loaded->profile, loaded->analysis, ReportContext{{}, 10});
  auto at = html.find("<section id=\"ranks-section\"");
  ASSERT_NE(at, std::string::npos);
  std::string chart = html.substr(html.find("<svg id=\"rank-overlap\"", at));
  chart = chart.substr(0, chart.find("</svg>"));
  const auto& ranks = loaded->analysis.ranks.ranks;
  for (const auto& r : ranks) {
    std::string role(analysis::role_name(r.role));
    std::string label = "rank " + std::to_string(r.rank) + (role == "-" ? "" : " (" + role + ")");
    EXPECT_NE(chart.find(">" + label + "<"), std::string::npos) << label;
  }
  // Exposed and overlapped bars each carry their figure in their hover text.
  for (const auto& r : ranks) {
    if (r.comm.exposed_ns() > 0) {
      EXPECT_NE(chart.find("communication exposed: " + human_duration_ns(r.comm.exposed_ns())), std::string::npos);
    }
  }
  EXPECT_GE(count(chart, "class=\"compute\""), ranks.size() + 1);  // + the legend's
  EXPECT_GE(count(chart, "class=\"comm-exposed\""), 2u);
}

TEST(HtmlReport, OneRankHasNoRanksSection) {
  auto loaded = load::load({test::fixture("multirank/hta_nccl_allreduce_rank-0.json.gz")}, test::builtin_classifier());
  ASSERT_TRUE(loaded.ok());
  std::string html = analysis_html(loaded->profile, loaded->analysis, ReportContext{{}, 10});
  EXPECT_EQ(html.find("ranks-section"), std::string::npos);
  EXPECT_EQ(html.find("rank-overlap"), std::string::npos);
}

}  // namespace
}  // namespace kernlens::report
