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
 * \file opencl_timer.cc
 * \brief runtime.timer.opencl: device time from profiling events, see opencl_timer.h.
 */
#include "opencl_timer.h"

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/runtime/timer.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include "opencl_counters.h"

namespace tvm {
namespace runtime {
namespace cl {

void CommandEvent::Record() {
  if (event_ == nullptr) return;
  Handle<cl_event> owned(event_);
  event_ = nullptr;
  Count(Counter::kEventsCreated);
  std::lock_guard<std::mutex> lock(dev_.timers_mu);
  for (ProfilingSpan* span : dev_.timers) {
    // Each span holds its own reference, so timers that stop at different times stay valid.
    if (GetApi().RetainEvent(owned.get()) != CL_SUCCESS) continue;
    if (span->first) {
      span->last.reset(owned.get());
      continue;
    }
    span->first.reset(owned.get());
    // A span ended by a marker needs no event after its first one.
    if (!span->every_event) dev_.events_wanted.fetch_sub(1, std::memory_order_relaxed);
  }
  if (dev_.trace && GetApi().RetainEvent(owned.get()) == CL_SUCCESS) {
    dev_.trace->labels.emplace_back(label_);
    dev_.trace->events.emplace_back(owned.get());
  }
}

namespace {

cl_ulong ProfilingTime(cl_event event, cl_profiling_info what, const char* name) {
  cl_ulong t = 0;
  TVM_CL_CALL(GetEventProfilingInfo, std::string("reading ") + name + " of a timed command",
              event, what, sizeof(t), &t, nullptr);
  return t;
}

/*!
 * \brief When a finished command was enqueued, or false where the driver gives no time. Where
 * CL_PROFILING_COMMAND_QUEUED reads zero (Intel's CPU runtime, for markers) the time the driver
 * took the command (CL_PROFILING_COMMAND_SUBMIT, never earlier) stands in.
 */
bool QueuedTime(cl_event event, cl_ulong* t) {
  for (cl_profiling_info what : {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT}) {
    *t = 0;
    if (GetApi().GetEventProfilingInfo(event, what, sizeof(*t), t, nullptr) != CL_SUCCESS) {
      return false;
    }
    if (*t != 0) return true;
  }
  return false;
}

/*! \brief Device time of the commands enqueued on one device between Start and Stop. */
class OpenCLTimerNode : public TimerNode {
 public:
  explicit OpenCLTimerNode(Device dev) : dev_(Platforms::Global()->Get(dev.device_id)) {
    if (!dev_.ProfilingQueue()) {
      TVM_FFI_THROW(RuntimeError) << "OpenCL device " << dev_.Describe()
                                  << " refused a profiling queue (CL_QUEUE_PROFILING_ENABLE), "
                                  << "so runtime.timer.opencl cannot measure device time; "
                                  << "time the call with a wall clock instead";
    }
  }
  ~OpenCLTimerNode() { Detach(); }

  void Start() final {
    std::lock_guard<std::mutex> lock(dev_.timers_mu);
    if (attached_) return;
    dev_.AddEventListener();
    span_ = ProfilingSpan();
    span_.every_event = !dev_.MarkerEndsSpans();
    dev_.timers.push_back(&span_);
    dev_.events_wanted.fetch_add(1, std::memory_order_relaxed);
    attached_ = true;
  }

  void Stop() final { Detach(); }

  int64_t SyncAndGetElapsedNanos() final {
    Detach();
    if (!span_.first) return 0;  // nothing was enqueued while the timer ran
    cl_event end_event = span_.last ? span_.last.get() : span_.first.get();
    TVM_CL_CALL(WaitForEvents, "waiting for the last timed command on " + dev_.Describe(), 1,
                &end_event);
    cl_ulong start = ProfilingTime(span_.first.get(), CL_PROFILING_COMMAND_START,
                                   "CL_PROFILING_COMMAND_START");
    cl_ulong end = ProfilingTime(end_event, CL_PROFILING_COMMAND_END, "CL_PROFILING_COMMAND_END");
    KeepTimedSpan(start, end, end_event);
    return end > start ? static_cast<int64_t>(end - start) : 0;
  }

  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("runtime.opencl.OpenCLTimerNode", OpenCLTimerNode,
                                    TimerNode);

 private:
  void Detach() {
    std::lock_guard<std::mutex> lock(dev_.timers_mu);
    if (!attached_) return;
    attached_ = false;
    auto& timers = dev_.timers;
    timers.erase(std::remove(timers.begin(), timers.end(), &span_), timers.end());
    if (span_.every_event || !span_.first) {
      dev_.events_wanted.fetch_sub(1, std::memory_order_relaxed);
    }
    if (span_.first && !span_.every_event) EndWithMarker();
    dev_.RemoveEventListener();
  }

  // The enqueue times say whether the span waited for the host (host_enqueue close to the span)
  // or the host for the device (a long drain). They only explain the span, so a driver that
  // does not report them leaves the span out of runtime.opencl.timed_spans and nothing else.
  void KeepTimedSpan(cl_ulong start, cl_ulong end, cl_event end_event) {
    cl_ulong first_queued = 0;
    cl_ulong end_queued = 0;
    if (!QueuedTime(span_.first.get(), &first_queued) || !QueuedTime(end_event, &end_queued)) {
      return;
    }
    auto diff = [](cl_ulong later, cl_ulong earlier) {
      return static_cast<int64_t>(later) - static_cast<int64_t>(earlier);
    };
    TimedSpan timed;
    timed.start_delay_ns = diff(start, first_queued);
    timed.span_ns = diff(end, start);
    timed.host_enqueue_ns = diff(end_queued, first_queued);
    timed.drain_ns = diff(end, end_queued);
    std::lock_guard<std::mutex> lock(dev_.timers_mu);
    auto& kept = dev_.timed_spans;
    if (kept.size() == DeviceEntry::kMaxTimedSpans) kept.erase(kept.begin());
    kept.push_back(timed);
  }

  // Still on the profiling queue (this timer is a listener): the marker ends after every
  // command enqueued before it.
  void EndWithMarker() {
    cl_event marker = nullptr;
    cl_int err = GetApi().EnqueueMarkerWithWaitList(dev_.Queue(), 0, nullptr, &marker);
    if (err == CL_SUCCESS) {
      Count(Counter::kEventsCreated);
      span_.last.reset(marker);
    } else {
      std::cerr << "[tvm opencl] warning: OpenCL error " << ErrorName(err)
                << " in clEnqueueMarkerWithWaitList ending a timed span on " << dev_.Describe()
                << "; the span ends at its first command" << std::endl;
    }
  }

  DeviceEntry& dev_;
  ProfilingSpan span_;
  bool attached_ = false;
};

void StartCommandTrace(Device dev) {
  DeviceEntry& entry = Platforms::Global()->Get(dev.device_id);
  std::lock_guard<std::mutex> lock(entry.timers_mu);
  if (entry.trace) {
    TVM_FFI_THROW(RuntimeError) << "a command trace already runs on " << entry.Describe()
                                << "; call runtime.opencl.stop_command_trace first";
  }
  entry.AddEventListener();
  entry.trace = std::make_unique<CommandTrace>();
  entry.events_wanted.fetch_add(1, std::memory_order_relaxed);
}

/*! \brief [label, start_ns, end_ns] per traced command, times from the first command's start. */
ffi::Array<ffi::Array<ffi::Any>> StopCommandTrace(Device dev) {
  DeviceEntry& entry = Platforms::Global()->Get(dev.device_id);
  std::unique_ptr<CommandTrace> trace;
  {
    std::lock_guard<std::mutex> lock(entry.timers_mu);
    if (!entry.trace) {
      TVM_FFI_THROW(RuntimeError) << "no command trace runs on " << entry.Describe()
                                  << "; call runtime.opencl.start_command_trace first";
    }
    trace = std::move(entry.trace);
    entry.events_wanted.fetch_sub(1, std::memory_order_relaxed);
    entry.RemoveEventListener();
  }
  ffi::Array<ffi::Array<ffi::Any>> commands;
  if (trace->events.empty()) return commands;
  std::vector<cl_event> events;
  for (const auto& e : trace->events) events.push_back(e.get());
  TVM_CL_CALL(WaitForEvents, "waiting for the traced commands on " + entry.Describe(),
              static_cast<cl_uint>(events.size()), events.data());
  cl_ulong origin = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    cl_ulong start =
        ProfilingTime(events[i], CL_PROFILING_COMMAND_START, "CL_PROFILING_COMMAND_START");
    cl_ulong end = ProfilingTime(events[i], CL_PROFILING_COMMAND_END, "CL_PROFILING_COMMAND_END");
    if (i == 0) origin = start;
    // Clocks of commands that started before the first one (none on an in-order queue) clamp.
    int64_t rel_start = start > origin ? static_cast<int64_t>(start - origin) : 0;
    int64_t rel_end = end > origin ? static_cast<int64_t>(end - origin) : 0;
    commands.push_back(ffi::Array<ffi::Any>{ffi::String(trace->labels[i]), rel_start, rel_end});
  }
  return commands;
}

/*!
 * \brief The spans of the device timers finished on a device since the last call, oldest
 * first, each a map of TimedSpan's fields (in ns); reading them forgets them.
 */
ffi::Array<ffi::Map<ffi::String, int64_t>> TakeTimedSpans(Device dev) {
  DeviceEntry& entry = Platforms::Global()->Get(dev.device_id);
  std::vector<TimedSpan> spans;
  {
    std::lock_guard<std::mutex> lock(entry.timers_mu);
    spans.swap(entry.timed_spans);
  }
  ffi::Array<ffi::Map<ffi::String, int64_t>> out;
  for (const TimedSpan& s : spans) {
    out.push_back(ffi::Map<ffi::String, int64_t>{{"start_delay_ns", s.start_delay_ns},
                                                 {"span_ns", s.span_ns},
                                                 {"host_enqueue_ns", s.host_enqueue_ns},
                                                 {"drain_ns", s.drain_ns}});
  }
  return out;
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("runtime.timer.opencl",
           [](Device dev) -> Timer { return Timer(ffi::make_object<OpenCLTimerNode>(dev)); })
      .def("runtime.opencl.start_command_trace", StartCommandTrace)
      .def("runtime.opencl.stop_command_trace", StopCommandTrace)
      .def("runtime.opencl.timed_spans", TakeTimedSpans);
}

}  // namespace cl
}  // namespace runtime
}  // namespace tvm
