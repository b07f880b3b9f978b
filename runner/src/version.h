#pragma once

#include <string>

namespace runx {
/// runx's own version (CMake project version) and the git sha it was built from.
const char* Version();
const char* GitSha();
/// 1 when the tree had uncommitted changes to tracked files at build time, 0 when clean, -1 unknown.
int GitDirty();
/// The source tree runx was built from (where tools/compile_step.py lies).
const char* SourceDir();
/// Where runx's shipped files lie (tools/compile_step.py, experiments/): P/share/runx for an
/// installed P/bin/runx, else the source tree it was built from.
std::string DataDir();
/// A tool runx runs or names to users, e.g. "compile_step.py": DataDir()/tools/NAME.
std::string ToolPath(const std::string& name);
/// The build type runx was compiled as (CMake's CMAKE_BUILD_TYPE).
std::string BuildType();
}  // namespace runx
