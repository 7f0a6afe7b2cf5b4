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
 * \file opencl_counters.cc
 * \brief runtime.opencl.counters / runtime.opencl.reset_counters, see opencl_counters.h.
 */
#include "opencl_counters.h"

#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

namespace tvm {
namespace runtime {
namespace cl {

std::atomic<int64_t>* CounterSlots() {
  // Never destroyed: commands may still be counted while the process exits.
  static auto* slots = new std::atomic<int64_t>[static_cast<int>(Counter::kCount)]();
  return slots;
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("runtime.opencl.counters",
           []() {
             ffi::Map<ffi::String, int64_t> m;
             for (int i = 0; i < static_cast<int>(Counter::kCount); ++i) {
               m.Set(kCounterNames[i], CounterSlots()[i].load(std::memory_order_relaxed));
             }
             return m;
           })
      .def("runtime.opencl.reset_counters", []() {
        for (int i = 0; i < static_cast<int>(Counter::kCount); ++i) {
          CounterSlots()[i].store(0, std::memory_order_relaxed);
        }
      });
}

}  // namespace cl
}  // namespace runtime
}  // namespace tvm
