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

/* Polls the control QP once and hands each message on. Returns messages seen, or -1
 * when polling failed. */
int ctrl_port_poll(CtrlPort *port, uint64_t now);

} // namespace rp
