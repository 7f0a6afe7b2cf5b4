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
 * \file opencl_devices.cc
 * \brief Platform/device enumeration and selection, contexts and queues, memory objects.
 */
#include <tvm/ffi/error.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "opencl_common.h"
#include "opencl_counters.h"
#include "opencl_timer.h"

namespace tvm {
namespace runtime {
namespace cl {

namespace {

std::string PlatformString(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  if (GetApi().GetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (GetApi().GetPlatformInfo(p, what, size, &s[0], nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string DeviceString(cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (GetApi().GetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (GetApi().GetDeviceInfo(d, what, size, &s[0], nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

// Optional queries keep their default when a device does not answer (older OpenCL versions).
template <typename T>
void DeviceValue(cl_device_id d, cl_device_info what, T* out) {
  T value{};
  if (GetApi().GetDeviceInfo(d, what, sizeof(T), &value, nullptr) == CL_SUCCESS) *out = value;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// GPUs first so that tvm.opencl(0) is the accelerator on hosts that also expose a CPU driver.
int TypeRank(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return 0;
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return 1;
  if (t & CL_DEVICE_TYPE_CPU) return 2;
  return 3;
}

}  // namespace

void DeviceEntry::EnsureContext() {
  std::call_once(context_once_, [this] {
    cl_int err = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(platform), 0};
    cl_context ctx = GetApi().CreateContext(props, 1, &device, nullptr, nullptr, &err);
    Check(err, "clCreateContext", "creating a context for " + Describe());
    context_.reset(ctx);
    // clCreateCommandQueue is deprecated in 2.0 but present in every ICD and in 1.2 drivers.
    cl_command_queue q = GetApi().CreateCommandQueue(ctx, device, 0, &err);
    Check(err, "clCreateCommandQueue", "creating a command queue for " + Describe());
    queue_.reset(q);
  });
  // call_once rethrows on failure and retries on the next call.
}

namespace {

// Two markers on an empty profiling queue: usable span ends if both report an end time and
// the second does not end before the first (a driver may leave markers untimed).
bool ProbeMarkerTimes(cl_command_queue queue) {
  cl_ulong ends[2] = {0, 0};
  for (cl_ulong& end : ends) {
    cl_event raw = nullptr;
    if (GetApi().EnqueueMarkerWithWaitList(queue, 0, nullptr, &raw) != CL_SUCCESS) return false;
    Handle<cl_event> marker(raw);
    if (GetApi().WaitForEvents(1, &raw) != CL_SUCCESS ||
        GetApi().GetEventProfilingInfo(raw, CL_PROFILING_COMMAND_END, sizeof(end), &end,
                                       nullptr) != CL_SUCCESS) {
      return false;
    }
  }
  return ends[0] > 0 && ends[1] >= ends[0];
}

}  // namespace

cl_context DeviceEntry::Context() {
  EnsureContext();
  return context_.get();
}

cl_command_queue DeviceEntry::Queue() {
  EnsureContext();
  if (event_listeners.load(std::memory_order_relaxed) > 0) return profiling_queue_.get();
  return queue_.get();
}

bool DeviceEntry::ProfilingQueue() {
  EnsureContext();
  std::call_once(profiling_once_, [this] {
    cl_int err = CL_SUCCESS;
    cl_command_queue q =
        GetApi().CreateCommandQueue(context_.get(), device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) return;
    profiling_queue_.reset(q);
    marker_ends_spans_ = ProbeMarkerTimes(q);
  });
  return static_cast<bool>(profiling_queue_);
}

bool DeviceEntry::MarkerEndsSpans() { return ProfilingQueue() && marker_ends_spans_; }

void DeviceEntry::AddEventListener() {
  if (!ProfilingQueue()) {
    TVM_FFI_THROW(RuntimeError) << "OpenCL device " << Describe()
                                << " refused a profiling queue (CL_QUEUE_PROFILING_ENABLE), so "
                                << "its commands cannot be timed or traced; time the call with "
                                << "a wall clock instead";
  }
  if (event_listeners.load(std::memory_order_relaxed) == 0) {
    TVM_CL_CALL(Finish, "waiting for the queue of " + Describe(), queue_.get());
  }
  event_listeners.fetch_add(1, std::memory_order_relaxed);
}

void DeviceEntry::RemoveEventListener() {
  if (event_listeners.load(std::memory_order_relaxed) == 1) {
    cl_int err = GetApi().Finish(profiling_queue_.get());
    if (err != CL_SUCCESS) {
      std::cerr << "[tvm opencl] warning: OpenCL error " << ErrorName(err)
                << " in clFinish waiting for the profiling queue of " << Describe()
                << std::endl;
    }
  }
  event_listeners.fetch_sub(1, std::memory_order_relaxed);
}

Platforms* Platforms::Global() {
  // Never destroyed: tensors and modules may release OpenCL objects during interpreter exit.
  static Platforms* inst = new Platforms();
  return inst;
}

void Platforms::Init() {
  std::call_once(once_, [this] {
    std::string why;
    const Api* api = TryLoadApi(&why);
    if (api == nullptr) {
      reason_ = why;
      return;
    }
    cl_uint num_platforms = 0;
    cl_int err = api->GetPlatformIDs(0, nullptr, &num_platforms);
    if (err != CL_SUCCESS || num_platforms == 0) {
      reason_ = std::string("no OpenCL platform found (clGetPlatformIDs: ") + ErrorName(err) +
                "); check the ICD files in /etc/OpenCL/vendors or OCL_ICD_VENDORS";
      return;
    }
    std::vector<cl_platform_id> platforms(num_platforms);
    api->GetPlatformIDs(num_platforms, platforms.data(), nullptr);

    const char* filter_env = std::getenv("TVM_OPENCL_DEVICE");
    std::string filter = filter_env ? Lower(filter_env) : "";
    // A filter that names a platform selects that platform's devices; only when it names none
    // are device names matched ("intel" is Intel's platform, though PoCL's CPU device name
    // carries "Intel(R) Xeon(R)" too).
    std::vector<std::unique_ptr<DeviceEntry>> by_platform, by_device;
    std::vector<std::string> present;
    for (cl_platform_id p : platforms) {
      cl_uint num_devices = 0;
      if (api->GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices) != CL_SUCCESS ||
          num_devices == 0) {
        continue;
      }
      std::vector<cl_device_id> ids(num_devices);
      api->GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, num_devices, ids.data(), nullptr);
      std::string pname = PlatformString(p, CL_PLATFORM_NAME);
      for (cl_device_id d : ids) {
        auto e = std::make_unique<DeviceEntry>();
        e->platform = p;
        e->device = d;
        e->platform_name = pname;
        e->platform_version = PlatformString(p, CL_PLATFORM_VERSION);
        e->device_name = DeviceString(d, CL_DEVICE_NAME);
        present.push_back(e->Describe());
        bool platform_match = Lower(e->platform_name).find(filter) != std::string::npos;
        bool device_match = Lower(e->device_name).find(filter) != std::string::npos;
        if (!platform_match && !device_match) continue;
        e->device_version = DeviceString(d, CL_DEVICE_VERSION);
        e->driver_version = DeviceString(d, CL_DRIVER_VERSION);
        e->extensions = DeviceString(d, CL_DEVICE_EXTENSIONS);
        DeviceValue(d, CL_DEVICE_TYPE, &e->type);
        DeviceValue(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, &e->max_work_group_size);
        cl_uint dims = 0;
        DeviceValue(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, &dims);
        if (dims > 0 && dims < 16) {
          e->max_work_item_sizes.resize(dims);
          api->GetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(size_t) * dims,
                             e->max_work_item_sizes.data(), nullptr);
        }
        DeviceValue(d, CL_DEVICE_LOCAL_MEM_SIZE, &e->local_mem_size);
        DeviceValue(d, CL_DEVICE_GLOBAL_MEM_SIZE, &e->global_mem_size);
        DeviceValue(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, &e->global_mem_cache_size);
        DeviceValue(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, &e->max_clock_mhz);
        DeviceValue(d, CL_DEVICE_MAX_COMPUTE_UNITS, &e->compute_units);
        cl_bool images = CL_FALSE;
        DeviceValue(d, CL_DEVICE_IMAGE_SUPPORT, &images);
        e->image_support = images == CL_TRUE;
        cl_uint pitch = 0;
        DeviceValue(d, CL_DEVICE_IMAGE_PITCH_ALIGNMENT, &pitch);
        e->image_pitch_align_pixels = pitch == 0 ? 1 : pitch;
        if (e->image_support) {
          DeviceValue(d, CL_DEVICE_IMAGE2D_MAX_WIDTH, &e->image2d_max_width);
          DeviceValue(d, CL_DEVICE_IMAGE2D_MAX_HEIGHT, &e->image2d_max_height);
          DeviceValue(d, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, &e->image_max_array_size);
        }
        (platform_match ? by_platform : by_device).push_back(std::move(e));
      }
    }
    std::vector<std::unique_ptr<DeviceEntry>> found =
        by_platform.empty() ? std::move(by_device) : std::move(by_platform);
    std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
      return TypeRank(a->type) < TypeRank(b->type);
    });
    devices_ = std::move(found);
    if (devices_.empty()) {
      std::ostringstream os;
      if (present.empty()) {
        os << "no OpenCL device found on " << num_platforms << " platform(s)";
      } else {
        os << "no OpenCL device matches TVM_OPENCL_DEVICE='" << filter_env << "' (present:";
        for (size_t i = 0; i < present.size(); ++i) os << (i ? ", " : " ") << present[i];
        os << ")";
      }
      reason_ = os.str();
    }
  });
}

size_t Platforms::NumDevices() {
  Init();
  return devices_.size();
}

std::string Platforms::UnavailableReason() {
  Init();
  return reason_;
}

DeviceEntry& Platforms::Get(int device_id) {
  Init();
  if (devices_.empty()) TVM_FFI_THROW(RuntimeError) << "OpenCL is not available: " << reason_;
  if (device_id < 0 || static_cast<size_t>(device_id) >= devices_.size()) {
    TVM_FFI_THROW(RuntimeError) << "OpenCL device " << device_id << " does not exist ("
                                << devices_.size() << " device(s) selected)";
  }
  return *devices_[device_id];
}

bool IsTextureScope(const std::string& scope) {
  return scope.rfind("global.texture", 0) == 0;
}

ImageLayout TextureLayoutFor(int ndim, const int64_t* shape, DLDataType dtype,
                             const std::string& scope) {
  ImageLayout layout;
  // A "-half" scope keeps float32 values in CL_HALF_FLOAT pixels: kernels read and write them
  // with read_imagef / write_imagef, which convert, so the device needs no cl_khr_fp16.
  std::string convention = scope;
  bool half_pixels = false;
  size_t suffix_len = std::strlen(kHalfPixelSuffix);
  if (convention.size() > suffix_len &&
      convention.compare(convention.size() - suffix_len, suffix_len, kHalfPixelSuffix) == 0) {
    convention.resize(convention.size() - suffix_len);
    half_pixels = true;
  }
  bool is_float = dtype.code == kDLFloat && dtype.lanes == 1;
  if (is_float && dtype.bits == 32 && !half_pixels) {
    layout.channel_type = CL_FLOAT;
    layout.elem_bytes = 4;
  } else if (is_float && (dtype.bits == 16 || (dtype.bits == 32 && half_pixels))) {
    layout.channel_type = CL_HALF_FLOAT;
    layout.elem_bytes = 2;
  } else {
    TVM_FFI_THROW(ValueError) << "OpenCL texture scope '" << scope
                              << "' supports float32 and float16 only, got dtype code "
                              << int(dtype.code) << " bits " << int(dtype.bits) << " lanes "
                              << dtype.lanes;
  }
  int sep;
  if (convention == "global.texture") {
    sep = ndim - 2;
  } else if (convention == "global.texture-weight") {
    sep = 1;
  } else if (convention == "global.texture-nhwc") {
    sep = 2;
  } else {
    TVM_FFI_THROW(ValueError) << "Unknown OpenCL texture scope '" << scope
                              << "' (known: global.texture, global.texture-nhwc, "
                                 "global.texture-weight, each also with the suffix "
                              << kHalfPixelSuffix << ")";
  }
  if (ndim < 2 || sep < 1 || sep > ndim - 1) {
    TVM_FFI_THROW(ValueError) << "A tensor of rank " << ndim << " cannot be stored with scope '"
                              << scope << "'";
  }
  if (shape[ndim - 1] != 4) {
    TVM_FFI_THROW(ValueError) << "The last axis of a texture tensor is the RGBA pixel and must "
                              << "be 4, got " << shape[ndim - 1] << " (scope '" << scope << "')";
  }
  size_t depth = 1, width = 1;
  for (int i = 0; i < sep - 1; ++i) depth *= static_cast<size_t>(shape[i]);
  for (int i = sep; i < ndim - 1; ++i) width *= static_cast<size_t>(shape[i]);
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] <= 0) {
      TVM_FFI_THROW(ValueError) << "A texture tensor needs positive extents, axis " << i
                                << " is " << shape[i];
    }
  }
  layout.width = width;
  layout.height = static_cast<size_t>(shape[sep - 1]);
  layout.depth = depth;
  return layout;
}

size_t TextureBackingBytes(const ImageLayout& layout, const DeviceEntry& dev) {
  size_t pitch = static_cast<size_t>(dev.image_pitch_align_pixels) * 4 * layout.elem_bytes;
  size_t row = (layout.RowBytes() + pitch - 1) / pitch * pitch;
  return row * layout.height * layout.depth;
}

MemObject* AllocBuffer(int device_id, size_t nbytes) {
  DeviceEntry& dev = Platforms::Global()->Get(device_id);
  cl_int err = CL_SUCCESS;
  cl_mem m = GetApi().CreateBuffer(dev.Context(), CL_MEM_READ_WRITE, std::max<size_t>(nbytes, 1),
                                   nullptr, &err);
  Check(err, "clCreateBuffer", "allocating " + std::to_string(nbytes) + " bytes on " +
                                   dev.Describe());
  Count(Counter::kBuffersCreated);
  auto* obj = new MemObject();
  obj->mem.reset(m);
  obj->kind = MemKind::kBuffer;
  obj->device_id = device_id;
  obj->nbytes = nbytes;
  return obj;
}

MemObject* AllocImage(int device_id, const ImageLayout& layout) {
  DeviceEntry& dev = Platforms::Global()->Get(device_id);
  if (!dev.image_support) {
    TVM_FFI_THROW(RuntimeError) << "OpenCL device " << dev.Describe()
                                << " has no image support; texture scopes cannot be used";
  }
  // Checked here rather than left to clCreateImage: CL_INVALID_IMAGE_SIZE does not say which
  // limit was hit, nor that the compiler can keep such a tensor in buffers.
  bool too_large = (dev.image2d_max_width != 0 && layout.width > dev.image2d_max_width) ||
                   (dev.image2d_max_height != 0 && layout.height > dev.image2d_max_height) ||
                   (dev.image_max_array_size != 0 && layout.depth > dev.image_max_array_size);
  if (too_large) {
    TVM_FFI_THROW(ValueError)
        << "a texture of " << layout.width << "x" << layout.height << "x" << layout.depth
        << " pixels exceeds the image limits of " << dev.Describe() << " ("
        << dev.image2d_max_width << "x" << dev.image2d_max_height << ", "
        << dev.image_max_array_size << " layers): compile for this device with "
        << "tvm.relax.backend.adreno.texture_target_for_device(dev), which keeps tensors "
        << "that do not fit in buffers";
  }
  cl_image_format format;
  format.image_channel_order = CL_RGBA;
  format.image_channel_data_type = layout.channel_type;
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY;
  desc.image_width = layout.width;
  desc.image_height = layout.height;
  desc.image_array_size = layout.depth;
  cl_int err = CL_SUCCESS;
  cl_mem m = GetApi().CreateImage(dev.Context(), CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
  if (err != CL_SUCCESS) {
    std::ostringstream os;
    os << "creating a " << layout.width << "x" << layout.height << "x" << layout.depth
       << " RGBA " << (layout.channel_type == CL_FLOAT ? "float32" : "float16")
       << " image array on " << dev.Describe();
    ThrowError(err, "clCreateImage", os.str());
  }
  Count(Counter::kImagesCreated);
  auto* obj = new MemObject();
  obj->mem.reset(m);
  obj->kind = MemKind::kImage;
  obj->device_id = device_id;
  obj->image = layout;
  obj->nbytes = TextureBackingBytes(layout, dev);
  if (layout.channel_type == CL_HALF_FLOAT) Count(Counter::kHalfImagesCreated);
  Count(Counter::kImageBytesCreated, static_cast<int64_t>(obj->nbytes));
  return obj;
}

void FreeMem(MemObject* mem) {
  // The cached view images are owned by the buffer's view_cache and go with it.
  delete mem;
}

namespace {
thread_local int current_device_id = 0;
}  // namespace

int CurrentDeviceId() { return current_device_id; }
void SetCurrentDeviceId(int id) { current_device_id = id; }

SyncListeners* SyncListeners::Global() {
  static SyncListeners* inst = new SyncListeners();
  return inst;
}

void SyncListeners::Add(void* ctx, Listener fn) {
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.emplace_back(ctx, fn);
}

void SyncListeners::Remove(void* ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.erase(std::remove_if(listeners_.begin(), listeners_.end(),
                                  [ctx](const auto& l) { return l.first == ctx; }),
                   listeners_.end());
}

void SyncListeners::Notify(int device_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& l : listeners_) l.second(l.first, device_id);
}

void NotifyDeviceSynchronized(int device_id) { SyncListeners::Global()->Notify(device_id); }

void CopyBufferToImage(cl_command_queue q, const MemObject& buf, size_t offset,
                       const MemObject& img) {
  size_t origin[3] = {0, 0, 0};
  size_t region[3] = {img.image.width, img.image.height, img.image.depth};
  if (offset + img.image.TightBytes() > buf.nbytes) {
    TVM_FFI_THROW(RuntimeError) << "OpenCL: copying a buffer into an image needs "
                                << img.image.TightBytes() << " bytes at offset " << offset
                                << " but the buffer has " << buf.nbytes;
  }
  CommandEvent event(Platforms::Global()->Get(img.device_id), "copy buffer->image");
  TVM_CL_CALL(EnqueueCopyBufferToImage, "copying a buffer into an image", q, buf.mem.get(),
              img.mem.get(), offset, origin, region, 0, nullptr, event.out());
  Count(Counter::kBufferImageCopies);
}

void CopyImageToBuffer(cl_command_queue q, const MemObject& img, const MemObject& buf,
                       size_t offset) {
  size_t origin[3] = {0, 0, 0};
  size_t region[3] = {img.image.width, img.image.height, img.image.depth};
  if (offset + img.image.TightBytes() > buf.nbytes) {
    TVM_FFI_THROW(RuntimeError) << "OpenCL: copying an image into a buffer needs "
                                << img.image.TightBytes() << " bytes at offset " << offset
                                << " but the buffer has " << buf.nbytes;
  }
  CommandEvent event(Platforms::Global()->Get(img.device_id), "copy image->buffer");
  TVM_CL_CALL(EnqueueCopyImageToBuffer, "copying an image into a buffer", q, img.mem.get(),
              buf.mem.get(), origin, region, offset, 0, nullptr, event.out());
  Count(Counter::kBufferImageCopies);
}

}  // namespace cl
}  // namespace runtime
}  // namespace tvm
