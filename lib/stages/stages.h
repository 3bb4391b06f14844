/* The stage kinds' bursts, each in its kind's file of lib/stages/ (which also registers
 * the kind: conf/stage_kinds.h, pipeline/stage_kind.h). The builder finds them through
 * the kinds' hooks; this header is for what drives a burst by hand (tests/unit,
 * app/ring-bench).
 *
 * gen makes `limit` messages from `pool` onto `out` (at `rate` if set; kTimedGenStage:
 * until `duration_tsc` after its first burst); forward passes `in` to `out`; verify
 * checks order and payload, then to `out` or back to the pool; sink counts and frees;
 * capture writes each as a pcap record; rdma_tx (kRdmaTxStage: a Requester in ctx;
 * kPingStage: a ping-pong's PingPong), rdma_rx (a Responder) and echo (a PingPong) run
 * their role one burst at a time and finish it once it is done. */
#pragma once

#include "pipeline/stage.h"

namespace rp {

extern const StageOps kGenStage, kTimedGenStage, kForwardStage, kVerifyStage, kSinkStage, kCaptureStage;
extern const StageOps kRdmaTxStage, kPingStage, kRdmaRxStage, kEchoStage;

} // namespace rp
