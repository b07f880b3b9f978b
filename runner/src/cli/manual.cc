// `runx completion bash` and `runx man`: the bash completion script and the manual page, both made
// from the command table's tree (cli/command_table.h), so neither can fall behind the commands.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "cli/command_table.h"
#include "version.h"

namespace runx::cli {
namespace {

std::vector<std::string> LongNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

/// The options of `app` that take a value (the completion then completes the value, not an option).
std::vector<std::string> ValueOptions(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options())
    if (opt->get_expected_max() != 0 && !opt->get_positional())
      for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  return names;
}

std::string Words(const std::vector<std::string>& words) { return fmt::format("{}", fmt::join(words, " ")); }

/// The completion of one command's words after its name: options, the values of OneOf options,
/// files elsewhere.
void CompleteCommand(const CLI::App& app, const std::string& path, std::string* out) {
  std::vector<std::string> options = LongNames(app);
  options.push_back("--help");
  std::string choices;
  for (const CLI::Option* opt : app.get_options()) {
    const auto values = ChoicesOf(*opt);
    if (values.empty()) continue;
    for (const auto& l : opt->get_lnames()) choices += fmt::format("      --{}) words=\"{}\" ;;\n", l, Words(values));
  }
  const std::vector<std::string> subs = ListedNames(app);
  *out += fmt::format("    \"{}\")\n", path);
  *out += fmt::format("      options=\"{}\"; subcommands=\"{}\"; takes_value=\" {} \"\n", Words(options), Words(subs),
                      Words(ValueOptions(app)));
  *out += "      case \"$prev\" in\n" + choices + "      esac ;;\n";
  for (const CLI::App* sub : ListedCommands(app)) CompleteCommand(*sub, path + " " + sub->get_name(), out);
}

/// roff text: backslashes and leading dots or quotes made literal.
std::string Roff(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\\' ? std::string("\\e") : c == '-' ? std::string("\\-") : std::string(1, c);
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string OptionLabel(const CLI::Option& opt) {
  std::vector<std::string> names;
  for (const auto& s : opt.get_snames()) names.push_back("-" + s);
  for (const auto& l : opt.get_lnames()) names.push_back("--" + l);
  std::string label = fmt::format("{}", fmt::join(names, ", "));
  if (opt.get_expected_max() != 0) {
    const auto choices = ChoicesOf(opt);
    // The value's type as --help names it ("TEXT", "INT"), or its choices.
    const std::string type = opt.get_type_name().substr(0, opt.get_type_name().find(':'));
    label += " " + (choices.empty() ? (type.empty() ? std::string("VALUE") : type)
                                    : fmt::format("{{{}}}", fmt::join(choices, "|")));
  }
  return label;
}

void ManCommand(const CLI::App& app, std::string* out) {
  *out += fmt::format(".SS {}\n{}\n", Roff(UsageOf(app)), Roff(app.get_description()));
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty() || opt->get_lnames() == std::vector<std::string>{"help"}) continue;
    std::string text = opt->get_description();
    if (!opt->get_default_str().empty()) text += fmt::format(" (default: {})", opt->get_default_str());
    if (opt->get_positional()) {
      *out += fmt::format(".TP\n.I {}\n{}{}\n", Roff(opt->get_name()), Roff(text),
                          opt->get_required() ? " (required)" : "");
    } else {
      *out += fmt::format(".TP\n.B {}\n{}\n", Roff(OptionLabel(*opt)), Roff(text));
    }
  }
  for (const CLI::App* sub : ListedCommands(app)) ManCommand(*sub, out);
}

}  // namespace

std::string BashCompletion(const CLI::App& root) {
  const std::vector<std::string> commands = ListedNames(root);
  std::string cases;
  for (const CLI::App* sub : ListedCommands(root)) CompleteCommand(*sub, sub->get_name(), &cases);
  return fmt::format(
      R"bash(# bash completion for runx, made by `runx completion bash` from runx {version}'s command table.
# Install: runx completion bash > ~/.local/share/bash-completion/completions/runx
_runx() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="" path="" i w skip=""
  (( COMP_CWORD > 0 )) && prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  local options="" subcommands="{commands}" takes_value="" words=""
  # The command path so far (runx data pack): words that name a subcommand, options and their
  # values skipped.
  for (( i = 1; i < COMP_CWORD; i++ )); do
    w="${{COMP_WORDS[i]}}"
    if [[ -n "$skip" ]]; then skip=""; continue; fi
    case "$w" in
      -*=*) ;;
      -*) [[ "$takes_value" == *" $w "* ]] && skip=1 ;;
      *) if [[ " $subcommands " == *" $w "* ]]; then path="${{path:+$path }}$w"; _runx_words "$path"; fi ;;
    esac
  done
  _runx_words "$path"
  if [[ -n "$words" ]]; then
    COMPREPLY=( $(compgen -W "$words" -- "$cur") )
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$options" -- "$cur") )
  elif [[ -z "$path" ]]; then
    COMPREPLY=( $(compgen -W "$subcommands" -- "$cur") $(compgen -f -X '!*.@(yaml|yml)' -- "$cur") $(compgen -d -- "$cur") )
  else
    COMPREPLY=( $(compgen -W "$subcommands" -- "$cur") $(compgen -f -- "$cur") )
  fi
  return 0
}}
# _runx_words PATH: sets options, subcommands and takes_value of the command PATH, and words to
# the values $prev accepts when it is an option with a fixed set of values.
_runx_words() {{
  words=""
  case "$1" in
    "")
      options="--help --version"; subcommands="{commands}"; takes_value="" ;;
{cases}  esac
}}
shopt -s extglob 2>/dev/null
complete -o filenames -o bashdefault -F _runx runx
)bash",
      fmt::arg("version", Version()), fmt::arg("commands", Words(commands)), fmt::arg("cases", cases));
}

std::string ManPage(const CLI::App& root) {
  std::string out = fmt::format(
      ".\\\" The manual page of runx, made by `runx man` from the command table.\n"
      ".TH RUNX 1 \"\" \"runx {}\" \"User Commands\"\n"
      ".SH NAME\nrunx \\- {}\n"
      ".SH SYNOPSIS\n.B runx\n.I FILE.yaml\n[\\fIOPTIONS\\fR]\n.br\n.B runx\n.I COMMAND\n[\\fIARGS\\fR]\n"
      ".SH DESCRIPTION\n"
      "runx expands a YAML experiment (model, data, precision, optimization techniques, a sweep over them) "
      "into trials, runs each in a child process on CUDA, MPS or the CPU through LibTorch, applies every "
      "technique through a plugin, and records timings, memory and quality metrics in a SQLite results "
      "store that \\fBrunx query\\fR reads with SQL. \\fBrunx FILE.yaml\\fR is \\fBrunx run FILE.yaml\\fR.\n"
      ".SH COMMANDS\n",
      Roff(Version()), Roff("declarative experiment runner for deep-learning performance work"));
  for (const CLI::App* sub : ListedCommands(root)) ManCommand(*sub, &out);
  out +=
      ".SH EXIT STATUS\n"
      ".TP\n.B 0\nok\n"
      ".TP\n.B 1\ncould not do it: a store or an output failed, a refused query, a failed gate "
      "(compare \\-\\-fail\\-on\\-regression), a trial not ok under run \\-\\-strict\n"
      ".TP\n.B 2\ninvalid input: the command line, a config, a run reference, a missing results store\n"
      ".TP\n.B 70\na bug in runx\n"
      ".TP\n.B 130\ninterrupted (SIGINT, SIGTERM or SIGHUP); the run is recorded as interrupted\n"
      ".SH ENVIRONMENT\n"
      ".TP\n.B RUNX_PLUGIN_PATH\nmore folders of technique plugins, separated by ':'\n"
      ".SH FILES\n"
      ".TP\n.I results/runx.db\nthe default results store (an experiment's \\fBresults\\fR key names another)\n"
      ".SH SEE ALSO\n"
      "The documentation in the source tree: README.md, docs/dsl.md, docs/techniques.md, docs/sql.md, "
      "docs/running.md.\n";
  return out;
}

}  // namespace runx::cli
