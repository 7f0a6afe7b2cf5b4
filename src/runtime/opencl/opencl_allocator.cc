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
 * \file opencl_allocator.cc
 * \brief The Relax VM allocator for OpenCL (DeviceAllocator.opencl), with texture views.
 *
 * Texture views over flat storage. The VM allocates flat "global" storage and then asks for
 * tensors in it with a texture scope (CreateView). Where an image cannot alias a buffer (no
 * cl_khr_image2d_from_buffer: PoCL, NVIDIA), a view gets its own image and we keep this
 * invariant: the flat buffer holds the data whenever no view is alive; while a view lives, its
 * image is the home of the data. CreateView copies buffer -> image, FreeView copies
 * image -> buffer. That keeps every pattern that is valid on flat storage valid with views,
 * including the static planner handing the same storage to different tensors over time.
 * The copies are enqueued on the device's in-order queue, so they are ordered with kernels
 * without host waits. Images are cached per buffer by geometry and reused by later views, so a
 * steady-state VM run creates no OpenCL objects.
 *
 * Image storage. Storage allocated with a texture scope (the Adreno pipeline's
 * PlanTextureStorage plans texture tensors that way) is an image; a texture view with the
 * image's own geometry is the image itself, with no copy. The pooled allocator keeps freed
 * images by geometry for the next allocation, as it keeps buffers by size.
 */
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/runtime/memory/memory_manager.h>

#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>

#include "opencl_common.h"

namespace tvm {
namespace runtime {
namespace cl {

namespace {

using memory::AllocatorType;
using memory::Buffer;

/*! \brief "[1, 2, 3, 5, 4] float32 'global.texture' (image 5x3x2)" for messages. */
std::string DescribeView(const ffi::Shape& shape, DLDataType dtype, const std::string& scope,
                         const ImageLayout& layout) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "] " << (layout.elem_bytes == 2 ? "float16" : "float32") << " '" << scope << "' (image "
     << layout.width << "x" << layout.height << "x" << layout.depth << ")";
  return os.str();
}

/*!
 * \brief The Buffer::size of image storage: StorageObj::AllocTensorScoped checks the bytes of
 * a tensor's dtype (ffi::GetDataSize, blind to the scope) against it. Storage of half pixels
 * for float32 tensors ("-half" scopes) holds as many float32 values as a float32 image would,
 * so it reports twice its backing bytes; UsedMemory counts the image's real bytes.
 */
size_t StorageBytes(const MemObject& img, const std::string& scope) {
  size_t suffix = std::strlen(kHalfPixelSuffix);
  bool half_scope = scope.size() > suffix &&
                    scope.compare(scope.size() - suffix, suffix, kHalfPixelSuffix) == 0;
  return half_scope ? 2 * img.nbytes : img.nbytes;
}

size_t FlatBytes(const ffi::Shape& shape, DLDataType dtype) {
  size_t n = 1;
  for (int64_t e : shape) n *= static_cast<size_t>(e);
  return n * ((dtype.bits * dtype.lanes + 7) / 8);
}

class OpenCLAllocator final : public memory::Allocator {
 public:
  explicit OpenCLAllocator(AllocatorType type) : Allocator(type) {}

  ~OpenCLAllocator() override {
    // Only reached if TVM destroys the MemoryManager; pooled buffers are ours to release.
    try {
      Clear();
    } catch (...) {
    }
  }

  Buffer Alloc(Device dev, size_t nbytes, size_t alignment, DLDataType type_hint) final {
    Buffer buf;
    buf.device = dev;
    buf.alloc_type = type();
    if (type() == memory::kPooled) {
      // Round to a page so that slightly different sizes share pool entries.
      size_t rounded = (nbytes + kPage - 1) / kPage * kPage;
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find({dev.device_id, rounded});
      if (it != free_.end()) {
        buf.data = it->second;
        free_.erase(it);
        buf.size = rounded;
        return buf;
      }
      buf.data = AllocBuffer(dev.device_id, rounded);
      buf.size = rounded;
      used_ += rounded;
      return buf;
    }
    buf.data = AllocBuffer(dev.device_id, nbytes);
    buf.size = nbytes;
    std::lock_guard<std::mutex> lock(mu_);
    used_ += nbytes;
    return buf;
  }

  Buffer Alloc(Device dev, ffi::Shape shape, DLDataType type_hint,
               const std::string& mem_scope) final {
    if (!IsTextureScope(mem_scope)) {
      size_t align = std::max<size_t>(kAllocAlignment, type_hint.bits * type_hint.lanes / 8);
      return Alloc(dev, FlatBytes(shape, type_hint), align, type_hint);
    }
    ImageLayout layout =
        TextureLayoutFor(static_cast<int>(shape.size()), shape.data(), type_hint, mem_scope);
    Buffer buf;
    buf.device = dev;
    buf.alloc_type = type();
    if (type() == memory::kPooled) {
      // Image storage planned by the compiler comes back every inference with the same
      // geometry: reuse a freed image so that a steady-state run creates no OpenCL object.
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_images_.find(MakeImageKey(dev.device_id, layout));
      if (it != free_images_.end()) {
        buf.data = it->second;
        buf.size = StorageBytes(*it->second, mem_scope);
        free_images_.erase(it);
        return buf;
      }
    }
    MemObject* img = AllocImage(dev.device_id, layout);
    buf.data = img;
    buf.size = StorageBytes(*img, mem_scope);
    std::lock_guard<std::mutex> lock(mu_);
    used_ += img->nbytes;
    return buf;
  }

  void* CreateView(const Buffer& buffer, ffi::Shape shape, DLDataType type_hint,
                   const std::string& mem_scope) final {
    if (!IsTextureScope(mem_scope)) return buffer.data;
    MemObject* base = AsMem(buffer.data);
    ImageLayout layout =
        TextureLayoutFor(static_cast<int>(shape.size()), shape.data(), type_hint, mem_scope);
    if (base->kind == MemKind::kImage) {
      // Storage that is itself an image (allocated with a texture scope): it is the view.
      if (base->image == layout) return base;
      TVM_FFI_THROW(ValueError) << "OpenCL: a texture view " << DescribeView(shape, type_hint,
                                                                         mem_scope, layout)
                                << " does not match its storage, an image of "
                                << base->image.width << "x" << base->image.height << "x"
                                << base->image.depth << " pixels: texture storage holds "
                                << "tensors of its own geometry only (plan such tensors in "
                                << "flat storage, or in a texture storage of their geometry)";
    }
    if (layout.TightBytes() > base->nbytes) {
      TVM_FFI_THROW(ValueError) << "OpenCL: a texture view " << DescribeView(shape, type_hint,
                                                                         mem_scope, layout)
                                << " needs " << layout.TightBytes()
                                << " bytes but its storage has " << base->nbytes;
    }
    MemObject* view = nullptr;
    {
      std::lock_guard<std::mutex> lock(base->view_mu);
      for (auto& cached : base->view_cache) {
        if (!cached->view_in_use && cached->image == layout) {
          view = cached.get();
          break;
        }
      }
      if (view == nullptr) {
        base->view_cache.emplace_back(AllocImage(base->device_id, layout));
        view = base->view_cache.back().get();
        view->view_parent = base;
      }
      view->view_in_use = true;
    }
    try {
      cl_command_queue q = Platforms::Global()->Get(base->device_id).Queue();
      CopyBufferToImage(q, *base, 0, *view);
    } catch (...) {
      std::lock_guard<std::mutex> lock(base->view_mu);
      view->view_in_use = false;
      throw;
    }
    return view;
  }

  void FreeView(Device dev, void* data) final {
    MemObject* view = AsMem(data);
    if (view == nullptr || view->view_parent == nullptr) return;
    MemObject* base = view->view_parent;
    try {
      cl_command_queue q = Platforms::Global()->Get(base->device_id).Queue();
      CopyImageToBuffer(q, *view, *base, 0);
    } catch (const std::exception& e) {
      // Called from a tensor deleter: report instead of throwing through it.
      std::cerr << "[tvm opencl] warning: write-back of a texture view failed: " << e.what()
                << std::endl;
    }
    std::lock_guard<std::mutex> lock(base->view_mu);
    view->view_in_use = false;
  }

  void Free(const Buffer& buffer) final {
    MemObject* mem = AsMem(buffer.data);
    if (mem == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (type() == memory::kPooled && mem->kind == MemKind::kBuffer) {
      free_.emplace(std::make_pair(buffer.device.device_id, buffer.size), mem);
      return;
    }
    if (type() == memory::kPooled && mem->kind == MemKind::kImage && mem->view_parent == nullptr) {
      free_images_.emplace(MakeImageKey(mem->device_id, mem->image), mem);
      return;
    }
    used_ -= std::min(used_, mem->kind == MemKind::kImage ? mem->nbytes : buffer.size);
    FreeMem(mem);
  }

  void Clear() final {
    std::multimap<std::pair<int, size_t>, MemObject*> to_free;
    std::multimap<ImageKey, MemObject*> images_to_free;
    {
      std::lock_guard<std::mutex> lock(mu_);
      to_free.swap(free_);
      images_to_free.swap(free_images_);
      for (auto& kv : to_free) used_ -= std::min(used_, kv.first.second);
      for (auto& kv : images_to_free) used_ -= std::min(used_, kv.second->nbytes);
    }
    for (auto& kv : to_free) FreeMem(kv.second);
    for (auto& kv : images_to_free) FreeMem(kv.second);
  }

  size_t UsedMemory() const final {
    std::lock_guard<std::mutex> lock(mu_);
    return used_;
  }

 protected:
  bool AllowMemoryScope(const std::string& mem_scope) const final {
    return mem_scope.empty() || mem_scope == "global" || IsTextureScope(mem_scope);
  }

 private:
  static constexpr size_t kPage = 4096;
  mutable std::mutex mu_;
  // Pooled free buffers keyed by (device id, size).
  std::multimap<std::pair<int, size_t>, MemObject*> free_;
  // Pooled free images (image storage, not views) keyed by device id and geometry.
  using ImageKey = std::tuple<int, size_t, size_t, size_t, cl_channel_type>;
  static ImageKey MakeImageKey(int device_id, const ImageLayout& l) {
    return ImageKey(device_id, l.width, l.height, l.depth, l.channel_type);
  }
  std::multimap<ImageKey, MemObject*> free_images_;
  size_t used_ = 0;
};

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef().def("DeviceAllocator.opencl", [](Device dev, int type) -> void* {
    // MemoryManager takes ownership of the returned allocator.
    return static_cast<memory::Allocator*>(
        new OpenCLAllocator(static_cast<AllocatorType>(type)));
  });
}

}  // namespace cl
}  // namespace runtime
}  // namespace tvm
