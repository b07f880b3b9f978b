#include "models/model_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <sstream>
#include <stdexcept>

namespace runx::models {

void RequireModelFile(const std::string& kind, const std::string& path) {
  // stat/getcwd, not std::filesystem: pip's libtorch.so exports its own copies of libstdc++'s
  // filesystem symbols, which the dynamic linker may bind instead (see worker/child.cc).
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return;
  std::string where;
  char cwd[4096];
  if (!path.empty() && path[0] != '/' && ::getcwd(cwd, sizeof cwd))
    where = std::string(" (a relative path is taken from the working directory, ") + cwd + ")";
  throw std::invalid_argument(kind + " model '" + path + "' not found" + where);
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::ostringstream s;
  s << '[';
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << ']';
  return s.str();
}

}  // namespace runx::models
