/* The checks of an io context's completion queues and shared receive queue against
 * what its lcore's stages keep outstanding on them (conf_validate, validate.cpp). */
#include "conf/validate_internal.h"

namespace rp {

/* The receives a flow received through an SRQ (`srq`) takes there: its QPs' windows, or
 * the flow window they share (given, or the default; graph_plan refuses what cannot
 * share one). */
uint64_t flow_srq_receives(const FlowConf &f, bool srq)
{
	const uint64_t per_qp = static_cast<uint64_t>(f.qps) * f.window;
	const uint32_t fw = flow_window_of(f, srq);
	if (fw == 0)
		return per_qp;
	return verb_info(f.verb).fills_receive ? fw : std::min<uint64_t>(fw, per_qp);   // a send's QPs each take up to fw
}

uint32_t flow_window_of(const FlowConf &f, bool srq)
{
	const bool shareable = srq && verb_consumes_receive(f.verb) &&
			       !(f.transport == Transport::uc && f.reliability == Reliability::software);
	return !shareable ? 0 : f.flow_window_given ? f.flow_window : default_flow_window(true, f.window_given, f.qps, f.window);
}

} // namespace rp

namespace rp::check {

namespace {

/* What an lcore's stages keep outstanding on its CQs and receive queue. */
struct IoLoad {
	uint64_t send = 0, window = 0;
	bool receives = false;
};

IoLoad io_load(const PipelineConf &c, const IoContextConf &io)
{
	IoLoad l;
	for (const StageConf &st : c.stages) {
		if (st.lcore != io.lcore)
			continue;
		for (const FlowConf &f : c.flows) {
			if (f.name != st.flow)
				continue;
			const FlowEnd end = st.kind->end;
			const bool lanes = flow_ends(c, f).tx > 1;   // their send CQs are their own, not the io context's
			if ((end == FlowEnd::requester && !lanes) || end == FlowEnd::echo)
				l.send += static_cast<uint64_t>(f.qps) * f.sq_depth;
			if ((end == FlowEnd::responder || end == FlowEnd::echo) && verb_consumes_receive(f.verb)) {
				l.receives = true;
				l.window += flow_srq_receives(f, end == FlowEnd::responder && !io.rq_per_qp);
			}
		}
	}
	return l;
}

} // namespace

/* CQs that could overflow: a send CQ holds every WR of every QP posting on it (a failed
 * QP flushes all of them); a receive CQ holds every posted receive. */
bool check_cqs(Errors &e, const PipelineConf &c, size_t i)
{
	const IoContextConf &io = c.io_contexts[i];
	const Where w = where(kSecAcross, "io_contexts", i, io);
	const IoLoad l = io_load(c, io);
	if (io.send_cq && l.send > io.send_cq)
		return e.fail(w, "send_cq", "a send CQ of " + std::to_string(io.send_cq) + " could overflow: its QPs can have " +
			      std::to_string(l.send) + " work requests outstanding (qps x sq_depth)");
	if (l.receives && io.srq == 0 && io.srq_given)
		return e.fail(w, "lcore " + std::to_string(io.lcore) +
			      " receives messages that consume receives, but its io context has no SRQ (srq = 0; recv_queue = \"qp\" gives each QP its own receive queue instead)");
	if (l.receives && io.srq && io.srq < l.window)
		return e.fail(w, "srq", "an SRQ of " + std::to_string(io.srq) + " cannot hold the receive windows of its flows (" +
			      std::to_string(l.window) + " = qps x window)");
	if (l.receives && io.rq_per_qp && io.recv_cq && io.recv_cq < l.window)
		return e.fail(w, "recv_cq", "a receive CQ of " + std::to_string(io.recv_cq) +
			      " could overflow: its QPs' receive queues hold at least " + std::to_string(l.window) +
			      " receives (qps x window), all of which can complete before a poll");
	if (l.receives && io.recv_cq && io.recv_cq < io.srq)
		return e.fail(w, "recv_cq", "a receive CQ of " + std::to_string(io.recv_cq) + " could overflow: every one of the SRQ's " +
			      std::to_string(io.srq) + " receives can complete before a poll");
	return true;
}

} // namespace rp::check
