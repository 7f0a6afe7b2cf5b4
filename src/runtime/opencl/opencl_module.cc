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
 * \file opencl_module.cc
 * \brief The OpenCL device module: (de)serialization, lazy per-device programs, kernel launch,
 *        precompiled programs and the persistent program cache.
 *
 * Serialized form (little-endian, strings are u64 length + bytes):
 *   fmt | u64 n, n x (key, FunctionInfo) | code
 * FunctionInfo: name | u64 k, k x {u8 code, u8 bits, u16 lanes} | u64 t, t x tag string |
 *               u64 e, e x i32. The code holds one self-contained unit per kernel, each starting
 * with "// Function: <name>"; every kernel gets its own program.
 */
#include <tvm/ffi/cast.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "metadata.h"  // shipped in the wheel under tvm/src/runtime
#include "opencl_common.h"
#include "opencl_counters.h"
#include "opencl_timer.h"
#include "opencl_program_cache.h"

namespace tvm {
namespace runtime {
namespace cl {

namespace {

constexpr const char* kFunctionMarker = "// Function: ";
constexpr const char* kGetPrecompiled = "opencl.GetPreCompiledPrograms";
constexpr const char* kSetPrecompiled = "opencl.SetPreCompiledPrograms";

/*! \brief Bounds-checked little-endian reader that reports where malformed input breaks. */
class ByteReader {
 public:
  ByteReader(const char* data, size_t size, const char* what)
      : data_(data), size_(size), what_(what) {}

  template <typename T>
  T Read(const char* field) {
    if (size_ - pos_ < sizeof(T)) Fail(field, "ends early");
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string ReadString(const char* field) {
    uint64_t n = Read<uint64_t>(field);
    if (n > size_ - pos_) Fail(field, "has a length beyond the end of the data");
    std::string s(data_ + pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }

  /*! \brief A count of items of at least min_item_bytes each, checked against what is left. */
  uint64_t ReadCount(const char* field, size_t min_item_bytes) {
    uint64_t n = Read<uint64_t>(field);
    if (min_item_bytes > 0 && n > (size_ - pos_) / min_item_bytes) {
      Fail(field, "is larger than the remaining data allows");
    }
    return n;
  }

  bool AtEnd() const { return pos_ == size_; }
  size_t pos() const { return pos_; }

  [[noreturn]] void Fail(const char* field, const char* problem) const {
    TVM_FFI_THROW(ValueError) << "Malformed " << what_ << ": " << field << " " << problem
                              << " (at byte " << pos_ << " of " << size_ << ")";
    TVM_FFI_UNREACHABLE();
  }

 private:
  const char* data_;
  size_t size_;
  size_t pos_ = 0;
  const char* what_;
};

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}
void PutString(std::string* out, const std::string& s) {
  Put<uint64_t>(out, s.size());
  out->append(s);
}

/*! \brief Split the code into per-kernel units by their "// Function: <name>" markers. */
std::map<std::string, std::string> SplitUnits(const std::string& code) {
  std::map<std::string, std::string> units;
  std::vector<size_t> starts;
  size_t marker_len = std::strlen(kFunctionMarker);
  for (size_t p = code.find(kFunctionMarker); p != std::string::npos;
       p = code.find(kFunctionMarker, p + 1)) {
    if (p == 0 || code[p - 1] == '\n') starts.push_back(p);
  }
  if (starts.empty()) return units;
  // Text before the first marker (pragmas, typedefs) belongs to every unit.
  std::string preamble = code.substr(0, starts[0]);
  for (size_t i = 0; i < starts.size(); ++i) {
    size_t begin = starts[i];
    size_t end = i + 1 < starts.size() ? starts[i + 1] : code.size();
    size_t eol = code.find('\n', begin);
    if (eol == std::string::npos || eol > end) eol = end;
    std::string name = code.substr(begin + marker_len, eol - begin - marker_len);
    while (!name.empty() && (name.back() == '\r' || name.back() == ' ')) name.pop_back();
    if (units.count(name)) {
      TVM_FFI_THROW(ValueError) << "OpenCL module source defines kernel '" << name << "' twice";
    }
    units[name] = preamble + code.substr(begin, end - begin);
  }
  return units;
}

struct KernelSpec {
  std::string name;
  std::vector<DLDataType> arg_types;
  std::vector<std::string> launch_tags;
  std::string source;
  // Decoded launch tags: for each tag, 0..2 = grid x/y/z, 3..5 = block x/y/z.
  std::vector<int> tag_slots;
  int work_dim = 1;
};

/*! \brief A kernel's program on one device. */
struct KernelState {
  std::mutex mu;  // guards everything below, and clSetKernelArg + enqueue as one step
  Handle<cl_program> program;
  Handle<cl_kernel> kernel;
  std::string cache_key;
  bool needs_store = false;  // built from source and not yet written to the cache
  bool launched = false;
};

std::string GetBuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (GetApi().GetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string log(size, '\0');
  GetApi().GetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, &log[0], nullptr);
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

std::string GetProgramBinary(cl_program program) {
  size_t size = 0;
  TVM_CL_CALL(GetProgramInfo, "querying a program binary size", program,
              CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr);
  if (size == 0) return "";
  std::string binary(size, '\0');
  unsigned char* ptr = reinterpret_cast<unsigned char*>(&binary[0]);
  TVM_CL_CALL(GetProgramInfo, "reading a program binary", program, CL_PROGRAM_BINARIES,
              sizeof(ptr), &ptr, nullptr);
  return binary;
}

/*! \brief Program from a binary; returns an empty handle (and the reason) if the driver refuses. */
Handle<cl_program> ProgramFromBinary(DeviceEntry& dev, const std::string& binary,
                                     const std::string& options, std::string* why) {
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  size_t size = binary.size();
  const unsigned char* ptr = reinterpret_cast<const unsigned char*>(binary.data());
  cl_program p = GetApi().CreateProgramWithBinary(dev.Context(), 1, &dev.device, &size, &ptr,
                                                  &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS) {
    if (p) GetApi().ReleaseProgram(p);
    *why = std::string("clCreateProgramWithBinary: ") +
           ErrorName(err != CL_SUCCESS ? err : status);
    return Handle<cl_program>();
  }
  Handle<cl_program> prog(p);
  err = GetApi().BuildProgram(p, 1, &dev.device, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    *why = std::string("clBuildProgram: ") + ErrorName(err);
    return Handle<cl_program>();
  }
  Count(Counter::kProgramsFromBinary);
  return prog;
}

class OpenCLModuleNode final : public ffi::ModuleObj {
 public:
  OpenCLModuleNode(std::string fmt, std::string code, ffi::Map<ffi::String, FunctionInfo> fmap)
      : fmt_(std::move(fmt)), code_(std::move(code)), fmap_(std::move(fmap)) {
    std::map<std::string, std::string> units = SplitUnits(code_);
    if (!units.empty() && units.size() != static_cast<size_t>(fmap_.size())) {
      TVM_FFI_THROW(ValueError) << "OpenCL module is inconsistent: the source has "
                                << units.size() << " kernel(s) but the function map has "
                                << fmap_.size();
    }
    for (const auto& kv : fmap_) {
      KernelSpec spec;
      spec.name = std::string(kv.first);
      const FunctionInfo& info = kv.second;
      for (const DLDataType& t : info->arg_types) spec.arg_types.push_back(t);
      for (const ffi::String& t : info->launch_param_tags) spec.launch_tags.push_back(t);
      DecodeTags(&spec);
      if (units.empty()) {
        spec.source = code_;  // no markers: one unit holding every kernel
      } else {
        auto it = units.find(spec.name);
        if (it == units.end()) {
          TVM_FFI_THROW(ValueError) << "OpenCL module is inconsistent: kernel '" << spec.name
                                    << "' of the function map has no source unit";
        }
        spec.source = it->second;
      }
      index_[spec.name] = kernels_.size();
      kernels_.push_back(std::move(spec));
    }
    SyncListeners::Global()->Add(this, &OpenCLModuleNode::OnSync);
  }

  ~OpenCLModuleNode() {
    SyncListeners::Global()->Remove(this);
    // Persist what ran in this process (PoCL compiles per work-group size at first launch).
    try {
      StorePending(-1);
    } catch (...) {
    }
  }

  const char* kind() const final { return "opencl"; }

  int GetPropertyMask() const final {
    return ffi::Module::kBinarySerializable | ffi::Module::kRunnable;
  }

  ffi::Optional<ffi::Function> GetFunction(const ffi::String& name) final {
    ffi::ObjectPtr<ffi::Object> self = ffi::GetObjectPtr<ffi::Object>(this);
    if (name == kGetPrecompiled) {
      return ffi::Function::FromTyped([self, this]() { return GetPrecompiledPrograms(); });
    }
    if (name == kSetPrecompiled) {
      return ffi::Function::FromPacked([self, this](ffi::PackedArgs args, ffi::Any* rv) {
        if (args.size() != 1) {
          TVM_FFI_THROW(TypeError) << kSetPrecompiled << " takes one bytes argument";
        }
        std::string blob;
        if (auto b = args[0].try_cast<ffi::Bytes>()) {
          blob.assign(b->data(), b->size());
        } else {
          ffi::String s = args[0].cast<ffi::String>();
          blob.assign(s.data(), s.size());
        }
        SetPrecompiledPrograms(blob);
      });
    }
    auto it = index_.find(std::string(name));
    if (it == index_.end()) return std::nullopt;
    size_t k = it->second;
    return ffi::Function::FromPacked(
        [self, this, k](ffi::PackedArgs args, ffi::Any* rv) { Launch(k, args); });
  }

  ffi::Bytes SaveToBytes() const final {
    std::string out;
    PutString(&out, fmt_);
    Put<uint64_t>(&out, fmap_.size());
    for (const auto& kv : fmap_) {
      PutString(&out, std::string(kv.first));
      const FunctionInfo& info = kv.second;
      PutString(&out, std::string(info->name));
      Put<uint64_t>(&out, info->arg_types.size());
      for (const DLDataType& t : info->arg_types) Put<DLDataType>(&out, t);
      Put<uint64_t>(&out, info->launch_param_tags.size());
      for (const ffi::String& t : info->launch_param_tags) PutString(&out, std::string(t));
      Put<uint64_t>(&out, info->arg_extra_tags.size());
      for (ArgExtraTags t : info->arg_extra_tags) Put<int32_t>(&out, static_cast<int32_t>(t));
    }
    PutString(&out, code_);
    return ffi::Bytes(std::move(out));
  }

  void WriteToFile(const ffi::String& file_name, const ffi::String& format) const final {
    std::ofstream out(std::string(file_name), std::ios::binary);
    if (!out) TVM_FFI_THROW(RuntimeError) << "Cannot open " << file_name << " for writing";
    out << code_;
  }

  ffi::Array<ffi::String> GetWriteFormats() const final { return {"cl"}; }

  ffi::String InspectSource(const ffi::String& format) const final { return code_; }

  static ffi::Module LoadFromBytes(const ffi::Bytes& bytes) {
    ByteReader r(bytes.data(), bytes.size(), "OpenCL module bytes");
    std::string fmt = r.ReadString("the format string");
    if (fmt != "cl") {
      TVM_FFI_THROW(ValueError) << "Malformed OpenCL module bytes: unsupported format '"
                                << fmt.substr(0, 32) << "' (expected 'cl')";
    }
    // Each map entry is at least two strings, two counts and one count: 40 bytes.
    uint64_t n = r.ReadCount("the function count", 40);
    ffi::Map<ffi::String, FunctionInfo> fmap;
    for (uint64_t i = 0; i < n; ++i) {
      std::string key = r.ReadString("a function key");
      std::string name = r.ReadString("a function name");
      uint64_t nargs = r.ReadCount("an argument count", sizeof(DLDataType));
      ffi::Array<DLDataType> arg_types;
      for (uint64_t j = 0; j < nargs; ++j) arg_types.push_back(r.Read<DLDataType>("an arg type"));
      uint64_t ntags = r.ReadCount("a launch tag count", 8);
      ffi::Array<ffi::String> tags;
      for (uint64_t j = 0; j < ntags; ++j) tags.push_back(r.ReadString("a launch tag"));
      uint64_t nextra = r.ReadCount("an extra tag count", 4);
      ffi::Array<ArgExtraTags> extra;
      for (uint64_t j = 0; j < nextra; ++j) {
        extra.push_back(static_cast<ArgExtraTags>(r.Read<int32_t>("an extra tag")));
      }
      if (fmap.count(key)) {
        TVM_FFI_THROW(ValueError) << "Malformed OpenCL module bytes: function '" << key
                                  << "' appears twice";
      }
      fmap.Set(key, FunctionInfo(name, arg_types, tags, extra));
    }
    std::string code = r.ReadString("the source code");
    if (!r.AtEnd()) r.Fail("the data", "has trailing bytes after the source code");
    auto node = ffi::make_object<OpenCLModuleNode>(fmt, std::move(code), std::move(fmap));
    return ffi::Module(node);
  }

 private:
  static void DecodeTags(KernelSpec* spec) {
    int max_dim = 0;
    for (const std::string& tag : spec->launch_tags) {
      int base = -1;
      if (tag.rfind("blockIdx.", 0) == 0) base = 0;
      if (tag.rfind("threadIdx.", 0) == 0) base = 3;
      char axis = tag.empty() ? '\0' : tag.back();
      if (base < 0 || axis < 'x' || axis > 'z') {
        TVM_FFI_THROW(ValueError) << "OpenCL kernel '" << spec->name
                                  << "' uses an unsupported launch parameter '" << tag << "'";
      }
      int dim = axis - 'x';
      spec->tag_slots.push_back(base + dim);
      max_dim = std::max(max_dim, dim + 1);
    }
    spec->work_dim = std::max(max_dim, 1);
  }

  KernelState& State(int device_id, size_t k) {
    std::lock_guard<std::mutex> lock(states_mu_);
    auto& vec = states_[device_id];
    if (vec.empty()) {
      vec.reserve(kernels_.size());
      for (size_t i = 0; i < kernels_.size(); ++i) vec.push_back(std::make_unique<KernelState>());
    }
    return *vec[k];
  }

  // Requires st.mu held.
  void EnsureBuilt(int device_id, size_t k, KernelState& st) {
    if (st.kernel) return;
    DeviceEntry& dev = Platforms::Global()->Get(device_id);
    const KernelSpec& spec = kernels_[k];
    if (!st.program) {
      bool cache = ProgramCache::Enabled();
      if (cache) st.cache_key = ProgramCache::MakeKey(dev, options_, spec.source);
      std::string binary, why;
      if (cache && ProgramCache::Load(st.cache_key, &binary)) {
        st.program = ProgramFromBinary(dev, binary, options_, &why);
        if (!st.program) {
          WarnOnce("cache-rejected", "OpenCL driver rejected a cached program binary (" + why +
                                         "); rebuilding from source");
        }
      }
      if (!st.program) {
        BuildFromSource(dev, spec, &st.program);
        st.needs_store = cache;
      }
    }
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = GetApi().CreateKernel(st.program.get(), spec.name.c_str(), &err);
    Check(err, "clCreateKernel", "creating kernel '" + spec.name + "' on " + dev.Describe());
    st.kernel.reset(kernel);
    Count(Counter::kKernelsCreated);
  }

  void BuildFromSource(DeviceEntry& dev, const KernelSpec& spec, Handle<cl_program>* out) {
    cl_int err = CL_SUCCESS;
    const char* src = spec.source.c_str();
    size_t len = spec.source.size();
    cl_program p = GetApi().CreateProgramWithSource(dev.Context(), 1, &src, &len, &err);
    Check(err, "clCreateProgramWithSource", "creating the program of kernel '" + spec.name + "'");
    Handle<cl_program> prog(p);
    err = GetApi().BuildProgram(p, 1, &dev.device, options_.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
      TVM_FFI_THROW(RuntimeError) << "OpenCL error " << ErrorName(err)
                                  << " in clBuildProgram while building kernel '" << spec.name
                                  << "' for " << dev.Describe() << ". Build log:\n"
                                  << GetBuildLog(p, dev.device);
    }
    Count(Counter::kProgramsBuilt);
    *out = std::move(prog);
  }

  void Launch(size_t k, ffi::PackedArgs args) {
    const KernelSpec& spec = kernels_[k];
    size_t nargs = spec.arg_types.size();
    if (static_cast<size_t>(args.size()) != nargs + spec.launch_tags.size()) {
      TVM_FFI_THROW(TypeError) << "OpenCL kernel '" << spec.name << "' expects "
                               << nargs + spec.launch_tags.size() << " arguments ("
                               << nargs << " + " << spec.launch_tags.size()
                               << " launch parameters), got " << args.size();
    }
    size_t work[6] = {1, 1, 1, 1, 1, 1};
    for (size_t j = 0; j < spec.launch_tags.size(); ++j) {
      int64_t v = args[nargs + j].cast<int64_t>();
      if (v < 0) TVM_FFI_THROW(ValueError) << "Negative launch extent for " << spec.name;
      work[spec.tag_slots[j]] = static_cast<size_t>(v);
    }
    size_t global[3], local[3];
    bool empty = false;
    for (int d = 0; d < 3; ++d) {
      global[d] = work[d] * work[3 + d];
      local[d] = work[3 + d];
      empty = empty || global[d] == 0;
    }
    if (empty) return;

    int device_id = CurrentDeviceId();
    DeviceEntry& dev = Platforms::Global()->Get(device_id);
    KernelState& st = State(device_id, k);
    std::lock_guard<std::mutex> lock(st.mu);
    EnsureBuilt(device_id, k, st);
    cl_kernel kernel = st.kernel.get();
    for (size_t i = 0; i < nargs; ++i) {
      SetArg(spec, kernel, static_cast<cl_uint>(i), spec.arg_types[i], args[i]);
    }
    CommandEvent event(dev, spec.name.c_str());
    cl_int err = GetApi().EnqueueNDRangeKernel(dev.Queue(), kernel, spec.work_dim, nullptr,
                                               global, local, 0, nullptr, event.out());
    if (err != CL_SUCCESS) {
      std::ostringstream os;
      os << "launching kernel '" << spec.name << "' (global [" << global[0] << ", " << global[1]
         << ", " << global[2] << "], local [" << local[0] << ", " << local[1] << ", "
         << local[2] << "]) on " << dev.Describe();
      ThrowError(err, "clEnqueueNDRangeKernel", os.str());
    }
    Count(Counter::kKernelLaunches);
    st.launched = true;
  }

  static void SetArg(const KernelSpec& spec, cl_kernel kernel, cl_uint i, DLDataType t,
                     const ffi::AnyView& v) {
    cl_int err = CL_SUCCESS;
    if (t.code == kDLOpaqueHandle) {
      // The handle is the MemObject, whose first member is the cl_mem (see opencl_common.h).
      void* handle = v.cast<void*>();
      err = GetApi().SetKernelArg(kernel, i, sizeof(cl_mem), handle);
    } else if (t.code == kDLInt || t.code == kDLUInt || t.code == kDLBool) {
      int64_t x = v.cast<int64_t>();
      if (t.bits == 64) {
        err = GetApi().SetKernelArg(kernel, i, 8, &x);
      } else if (t.bits == 32) {
        int32_t y = static_cast<int32_t>(x);
        err = GetApi().SetKernelArg(kernel, i, 4, &y);
      } else if (t.bits == 16) {
        int16_t y = static_cast<int16_t>(x);
        err = GetApi().SetKernelArg(kernel, i, 2, &y);
      } else {
        int8_t y = static_cast<int8_t>(x);
        err = GetApi().SetKernelArg(kernel, i, 1, &y);
      }
    } else if (t.code == kDLFloat && t.bits == 32) {
      float y = static_cast<float>(v.cast<double>());
      err = GetApi().SetKernelArg(kernel, i, 4, &y);
    } else if (t.code == kDLFloat && t.bits == 64) {
      double y = v.cast<double>();
      err = GetApi().SetKernelArg(kernel, i, 8, &y);
    } else {
      TVM_FFI_THROW(TypeError) << "OpenCL kernel '" << spec.name << "' argument " << i
                               << " has an unsupported type (code " << int(t.code) << ", bits "
                               << int(t.bits) << ")";
    }
    if (err != CL_SUCCESS) {
      ThrowError(err, "clSetKernelArg",
                 "setting argument " + std::to_string(i) + " of kernel '" + spec.name + "'");
    }
  }

  static void OnSync(void* ctx, int device_id) {
    try {
      static_cast<OpenCLModuleNode*>(ctx)->StorePending(device_id);
    } catch (const std::exception& e) {
      WarnOnce("cache-store", std::string("OpenCL program cache store failed: ") + e.what());
    }
  }

  /*! \brief Write launched-but-unsaved programs to the cache (device_id -1: all devices). */
  void StorePending(int device_id) {
    std::vector<KernelState*> todo;
    {
      std::lock_guard<std::mutex> lock(states_mu_);
      for (auto& kv : states_) {
        if (device_id >= 0 && kv.first != device_id) continue;
        for (auto& st : kv.second) todo.push_back(st.get());
      }
    }
    for (KernelState* st : todo) {
      std::lock_guard<std::mutex> lock(st->mu);
      if (!st->needs_store || !st->launched || !st->program) continue;
      st->needs_store = false;
      ProgramCache::Store(st->cache_key, GetProgramBinary(st->program.get()));
    }
  }

  ffi::Bytes GetPrecompiledPrograms() {
    int device_id = CurrentDeviceId();
    std::string out;
    Put<uint64_t>(&out, kernels_.size());
    for (size_t k = 0; k < kernels_.size(); ++k) {
      KernelState& st = State(device_id, k);
      std::lock_guard<std::mutex> lock(st.mu);
      EnsureBuilt(device_id, k, st);
      PutString(&out, kernels_[k].name);
      PutString(&out, GetProgramBinary(st.program.get()));
    }
    return ffi::Bytes(std::move(out));
  }

  void SetPrecompiledPrograms(const std::string& blob) {
    int device_id = CurrentDeviceId();
    DeviceEntry& dev = Platforms::Global()->Get(device_id);
    ByteReader r(blob.data(), blob.size(), "OpenCL precompiled programs");
    uint64_t n = r.ReadCount("the program count", 16);
    std::vector<std::pair<size_t, std::string>> entries;
    for (uint64_t i = 0; i < n; ++i) {
      std::string name = r.ReadString("a kernel name");
      std::string binary = r.ReadString("a program binary");
      auto it = index_.find(name);
      if (it == index_.end()) {
        TVM_FFI_THROW(ValueError) << "OpenCL precompiled programs name kernel '" << name
                                  << "', which this module does not have";
      }
      entries.emplace_back(it->second, std::move(binary));
    }
    if (!r.AtEnd()) r.Fail("the data", "has trailing bytes");
    for (auto& e : entries) {
      std::string why;
      Handle<cl_program> prog = ProgramFromBinary(dev, e.second, options_, &why);
      if (!prog) {
        TVM_FFI_THROW(RuntimeError) << "OpenCL precompiled program of kernel '"
                                    << kernels_[e.first].name << "' was rejected by "
                                    << dev.Describe() << " (" << why << ")";
      }
      KernelState& st = State(device_id, e.first);
      std::lock_guard<std::mutex> lock(st.mu);
      st.kernel.reset();
      st.program = std::move(prog);
      st.needs_store = false;
    }
  }

  std::string fmt_;
  std::string code_;
  ffi::Map<ffi::String, FunctionInfo> fmap_;
  std::string options_;
  std::vector<KernelSpec> kernels_;
  std::unordered_map<std::string, size_t> index_;
  std::mutex states_mu_;
  std::map<int, std::vector<std::unique_ptr<KernelState>>> states_;
};

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("ffi.Module.load_from_bytes.opencl", OpenCLModuleNode::LoadFromBytes)
      // Called by codegen at compile time (code as bytes, fmt, function map, a map of
      // sources by format): must not touch any device.
      .def("ffi.Module.create.opencl",
           [](ffi::Any code, ffi::String fmt, ffi::Map<ffi::String, FunctionInfo> fmap,
              ffi::Any sources) -> ffi::Module {
             std::string text;
             if (auto b = code.try_cast<ffi::Bytes>()) {
               text.assign(b->data(), b->size());
             } else {
               ffi::String s = code.cast<ffi::String>();
               text.assign(s.data(), s.size());
             }
             std::string format = fmt.empty() ? std::string("cl") : std::string(fmt);
             return ffi::Module(
                 ffi::make_object<OpenCLModuleNode>(format, std::move(text), fmap));
           });
}

}  // namespace cl
}  // namespace runtime
}  // namespace tvm
