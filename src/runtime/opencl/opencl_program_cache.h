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
 * \file opencl_program_cache.h
 * \brief Persistent on-disk cache of OpenCL program binaries.
 *
 * On by default in a per-user folder: the folder the application set with
 * runtime.opencl.set_program_cache_dir (an Android app passes its cache folder: it has no $HOME),
 * else $TVM_OPENCL_CACHE_DIR, else $XDG_CACHE_HOME/tvm/opencl, else ~/.cache/tvm/opencl; with
 * none of them the cache is off. TVM_OPENCL_CACHE=0 turns it off. Entries are keyed by platform,
 * device, driver version, build options and the source; each file carries a magic, the full
 * key and a checksum, so a truncated, corrupted or foreign entry is detected, reported once,
 * rebuilt and replaced. Any file system failure degrades to "no cache", never to an error.
 */
#ifndef TVM_RUNTIME_OPENCL_OPENCL_PROGRAM_CACHE_H_
#define TVM_RUNTIME_OPENCL_OPENCL_PROGRAM_CACHE_H_

#include <cstdint>
#include <string>

#include "opencl_common.h"

namespace tvm {
namespace runtime {
namespace cl {

/*! \brief 64-bit FNV-1a, used for file names and entry checksums (not for security). */
uint64_t Fnv1a64(const void* data, size_t size, uint64_t seed = 14695981039346656037ULL);

class ProgramCache {
 public:
  /*! \brief Whether the cache is turned on (TVM_OPENCL_CACHE is not "0"). */
  static bool Enabled();
  /*! \brief The folder used, or "" when no folder can be determined. */
  static std::string Directory();
  /*! \brief Place the cache in `dir` (takes precedence over the environment); "" undoes it. */
  static void SetDirectory(const std::string& dir);
  /*! \brief The full key of a program: everything its binary depends on. */
  static std::string MakeKey(const DeviceEntry& dev, const std::string& options,
                             const std::string& source);
  /*! \brief Read a valid entry. Returns false on a miss or an invalid entry (removed). */
  static bool Load(const std::string& key, std::string* binary);
  /*! \brief Store an entry atomically (temp file + rename); failures only warn, once. */
  static void Store(const std::string& key, const std::string& binary);
};

/*! \brief Print a warning once per process for the given topic. */
void WarnOnce(const char* topic, const std::string& message);

}  // namespace cl
}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_OPENCL_OPENCL_PROGRAM_CACHE_H_
