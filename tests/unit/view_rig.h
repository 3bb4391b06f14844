/* A running run's view as the control plane sees it, with nothing running: one flow
 * "bw" of 4 QPs of 64 B WRITE_WITH_IMM, a requester on lcore 1 and a responder on
 * lcore 2, one TSC tick a nanosecond. Tests set the published totals by hand. */
#pragma once

#include "control/stats.h"

struct ViewRig {
	rp::FlowLive live;
	rp::FlowControl ctl;
	rp::RoleLive req, rsp;
	rp::RunControl run;
	rp::RunView v;

	explicit ViewRig(uint64_t target)
	{
		v.tsc_hz = 1e9;
		v.device = "rxe0";
		rp::FlowView f;
		f.name = "bw";
		f.qps = 4;
		f.verb = rp::Verb::write_imm;
		f.msg_bytes = 64;
		f.batch = 32;
		f.signal_every = 32;
		f.target = target;
		f.live = &live;
		f.ctl = &ctl;
		ctl.batch.store(32);
		v.flows.push_back(f);
		v.lcores = {{1, "requester", &req}, {2, "responder", &rsp}};
		v.ctl = &run;
	}
	void set(uint64_t sent, uint64_t completed, uint64_t errors)
	{
		live.sent.store(sent);
		live.completed.store(completed);
		live.errors.store(errors);
	}
};
