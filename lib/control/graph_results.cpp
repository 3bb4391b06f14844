/* The results files' flows of a finished run: one per flow, one per lane. */
#include "control/graph_parts.h"

namespace rp {

namespace {

/* A results flow from a requester's own counters (a lane's). */
FlowResult lane_result(const std::string &name, const Requester &q, uint32_t msg_bytes)
{
	FlowResult x;
	x.name = name;
	x.qps = q.nqps;
	x.sent = q.c.sent;
	x.completed = q.c.completed;
	x.verified = q.c.verified;
	x.bytes = x.completed * msg_bytes;
	x.failed_qps = q.c.failed_qps;
	x.errors = &q.flow_errors[0];
	x.latency = &q.flow_latency[0];
	x.latency_what = "chain posted to its signalled completion";
	return x;
}

} // namespace

/* The results files' flows: one per flow, one per lane of a flow with lanes. */
void result_flows(const Graph &g, const Totals &x, Results *res)
{
	for (size_t i = 0; i < g.flows.size(); i++) {
		const GraphFlow &f = *g.flows[i];
		if (!f.lanes.empty()) {   // as the stats lines have them
			for (const auto &ln : f.lanes)
				res->flows.push_back(lane_result(f.conf->name + "@lcore" + std::to_string(ln->lcore->lcore), ln->q, f.o.msg_bytes));
			continue;
		}
		const FlowTally &ft = x.t[i];
		FlowResult r;
		r.name = f.conf->name;
		r.qps = f.o.qps;
		r.sent = ft.sent;
		r.completed = ft.completed;
		r.verified = ft.verified;
		r.bytes = ft.delivered * f.o.msg_bytes;
		r.failed_qps = ft.failed_qps;
		r.pass = ft.ok;
		r.failure = flow_failure(f);
		if (f.pingpong) {
			r.errors = ft.errors ? (f.ping.c.wc_errors.total ? &f.ping.c.wc_errors : &f.pong.c.wc_errors) : nullptr;
			r.latency = f.tx ? f.hist.get() : nullptr;
			r.latency_what = "half round trip: one iteration per QP, post to post, / 2 (as ib_send_lat)";
		} else if (!f.tx) {   // a server: its errors; latency is the client's to measure
			r.errors = &f.v.c.wc_errors;
		} else {
			r.errors = &f.q.flow_errors[0];
			r.latency = &f.q.flow_latency[0];
			r.latency_what = "chain posted to its signalled completion";
		}
		if (f.reliable() && f.pingpong) {
			r.rel = {true, 0, f.ping.retx_timeout, 0, 0, f.ping.duplicates + f.pong.duplicates, 0, 0, 0,
				 ft.sent > ft.completed ? ft.sent - ft.completed : 0, 0};
		} else if (f.reliable()) {   // a two-host end counts its own half (the other's are 0)
			const RequesterCounters &q = f.q.c;
			const ResponderCounters &v = f.v.c;
			r.rel = {true, q.retx_fast, q.retx_timeout, v.acks_sent, q.acks_received, v.duplicates, q.sack_holes,
				 v.retx_header_bad, q.injected_losses, ft.sent > ft.delivered ? ft.sent - ft.delivered : 0,
				 v.qp_restarts};
			if (f.tx)
				r.latency_what = "RTT: message posted to its cumulative ACK, messages sent once (Karn)";
		}
		res->flows.push_back(r);
	}
}

} // namespace rp
