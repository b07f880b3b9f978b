#pragma once
// The command table: every subcommand of runx, with its help line, its arguments and what runs
// it, declared once. `runx --help`, the command-line errors, `runx completion bash` and
// `runx man` are all made from it; adding a command is one entry in command_table.cc.
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace runx::cli {

/// What runs a command once its arguments are parsed (it holds them); returns the exit status.
using Handler = std::function<int()>;

struct Command {
  std::string name;
  std::string help;  ///< one line; empty for the internal `trial` (not listed anywhere)
  /// Declares the command's arguments on its CLI11 app and returns its handler. `words` are the
  /// whole command line as runx read it (after `runx FILE` became `runx run FILE`); they outlive
  /// the handler.
  std::function<Handler(CLI::App& app, const std::vector<std::string>& words)> define;
};

/// Every subcommand, in the order `runx --help` lists them.
const std::vector<Command>& Commands();

/// The exit statuses of every command (docs/running.md, the man page).
enum ExitStatus : int {
  kExitOk = 0,
  kExitFailed = 1,         ///< could not do it: a store or output failed, a refused query, a gate
  kExitInvalidInput = 2,   ///< the command line, a config, a reference or a missing store
  kExitInternal = 70,      ///< a bug in runx (EX_SOFTWARE)
  kExitInterrupted = 130,  ///< SIGINT, SIGTERM or SIGHUP
};

/// The whole command line made from the table: the root app (named runx) with one subcommand per
/// Command, and each subcommand's handler.
struct CommandLine {
  std::unique_ptr<CLI::App> app;
  std::vector<std::pair<CLI::App*, Handler>> handlers;
};
CommandLine MakeCommandLine(const std::vector<std::string>& words);

/// The values an option accepts when they are a fixed set (its OneOf check), else empty: the
/// completion offers them.
std::vector<std::string> ChoicesOf(const CLI::Option& option);

/// The subcommands of `app` that --help lists (every one but the internal `trial`), in table
/// order, and their names.
std::vector<const CLI::App*> ListedCommands(const CLI::App& app);
std::vector<std::string> ListedNames(const CLI::App& app);

/// The command's name after its parents' ("runx data pack"; "runx" for the root).
std::string CommandPath(const CLI::App& app);

/// The usage line of `app` ("runx compare [OPTIONS] A B"), without "Usage: ".
std::string UsageOf(const CLI::App& app);

/// `runx completion bash` and `runx man`: text made from MakeCommandLine's tree.
std::string BashCompletion(const CLI::App& root);
std::string ManPage(const CLI::App& root);

}  // namespace runx::cli
