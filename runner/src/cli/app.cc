// cli::Main: the words of the command line -> a command of the table (cli/command_table.h) -> its
// exit status. A mistyped command, option or option value is an error as good as a config
// error: `runx: error: ...`, the closest name, and where to read more; exit status 2.
#include <cctype>
#include <filesystem>
#include <optional>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "base/spelling.h"
#include "base/terminal.h"
#include "cli/command_table.h"
#include "cli/commands.h"

namespace runx::cli {
namespace {

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

const CLI::App* SubcommandNamed(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

/// Every name an option of `app` answers to, dashes included ("--format", "-o").
std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

/// Prints `runx: error: MESSAGE` and the lines of `notes`; returns kExitInvalidInput.
int UsageError(const std::string& message, const std::vector<std::string>& notes) {
  fmt::print(stderr, "runx: error: {}\n", base::Printable(message));
  for (const auto& n : notes) fmt::print(stderr, "{}\n", base::PrintableLines(n));
  return kExitInvalidInput;
}

std::string HelpHint(const CLI::App& app) {
  return fmt::format("usage: {}\n'{} --help' describes {}", UsageOf(app), CommandPath(app),
                     app.get_parent() == nullptr ? "the commands" : "its options");
}

std::string Quoted(const std::string& word) { return "'" + word + "'"; }

/// The command and option names the command line uses, checked before CLI11 parses it so that a
/// mistyped name gets the closest known one. Returns the exit status of an error, or nothing.
std::optional<int> CheckNames(const CLI::App& root, const std::vector<std::string>& words) {
  const CLI::App* app = &root;
  for (const std::string& word : words) {
    if (word == "--") break;
    if (word.size() > 1 && word[0] == '-' && !(std::isdigit(static_cast<unsigned char>(word[1])) || word[1] == '.')) {
      const std::string name = word.substr(0, word.find('='));
      if (app->get_option_no_throw(name) != nullptr || name == "--help" || name == "-h") continue;
      if (app == &root && name == "--version") continue;
      std::string message = fmt::format("unknown option {}", Quoted(name));
      if (app != &root) message += fmt::format(" for '{}'", CommandPath(*app));
      const std::string guess = base::SuggestName(name, OptionNames(*app));
      if (!guess.empty()) message += fmt::format("; did you mean {}?", Quoted(guess));
      return UsageError(message, {HelpHint(*app)});
    }
    // A word naming a subcommand of the current command goes one level down (runx data pack).
    if (const CLI::App* sub = SubcommandNamed(*app, word)) app = sub;
  }
  return std::nullopt;
}

/// The first word: a command, an option of runx itself, or an experiment file (`runx FILE` is
/// `runx run FILE`: a path that exists or ends in .yaml/.yml). Anything else is a mistyped
/// command. Returns the exit status of an error, or nothing.
std::optional<int> Normalize(const CLI::App& root, std::vector<std::string>& words) {
  const std::string commands = fmt::format("{}", fmt::join(ListedNames(root), ", "));
  if (words.empty()) {
    return UsageError("no command given",
                      {"usage: runx FILE.yaml [OPTIONS]     run an experiment (the same as runx run FILE.yaml)",
                       "       runx COMMAND [ARGS...]       COMMAND: " + commands,
                       "'runx --help' describes the commands, 'runx COMMAND --help' one of them"});
  }
  const std::string& first = words[0];
  if (first[0] == '-' || SubcommandNamed(root, first) != nullptr) return std::nullopt;
  std::error_code ec;
  if (std::filesystem::exists(first, ec) || EndsWith(first, ".yaml") || EndsWith(first, ".yml")) {
    words.insert(words.begin(), "run");
    return std::nullopt;
  }
  std::string message = fmt::format("unknown command {}", Quoted(first));
  const std::string guess = base::SuggestName(first, ListedNames(root));
  if (!guess.empty()) message += fmt::format("; did you mean {}?", Quoted(guess));
  return UsageError(message, {"runx FILE.yaml runs an experiment file; the commands are: " + commands,
                              "'runx --help' describes them"});
}

/// The deepest command the parse selected (runx data pack: pack).
const CLI::App* Selected(const CLI::App& root) {
  const CLI::App* app = &root;
  for (;;) {
    const auto chosen = app->get_subcommands();
    if (chosen.empty()) return app;
    app = chosen.front();
  }
}

/// CLI11's message in runx's words: "B is required" -> "missing argument 'B'"; "Could not
/// convert: ..." -> "could not convert: ..." (a word, not a name, loses its capital).
std::string Reworded(std::string s) {
  const std::string required = " is required";
  if (EndsWith(s, required) && s.find(' ') == s.size() - required.size()) {
    const std::string name = s.substr(0, s.size() - required.size());
    return fmt::format("missing {} '{}'", name[0] == '-' ? "option" : "argument", name);
  }
  if (s.size() > 1 && std::isupper(static_cast<unsigned char>(s[0])) && std::islower(static_cast<unsigned char>(s[1])))
    s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace

namespace {
std::vector<std::string>& Arguments() {
  static std::vector<std::string> arguments;
  return arguments;
}
}  // namespace

const std::vector<std::string>& ProcessArguments() { return Arguments(); }

int Main(int argc, char** argv) {
  Arguments().assign(argv + 1, argv + argc);
  std::vector<std::string> words(argv + 1, argv + argc);
  CommandLine line = MakeCommandLine(words);
  CLI::App& app = *line.app;
  if (const auto status = Normalize(app, words)) return *status;
  const bool internal = words[0] == "trial" || words[0] == "prepare";  // runx's own: its arguments are runx's
  if (!internal) {
    if (const auto status = CheckNames(app, words)) return *status;
  }
  std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11 takes them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {  // --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const CLI::App* at = Selected(app);
    if (at->get_require_subcommand_min() > 0 && at->get_subcommands().empty() && at != &app)
      return UsageError(fmt::format("'{}' needs a command: {}", CommandPath(*at), fmt::join(ListedNames(*at), ", ")),
                        {HelpHint(*at)});
    return UsageError(Reworded(e.what()), {HelpHint(*at)});
  }
  const CLI::App* at = Selected(app);
  if (const auto extra = at->remaining(); !extra.empty())
    return UsageError(fmt::format("unexpected argument {}{}", Quoted(extra.front()),
                                  extra.size() > 1 ? fmt::format(" (and {} more)", extra.size() - 1) : ""),
                      {HelpHint(*at)});
  for (const auto& [sub, handler] : line.handlers)
    if (sub->parsed()) return handler();
  return kExitInvalidInput;
}

}  // namespace runx::cli
