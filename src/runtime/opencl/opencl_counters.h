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
 * \file opencl_counters.h
 * \brief Process-wide counts of the OpenCL commands and objects the runtime issues.
 *
 * Read with the global function runtime.opencl.counters() (a map from the names below to
 * counts since the last runtime.opencl.reset_counters()). Counting is one relaxed atomic
 * increment per command, cheap enough to stay on in every build; tests and benchmarks use it
 * to check that a steady-state inference creates no OpenCL object and copies nothing it need
 * not.
 */
#ifndef TVM_RUNTIME_OPENCL_OPENCL_COUNTERS_H_
#define TVM_RUNTIME_OPENCL_OPENCL_COUNTERS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tvm {
namespace runtime {
namespace cl {

/*!
 * \brief What is counted. The names reported by runtime.opencl.counters() are kCounterNames,
 * in this order; they are part of the interface (tests and bench/ read them).
 */
enum class Counter : int {
  /*! \brief clEnqueueNDRangeKernel calls that were enqueued. */
  kKernelLaunches = 0,
  /*! \brief Copies between a buffer and an image, either direction (views, scope changes). */
  kBufferImageCopies,
  /*! \brief Copies between host memory and a buffer or an image, either direction. */
  kHostDeviceCopies,
  /*! \brief Copies that stay on the device between two buffers or two images. */
  kDeviceCopies,
  /*! \brief clCreateBuffer calls that succeeded. */
  kBuffersCreated,
  /*! \brief clCreateImage calls that succeeded (including images over a buffer). */
  kImagesCreated,
  /*! \brief Of images_created, those created over a buffer (cl_khr_image2d_from_buffer). */
  kImagesOverBuffers,
  /*! \brief Of images_created, those with CL_HALF_FLOAT pixels. */
  kHalfImagesCreated,
  /*! \brief The backing bytes of the images created (a sum, not a count). */
  kImageBytesCreated,
  /*! \brief Programs compiled from OpenCL C source (clBuildProgram on a source program). */
  kProgramsBuilt,
  /*! \brief Programs created from a binary (program cache or SetPreCompiledPrograms). */
  kProgramsFromBinary,
  /*! \brief clCreateKernel calls that succeeded. */
  kKernelsCreated,
  /*! \brief Host waits for a whole queue (clFinish), from syncs, timers and copies. */
  kQueueFinishes,
  /*! \brief Profiling events asked for: a timer's first command and end marker, traced commands. */
  kEventsCreated,
  kCount
};

constexpr const char* kCounterNames[] = {
    "kernel_launches",      "buffer_image_copies",  "host_device_copies",
    "device_copies",        "buffers_created",      "images_created",
    "images_over_buffers",  "half_images_created",  "image_bytes_created",
    "programs_built",       "programs_from_binary", "kernels_created",
    "queue_finishes",       "events_created",
};
static_assert(sizeof(kCounterNames) / sizeof(kCounterNames[0]) ==
                  static_cast<size_t>(Counter::kCount),
              "every counter needs a name");

/*! \brief The counter storage (one cache line per process is plenty: counts are rare). */
std::atomic<int64_t>* CounterSlots();

/*! \brief Add one (or n) to a counter; thread-safe. */
inline void Count(Counter c, int64_t n = 1) {
  CounterSlots()[static_cast<int>(c)].fetch_add(n, std::memory_order_relaxed);
}

}  // namespace cl
}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_OPENCL_OPENCL_COUNTERS_H_
