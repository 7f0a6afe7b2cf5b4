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
"""MetaSchedule tuning of the Adreno schedule rules: their knobs as the search space, texture
arguments allocated as images, a JSON database that records the device it was measured on."""

from .database import TuningDatabaseError, create_database, load_database, read_device
from .device_measure import alloc_image_arguments, measure_bundle
from .farm import FarmOptions, count_servers, measure_farm
from .space import RULE_CONFIGS, Candidate, candidates, knob_space, refine, space_generator
from .tune import (
    args_info_with_scopes,
    build_candidates,
    commit_times,
    extract_tasks,
    measure_local,
    measure_rpc,
    schedule_rules,
    tune,
    tune_farm,
)
