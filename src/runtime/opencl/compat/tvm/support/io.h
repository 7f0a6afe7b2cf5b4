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
 * \file compat/tvm/support/io.h
 * \brief Minimal stand-in for TVM's support/io.h, which the wheel does not ship.
 *
 * The wheel's tensor.h and metadata.h include this header and only need a byte stream with
 * typed Read/Write helpers. Everything here is compiled with hidden visibility inside
 * libtvm_runtime_opencl.so, so it never collides with TVM's own (unexported) definition.
 */
#ifndef TVM_SUPPORT_IO_H_
#define TVM_SUPPORT_IO_H_

#include <cstddef>
#include <cstdint>

namespace tvm {
namespace support {

/*! \brief A byte stream; typed helpers are defined in serializer.h. */
class Stream {
 public:
  virtual ~Stream() = default;
  /*! \return the number of bytes actually read. */
  virtual size_t Read(void* ptr, size_t size) = 0;
  /*! \return the number of bytes written. */
  virtual size_t Write(const void* ptr, size_t size) = 0;

  template <typename T>
  void Write(const T& value);
  template <typename T>
  bool Read(T* out);
  template <typename T>
  void WriteArray(const T* data, size_t num);
  template <typename T>
  bool ReadArray(T* data, size_t num);
};

}  // namespace support
}  // namespace tvm

#endif  // TVM_SUPPORT_IO_H_
