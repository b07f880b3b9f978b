// Declares a name that differs from its file stem.
#include "runx/plugin_export.h"

namespace {
class Nothing : public runx::Technique {};
}  // namespace

RUNX_PLUGIN(someone_else, "0.1.0", "misnamed", Nothing)
