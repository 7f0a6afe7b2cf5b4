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
 * \file opencl_timer.h
 * \brief Device time from profiling events (runtime.timer.opencl).
 *
 * While no timer runs, commands go to a plain in-order queue without an event (nothing is
 * allocated or recorded). While a timer runs on a device, commands go to a second in-order
 * queue created with CL_QUEUE_PROFILING_ENABLE (the switch waits for the queue left, so the
 * order of commands holds). The timer takes the event of the first command enqueued after
 * Start, and Stop enqueues a marker: on an in-order queue the first command starts first and
 * the marker ends after the last one, so the device time is CL_PROFILING_COMMAND_START of the
 * first to CL_PROFILING_COMMAND_END of the marker, gaps between commands included, host time
 * before the first command and after the last excluded. Only those two commands carry an
 * event: on NVIDIA's OpenCL an event doubles the host cost of a launch and spreads the
 * commands apart on the device (docs/benchmarks/findings.rst, "What a kernel launch costs"), so
 * an event on every command would time a slower run than the untimed one. Where the probe of
 * the profiling queue finds markers untimed, the timer falls back to an event on every command
 * and the end of the latest.
 *
 * Each finished span also keeps, for runtime.opencl.timed_spans, the enqueue times of its two
 * events (CL_PROFILING_COMMAND_QUEUED): how long the first command waited to start and how
 * long the host took to enqueue the span, which tell a span the device spent waiting for the
 * host from one the host spent waiting for the device, without an event on any other command.
 *
 * A command trace (runtime.opencl.start_command_trace / stop_command_trace) keeps every event
 * with its label instead: the start and end of each kernel and copy, without the device sync
 * that a per-call profile needs, so the busy time (the sum of the commands) can be set against
 * the span (the device timer's time) of the same calls.
 */
#ifndef TVM_RUNTIME_OPENCL_OPENCL_TIMER_H_
#define TVM_RUNTIME_OPENCL_OPENCL_TIMER_H_

#include "opencl_common.h"

namespace tvm {
namespace runtime {
namespace cl {

/*! \brief The first event enqueued on a device while one timer ran, and the span's end. */
struct ProfilingSpan {
  Handle<cl_event> first;
  /*! \brief The marker enqueued at Stop, or the latest command's event (every_event). */
  Handle<cl_event> last;
  /*! \brief The span needs the event of every command (markers are untimed). */
  bool every_event = false;
};

/*!
 * \brief The event slot of one enqueued command.
 *
 * Pass out() as the event argument of a clEnqueue* call. It is nullptr unless the command
 * trace runs or a timer waits for its first command (one relaxed atomic load), so other
 * commands create no event. After a successful enqueue, Record() hands the event to them.
 */
class CommandEvent {
 public:
  /*! \param label What the command is, for a command trace; must outlive the CommandEvent. */
  CommandEvent(DeviceEntry& dev, const char* label)
      : dev_(dev),
        label_(label),
        wanted_(dev.events_wanted.load(std::memory_order_relaxed) > 0) {}
  CommandEvent(const CommandEvent&) = delete;
  CommandEvent& operator=(const CommandEvent&) = delete;
  ~CommandEvent() { Record(); }

  cl_event* out() { return wanted_ ? &event_ : nullptr; }
  /*! \brief Give the event (if any) to the timers and trace running now; safe to call twice. */
  void Record();

 private:
  DeviceEntry& dev_;
  const char* label_;
  bool wanted_;
  cl_event event_ = nullptr;
};

}  // namespace cl
}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_OPENCL_OPENCL_TIMER_H_
