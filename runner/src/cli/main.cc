#include "cli/commands.h"

int main(int argc, char** argv) { return runx::cli::Main(argc, argv); }
