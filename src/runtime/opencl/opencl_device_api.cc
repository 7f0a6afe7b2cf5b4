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
 * \file opencl_device_api.cc
 * \brief The OpenCL DeviceAPI: attributes, buffers, images, copies, workspaces, timer.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/runtime/device_api.h>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <vector>

#include "workspace_pool.h"  // shipped in the wheel under tvm/src/runtime
#include "opencl_common.h"
#include "opencl_counters.h"
#include "opencl_timer.h"

namespace tvm {
namespace runtime {
namespace cl {

namespace {

bool IsHost(const DLDevice& d) {
  return d.device_type == kDLCPU || d.device_type == kDLCUDAHost;
}

size_t TensorBytes(const DLTensor* t) {
  size_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= static_cast<size_t>(t->shape[i]);
  return n * ((t->dtype.bits * t->dtype.lanes + 7) / 8);
}

bool IsCompact(const DLTensor* t) {
  if (t->strides == nullptr) return true;
  int64_t expected = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->strides[i] != expected) return false;
    expected *= t->shape[i];
  }
  return true;
}

// IEEE binary16 <-> binary32, rounding to nearest even: what a CL_HALF_FLOAT image stores for a
// float32 value (OpenCL's write_imagef to a half image rounds the same way by default).
uint16_t FloatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xffu) {  // inf stays inf, NaN stays a (quiet) NaN
    return sign | 0x7c00u | (mantissa != 0 ? 0x200u : 0u);
  }
  int32_t half_exponent = static_cast<int32_t>(exponent) - 127 + 15;
  if (half_exponent >= 0x1f) return sign | 0x7c00u;  // beyond the half range: inf
  if (half_exponent <= 0) {
    // A half subnormal (or zero): shift the full significand into place, then round.
    if (half_exponent < -10) return sign;
    uint32_t significand = mantissa | 0x800000u;
    int shift = 14 - half_exponent;
    uint32_t kept = significand >> shift;
    uint32_t rest = significand & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (kept & 1u))) ++kept;
    return sign | static_cast<uint16_t>(kept);
  }
  uint32_t kept = (static_cast<uint32_t>(half_exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  // A carry out of the mantissa moves to the next exponent (up to inf), as it should.
  if (rest > 0x1000u || (rest == 0x1000u && (kept & 1u))) ++kept;
  return sign | static_cast<uint16_t>(kept);
}

float HalfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1fu) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal half: normalise
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (static_cast<uint32_t>(127 - 15 + 1 - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Whether `t` is a float32 tensor whose image keeps half pixels (a "-half" texture scope): its
// device bytes are not its host bytes, so copies of it convert.
bool HasHalfPixels(const DLTensor* t) {
  if (IsHost(t->device)) return false;
  const MemObject* mem = AsMem(t->data);
  return mem->kind == MemKind::kImage && mem->image.elem_bytes == 2 && t->dtype.bits == 32;
}

// "OpenCL 3.0 PoCL ..." -> "3.0"
std::string VersionNumber(const std::string& version) {
  std::istringstream is(version);
  std::string word, number;
  is >> word >> number;
  return number;
}

// The whole of `img` as one copy: origin, region and pitches, after checking that the host
// side of the copy holds exactly the image's tight bytes.
struct WholeImageCopy {
  size_t origin[3] = {0, 0, 0};
  size_t region[3];
  size_t row_pitch;
  size_t slice_pitch;

  WholeImageCopy(const MemObject& img, size_t host_bytes)
      : region{img.image.width, img.image.height, img.image.depth},
        row_pitch(img.image.RowBytes()),
        slice_pitch(row_pitch * img.image.height) {
    if (host_bytes != img.image.TightBytes()) {
      TVM_FFI_THROW(ValueError) << "OpenCL: host tensor of " << host_bytes
                                << " bytes does not match an image of " << img.image.TightBytes()
                                << " bytes";
    }
  }
};

void WriteImageFromHost(cl_command_queue q, const MemObject& img, const void* src, size_t n) {
  WholeImageCopy copy(img, n);
  CommandEvent event(Platforms::Global()->Get(img.device_id), "write host->image");
  TVM_CL_CALL(EnqueueWriteImage, "copying host data into an image", q, img.mem.get(), CL_TRUE,
              copy.origin, copy.region, copy.row_pitch, copy.slice_pitch, src, 0, nullptr,
              event.out());
  Count(Counter::kHostDeviceCopies);
}

void ReadImageToHost(cl_command_queue q, const MemObject& img, void* dst, size_t n) {
  WholeImageCopy copy(img, n);
  CommandEvent event(Platforms::Global()->Get(img.device_id), "read image->host");
  TVM_CL_CALL(EnqueueReadImage, "copying an image to host memory", q, img.mem.get(), CL_TRUE,
              copy.origin, copy.region, copy.row_pitch, copy.slice_pitch, dst, 0, nullptr,
              event.out());
  Count(Counter::kHostDeviceCopies);
}

// An image has no byte offset: a texture tensor placed at an offset of its storage (by
// StorageObj::AllocTensorScoped, which does not pass the offset to Allocator::CreateView) would
// silently alias the storage's start.
void CheckNoImageOffset(const DLTensor* t) {
  if (IsHost(t->device) || t->byte_offset == 0 || AsMem(t->data)->kind != MemKind::kImage) return;
  std::ostringstream os;
  os << "[";
  for (int i = 0; i < t->ndim; ++i) os << (i ? ", " : "") << t->shape[i];
  os << "]";
  TVM_FFI_THROW(ValueError) << "OpenCL: a texture tensor " << os.str() << " starts at byte offset "
                            << t->byte_offset << " of its storage, but an image has no offset "
                            << "(the offset must be 0): give each texture tensor a storage of "
                            << "its own or the start of one";
}

void CheckBufferRange(const MemObject& buf, size_t offset, size_t n, const char* what) {
  if (offset + n > buf.nbytes) {
    TVM_FFI_THROW(ValueError) << "OpenCL: " << what << " of " << n << " bytes at offset " << offset
                              << " exceeds the buffer's " << buf.nbytes << " bytes";
  }
}

}  // namespace

/*! \brief The DeviceAPI singleton registered as device_api.opencl. */
class OpenCLDeviceAPI final : public DeviceAPI {
 public:
  static OpenCLDeviceAPI* Global() {
    // Leaked on purpose: TVM may call into it during interpreter exit.
    static OpenCLDeviceAPI* inst = new OpenCLDeviceAPI();
    return inst;
  }

  void SetDevice(Device dev) final { SetCurrentDeviceId(dev.device_id); }

  void GetAttr(Device dev, DeviceAttrKind kind, ffi::Any* rv) final {
    Platforms* p = Platforms::Global();
    bool exists = dev.device_id >= 0 && static_cast<size_t>(dev.device_id) < p->NumDevices();
    if (kind == kExist) {
      *rv = static_cast<int64_t>(exists ? 1 : 0);
      return;
    }
    if (!exists) return;  // other attributes of a missing device read as None
    DeviceEntry& d = p->Get(dev.device_id);
    switch (kind) {
      case kMaxThreadsPerBlock:
        *rv = static_cast<int64_t>(d.max_work_group_size);
        break;
      case kWarpSize: {
        // OpenCL has no warp query; NVIDIA schedules 32-wide warps, other devices report 1.
        bool nvidia = d.platform_name.find("NVIDIA") != std::string::npos;
        *rv = static_cast<int64_t>(nvidia ? 32 : 1);
        break;
      }
      case kMaxSharedMemoryPerBlock:
        *rv = static_cast<int64_t>(d.local_mem_size);
        break;
      case kComputeVersion:
        *rv = ffi::String(VersionNumber(d.device_version));
        break;
      case kDeviceName:
        *rv = ffi::String(d.device_name);
        break;
      case kMaxClockRate:
        // TVM reports clock rates in kHz; OpenCL answers in MHz.
        *rv = static_cast<int64_t>(d.max_clock_mhz) * 1000;
        break;
      case kMultiProcessorCount:
        *rv = static_cast<int64_t>(d.compute_units);
        break;
      case kMaxThreadDimensions: {
        std::ostringstream os;
        os << "[";
        for (size_t i = 0; i < d.max_work_item_sizes.size(); ++i) {
          os << (i ? ", " : "") << d.max_work_item_sizes[i];
        }
        os << "]";
        *rv = ffi::String(os.str());
        break;
      }
      case kApiVersion: {
        // e.g. "OpenCL 3.0 ..." -> 300
        std::string v = VersionNumber(d.platform_version);
        int major = 0, minor = 0;
        std::sscanf(v.c_str(), "%d.%d", &major, &minor);
        *rv = static_cast<int64_t>(major * 100 + minor * 10);
        break;
      }
      case kDriverVersion:
        *rv = ffi::String(d.driver_version);
        break;
      case kL2CacheSizeBytes:
        *rv = static_cast<int64_t>(d.global_mem_cache_size);
        break;
      case kTotalGlobalMemory:
        *rv = static_cast<int64_t>(d.global_mem_size);
        break;
      case kImagePitchAlignment:
        *rv = static_cast<int64_t>(d.image_pitch_align_pixels);
        break;
      default:
        break;
    }
  }

  size_t GetDataSize(const DLTensor& arr, ffi::Optional<ffi::String> mem_scope) final {
    if (mem_scope.has_value() && IsTextureScope(std::string(*mem_scope))) {
      ImageLayout layout = TextureLayoutFor(arr.ndim, arr.shape, arr.dtype, *mem_scope);
      return TextureBackingBytes(layout, Platforms::Global()->Get(arr.device.device_id));
    }
    return DeviceAPI::GetDataSize(arr, mem_scope);
  }

  void* AllocDataSpace(Device dev, size_t nbytes, size_t alignment, DLDataType type_hint) final {
    return AllocBuffer(dev.device_id, nbytes);
  }

  void* AllocDataSpace(Device dev, int ndim, const int64_t* shape, DLDataType dtype,
                       ffi::Optional<ffi::String> mem_scope) final {
    if (mem_scope.has_value() && IsTextureScope(std::string(*mem_scope))) {
      return AllocImage(dev.device_id, TextureLayoutFor(ndim, shape, dtype, *mem_scope));
    }
    return DeviceAPI::AllocDataSpace(dev, ndim, shape, dtype, mem_scope);
  }

  void FreeDataSpace(Device dev, void* ptr) final {
    if (ptr != nullptr) FreeMem(AsMem(ptr));
  }

  void CopyDataFromTo(DLTensor* from, DLTensor* to, TVMStreamHandle stream) final {
    size_t n = TensorBytes(from);
    if (n != TensorBytes(to)) {
      TVM_FFI_THROW(ValueError) << "OpenCL copy between tensors of different sizes (" << n
                                << " vs " << TensorBytes(to) << " bytes)";
    }
    if (!IsCompact(from) || !IsCompact(to)) {
      TVM_FFI_THROW(ValueError) << "OpenCL copies need compact (contiguous) tensors";
    }
    if (n == 0) return;
    CheckNoImageOffset(from);
    CheckNoImageOffset(to);
    bool from_host = IsHost(from->device), to_host = IsHost(to->device);
    if (from_host && to_host) {
      std::memmove(static_cast<char*>(to->data) + to->byte_offset,
                   static_cast<const char*>(from->data) + from->byte_offset, n);
    } else if (from_host) {
      CopyFromHost(static_cast<const char*>(from->data) + from->byte_offset, to, n);
    } else if (to_host) {
      CopyToHost(from, static_cast<char*>(to->data) + to->byte_offset, n);
    } else if (from->device.device_id == to->device.device_id &&
               HasHalfPixels(from) == HasHalfPixels(to)) {
      CopyOnDevice(from, to, n);
    } else {
      // Different devices (contexts), or float32 values in half pixels on one side only (a
      // byte copy would not convert them): stage through host memory.
      std::vector<char> staging(n);
      CopyToHost(from, staging.data(), n);
      CopyFromHost(staging.data(), to, n);
    }
  }

  void StreamSync(Device dev, TVMStreamHandle stream) final {
    DeviceEntry& d = Platforms::Global()->Get(dev.device_id);
    TVM_CL_CALL(Finish, "waiting for the queue of " + d.Describe(), d.Queue());
    Count(Counter::kQueueFinishes);
    NotifyDeviceSynchronized(dev.device_id);
  }

  void* AllocWorkspace(Device dev, size_t size, DLDataType type_hint) final {
    return ThreadPool()->AllocWorkspace(dev, size);
  }

  void FreeWorkspace(Device dev, void* data) final { ThreadPool()->FreeWorkspace(dev, data); }

 private:
  // Workspaces are per thread (the contract of AllocWorkspace), so no locking is needed.
  WorkspacePool* ThreadPool() {
    thread_local std::unique_ptr<WorkspacePool> pool;
    if (!pool) pool = std::make_unique<WorkspacePool>(kDLOpenCL, this);
    return pool.get();
  }

  void CopyFromHost(const void* src, DLTensor* to, size_t n) {
    MemObject* dst = AsMem(to->data);
    cl_command_queue q = Platforms::Global()->Get(to->device.device_id).Queue();
    if (HasHalfPixels(to)) {
      const float* values = static_cast<const float*>(src);
      std::vector<uint16_t> halves(n / sizeof(float));
      for (size_t i = 0; i < halves.size(); ++i) halves[i] = FloatToHalf(values[i]);
      WriteImageFromHost(q, *dst, halves.data(), halves.size() * sizeof(uint16_t));
    } else if (dst->kind == MemKind::kImage) {
      WriteImageFromHost(q, *dst, src, n);
    } else {
      CheckBufferRange(*dst, to->byte_offset, n, "a host to device copy");
      CommandEvent event(Platforms::Global()->Get(dst->device_id), "write host->buffer");
      TVM_CL_CALL(EnqueueWriteBuffer, "copying host data into a buffer", q, dst->mem.get(),
                  CL_TRUE, to->byte_offset, n, src, 0, nullptr, event.out());
      Count(Counter::kHostDeviceCopies);
    }
  }

  void CopyToHost(const DLTensor* from, void* dst, size_t n) {
    MemObject* src = AsMem(from->data);
    cl_command_queue q = Platforms::Global()->Get(from->device.device_id).Queue();
    if (HasHalfPixels(from)) {
      std::vector<uint16_t> halves(n / sizeof(float));
      ReadImageToHost(q, *src, halves.data(), halves.size() * sizeof(uint16_t));
      float* values = static_cast<float*>(dst);
      for (size_t i = 0; i < halves.size(); ++i) values[i] = HalfToFloat(halves[i]);
    } else if (src->kind == MemKind::kImage) {
      ReadImageToHost(q, *src, dst, n);
    } else {
      CheckBufferRange(*src, from->byte_offset, n, "a device to host copy");
      CommandEvent event(Platforms::Global()->Get(src->device_id), "read buffer->host");
      TVM_CL_CALL(EnqueueReadBuffer, "copying a buffer to host memory", q, src->mem.get(),
                  CL_TRUE, from->byte_offset, n, dst, 0, nullptr, event.out());
      Count(Counter::kHostDeviceCopies);
    }
    // A blocking read means earlier commands finished: a good time to persist programs.
    NotifyDeviceSynchronized(from->device.device_id);
  }

  void CopyOnDevice(const DLTensor* from, DLTensor* to, size_t n) {
    MemObject* src = AsMem(from->data);
    MemObject* dst = AsMem(to->data);
    cl_command_queue q = Platforms::Global()->Get(from->device.device_id).Queue();
    bool src_img = src->kind == MemKind::kImage, dst_img = dst->kind == MemKind::kImage;
    if (!src_img && !dst_img) {
      CheckBufferRange(*src, from->byte_offset, n, "a device copy source");
      CheckBufferRange(*dst, to->byte_offset, n, "a device copy destination");
      CommandEvent event(Platforms::Global()->Get(src->device_id), "copy buffer->buffer");
      TVM_CL_CALL(EnqueueCopyBuffer, "copying between buffers", q, src->mem.get(), dst->mem.get(),
                  from->byte_offset, to->byte_offset, n, 0, nullptr, event.out());
      Count(Counter::kDeviceCopies);
    } else if (!src_img && dst_img) {
      CopyBufferToImage(q, *src, from->byte_offset, *dst);
    } else if (src_img && !dst_img) {
      CopyImageToBuffer(q, *src, *dst, to->byte_offset);
    } else if (src->image == dst->image) {
      size_t origin[3] = {0, 0, 0};
      size_t region[3] = {src->image.width, src->image.height, src->image.depth};
      CommandEvent event(Platforms::Global()->Get(src->device_id), "copy image->image");
      TVM_CL_CALL(EnqueueCopyImage, "copying between images", q, src->mem.get(), dst->mem.get(),
                  origin, origin, region, 0, nullptr, event.out());
      Count(Counter::kDeviceCopies);
    } else {
      // Same bytes, different geometry (e.g. another texture scope): go through a buffer.
      std::unique_ptr<MemObject> tmp(AllocBuffer(from->device.device_id, n));
      CopyImageToBuffer(q, *src, *tmp, 0);
      CopyBufferToImage(q, *tmp, 0, *dst);
      // The temporary may only be released once the copies are done.
      TVM_CL_CALL(Finish, "waiting for an image to image copy", q);
      Count(Counter::kQueueFinishes);
    }
  }
};

DeviceAPI* GetOpenCLDeviceAPI() { return OpenCLDeviceAPI::Global(); }

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("device_api.opencl",
           []() -> void* { return static_cast<void*>(OpenCLDeviceAPI::Global()); })
      .def("device_api.opencl.alloc_nd",
           [](int32_t device_type, int32_t device_id, int32_t dtype_code, int32_t dtype_bits,
              ffi::String scope, int64_t ndim, void* shape_ptr, int32_t channel_bits) -> void* {
             const int64_t* shape = static_cast<const int64_t*>(shape_ptr);
             if (shape == nullptr || ndim < 2 || ndim > 3) {
               TVM_FFI_THROW(ValueError) << "device_api.opencl.alloc_nd expects a {width, "
                                         << "height[, depth]} shape, got ndim " << ndim;
             }
             ImageLayout layout;
             layout.width = static_cast<size_t>(shape[0]);
             layout.height = static_cast<size_t>(shape[1]);
             layout.depth = ndim == 3 ? static_cast<size_t>(shape[2]) : 1;
             // channel_bits is the RGBA pixel: 128 = 4 x float32, 64 = 4 x float16.
             if (channel_bits == 128) {
               layout.channel_type = CL_FLOAT;
               layout.elem_bytes = 4;
             } else if (channel_bits == 64) {
               layout.channel_type = CL_HALF_FLOAT;
               layout.elem_bytes = 2;
             } else {
               TVM_FFI_THROW(ValueError) << "device_api.opencl.alloc_nd: unsupported pixel of "
                                         << channel_bits << " bits (128 or 64)";
             }
             return AllocImage(device_id, layout);
           })
      .def("device_api.opencl.free_nd",
           [](int32_t device_type, int32_t device_id, ffi::String scope, void* handle) -> int32_t {
             if (handle != nullptr) FreeMem(AsMem(handle));
             return 0;
           })
      .def("runtime.opencl.texture_image_extent",
           [](ffi::Array<int64_t> shape, ffi::String scope) -> ffi::Array<int64_t> {
             // The image geometry the runtime allocates for a float32 tensor of `shape` in
             // `scope`: the compiler's copy of this mapping (image_extent in
             // tvm/s_tir/backend/adreno/texture.py, which must work without an OpenCL runtime)
             // is tested against it.
             std::vector<int64_t> dims(shape.begin(), shape.end());
             ImageLayout layout = TextureLayoutFor(static_cast<int>(dims.size()), dims.data(),
                                                   DLDataType{kDLFloat, 32, 1}, scope);
             return {static_cast<int64_t>(layout.width), static_cast<int64_t>(layout.height),
                     static_cast<int64_t>(layout.depth)};
           })
      .def("runtime.opencl.image_limit",
           [](int32_t device_id, ffi::String what) -> int64_t {
             // One value per call, a plain integer, so that it also travels over TVM RPC.
             // 0 for a device without image support.
             const DeviceEntry& dev = Platforms::Global()->Get(device_id);
             if (what == "width") return static_cast<int64_t>(dev.image2d_max_width);
             if (what == "height") return static_cast<int64_t>(dev.image2d_max_height);
             if (what == "layers") return static_cast<int64_t>(dev.image_max_array_size);
             TVM_FFI_THROW(ValueError) << "runtime.opencl.image_limit: unknown limit '" << what
                                       << "' (width, height or layers)";
           })
      .def("runtime.opencl.device_string",
           [](int32_t device_id, ffi::String what) -> ffi::String {
             // What the runtime's own device enumeration read, so that callers (tests that
             // pick their dtypes by cl_khr_fp16, say) need no second enumeration of theirs.
             const DeviceEntry& dev = Platforms::Global()->Get(device_id);
             if (what == "platform") return dev.platform_name;
             if (what == "name") return dev.device_name;
             if (what == "extensions") return dev.extensions;
             if (what == "version") return dev.device_version;
             if (what == "driver") return dev.driver_version;
             TVM_FFI_THROW(ValueError) << "runtime.opencl.device_string: unknown field '" << what
                                       << "' (platform, name, extensions, version or driver)";
           })
      .def("runtime.opencl.no_device_reason",
           []() -> ffi::String { return Platforms::Global()->UnavailableReason(); });
}

}  // namespace cl
}  // namespace runtime
}  // namespace tvm
