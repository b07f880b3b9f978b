// The command line as a newcomer meets it (issue 33), through the real runx binary: mistyped
// commands, options, option values and experiment names get whole messages as good as the
// config errors (one prefix, the closest name, where to read more), one exit-status table,
// machine-readable doctor and plugins, and the completion and manual page made from the command
// table.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../remove_tree.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;

using runx::testing::Result;
using runx::testing::Runx;
using runx::testing::Shell;

const std::string kCommands =
    "run, validate, plan, query, compare, history, report, merge, submit, compile, verify, data, doctor, plugins, "
    "completion, man";

class Usage : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_usage_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
  }
  void TearDown() override { runx::testing::RemoveTree(dir_.string()); }

  /// One quick run of experiment `name` (synthetic data, a few steps) into db_.
  void RunTiny(const std::string& name) {
    const fs::path file = dir_ / (name + ".yaml");
    std::ofstream(file) << "name: " << name << "\n"
                        << "device: cpu\n"
                           "results: "
                        << db_
                        << "\n"
                           "model: {name: mlp, hidden: [8]}\n"
                           "data: {source: synthetic, shape: [1, 4, 4], num_classes: 3, batch_size: 4}\n"
                           "train: {steps: 3, warmup_steps: 1}\n";
    const Result r = Runx("run -q " + file.string());
    ASSERT_EQ(r.status, 0) << r.out;
  }
  fs::path dir_;
  std::string db_;
};

TEST_F(Usage, NoCommandSaysHowToStart) {
  const Result r = Runx("");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "runx: error: no command given\n"
            "usage: runx FILE.yaml [OPTIONS]     run an experiment (the same as runx run FILE.yaml)\n"
            "       runx COMMAND [ARGS...]       COMMAND: " +
                kCommands +
                "\n"
                "'runx --help' describes the commands, 'runx COMMAND --help' one of them\n");
}

TEST_F(Usage, AMistypedCommandIsNotReadAsAFile) {
  const std::string tail =
      "runx FILE.yaml runs an experiment file; the commands are: " + kCommands + "\n'runx --help' describes them\n";
  Result r = Runx("hist");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "runx: error: unknown command 'hist'; did you mean 'history'?\n" + tail);
  r = Runx("comapre previous latest");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "runx: error: unknown command 'comapre'; did you mean 'compare'?\n" + tail);
  r = Runx("xyzzy");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "runx: error: unknown command 'xyzzy'\n" + tail);
  // A word that is a file, or ends in .yaml, is still `runx run FILE`.
  r = Runx("missing.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.rfind("missing.yaml: error: cannot read file", 0), 0u) << r.out;
  std::ofstream(dir_ / "exp") << "name: [\n";
  r = Runx((dir_ / "exp").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.rfind((dir_ / "exp").string() + ":", 0), 0u) << r.out;
}

TEST_F(Usage, AMistypedOptionGetsTheClosestOneOfItsCommand) {
  Result r = Runx("compare previous latest --treshold 5%");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "runx: error: unknown option '--treshold' for 'runx compare'; did you mean '--threshold'?\n"
            "usage: runx compare [OPTIONS] A B\n"
            "'runx compare --help' describes its options\n");
  r = Runx("history --limt=3");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "runx: error: unknown option '--limt' for 'runx history'; did you mean '--limit'?\n"
            "usage: runx history [OPTIONS] [experiment]\n"
            "'runx history --help' describes its options\n");
  r = Runx("data pack --ot x");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.rfind("runx: error: unknown option '--ot' for 'runx data pack'; did you mean '--out'?\n", 0), 0u)
      << r.out;
  r = Runx("--verison");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.rfind("runx: error: unknown option '--verison'; did you mean '--version'?\n", 0), 0u) << r.out;
}

TEST_F(Usage, AMistypedValueGetsTheClosestChoice) {
  const Result r = Runx("history --format jsn");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "runx: error: --format: 'jsn' is not one of table, csv, json, markdown; did you mean 'json'?\n"
            "usage: runx history [OPTIONS] [experiment]\n"
            "'runx history --help' describes its options\n");
}

TEST_F(Usage, ArgumentsMissingOrTooManyAreUsageErrors) {
  Result r = Runx("compare a b c");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "runx: error: unexpected argument 'c'\n"
            "usage: runx compare [OPTIONS] A B\n"
            "'runx compare --help' describes its options\n");
  r = Runx("compare a");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "runx: error: missing argument 'B'\n"
            "usage: runx compare [OPTIONS] A B\n"
            "'runx compare --help' describes its options\n");
  r = Runx("data");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "runx: error: 'runx data' needs a command: pack\n"
            "usage: runx data [OPTIONS] SUBCOMMAND\n"
            "'runx data --help' describes its options\n");
}

TEST_F(Usage, HelpNamesTheProgram) {
  Result r = Runx("run --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("Usage: runx run [OPTIONS] file\n"), std::string::npos) << r.out;
  r = Runx("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("Usage: runx [OPTIONS] SUBCOMMAND\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("runx FILE.yaml [OPTIONS] is runx run FILE.yaml [OPTIONS]."), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\n  trial "), std::string::npos) << "the internal command is not listed\n" << r.out;
  EXPECT_NE(r.out.find("\n  history "), std::string::npos) << r.out;
}

TEST_F(Usage, AMissingStoreIsInvalidInputForEveryReader) {
  const std::string missing = (dir_ / "none.db").string();
  Result r = Runx("query 'SELECT 1' --db " + missing);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "runx: error: no results store at '" + missing + "'; run an experiment first (or pass --db PATH)\n");
  for (const std::string& command : {"history --db ", "compare latest previous --db ", "report -o x.html --db "}) {
    r = Runx(command + missing);
    EXPECT_EQ(r.status, 2) << command << r.out;
    EXPECT_EQ(r.out.rfind("runx: error: no results store at '" + missing + "'", 0), 0u) << command << r.out;
  }
}

TEST_F(Usage, MistypedExperimentsAndReferencesGetTheClosestName) {
  RunTiny("quickstart");
  RunTiny("gpt-text");
  Result r = Runx("history quikstart --db " + db_);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "runx: error: no run of experiment 'quikstart' in '" + db_ + "'; did you mean 'quickstart'?\n");
  r = Runx("history nothing-like-it --db " + db_);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "runx: error: no run of experiment 'nothing-like-it' in '" + db_ +
                       "' (its experiments: gpt-text, quickstart)\n");
  r = Runx("compare latest previous --experiment gpt-txt --db " + db_);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "runx: error: no run of experiment 'gpt-txt' in '" + db_ + "'; did you mean 'gpt-text'?\n");
  r = Runx("compare latset latest --db " + db_);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("'latset' is not a run: expected a run id"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; did you mean 'latest'?\n"), std::string::npos) << r.out;
}

TEST_F(Usage, QueryWritesMarkdown) {
  RunTiny("quickstart");
  const Result r =
      Runx("query --format markdown --db " + db_ + " \"SELECT name, 2 AS two FROM experiments ORDER BY name\"");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "| name | two |\n| --- | ---: |\n| quickstart | 2 |\n");
}

TEST_F(Usage, DoctorAndPluginsSpeakJson) {
  Result r = Shell(std::string(RUNX_BIN) + " doctor --format json 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto doctor = nlohmann::json::parse(r.out);
  for (const char* key : {"runx", "LibTorch", "OS", "CPU", "BLAS", "CUDA", "device: auto", "plugins", "warnings"})
    EXPECT_TRUE(doctor.contains(key)) << key << "\n" << r.out;
  EXPECT_FALSE(doctor["device: auto"].get<std::string>().empty()) << r.out;  // cpu here, cuda:0 on a GPU machine
  r = Shell(std::string(RUNX_BIN) + " plugins --format json 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto plugins = nlohmann::json::parse(r.out);
  std::vector<std::string> names;
  for (const auto& p : plugins["plugins"]) names.push_back(p["name"]);
  for (const char* name : {"amp", "channels_last", "fused_optimizer", "cuda_graphs", "compiled_step"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name << "\n" << r.out;
  EXPECT_FALSE(plugins["searched"].empty());
  // The table stays the default.
  r = Runx("plugins");
  EXPECT_EQ(r.out.rfind("name              version   api   libtorch  description\n", 0), 0u) << r.out;
}

// runx links no LibTorch (docs/design.md, "Two binaries"): the readers start without it, and the
// commands that run LibTorch are handed to runx-worker, whose absence is a clear error for those
// commands only.
TEST_F(Usage, RunxLinksNoLibTorchAndHandsItsCommandsToTheWorker) {
  Result r = Shell("readelf -d " + std::string(RUNX_BIN) + " | grep NEEDED");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("libsqlite3"), std::string::npos) << r.out;  // the store is linked...
  for (const char* lib : {"torch", "c10", "libboost", "libgomp"})   // ...LibTorch and the plugin loader are not
    EXPECT_EQ(r.out.find(lib), std::string::npos) << lib << " is linked into runx:\n" << r.out;
  r = Shell("readelf -d " + std::string(RUNX_BIN) + "-worker | grep NEEDED");
  EXPECT_NE(r.out.find("torch"), std::string::npos) << r.out;

  RunTiny("quickstart");  // through the worker
  const std::string no_worker = "RUNX_WORKER=" + (dir_ / "no-such-worker").string() + " " + RUNX_BIN;
  r = Shell(no_worker + " query --db " + db_ + " \"SELECT count(*) AS n FROM trials\" --format csv 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "n\r\n1\r\n");  // CSV ends its lines with CRLF (RFC 4180)
  for (const std::string& command :
       std::vector<std::string>{"doctor", "plugins", "run -q " + (dir_ / "quickstart.yaml").string()}) {
    r = Shell(no_worker + " " + command + " 2>&1");
    EXPECT_EQ(r.status, 1) << command << ": " << r.out;
    EXPECT_NE(r.out.find("runx: error: cannot start the runx worker '" + (dir_ / "no-such-worker").string() +
                         "': No such file or directory"),
              std::string::npos)
        << command << ": " << r.out;
  }
}

TEST_F(Usage, RunSpeaksJsonByEitherSpelling) {
  const fs::path file = dir_ / "tiny.yaml";
  std::ofstream(file) << "name: tiny\ndevice: cpu\nresults: " << db_
                      << "\nmodel: {name: mlp, hidden: [8]}\n"
                         "data: {source: synthetic, shape: [1, 4, 4], num_classes: 3, batch_size: 4}\n"
                         "train: {steps: 3, warmup_steps: 1}\n";
  for (const std::string& spelling : {"--format json", "--json"}) {
    const Result r = Shell(std::string(RUNX_BIN) + " run --force " + spelling + " " + file.string() + " 2>/dev/null");
    ASSERT_EQ(r.status, 0) << spelling << r.out;
    size_t lines = 0;
    for (size_t at = 0; at < r.out.size(); at = r.out.find('\n', at) + 1, ++lines)
      EXPECT_TRUE(nlohmann::json::accept(r.out.substr(at, r.out.find('\n', at) - at))) << spelling << r.out;
    EXPECT_GT(lines, 2u) << spelling << r.out;
  }
}

/// The words bash's completion offers after `line` (the last word is the one being completed),
/// in the folder `cwd` (files there are offered too).
std::string Complete(const std::string& line, const fs::path& cwd) {
  const std::string script = "source <(" + std::string(RUNX_BIN) + " completion bash) && COMP_WORDS=(" + line +
                             ") && COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )) && _runx && echo \"${COMPREPLY[*]}\"";
  const Result r = Shell("cd " + cwd.string() + " && bash -c '" + script + "'");
  return r.status == 0 ? r.out : "exit " + std::to_string(r.status) + ": " + r.out;
}

TEST_F(Usage, BashCompletionComesFromTheCommandTable) {
  EXPECT_EQ(Complete("runx hi", dir_), "history\n");
  EXPECT_EQ(Complete("runx co", dir_), "compare compile completion\n");
  EXPECT_EQ(Complete("runx compare --th", dir_), "--threshold\n");
  EXPECT_EQ(Complete("runx compare --format \"\"", dir_), "table csv json markdown\n");
  EXPECT_EQ(Complete("runx doctor --format \"\"", dir_), "table json\n");
  EXPECT_EQ(Complete("runx data pa", dir_), "pack\n");
  EXPECT_EQ(Complete("runx data pack --sou", dir_), "--source\n");
  EXPECT_EQ(Complete("runx data pack --source \"\"", dir_), "fashion-mnist synthetic\n");
  // An option's value is not taken for a command: `--db history` then completes run's options.
  EXPECT_EQ(Complete("runx run --db history --for", dir_), "--format --force\n");
}

TEST_F(Usage, TheManualPageListsEveryCommandAndOption) {
  const Result r = Runx("man");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(".TH RUNX 1 "), std::string::npos);
  for (const std::string& command : {"run", "validate", "plan", "query", "compare", "history", "report", "merge",
                                     "submit", "compile", "verify", "data pack", "doctor", "plugins", "completion"})
    EXPECT_NE(r.out.find(".SS runx " + command + " "), std::string::npos) << command;
  EXPECT_NE(r.out.find(".B \\-\\-threshold TEXT\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".B \\-\\-limit INT\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".B \\-\\-force\n"), std::string::npos) << "a flag takes no value\n" << r.out;
  EXPECT_NE(r.out.find(".B \\-\\-format {table|csv|json|markdown}\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".SH EXIT STATUS\n"), std::string::npos);
  EXPECT_EQ(r.out.find("runx trial"), std::string::npos) << "the internal command is not in the manual";
  // Where man(1) is installed, the page renders without a warning.
  if (Shell("command -v man").status == 0) {
    const Result page =
        Shell("cd /tmp && " + std::string(RUNX_BIN) + " man | MANWIDTH=100 man --warnings -l - 2>&1 >/dev/null");
    EXPECT_EQ(page.out, "") << page.out;
  }
}

}  // namespace
