// A shared library with no runx entry at all.
extern "C" __attribute__((visibility("default"))) int not_a_runx_plugin() { return 42; }
