#!/bin/bash
# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements.  See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership.  The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License.  You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied.  See the License for the
# specific language governing permissions and limitations
# under the License.
#
# Device side of bench/tune.py on the GPU box: unpack the carried candidates
# (build/tune/carry/tune.tar.gz, or $TUNE_CARRY), time them with the TVM runtime only, write $OUT/times.json.
# Arguments go to device_measure.py (--min-ms, --repeat).
set -u
mkdir -p /tmp/tune && tar xzf "${TUNE_CARRY:-build/tune/carry/tune.tar.gz}" -C /tmp/tune || exit 1
B=/tmp/tune/bundle
OUT=${OUT:-build/tune/results}
mkdir -p "$OUT"
# The box lists only pocl.icd: register NVIDIA's OpenCL driver.
if ldconfig -p | grep -q libnvidia-opencl.so.1; then
  mkdir -p /tmp/vendors && echo libnvidia-opencl.so.1 > /tmp/vendors/nvidia.icd
  export OCL_ICD_VENDORS=/tmp/vendors
fi
python3 -m pip install -q --no-index --no-deps --no-compile --target "$B/site" "$B"/wheels/*.whl || exit 1
export PYTHONPATH="$B/site" TVM_USE_RUNTIME_LIB=1 PYTHONUNBUFFERED=1
export TVM_OPENCL_DEVICE=${TVM_OPENCL_DEVICE:-nvidia}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/nvidia-smi.csv" 2>&1
# A times.json of an earlier call (carried as $TUNE_RESUME) is where --resume goes on from.
if [ -n "${TUNE_RESUME:-}" ] && [ -f "$TUNE_RESUME" ]; then cp "$TUNE_RESUME" "$OUT/times.json"; fi
python3 "$B/candidates/device_measure.py" --bundle "$B/candidates" --out "$OUT/times.json" "$@" 2>&1 | tee -a "$OUT/log.txt"
