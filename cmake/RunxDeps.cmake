# Every third-party dependency, found once, exposed as imported targets.
find_package(Torch REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(SQLiteCpp REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(valijson REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Boost 1.81 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(Threads REQUIRED)

# LibTorch as a proper target (its config only sets variables).
add_library(runx_torch INTERFACE)
target_link_libraries(runx_torch INTERFACE ${TORCH_LIBRARIES})
separate_arguments(RUNX_TORCH_CXX_FLAGS UNIX_COMMAND "${TORCH_CXX_FLAGS}")
target_compile_options(runx_torch INTERFACE ${RUNX_TORCH_CXX_FLAGS})
target_include_directories(runx_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
if(TORCH_CUDA_LIBRARIES)
  set(RUNX_WITH_CUDA ON)
  target_compile_definitions(runx_torch INTERFACE RUNX_WITH_CUDA=1)
  # nccl.h, which c10d's ProcessGroupNCCL.hpp includes (data_parallel's NCCL backend): a system or
  # CUDA toolkit copy, or pip's nvidia-nccl wheel beside pip's torch (Torch_DIR is
  # <site-packages>/torch/share/cmake/Torch). Without it data_parallel offers Gloo only.
  get_filename_component(_runx_site "${Torch_DIR}/../../../.." ABSOLUTE)
  find_path(RUNX_NCCL_INCLUDE_DIR nccl.h HINTS ${_runx_site}/nvidia/nccl/include /usr/local/cuda/include)
  if(RUNX_NCCL_INCLUDE_DIR)
    target_include_directories(runx_torch SYSTEM INTERFACE ${RUNX_NCCL_INCLUDE_DIR})
  endif()
  message(STATUS "runx: nccl.h (data_parallel's NCCL backend): ${RUNX_NCCL_INCLUDE_DIR}")
endif()
message(STATUS "runx: LibTorch ${Torch_VERSION}, CUDA support: ${RUNX_WITH_CUDA}")

# fmt header-only (libfmt-dev's headers; no library, no CMake package: its config wants the
# shared libfmt). LibTorch 2.x bundles fmt 12 headers that shadow Debian's fmt 9 where both are on
# the include path, so runx uses only the API both have.
find_path(RUNX_FMT_INCLUDE_DIR fmt/format.h REQUIRED)
add_library(runx_fmt INTERFACE)
target_compile_definitions(runx_fmt INTERFACE FMT_HEADER_ONLY=1)

# Boost.DLL header-only with std::filesystem.
add_library(runx_boost_dll INTERFACE)
target_link_libraries(runx_boost_dll INTERFACE Boost::headers ${CMAKE_DL_LIBS})
target_compile_definitions(runx_boost_dll INTERFACE BOOST_DLL_USE_STD_FS=1)

# One precompiled <torch/torch.h>, shared by every target that includes LibTorch (runx_use_pch).
# On 2 cores this saves most of the build: each TU that includes torch.h otherwise parses ~250k lines.
if(RUNX_USE_PCH)
  add_library(runx_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/pch.cc)
  target_link_libraries(runx_pch PRIVATE runx_torch runx_boost_dll nlohmann_json::nlohmann_json)
  target_precompile_headers(runx_pch PRIVATE <torch/torch.h>)
  target_compile_options(runx_pch PUBLIC -Winvalid-pch)
endif()
function(runx_use_pch target)
  if(RUNX_USE_PCH)
    target_precompile_headers(${target} REUSE_FROM runx_pch)
    # The header was compiled -fPIC (a library); executables default to -fPIE, which gcc
    # refuses to mix with it. PIC code links into a PIE executable just as well.
    get_target_property(_type ${target} TYPE)
    if(_type STREQUAL "EXECUTABLE")
      target_compile_options(${target} PRIVATE -fPIC)
    endif()
  endif()
endfunction()
