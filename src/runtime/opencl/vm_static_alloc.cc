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
 * \file vm_static_alloc.cc
 * \brief vm.builtin.cached_static_alloc: the statically planned storage and tensors of a Relax
 *        function, allocated on its first call and reused by the calls after it.
 *
 * ``relax.transform.HoistStaticAllocations`` moves the allocations whose sizes are known at
 * compile time (and whose tensors never leave the function) into a function of their own and
 * calls it through this builtin. The builtin runs that function once per VM and per entry and
 * keeps the tuple it returns in a VM extension, so a steady-state call allocates nothing and
 * frees nothing: the planned memory lives as long as the VM. A VM runs one call at a time, so
 * the calls of one VM never share the cached intermediates concurrently.
 *
 * This is a VM builtin (upstream: src/runtime/vm/builtin.cc, beside the CUDA-graph builtins
 * that cache allocations the same way for captured graphs); it ships with the OpenCL runtime
 * library because the base wheel's runtime cannot be rebuilt here.
 */
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/runtime/vm/vm.h>

#include <cstdint>
#include <unordered_map>

namespace tvm {
namespace runtime {
namespace vm {
namespace {

/*! \brief Per VM: entry index -> the tuple the entry's allocation function returned. */
class StaticAllocCacheNode : public VMExtensionNode {
 public:
  std::unordered_map<int64_t, ffi::Any> entries;

  // Filled on first use by the builtin below.
  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("runtime.vm.StaticAllocCache", StaticAllocCacheNode,
                                    VMExtensionNode);
};

class StaticAllocCache : public VMExtension {
 public:
  static StaticAllocCache Create() {
    return StaticAllocCache(ffi::make_object<StaticAllocCacheNode>());
  }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(StaticAllocCache, VMExtension,
                                             StaticAllocCacheNode);
};

ffi::Any CachedStaticAlloc(void* vm_ptr, ffi::ObjectRef alloc_func, int64_t entry_index) {
  VirtualMachine* vm = static_cast<VirtualMachine*>(vm_ptr);
  StaticAllocCacheNode* cache = vm->GetOrCreateExtension<StaticAllocCache>().get();
  auto it = cache->entries.find(entry_index);
  if (it != cache->entries.end()) return it->second;
  ffi::Any allocated;
  vm->InvokeClosurePacked(alloc_func, ffi::PackedArgs(nullptr, 0), &allocated);
  cache->entries.emplace(entry_index, allocated);
  return allocated;
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef().def("vm.builtin.cached_static_alloc", CachedStaticAlloc);
}

}  // namespace vm
}  // namespace runtime
}  // namespace tvm
