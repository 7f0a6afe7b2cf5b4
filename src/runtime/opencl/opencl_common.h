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
 * \file opencl_common.h
 * \brief Devices, memory objects and the texture layout shared by the OpenCL runtime files.
 */
#ifndef TVM_RUNTIME_OPENCL_OPENCL_COMMON_H_
#define TVM_RUNTIME_OPENCL_OPENCL_COMMON_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/string.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "opencl_loader.h"

namespace tvm {
namespace runtime {
namespace cl {

struct ProfilingSpan;

/*! \brief Every command enqueued on a device while its command trace ran (opencl_timer.h). */
struct CommandTrace {
  /*! \brief The kernel name, or what a copy moves (e.g. "copy buffer->image"). */
  std::vector<std::string> labels;
  std::vector<Handle<cl_event>> events;
};

/*!
 * \brief Where the time of one finished device-timer span went, from the profiling times of
 * its two events (opencl_timer.h), in nanoseconds of the device's clock. The four satisfy
 * start_delay + span = host_enqueue + drain.
 */
struct TimedSpan {
  /*! \brief From enqueueing the first timed command to its start on the device. */
  int64_t start_delay_ns = 0;
  /*! \brief The timer's own time: the first command's start to the span's end. */
  int64_t span_ns = 0;
  /*! \brief From enqueueing the first timed command to enqueueing the span's end. */
  int64_t host_enqueue_ns = 0;
  /*! \brief From enqueueing the span's end to the device finishing it. */
  int64_t drain_ns = 0;
};

/*! \brief One selected OpenCL device, with its lazily created context and queue. */
struct DeviceEntry {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_device_type type = 0;
  std::string platform_name;
  std::string platform_version;
  std::string device_name;
  std::string device_version;
  std::string driver_version;
  std::string extensions;
  size_t max_work_group_size = 1;
  std::vector<size_t> max_work_item_sizes;
  cl_ulong local_mem_size = 0;
  cl_ulong global_mem_size = 0;
  cl_ulong global_mem_cache_size = 0;
  cl_uint max_clock_mhz = 0;
  cl_uint compute_units = 0;
  /*! \brief CL_DEVICE_IMAGE_PITCH_ALIGNMENT in pixels (1 where the query is unsupported). */
  cl_uint image_pitch_align_pixels = 1;
  bool image_support = false;
  /*! \brief Largest 2D image side and image array size (0 where the query failed). */
  size_t image2d_max_width = 0;
  size_t image2d_max_height = 0;
  size_t image_max_array_size = 0;

  /*! \brief The context, created on first use (thread-safe). */
  cl_context Context();
  /*!
   * \brief The in-order queue to enqueue on now: the plain queue, or the profiling queue
   * while a device timer or the command trace runs (see AddEventListener).
   */
  cl_command_queue Queue();
  /*!
   * \brief Whether the device gives a queue with CL_QUEUE_PROFILING_ENABLE (device timers);
   * creates that queue on first use.
   */
  bool ProfilingQueue();
  /*!
   * \brief Whether a marker on the profiling queue reports CL_PROFILING_COMMAND_END (probed
   * once with the queue), so that a timer can end its span with one marker instead of an
   * event on every command.
   */
  bool MarkerEndsSpans();
  /*!
   * \brief A device timer or the command trace starts (requires timers_mu held). The first
   * listener moves enqueueing to the profiling queue, after a wait for the plain queue, so
   * that commands stay in order. Throws where the device refuses a profiling queue.
   */
  void AddEventListener();
  /*!
   * \brief A timer or the trace stops (requires timers_mu held). The last one waits for the
   * profiling queue and moves enqueueing back to the plain queue. Reports instead of
   * throwing, since timers detach in their destructors.
   */
  void RemoveEventListener();

  /*!
   * \brief Device timers and the command trace running on this device (opencl_timer.h);
   * guarded by timers_mu. event_listeners counts both, so untimed commands skip the lock.
   */
  std::atomic<int> event_listeners{0};
  /*!
   * \brief How many of them need the event of the next command: the trace while it runs, a
   * timer until its first command (or throughout, where markers have no profiling times).
   * Commands create an event only while this is positive.
   */
  std::atomic<int> events_wanted{0};
  std::mutex timers_mu;
  std::vector<ProfilingSpan*> timers;
  std::unique_ptr<CommandTrace> trace;
  /*!
   * \brief Spans of finished device timers not yet read by runtime.opencl.timed_spans, the
   * oldest first; guarded by timers_mu, at most kMaxTimedSpans (older ones are dropped).
   */
  std::vector<TimedSpan> timed_spans;
  static constexpr size_t kMaxTimedSpans = 4096;
  /*! \brief Human readable "platform / device" for messages. */
  std::string Describe() const { return platform_name + " / " + device_name; }

 private:
  void EnsureContext();
  std::once_flag context_once_;
  Handle<cl_context> context_;
  Handle<cl_command_queue> queue_;
  // Made on the first timer: on NVIDIA's OpenCL a profiling queue costs every launch host
  // time even without an event (docs/benchmarks/findings.rst, "What a kernel launch costs"),
  // so untimed work stays off it.
  std::once_flag profiling_once_;
  Handle<cl_command_queue> profiling_queue_;
  bool marker_ends_spans_ = false;
};

/*! \brief The process-wide list of selected devices (created once, never destroyed). */
class Platforms {
 public:
  static Platforms* Global();
  /*! \brief Number of selected devices; 0 when OpenCL is unavailable. Never throws. */
  size_t NumDevices();
  /*! \brief Device by index among the selected ones; throws a clear error otherwise. */
  DeviceEntry& Get(int device_id);
  /*! \brief Why no device is available (empty when some are). */
  std::string UnavailableReason();

 private:
  void Init();
  std::once_flag once_;
  std::vector<std::unique_ptr<DeviceEntry>> devices_;
  std::string reason_;
};

enum class MemKind : int { kBuffer = 0, kImage = 1 };

/*! \brief Image geometry of a texture tensor (see TextureLayoutFor). */
struct ImageLayout {
  size_t width = 0;
  size_t height = 0;
  size_t depth = 0;
  cl_channel_type channel_type = CL_FLOAT;
  size_t elem_bytes = 4;
  size_t RowBytes() const { return width * 4 * elem_bytes; }
  /*! \brief Bytes of the tightly packed data (what host copies move). */
  size_t TightBytes() const { return RowBytes() * height * depth; }
  bool operator==(const ImageLayout& o) const {
    return width == o.width && height == o.height && depth == o.depth &&
           channel_type == o.channel_type;
  }
};

struct MemObject;

/*!
 * \brief The object behind DLTensor::data for OpenCL tensors.
 *
 * `mem` must stay the first member: the launcher passes the data handle itself to
 * clSetKernelArg as the argument value pointer, i.e. as a pointer to a cl_mem.
 */
struct MemObject {
  Handle<cl_mem> mem;
  MemKind kind = MemKind::kBuffer;
  int device_id = 0;
  /*! \brief Buffer size, or the image's backing size. */
  size_t nbytes = 0;
  ImageLayout image;
  /*! \brief For a texture view: the flat buffer that holds the data while no view is alive. */
  MemObject* view_parent = nullptr;
  /*! \brief For a texture view: whether it is currently handed out. */
  bool view_in_use = false;

  /*! \brief For flat buffers: images created as texture views over it, reused across views. */
  std::mutex view_mu;
  std::vector<std::unique_ptr<MemObject>> view_cache;
};

inline MemObject* AsMem(void* data) { return static_cast<MemObject*>(data); }

/*! \brief Whether a memory scope is one of the image (texture) scopes. */
bool IsTextureScope(const std::string& scope);

/*!
 * \brief The suffix of a texture scope whose float32 tensors are stored in CL_HALF_FLOAT pixels.
 *
 * "global.texture-half" is "global.texture" with half pixels (likewise "-nhwc-half",
 * "-weight-half"). Kernels see a float32 image and use read_imagef / write_imagef, which
 * convert, so this storage needs no cl_khr_fp16. Host copies of such a tensor convert on the
 * host; the tensor's bytes on the device are half those of float32.
 */
constexpr const char* kHalfPixelSuffix = "-half";

/*!
 * \brief The image geometry of a tensor stored with a texture scope.
 *
 * The last axis is the RGBA pixel and must be 4. The separator axis a is rank-2 for
 * "global.texture", 1 for "global.texture-weight" and 2 for "global.texture-nhwc": axes before
 * a-1 multiply into depth (array layers), axis a-1 is height, axes a..rank-2 multiply into
 * width. The pixel is CL_FLOAT for float32 and CL_HALF_FLOAT for float16, or for float32 in a
 * scope ending in kHalfPixelSuffix. Throws a clear error for unsupported dtypes, scopes or
 * shapes.
 */
ImageLayout TextureLayoutFor(int ndim, const int64_t* shape, DLDataType dtype,
                             const std::string& scope);

/*! \brief Backing size: align_up(row bytes, pitch alignment in bytes) * height * depth. */
size_t TextureBackingBytes(const ImageLayout& layout, const DeviceEntry& dev);

/*! \brief Allocate a flat buffer (0 bytes allocate 1, as OpenCL forbids empty buffers). */
MemObject* AllocBuffer(int device_id, size_t nbytes);
/*! \brief Allocate an IMAGE2D_ARRAY image with the given layout. */
MemObject* AllocImage(int device_id, const ImageLayout& layout);
/*! \brief Free a buffer or image (and the view images cached on a buffer). */
void FreeMem(MemObject* mem);

/*! \brief The device id the calling thread last selected with SetDevice. */
int CurrentDeviceId();
void SetCurrentDeviceId(int device_id);

/*! \brief Called after the host waited for a device's queue: lets caches persist programs. */
void NotifyDeviceSynchronized(int device_id);

/*! \brief Hooks that run after a synchronization (registered by modules). */
class SyncListeners {
 public:
  static SyncListeners* Global();
  using Listener = void (*)(void* ctx, int device_id);
  void Add(void* ctx, Listener fn);
  void Remove(void* ctx);
  void Notify(int device_id);

 private:
  std::mutex mu_;
  std::vector<std::pair<void*, Listener>> listeners_;
};

/*! \brief Copy between a flat buffer view (with byte offset) and an image, enqueued. */
void CopyBufferToImage(cl_command_queue q, const MemObject& buf, size_t offset,
                       const MemObject& img);
void CopyImageToBuffer(cl_command_queue q, const MemObject& img, const MemObject& buf,
                       size_t offset);

}  // namespace cl
}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_OPENCL_OPENCL_COMMON_H_
