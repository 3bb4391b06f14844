/* An lcore's control QP, its receive side (seed 000's ctrl QP): ACKs go to the
 * reliable requesters of the lcore (by the data QP an ACK names), restart requests to
 * its reliable responders (by the QP they name). Whichever role of the lcore polls
 * hands each message on; all run on the lcore, so nothing is shared across cores. */
#pragma once

#include "engine/types.h"

#include <cstdint>

namespace rp {

struct CtrlQp;
struct Requester;
struct Responder;

struct CtrlPort {
	CtrlQp *ctrl = nullptr;
	Requester *senders[kMaxFlows] = {};
	uint32_t nsenders = 0;
	Responder *receivers[kMaxFlows] = {};
	uint32_t nreceivers = 0;
	uint64_t unknown = 0;       // messages that named no QP of the lcore, or were none of ours
};

/* Polls the control QP and hands each message on, burst after burst while bursts come
 * full (at most kCtrlPollRounds): a loop that spends milliseconds in a post (rxe sends
 * in the caller's system call) must not leave ACKs to overflow the receive queue.
 * Returns messages seen, or -1 when polling failed. */
inline constexpr uint32_t kCtrlPollRounds = 8;
int ctrl_port_poll(CtrlPort *port, uint64_t now);

} // namespace rp
