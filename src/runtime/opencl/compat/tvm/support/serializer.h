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
 * \file compat/tvm/support/serializer.h
 * \brief Minimal stand-in for TVM's support/serializer.h (not shipped in the wheel).
 *
 * Encoding (little-endian hosts only, as TVM's): trivially copyable values as raw bytes,
 * strings as a u64 length then the bytes, arrays as a u64 count then each element.
 * This is also the encoding of the serialized OpenCL module, see opencl_module.cc.
 */
#ifndef TVM_SUPPORT_SERIALIZER_H_
#define TVM_SUPPORT_SERIALIZER_H_

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/string.h>
#include <tvm/support/io.h>

#include <string>
#include <type_traits>
#include <vector>

namespace tvm {
namespace support {

template <typename T, typename = void>
struct Serializer {
  static_assert(std::is_trivially_copyable<T>::value, "no serializer for this type");
  static constexpr bool enabled = true;
  static void Write(Stream* strm, const T& value) { strm->Write(&value, sizeof(T)); }
  static bool Read(Stream* strm, T* out) { return strm->Read(out, sizeof(T)) == sizeof(T); }
};

namespace detail {
// Refuse lengths larger than what a stream could still hold is the reader's job; here we
// only cap absurd values so a corrupt length cannot trigger a huge allocation.
constexpr uint64_t kMaxSerializedLength = uint64_t(1) << 40;

inline bool ReadBytes(Stream* strm, std::string* out) {
  uint64_t size = 0;
  if (strm->Read(&size, sizeof(size)) != sizeof(size)) return false;
  if (size > kMaxSerializedLength) return false;
  out->resize(static_cast<size_t>(size));
  if (size == 0) return true;
  return strm->Read(&(*out)[0], static_cast<size_t>(size)) == size;
}
inline void WriteBytes(Stream* strm, const char* data, size_t size) {
  uint64_t n = size;
  strm->Write(&n, sizeof(n));
  if (size != 0) strm->Write(data, size);
}
}  // namespace detail

template <>
struct Serializer<std::string> {
  static constexpr bool enabled = true;
  static void Write(Stream* strm, const std::string& s) {
    detail::WriteBytes(strm, s.data(), s.size());
  }
  static bool Read(Stream* strm, std::string* out) { return detail::ReadBytes(strm, out); }
};

template <>
struct Serializer<ffi::String> {
  static constexpr bool enabled = true;
  static void Write(Stream* strm, const ffi::String& s) {
    detail::WriteBytes(strm, s.data(), s.size());
  }
  static bool Read(Stream* strm, ffi::String* out) {
    std::string tmp;
    if (!detail::ReadBytes(strm, &tmp)) return false;
    *out = ffi::String(std::move(tmp));
    return true;
  }
};

template <typename T>
struct Serializer<std::vector<T>> {
  static constexpr bool enabled = true;
  static void Write(Stream* strm, const std::vector<T>& v) {
    uint64_t n = v.size();
    strm->Write(&n, sizeof(n));
    for (const T& e : v) Serializer<T>::Write(strm, e);
  }
  static bool Read(Stream* strm, std::vector<T>* out) {
    uint64_t n = 0;
    if (strm->Read(&n, sizeof(n)) != sizeof(n)) return false;
    if (n > detail::kMaxSerializedLength) return false;
    out->clear();
    for (uint64_t i = 0; i < n; ++i) {
      T e;
      if (!Serializer<T>::Read(strm, &e)) return false;
      out->push_back(std::move(e));
    }
    return true;
  }
};

template <typename T>
struct Serializer<ffi::Array<T>> {
  static constexpr bool enabled = true;
  static void Write(Stream* strm, const ffi::Array<T>& v) {
    uint64_t n = v.size();
    strm->Write(&n, sizeof(n));
    for (const T& e : v) Serializer<T>::Write(strm, e);
  }
  static bool Read(Stream* strm, ffi::Array<T>* out) {
    uint64_t n = 0;
    if (strm->Read(&n, sizeof(n)) != sizeof(n)) return false;
    if (n > detail::kMaxSerializedLength) return false;
    ffi::Array<T> result;
    for (uint64_t i = 0; i < n; ++i) {
      T e;
      if (!Serializer<T>::Read(strm, &e)) return false;
      result.push_back(std::move(e));
    }
    *out = std::move(result);
    return true;
  }
};

template <typename T>
inline void Stream::Write(const T& value) {
  Serializer<T>::Write(this, value);
}
template <typename T>
inline bool Stream::Read(T* out) {
  return Serializer<T>::Read(this, out);
}
template <typename T>
inline void Stream::WriteArray(const T* data, size_t num) {
  for (size_t i = 0; i < num; ++i) Write(data[i]);
}
template <typename T>
inline bool Stream::ReadArray(T* data, size_t num) {
  for (size_t i = 0; i < num; ++i) {
    if (!Read(data + i)) return false;
  }
  return true;
}

}  // namespace support
}  // namespace tvm

#endif  // TVM_SUPPORT_SERIALIZER_H_
