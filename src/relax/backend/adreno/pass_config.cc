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
 * \file src/relax/backend/adreno/pass_config.cc
 * \brief PassContext options of the Adreno backend's passes.
 *
 * The passes that read these options are written in Python
 * (python/tvm/relax/backend/adreno, python/tvm/relax/transform/legalize_ops/adreno); a
 * PassContext accepts only keys registered in C++, so their keys are registered here.
 * docs/reference lists them with their meaning.
 */
#include <tvm/ir/transform.h>

namespace tvm {
namespace relax {

/*! \brief Winograd for eligible 3x3 convolutions: "auto" (by shape), "off", "2" or "4". */
TVM_REGISTER_PASS_CONFIG_OPTION("relax.adreno.winograd", ffi::String);

/*! \brief Merge each depthwise convolution into the 1x1 convolution reading it (one kernel). */
TVM_REGISTER_PASS_CONFIG_OPTION("relax.adreno.fuse_depthwise_pointwise", Bool);

/*! \brief Read the weights of NCHW4c convolutions from textures instead of buffers. */
TVM_REGISTER_PASS_CONFIG_OPTION("relax.adreno.conv_weights_in_textures", Bool);

/*! \brief Store the planned float32 textures as half-float images (float32 arithmetic). */
TVM_REGISTER_PASS_CONFIG_OPTION("relax.adreno.float16_storage", Bool);

}  // namespace relax
}  // namespace tvm
