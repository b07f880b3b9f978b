#include <cstdio>
#include <cstring>

#include "cli/commands.h"
#include "cli/fatal_signal.h"

int main(int argc, char** argv) {
  // A crash of runx itself prints where it happened (cli/fatal_signal.h); a trial child's crash
  // is a result, which its parent records.
  const bool trial_child = argc > 1 && std::strcmp(argv[1], "trial") == 0;
  if (!trial_child) runx::cli::InstallFatalSignalHandler("runx");
  try {
    return runx::cli::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runx: internal error: %s\n", e.what());
    return 70;
  }
}
