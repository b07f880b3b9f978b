#pragma once
/// Include this (once, in the plugin's .cc) to define the entry with RUNX_PLUGIN.
#include <boost/dll/alias.hpp>

#include "runx/plugin.h"
