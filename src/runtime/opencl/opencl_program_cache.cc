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
 * \file opencl_program_cache.cc
 * \brief Persistent program binary cache, see opencl_program_cache.h.
 *
 * Entry file layout (little-endian):
 *   magic "TVMCLPC1" | u32 format version | u32 reserved | u64 key length | key bytes |
 *   u64 binary length | u64 FNV-1a of the binary | binary bytes
 * The file name is the FNV-1a of the key; the stored key guards against collisions and
 * against entries written for another device/driver.
 */
#include "opencl_program_cache.h"

#include <unistd.h>

#include <tvm/ffi/container/map.h>
#include <tvm/ffi/reflection/registry.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace tvm {
namespace runtime {
namespace cl {

namespace {

constexpr char kMagic[8] = {'T', 'V', 'M', 'C', 'L', 'P', 'C', '1'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderFixed = 8 + 4 + 4 + 8;

// Counters for tests and diagnostics (runtime.opencl.program_cache_stats).
std::atomic<int64_t> stat_hits{0}, stat_misses{0}, stat_invalid{0}, stat_stores{0},
    stat_write_failures{0};

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string EntryPath(const std::string& dir, const std::string& key) {
  return dir + "/" + Hex64(Fnv1a64(key.data(), key.size())) + ".clbin";
}

template <typename T>
void Append(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <typename T>
bool ReadAt(const std::string& s, size_t* pos, T* out) {
  if (s.size() - *pos < sizeof(T)) return false;
  std::memcpy(out, s.data() + *pos, sizeof(T));
  *pos += sizeof(T);
  return true;
}

}  // namespace

uint64_t Fnv1a64(const void* data, size_t size, uint64_t seed) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

void WarnOnce(const char* topic, const std::string& message) {
  static std::mutex mu;
  static std::set<std::string>* seen = new std::set<std::string>();
  std::lock_guard<std::mutex> lock(mu);
  if (!seen->insert(topic).second) return;
  std::cerr << "[tvm opencl] warning: " << message << std::endl;
}

bool ProgramCache::Enabled() {
  const char* v = std::getenv("TVM_OPENCL_CACHE");
  if (v != nullptr && (std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 ||
                       std::strcmp(v, "false") == 0)) {
    return false;
  }
  return !Directory().empty();
}

namespace {
// Set by the application (runtime.opencl.set_program_cache_dir); empty: use the environment.
std::mutex app_dir_mu;
std::string* app_dir = new std::string();  // never destroyed: read during process exit
}  // namespace

void ProgramCache::SetDirectory(const std::string& dir) {
  std::lock_guard<std::mutex> lock(app_dir_mu);
  *app_dir = dir;
}

std::string ProgramCache::Directory() {
  {
    std::lock_guard<std::mutex> lock(app_dir_mu);
    if (!app_dir->empty()) return *app_dir;
  }
  // Read each time so that tests (and embedders) can move the cache within one process.
  if (const char* d = std::getenv("TVM_OPENCL_CACHE_DIR"); d != nullptr && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x) {
    return std::string(x) + "/tvm/opencl";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h) {
    return std::string(h) + "/.cache/tvm/opencl";
  }
  return "";
}

std::string ProgramCache::MakeKey(const DeviceEntry& dev, const std::string& options,
                                  const std::string& source) {
  std::ostringstream os;
  os << "tvm-opencl-program-cache\n"
     << "platform=" << dev.platform_name << "\n"
     << "platform_version=" << dev.platform_version << "\n"
     << "device=" << dev.device_name << "\n"
     << "device_version=" << dev.device_version << "\n"
     << "driver=" << dev.driver_version << "\n"
     << "options=" << options << "\n"
     << "source_fnv=" << Hex64(Fnv1a64(source.data(), source.size())) << "\n"
     << "source_len=" << source.size() << "\n";
  return os.str();
}

bool ProgramCache::Load(const std::string& key, std::string* binary) {
  if (!Enabled()) return false;
  std::string path = EntryPath(Directory(), key);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ++stat_misses;
    return false;
  }
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const char* problem = nullptr;
  size_t pos = 0;
  uint32_t version = 0, reserved = 0;
  uint64_t key_len = 0, bin_len = 0, checksum = 0;
  if (data.size() < kHeaderFixed || std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0) {
    problem = "bad header (truncated or not a TVM OpenCL cache entry)";
  } else {
    pos = sizeof(kMagic);
    ReadAt(data, &pos, &version);
    ReadAt(data, &pos, &reserved);
    ReadAt(data, &pos, &key_len);
    if (version != kFormatVersion) {
      problem = "unknown entry format version";
    } else if (key_len > data.size() - pos) {
      problem = "truncated key";
    } else if (data.compare(pos, key_len, key) != 0) {
      problem = "entry written for another device, driver or source";
    } else {
      pos += key_len;
      if (!ReadAt(data, &pos, &bin_len) || !ReadAt(data, &pos, &checksum)) {
        problem = "truncated header";
      } else if (bin_len != data.size() - pos) {
        problem = "truncated or padded binary";
      } else if (Fnv1a64(data.data() + pos, bin_len) != checksum) {
        problem = "checksum mismatch (corrupted binary)";
      }
    }
  }
  if (problem != nullptr) {
    WarnOnce("cache-invalid", "OpenCL program cache entry " + path + " is invalid: " + problem +
                                  "; rebuilding it (further invalid entries are not reported)");
    std::error_code ec;
    std::filesystem::remove(path, ec);
    ++stat_invalid;
    ++stat_misses;
    return false;
  }
  binary->assign(data, pos, bin_len);
  ++stat_hits;
  return true;
}

void ProgramCache::Store(const std::string& key, const std::string& binary) {
  if (!Enabled() || binary.empty()) return;
  std::string dir = Directory();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    ++stat_write_failures;
    WarnOnce("cache-write", "OpenCL program cache folder " + dir + " cannot be created (" +
                                ec.message() + "); programs will not be cached");
    return;
  }
  std::string blob;
  blob.reserve(kHeaderFixed + key.size() + 16 + binary.size());
  blob.append(kMagic, sizeof(kMagic));
  Append<uint32_t>(&blob, kFormatVersion);
  Append<uint32_t>(&blob, 0);
  Append<uint64_t>(&blob, key.size());
  blob += key;
  Append<uint64_t>(&blob, binary.size());
  Append<uint64_t>(&blob, Fnv1a64(binary.data(), binary.size()));
  blob += binary;

  std::string path = EntryPath(dir, key);
  // Unique temp name per process and thread; rename makes the entry appear atomically.
  std::ostringstream tmp_name;
  tmp_name << path << ".tmp." << getpid() << "." << std::hash<std::thread::id>()(
                                                         std::this_thread::get_id());
  std::string tmp = tmp_name.str();
  bool ok = false;
  {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f != nullptr) {
      ok = std::fwrite(blob.data(), 1, blob.size(), f) == blob.size();
      ok = (std::fflush(f) == 0) && ok;
      ok = (std::fclose(f) == 0) && ok;
    }
  }
  if (ok) ok = std::rename(tmp.c_str(), path.c_str()) == 0;
  if (ok) ++stat_stores;
  if (!ok) {
    int err = errno;
    ++stat_write_failures;
    std::filesystem::remove(tmp, ec);
    WarnOnce("cache-write", "OpenCL program cache entry " + path + " cannot be written (" +
                                std::strerror(err) + "); continuing without caching");
  }
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("runtime.opencl.set_program_cache_dir",
           [](ffi::String dir) { ProgramCache::SetDirectory(std::string(dir)); })
      .def("runtime.opencl.program_cache_dir",
           []() { return ffi::String(ProgramCache::Enabled() ? ProgramCache::Directory() : ""); })
      .def("runtime.opencl.program_cache_stats", []() {
        ffi::Map<ffi::String, int64_t> m;
        m.Set("hits", stat_hits.load());
        m.Set("misses", stat_misses.load());
        m.Set("invalid", stat_invalid.load());
        m.Set("stores", stat_stores.load());
        m.Set("write_failures", stat_write_failures.load());
        m.Set("enabled", ProgramCache::Enabled() ? 1 : 0);
        return m;
      });
}

}  // namespace cl
}  // namespace runtime
}  // namespace tvm
