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
# One device call on the GPU box for a tuning round and the conv kernels beside it: the
# candidates of build/tune/carry/tune.tar.gz (bench/tune.py build + carry), timed cold (as the
# committed database was) or warm (TUNE_EVICT_MB=0), then, when build/conv/bundle holds a bundle of
# conv_schedules.py (libraries and cases only: it runs on the tuning bundle's runtime), every variant of it.
#
#   here:   python bench/tune.py build --refine unroll_window,occupancy_waves && python bench/tune.py carry
#           python bench/conv_schedules.py build --out build/conv/bundle --label a --variants ...
#           python bench/conv_schedules.py build --out build/conv/bundle --label c --generic
#   device: command "bash bench/tune_round_box.sh", carry ["build/tune/carry", "build/conv/bundle"]
#   here:   python bench/tune.py collect --times DIR/tune/times.json
#
# $OUT gets tune/ (times.json, log.txt, nvidia-smi.csv) and conv.csv; TUNE_BUDGET_S (default 400)
# bounds the timing of the candidates (device_measure.py --budget-s: a later call goes on from
# the returned times.json, carried as $TUNE_RESUME). TUNE_EVICT_MB (default 128) is the cache
# eviction before each sample (cold, as a network's first read of a layer's weights); 0 times
# the candidates back to back (warm).
set -u
OUT=${OUT:-build/tune-round}
mkdir -p "$OUT/tune"
EVICT_MB=${TUNE_EVICT_MB:-128}
EVICT=()
[ "$EVICT_MB" != 0 ] && EVICT=(--evict-mb "$EVICT_MB")
OUT="$OUT/tune" bash "$(dirname "$0")/tune_box.sh" "${EVICT[@]}" --budget-s "${TUNE_BUDGET_S:-400}" \
  > "$OUT/tune_console.log" 2>&1
echo "tuning: exit $? ($(grep -c '"run_secs"' "$OUT/tune/times.json" 2>/dev/null || echo 0) candidates timed)"
CONV=${CONV_BUNDLE:-build/conv/bundle}
if [ -f "$CONV/cases-a.json" ]; then
  # tune_box.sh installed the runtime under /tmp/tune/bundle/site and registered the driver.
  [ -d /tmp/vendors ] && export OCL_ICD_VENDORS=/tmp/vendors
  # CONV_PROGRAMS=1: the conv run's program cache (NVIDIA's PTX) comes back as programs.tgz
  # for bench/conv_programs.py.
  PROGRAMS=()
  [ "${CONV_PROGRAMS:-0}" = 1 ] && PROGRAMS=("TVM_OPENCL_CACHE_DIR=$OUT/programs")
  env "${PROGRAMS[@]}" PYTHONPATH=/tmp/tune/bundle/site TVM_USE_RUNTIME_LIB=1 \
    TVM_OPENCL_DEVICE=${TVM_OPENCL_DEVICE:-nvidia} timeout 300 \
    python3 "$CONV/bench/conv_schedules.py" device --bundle "$CONV" --out "$OUT/conv.csv" \
    > "$OUT/conv_console.log" 2>&1
  rc=$?
  rows=0
  [ -f "$OUT/conv.csv" ] && rows=$(($(wc -l < "$OUT/conv.csv") - 1))
  echo "conv kernels: exit $rc ($rows rows)"
  if [ -d "$OUT/programs" ]; then
    tar czf "$OUT/programs.tgz" -C "$OUT" programs && rm -rf "$OUT/programs"
  fi
fi
