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
 * \file compat/tvm/ir/transform.h
 * \brief The part of TVM's <tvm/ir/transform.h> that registers a PassContext option.
 *
 * The wheel ships the runtime headers only. The compiler C++ that the patch series adds
 * (src/relax/backend/adreno) is built here against libtvm_compiler.so, which exports
 * PassContext::RegisterConfigOption(const char*, ffi::String, std::function<Any(Any)>); this
 * header declares that function and a registration macro of the same name and use as TVM's.
 * Workspace-only: upstream builds those files with the real header.
 */
#ifndef TVM_IR_TRANSFORM_H_
#define TVM_IR_TRANSFORM_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <functional>

namespace tvm {

/*! \brief TVM's Bool (<tvm/ir/expr.h>, not shipped): a config of it reads back as a bool. */
using Bool = bool;

namespace transform {

class PassContext {
 public:
  /*! \brief Defined in libtvm_compiler.so. */
  static void RegisterConfigOption(const char* key, ffi::String value_type_str,
                                   std::function<ffi::Any(ffi::Any)> legalization);

  /*!
   * \brief Register option \p key of a plain value type: a value that does not convert to
   *  it is refused with the key, the expected and the given type.
   */
  template <typename ValueType>
  static int32_t RegisterConfigOption(const char* key) {
    std::string type_str = ffi::TypeTraits<ValueType>::TypeStr();
    auto legalize = [key, type_str](ffi::Any value) -> ffi::Any {
      std::optional<ValueType> converted = value.try_cast<ValueType>();
      if (!converted.has_value()) {
        TVM_FFI_THROW(AttributeError) << "PassContext option " << key << " takes " << type_str
                                      << ", not " << value.GetTypeKey();
      }
      return ffi::Any(*converted);
    };
    RegisterConfigOption(key, ffi::String(type_str), legalize);
    return 0;
  }
};

}  // namespace transform
}  // namespace tvm

#define TVM_PASS_CONFIG_OPTION_CONCAT_(a, b) a##b
#define TVM_PASS_CONFIG_OPTION_CONCAT(a, b) TVM_PASS_CONFIG_OPTION_CONCAT_(a, b)
#define TVM_REGISTER_PASS_CONFIG_OPTION(Key, ValueType)                                  \
  [[maybe_unused]] static int32_t TVM_PASS_CONFIG_OPTION_CONCAT(pass_config_option_,     \
                                                                __COUNTER__) =           \
      ::tvm::transform::PassContext::RegisterConfigOption<ValueType>(Key)

#endif  // TVM_IR_TRANSFORM_H_
