#pragma once
/// A torch version's release, the part an AOTInductor package must share with the LibTorch that
/// loads it: "2.11.0+cu130" and "2.11.0a0+git1234" -> "2.11.0" (a local build or a CUDA variant is
/// the same release; a dev or rc suffix is not stripped, so it stays a release of its own). No
/// LibTorch here: the command line (runx compile) and the compiled_step plugin both compare with it.
#include <string>
#include <string_view>

namespace runx {

inline std::string TorchRelease(std::string_view version) {
  return std::string(version.substr(0, version.find_first_of("+a")));
}

}  // namespace runx
