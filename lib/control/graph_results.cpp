/* The results files of a finished run: its flows (one per flow, one per lane), its
 * lcores and stages, this host's role and the sampled series. */
#include "control/shape_report.h"
#include "pipeline/stage_kind.h"

namespace rp {

namespace {

/* A results flow from a requester's own counters (a lane's). */
FlowResult lane_result(const std::string &name, const GraphFlow &f, const Requester &q)
{
	FlowResult x;
	x.name = name;
	x.qps = q.nqps;
	x.sent = q.c.sent;
	x.completed = q.c.completed;
	x.verified = lane_verified(f, q);
	x.bytes = x.completed * f.params.msg_bytes;
	x.failed_qps = q.c.failed_qps;
	x.errors = &q.flow_errors[0];
	x.latency = &q.flow_latency[0];
	x.latency_what = "chain posted to its signalled completion";
	return x;
}

/* A ping-pong: latency where the pings are; a reliable one retransmits on timeouts
 * only, and either side may see repeats. */
void result_pingpong(const GraphFlow &f, const FlowTally &ft, FlowResult *r)
{
	r->errors = ft.errors ? (f.ping.c.wc_errors.total ? &f.ping.c.wc_errors : &f.pong.c.wc_errors) : nullptr;
	r->latency = f.tx ? f.hist.get() : nullptr;
	r->latency_what = "half round trip: one iteration per QP, post to post, / 2 (as ib_send_lat)";
	if (f.reliable())
		r->rel = {true, 0, f.ping.retx_timeout, 0, 0, f.ping.duplicates + f.pong.duplicates, 0, 0, 0,
			  ft.sent > ft.completed ? ft.sent - ft.completed : 0, 0};
}

/* A requester and a responder (a two-host end counts its own half, the other's are
 * 0); a server has its errors, latency is the client's to measure. */
void result_ends(const GraphFlow &f, const FlowTally &ft, FlowResult *r)
{
	if (!f.tx) {
		r->errors = &f.responder.c.wc_errors;
	} else {
		r->errors = &f.requester.flow_errors[0];
		r->latency = &f.requester.flow_latency[0];
		r->latency_what = "chain posted to its signalled completion";
	}
	if (!f.reliable())
		return;
	const RequesterCounters &q = f.requester.c;
	const ResponderCounters &v = f.responder.c;
	r->rel = {true, q.retx_fast, q.retx_timeout, v.acks_sent, q.acks_received, v.duplicates, q.sack_holes,
		  v.retx_header_bad, q.injected_losses, ft.sent > ft.delivered ? ft.sent - ft.delivered : 0, v.qp_restarts};
	if (f.tx)
		r->latency_what = "RTT: message posted to its cumulative ACK, messages sent once (Karn)";
}

/* What a flow's results have whatever its shape. */
FlowResult flow_result(const GraphFlow &f, const FlowTally &ft)
{
	FlowResult r;
	r.name = f.conf->name;
	r.qps = f.params.qps;
	r.sent = ft.sent;
	r.completed = ft.completed;
	r.verified = ft.verified;
	r.bytes = ft.delivered * f.params.msg_bytes;
	r.failed_qps = ft.failed_qps;
	r.pass = ft.ok;
	r.failure = flow_failure(f);
	return r;
}

} // namespace

/* One per lane (as the stats lines have them). */
void results_lanes(const GraphFlow &f, const FlowTally &, Results *res)
{
	for (const auto &ln : f.lanes)
		res->flows.push_back(lane_result(f.conf->name + "@lcore" + std::to_string(ln->lcore->lcore), f, ln->requester));
}

void results_pingpong(const GraphFlow &f, const FlowTally &t, Results *res)
{
	res->flows.push_back(flow_result(f, t));
	result_pingpong(f, t, &res->flows.back());
}

void results_ends(const GraphFlow &f, const FlowTally &t, Results *res)
{
	res->flows.push_back(flow_result(f, t));
	result_ends(f, t, &res->flows.back());
}

void graph_results(const Graph &g, const Totals &x, const RunView &view, const Sampler &sampler, int stop_signal,
		   Results *res)
{
	const GraphFlow &f0 = *g.flows[0];
	*res = results_of(x.npingpong == g.flows.size() ? "pingpong" : "rate", f0.params.verb, f0.params.msg_bytes, view.device, x.secs,
			  x.pass);
	for (size_t i = 0; i < g.flows.size(); i++)
		shape_report(*g.flows[i]).results(*g.flows[i], x.t[i], res);
	res->stop_signal = stop_signal;
	bool client = false, server = false;   // two hosts: this host's role, as the peer's results say theirs
	for (const auto &f : g.flows)
		if (f->remote)
			(f->remote->server ? server : client) = true;
	if (client || server)
		res->role = client && server ? "client+server" : client ? "client" : "server";
	for (const auto &l : g.lcores)
		res->lcores.push_back({l->lcore, lcore_roles(*l), l->loop.busy_iterations, l->loop.iterations - l->loop.busy_iterations,
				       l->cpu_s, cpu_us_per_msg(*l, x), l->loop.passive_sleeps});
	for (const auto &s : g.stages)
		res->stages.push_back({s->conf->name, s->conf->kind->name, s->lcore->lcore, s->st.st.calls, s->st.st.msgs,
				       s->st.st.cycles});
	res->stage_cycles = !g.lcores.empty() && g.lcores[0]->loop.count_cycles;
	res->period_s = sampler.period_s;
	res->series = sampler.series;
}

} // namespace rp
