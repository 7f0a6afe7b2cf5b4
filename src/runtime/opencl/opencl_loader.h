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
 * \file opencl_loader.h
 * \brief Lazily loaded OpenCL entry points, error names, checked calls and RAII owners.
 *
 * The library must load where no ICD loader is installed (import tvm must keep working), so it
 * never links libOpenCL: the entry points are resolved with dlopen("libOpenCL.so.1") the first
 * time OpenCL is used. CL/cl.h is only used for types, constants and prototypes (decltype).
 */
#ifndef TVM_RUNTIME_OPENCL_OPENCL_LOADER_H_
#define TVM_RUNTIME_OPENCL_OPENCL_LOADER_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <string>
#include <utility>

namespace tvm {
namespace runtime {
namespace cl {

// Every entry point we use. Required ones must resolve or the loader reports "not usable".
#define TVM_OPENCL_REQUIRED_API(X) \
  X(GetPlatformIDs)                \
  X(GetPlatformInfo)               \
  X(GetDeviceIDs)                  \
  X(GetDeviceInfo)                 \
  X(CreateContext)                 \
  X(ReleaseContext)                \
  X(CreateCommandQueue)            \
  X(ReleaseCommandQueue)           \
  X(CreateBuffer)                  \
  X(CreateImage)                   \
  X(ReleaseMemObject)              \
  X(EnqueueReadBuffer)             \
  X(EnqueueWriteBuffer)            \
  X(EnqueueCopyBuffer)             \
  X(EnqueueReadImage)              \
  X(EnqueueWriteImage)             \
  X(EnqueueCopyImage)              \
  X(EnqueueCopyImageToBuffer)      \
  X(EnqueueCopyBufferToImage)      \
  X(Finish)                        \
  X(Flush)                         \
  X(CreateProgramWithSource)       \
  X(CreateProgramWithBinary)       \
  X(BuildProgram)                  \
  X(GetProgramInfo)                \
  X(GetProgramBuildInfo)           \
  X(ReleaseProgram)                \
  X(CreateKernel)                  \
  X(ReleaseKernel)                 \
  X(SetKernelArg)                  \
  X(EnqueueNDRangeKernel)          \
  X(EnqueueMarkerWithWaitList)     \
  X(RetainEvent)                   \
  X(ReleaseEvent)                  \
  X(WaitForEvents)                 \
  X(GetEventProfilingInfo)

/*! \brief Table of resolved OpenCL entry points. */
struct Api {
#define TVM_OPENCL_DECLARE_ENTRY(name) decltype(&::cl##name) name = nullptr;
  TVM_OPENCL_REQUIRED_API(TVM_OPENCL_DECLARE_ENTRY)
#undef TVM_OPENCL_DECLARE_ENTRY
};

/*!
 * \brief The entry points, loading libOpenCL.so.1 on first use (thread-safe, once).
 * \return nullptr when unavailable; *why_not then says why (never throws).
 */
const Api* TryLoadApi(std::string* why_not);

/*! \brief The entry points; throws one clear line when OpenCL cannot be loaded. */
const Api& GetApi();

/*! \brief Name of an OpenCL error code, e.g. "CL_INVALID_IMAGE_SIZE". */
const char* ErrorName(cl_int code);

/*! \brief Throws "OpenCL error CL_X (code) in clFn while <what>". */
[[noreturn]] void ThrowError(cl_int code, const char* function, const std::string& what);

inline void Check(cl_int code, const char* function, const std::string& what) {
  if (code != CL_SUCCESS) ThrowError(code, function, what);
}

}  // namespace cl
}  // namespace runtime
}  // namespace tvm

/*!
 * \brief Call an OpenCL entry point and throw with its error name on failure.
 * Example: TVM_CL_CALL(Finish, "waiting for the queue", queue);
 */
#define TVM_CL_CALL(fn, what, ...) \
  ::tvm::runtime::cl::Check(::tvm::runtime::cl::GetApi().fn(__VA_ARGS__), "cl" #fn, (what))

namespace tvm {
namespace runtime {
namespace cl {

/*! \brief How each OpenCL object kind is released. */
template <typename T>
struct Releaser;
template <>
struct Releaser<cl_mem> {
  static void Release(cl_mem h) { GetApi().ReleaseMemObject(h); }
};
template <>
struct Releaser<cl_program> {
  static void Release(cl_program h) { GetApi().ReleaseProgram(h); }
};
template <>
struct Releaser<cl_kernel> {
  static void Release(cl_kernel h) { GetApi().ReleaseKernel(h); }
};
template <>
struct Releaser<cl_command_queue> {
  static void Release(cl_command_queue h) { GetApi().ReleaseCommandQueue(h); }
};
template <>
struct Releaser<cl_context> {
  static void Release(cl_context h) { GetApi().ReleaseContext(h); }
};
template <>
struct Releaser<cl_event> {
  static void Release(cl_event h) { GetApi().ReleaseEvent(h); }
};

/*!
 * \brief Sole owner of one OpenCL object (move-only).
 *
 * Holds exactly one pointer-sized member, so the address of a Handle<cl_mem> is the address of
 * its cl_mem: the kernel launcher relies on that (see MemObject in opencl_common.h).
 * Release errors are ignored: destructors cannot throw, and a failed release only leaks.
 */
template <typename T>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T h) : h_(h) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : h_(other.h_) { other.h_ = nullptr; }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      h_ = other.h_;
      other.h_ = nullptr;
    }
    return *this;
  }
  ~Handle() { reset(); }

  T get() const { return h_; }
  const T* address() const { return &h_; }
  explicit operator bool() const { return h_ != nullptr; }
  void reset(T h = nullptr) {
    if (h_ != nullptr) Releaser<T>::Release(h_);
    h_ = h;
  }

 private:
  T h_ = nullptr;
};

}  // namespace cl
}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_OPENCL_OPENCL_LOADER_H_
