#pragma once

// Where an installed runx finds what it ships (its plugins, share/runx): relative to its own
// executable, so that a tree copied by `cmake --install` to any prefix works without environment
// variables. A binary in the build tree has no such folders beside it and keeps the build's paths.
//
// POSIX calls, not std::filesystem (see files.h).

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace runx::base {

/// The folder of the running executable (from /proc/self/exe); "" where that cannot be read.
inline std::string ExecutableDir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  const std::string exe(buf, static_cast<size_t>(n));
  const size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash == 0 ? 1 : slash);
}

/// `relative` (as the install rules lay it out, e.g. "../lib/runx/plugins") taken from the
/// executable's folder, when that is a folder; "" otherwise (a build tree, a missing folder).
inline std::string DirBesideExecutable(const std::string& relative) {
  const std::string exe_dir = ExecutableDir();
  if (exe_dir.empty() || relative.empty()) return "";
  char resolved[PATH_MAX];
  if (realpath((exe_dir + "/" + relative).c_str(), resolved) == nullptr) return "";
  struct stat st {};
  return stat(resolved, &st) == 0 && S_ISDIR(st.st_mode) ? resolved : "";
}

}  // namespace runx::base
