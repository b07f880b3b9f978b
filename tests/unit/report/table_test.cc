// The one table writer: aligned text, markdown, CSV and JSON; and the report's exports.
#include "report/table.h"

#include <gtest/gtest.h>

#include "report/report.h"

namespace runx::report {
namespace {

TextTable Small() {
  TextTable t;
  t.headers = {"variant", "samples/s", "note"};
  t.right = {false, true, false};
  t.rows = {{"baseline", "1050.0", ""}, {"bf16|x", "1800.5", "Δ ok"}};
  return t;
}

TEST(Table, TextIsAligned) {
  EXPECT_EQ(RenderText(Small()),
            "variant   samples/s  note\n"
            "baseline     1050.0\n"
            "bf16|x       1800.5  Δ ok\n");
  EXPECT_EQ(RenderText(TextTable{{"a"}, {}, {}}), "");
}

TEST(Table, Markdown) {
  EXPECT_EQ(RenderMarkdown(Small()),
            "| variant | samples/s | note |\n"
            "| --- | --: | --- |\n"
            "| baseline | 1050.0 |  |\n"
            "| bf16\\|x | 1800.5 | Δ ok |\n");
}

TEST(Table, CsvAndJsonKeepTypes) {
  DataTable d;
  d.columns = {"label", "n", "speedup"};
  d.rows = {{std::string("a,b"), int64_t{3}, 1.25}, {std::string("c"), int64_t{1}, store::Value{}}};
  EXPECT_EQ(RenderCsv(d), "label,n,speedup\r\n\"a,b\",3,1.25\r\nc,1,\r\n");
  EXPECT_EQ(ToJson(d).dump(), R"([{"label":"a,b","n":3,"speedup":1.25},{"label":"c","n":1,"speedup":null}])");
}

TEST(Table, FormatsByName) {
  EXPECT_EQ(ParseOutputFormat("markdown"), OutputFormat::kMarkdown);
  EXPECT_EQ(ParseOutputFormat("csv"), OutputFormat::kCsv);
  EXPECT_EQ(ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_EQ(ParseOutputFormat("table"), OutputFormat::kTable);
  EXPECT_EQ(ParseOutputFormat("html"), std::nullopt);
  EXPECT_EQ(FormatMs(117.2), "117.20");
  EXPECT_EQ(FormatMs(0.0123), "0.0123");
}

TEST(Table, BytesInBinaryUnits) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(121651), "118.8 KiB");
  EXPECT_EQ(FormatBytes(int64_t{3} << 29), "1.5 GiB");
}

VariantRow Row(const std::string& label, bool baseline, double samples_per_s) {
  VariantRow r;
  r.label = label;
  r.is_baseline = baseline;
  r.trials = r.ok_trials = 2;
  r.statuses = {{TrialStatus::kOk, 2}};
  r.step_ms_median = 10;
  r.step_ms_p10 = 9.5;
  r.step_ms_p90 = 10.5;
  r.samples_per_s = samples_per_s;
  return r;
}

TEST(Table, TheReportExportsInEveryFormat) {
  std::vector<VariantRow> rows = {Row("baseline", true, 100), Row("bf16", false, 150)};
  Ratio faster;
  faster.estimate = 1.5;
  faster.interval = RatioInterval{1.4, 1.6};
  faster.change = Change::kFaster;
  faster.processes_a = faster.processes_b = 2;
  rows[1].speedup = faster;
  rows[1].noise.reasons = {"repeats disagree (medians 2.20-3.79 ms, 72% apart > 10%)"};
  rows[1].noise.repeats = 2;
  const ReportContext context{7, "tiny"};
  EXPECT_EQ(ExportReport(rows, OutputFormat::kTable, context),
            RenderReport(rows) + "noise: bf16: repeats disagree (medians 2.20-3.79 ms, 72% apart > 10%)\n");
  EXPECT_NE(RenderReport(rows).find("1.50 (1.40-1.60) faster  unstable"), std::string::npos) << RenderReport(rows);
  const std::string md = ExportReport(rows, OutputFormat::kMarkdown, context);
  EXPECT_EQ(md.rfind("| variant | trials | step ms (p10-p90) | samples/s |", 0), 0u) << md;
  EXPECT_NE(md.find("| bf16 | 2/2 | 10.00 (9.50-10.50) | 150.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("|\n\n- noise: bf16: repeats disagree"), std::string::npos) << md;
  const std::string csv = ExportReport(rows, OutputFormat::kCsv, context);
  EXPECT_EQ(csv.rfind("label,is_baseline,trials,ok_trials,step_ms_median,", 0), 0u) << csv;
  const auto json = nlohmann::json::parse(ExportReport(rows, OutputFormat::kJson, context));
  EXPECT_EQ(json["run_id"], 7);
  EXPECT_EQ(json["experiment"], "tiny");
  ASSERT_EQ(json["variants"].size(), 2u);
  EXPECT_EQ(json["variants"][0]["speedup"], 1.0);
  EXPECT_EQ(json["variants"][1]["speedup_ci_low"], 1.4);
  EXPECT_EQ(json["variants"][1]["unstable"], 1);
}

}  // namespace
}  // namespace runx::report
