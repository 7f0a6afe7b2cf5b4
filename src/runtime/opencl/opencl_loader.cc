/*
 * Licensed to the Apache Software Foundation (ASF) under one
 * or more contributor license agreements.  See the NOTICE file
 * distributed with this work for additional information
 * regarding copyright ownership.  The ASF licenses this file
 * to you under the Apache License, Version 2.0 (the
 * "License"); you may not use this file except in compliance
 * with the License.  You may obtain a copy of the License at
 *
 *   http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing,
 * software distributed under the License is distributed on an
 * "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
 * KIND, either express or implied.  See the License for the
 * specific language governing permissions and limitations
 * under the License.
 */
/*!
 * \file opencl_loader.cc
 * \brief dlopen-based loading of the OpenCL ICD loader and error reporting.
 */
#include "opencl_loader.h"

#include <dlfcn.h>
#include <tvm/ffi/error.h>

#include <mutex>

namespace tvm {
namespace runtime {
namespace cl {

namespace {

struct LoadState {
  Api api;
  bool ok = false;
  std::string why_not;
};

// Loaded once and kept for the life of the process: dlclose would invalidate objects that
// modules and tensors may still release during interpreter shutdown.
const LoadState& State() {
  static LoadState* state = [] {
    auto* s = new LoadState();
    // Only the versioned name: the unversioned .so exists only with -dev packages.
    void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* err = dlerror();
      s->why_not = std::string("libOpenCL.so.1 could not be loaded (") +
                   (err ? err : "unknown reason") + "); install an OpenCL ICD loader and driver";
      return s;
    }
#define TVM_OPENCL_RESOLVE_ENTRY(name)                                                   \
  s->api.name = reinterpret_cast<decltype(s->api.name)>(dlsym(lib, "cl" #name));         \
  if (s->api.name == nullptr) {                                                          \
    s->why_not = "libOpenCL.so.1 lacks the entry point cl" #name " (OpenCL 1.2 needed)"; \
    return s;                                                                            \
  }
    TVM_OPENCL_REQUIRED_API(TVM_OPENCL_RESOLVE_ENTRY)
#undef TVM_OPENCL_RESOLVE_ENTRY
    s->ok = true;
    return s;
  }();
  return *state;
}

}  // namespace

const Api* TryLoadApi(std::string* why_not) {
  const LoadState& s = State();
  if (!s.ok) {
    if (why_not) *why_not = s.why_not;
    return nullptr;
  }
  return &s.api;
}

const Api& GetApi() {
  const LoadState& s = State();
  if (!s.ok) TVM_FFI_THROW(RuntimeError) << "OpenCL is not available: " << s.why_not;
  return s.api;
}

const char* ErrorName(cl_int code) {
  switch (code) {
#define TVM_CL_ERR(x) \
  case x:             \
    return #x;
    TVM_CL_ERR(CL_SUCCESS)
    TVM_CL_ERR(CL_DEVICE_NOT_FOUND)
    TVM_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    TVM_CL_ERR(CL_COMPILER_NOT_AVAILABLE)
    TVM_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TVM_CL_ERR(CL_OUT_OF_RESOURCES)
    TVM_CL_ERR(CL_OUT_OF_HOST_MEMORY)
    TVM_CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE)
    TVM_CL_ERR(CL_MEM_COPY_OVERLAP)
    TVM_CL_ERR(CL_IMAGE_FORMAT_MISMATCH)
    TVM_CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    TVM_CL_ERR(CL_BUILD_PROGRAM_FAILURE)
    TVM_CL_ERR(CL_MAP_FAILURE)
    TVM_CL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    TVM_CL_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    TVM_CL_ERR(CL_COMPILE_PROGRAM_FAILURE)
    TVM_CL_ERR(CL_LINKER_NOT_AVAILABLE)
    TVM_CL_ERR(CL_LINK_PROGRAM_FAILURE)
    TVM_CL_ERR(CL_DEVICE_PARTITION_FAILED)
    TVM_CL_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    TVM_CL_ERR(CL_INVALID_VALUE)
    TVM_CL_ERR(CL_INVALID_DEVICE_TYPE)
    TVM_CL_ERR(CL_INVALID_PLATFORM)
    TVM_CL_ERR(CL_INVALID_DEVICE)
    TVM_CL_ERR(CL_INVALID_CONTEXT)
    TVM_CL_ERR(CL_INVALID_QUEUE_PROPERTIES)
    TVM_CL_ERR(CL_INVALID_COMMAND_QUEUE)
    TVM_CL_ERR(CL_INVALID_HOST_PTR)
    TVM_CL_ERR(CL_INVALID_MEM_OBJECT)
    TVM_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    TVM_CL_ERR(CL_INVALID_IMAGE_SIZE)
    TVM_CL_ERR(CL_INVALID_SAMPLER)
    TVM_CL_ERR(CL_INVALID_BINARY)
    TVM_CL_ERR(CL_INVALID_BUILD_OPTIONS)
    TVM_CL_ERR(CL_INVALID_PROGRAM)
    TVM_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    TVM_CL_ERR(CL_INVALID_KERNEL_NAME)
    TVM_CL_ERR(CL_INVALID_KERNEL_DEFINITION)
    TVM_CL_ERR(CL_INVALID_KERNEL)
    TVM_CL_ERR(CL_INVALID_ARG_INDEX)
    TVM_CL_ERR(CL_INVALID_ARG_VALUE)
    TVM_CL_ERR(CL_INVALID_ARG_SIZE)
    TVM_CL_ERR(CL_INVALID_KERNEL_ARGS)
    TVM_CL_ERR(CL_INVALID_WORK_DIMENSION)
    TVM_CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    TVM_CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
    TVM_CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    TVM_CL_ERR(CL_INVALID_EVENT_WAIT_LIST)
    TVM_CL_ERR(CL_INVALID_EVENT)
    TVM_CL_ERR(CL_INVALID_OPERATION)
    TVM_CL_ERR(CL_INVALID_GL_OBJECT)
    TVM_CL_ERR(CL_INVALID_BUFFER_SIZE)
    TVM_CL_ERR(CL_INVALID_MIP_LEVEL)
    TVM_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
    TVM_CL_ERR(CL_INVALID_PROPERTY)
    TVM_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR)
    TVM_CL_ERR(CL_INVALID_COMPILER_OPTIONS)
    TVM_CL_ERR(CL_INVALID_LINKER_OPTIONS)
    TVM_CL_ERR(CL_INVALID_DEVICE_PARTITION_COUNT)
    TVM_CL_ERR(CL_INVALID_PIPE_SIZE)
    TVM_CL_ERR(CL_INVALID_DEVICE_QUEUE)
    TVM_CL_ERR(CL_INVALID_SPEC_ID)
    TVM_CL_ERR(CL_MAX_SIZE_RESTRICTION_EXCEEDED)
#undef TVM_CL_ERR
    case -1001:  // CL_PLATFORM_NOT_FOUND_KHR, from the ICD loader
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "CL_UNKNOWN_ERROR";
  }
}

void ThrowError(cl_int code, const char* function, const std::string& what) {
  TVM_FFI_THROW(RuntimeError) << "OpenCL error " << ErrorName(code) << " (" << code << ") in "
                              << function << " while " << what;
  TVM_FFI_UNREACHABLE();
}

}  // namespace cl
}  // namespace runtime
}  // namespace tvm
