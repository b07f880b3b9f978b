// Compiled only to produce the shared precompiled LibTorch header (see RunxDeps.cmake).
