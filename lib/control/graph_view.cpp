/* What the console, the stats lines, telemetry and the results sampler see of a built
 * pipeline while it runs, and the words for its lcores and flows. */
#include "control/shape_report.h"
#include "pipeline/stage_kind.h"

#include <rte_cycles.h>

namespace rp {

/* An lcore's stages, by name. */
std::string lcore_stages(const GraphLcore &l)
{
	std::string s;
	for (uint32_t i = 0; i < l.loop.nstages; i++)
		s += (i ? "," : "") + std::string(l.loop.stages[i]->name);
	return s;
}

/* An lcore's roles: "requester", "responder", "requester+responder", or its other
 * stages' kinds. */
std::string lcore_roles(const GraphLcore &l)
{
	std::string r;
	if (!l.requesters.empty() || !l.lanes.empty())
		r = "requester";
	if (!l.responders.empty())
		r += r.empty() ? "responder" : "+responder";
	if (!l.pingers.empty())
		r += r.empty() ? "ping" : "+ping";
	if (!l.echoers.empty())
		r += r.empty() ? "echo" : "+echo";
	if (r.empty())
		for (uint32_t i = 0; i < l.loop.nstages; i++)
			r += (i ? "+" : "") + std::string(l.loop.stages[i]->ops->kind);
	return r;
}

/* Where a flow goes: "lcore 1 -> lcore 2", or to (from) another host: the one at the
 * address this end dials, or the client of the address it listens on. */
std::string ends_of(const GraphFlow &f)
{
	const std::string far = f.remote ? f.remote->addr.str + (f.listens() ? "'s client" : "") : "";
	const std::string tx = f.tx ? "lcore " + std::to_string(f.tx->lcore) : far;
	const std::string rx = f.rx ? "lcore " + std::to_string(f.rx->lcore) : far;
	return tx + " -> " + rx;
}

/* How a flow's QP pairs were connected (lanes that own their QPs: each lane's). */
std::string connected_of(const GraphFlow &f)
{
	const std::string t = f.params.traffic.describe(UINT32_MAX);
	const std::string traffic = t.empty() ? "" : "; " + t;
	if (!f.lanes.empty() && !f.share_qps)
		return f.lanes[0]->objs->pairs.connected + " (per lane)" + traffic;
	return f.objs->pairs.connected + traffic;
}

/* A ping-pong's stats line counts its pings' echoes, or on another host's server the
 * pings that arrive. */
static const FlowLive *pingpong_live(const GraphFlow &f)
{
	return f.tx ? &f.ping.live : &f.pong.live;
}

/* A requester's, or on a server what arrives of a requester on another host. */
static const FlowLive *ends_live(const GraphFlow &f)
{
	return f.tx ? &f.requester.flow_live[0] : &f.responder.arrived;
}

/* What the metrics label a flow's series with, and its latency histogram. */
static void flow_labels(const GraphFlow &f, const char *role, const Histogram *latency, FlowView *fv)
{
	fv->transport = f.params.uc ? "uc" : "rc";
	fv->role = role;
	fv->peer = f.remote ? f.remote->addr.str : "";   // a server: the address it listens on
	fv->latency = latency;
	fv->src = f.conf->src_rank;
	fv->dst = f.conf->dst_rank;
}

/* A flow per lane: its messages over the QPs it posts to. */
void view_lanes(const GraphFlow &f, RunView *v)
{
	for (const auto &ln : f.lanes) {
		const std::string name = f.conf->name + "@lcore" + std::to_string(ln->lcore->lcore);
		v->flows.push_back({name, ln->requester.nqps, f.params.verb, f.params.msg_bytes, f.params.batch, f.params.signal_every,
				    ln->params.duration_s > 0 ? 0 : ln->params.messages, &ln->requester.flow_live[0], &ln->requester.flow_ctl[0]});
		flow_labels(f, "lane", &ln->requester.flow_latency[0], &v->flows.back());
		for (uint32_t k = 0; k < ln->requester.nqps; k++)
			v->qps.push_back({name, k, ln->requester.qps[k].qp->qp_num, "requester", ln->requester.qps[k].qp});
	}
}

/* Nothing to set: one message in flight per QP. */
void view_pingpong(const GraphFlow &f, RunView *v)
{
	v->flows.push_back({f.conf->name, f.params.qps, f.params.verb, f.params.msg_bytes, 1, f.params.signal_every,
			    until_stopped(f.params.duration_s) ? 0 : f.params.messages, pingpong_live(f), nullptr});
	flow_labels(f, f.tx ? "ping" : "echo", pingpong_half_rtt(f), &v->flows.back());
	v->flows.back().half_rtt = true;
	for (uint32_t k = 0; k < f.params.qps; k++) {
		if (f.tx)
			v->qps.push_back({f.conf->name, k, f.ping.qps[k].qp->qp_num, "ping", f.ping.qps[k].qp});
		if (f.rx)
			v->qps.push_back({f.conf->name, k, f.pong.qps[k].qp->qp_num, "echo", f.pong.qps[k].qp});
	}
}

/* A requester and a responder, those here: a server has nothing to set, counts what
 * arrives, and runs until its client's messages are in. */
void view_ends(const GraphFlow &f, RunView *v)
{
	const bool server = f.serves();
	v->flows.push_back({f.conf->name, f.params.qps, f.params.verb, f.params.msg_bytes, f.params.batch, f.params.signal_every,
			    !server && f.params.duration_s > 0 ? 0 : f.params.messages, ends_live(f), server ? nullptr : &f.requester.flow_ctl[0]});
	flow_labels(f, server ? "server" : f.remote ? "client" : "requester", ends_latency(f), &v->flows.back());
	if (f.rx)
		v->flows.back().rx = &f.responder.rx_live;
	for (uint32_t k = 0; k < f.params.qps; k++) {
		if (f.tx)
			v->qps.push_back({f.conf->name, k, f.requester.qps[k].qp->qp_num, "requester", f.requester.qps[k].qp});
		if (f.rx)
			v->qps.push_back({f.conf->name, k, f.responder.qps[k].qp->qp_num, "responder", f.responder.qps[k].qp});
	}
}

void sampled_lanes(const GraphFlow &f, Sampler *s)
{
	for (const auto &ln : f.lanes)
		s->live.push_back(&ln->requester.flow_live[0]);
}

void sampled_pingpong(const GraphFlow &f, Sampler *s)
{
	s->live.push_back(pingpong_live(f));
}

void sampled_ends(const GraphFlow &f, Sampler *s)
{
	s->live.push_back(ends_live(f));
}

RunView graph_view(const PipelineConf &c, const Graph &g, const std::string &what)
{
	RunView v;
	for (const GraphDevice &d : g.devs) {
		v.device += (v.device.empty() ? "" : ", ") + d.dev->name;
		v.ports.push_back({d.dev->name, d.dev->port, hw_counters_read(d.dev->name, d.dev->port), d.dev->ctx});
	}
	v.what = what;
	v.tsc_hz = static_cast<double>(rte_get_tsc_hz());
	v.duration_s = c.run.duration_s;
	for (const auto &f : g.flows)
		v.until_stopped |= until_stopped(f->params.duration_s);
	v.ctl = const_cast<RunControl *>(&g.run);
	for (const auto &f : g.flows)
		shape_report(*f).view(*f, &v);
	for (const auto &l : g.lcores) {
		const RoleLive *live = !l->requesters.empty() ? &l->requesters[0]->requester.live
				       : !l->responders.empty() ? &l->responders[0]->responder.live
				       : !l->lanes.empty() ? &l->lanes[0]->requester.live : nullptr;
		v.lcores.push_back({l->lcore, lcore_roles(*l), live, &l->cpu});
	}
	for (const auto &f : g.flows)
		if (f->objs->tx_pool)   // a fed flow sends from its ring's pool
			v.pools.push_back({f->conf->name + " send buffers", f->objs->tx_pool});
	for (const auto &l : g.lcores)
		if (l->rx_pool)
			v.pools.push_back({"lcore " + std::to_string(l->lcore) + " receive buffers", l->rx_pool});
	for (const auto &r : g.rings)
		v.rings.push_back({r->conf->name, r->ring});
	for (const auto &s : g.stages)
		v.stages.push_back({s->conf->name, s->conf->kind->name, s->lcore->lcore, &s->st.live});
	v.stage_cycles = !g.lcores.empty() && g.lcores[0]->loop.count_cycles;
	v.config = {"pipeline file: " + c.file,
		    "flows: " + std::to_string(g.flows.size()) + ", stages: " + std::to_string(g.stages.size()) +
			    ", lcores: " + std::to_string(g.lcores.size())};
	for (const auto &f : g.flows)
		v.config.push_back("connected: " + (g.flows.size() > 1 ? "flow " + f->conf->name + ": " : std::string()) +
				   connected_of(*f));
	for (const auto &f : g.flows)
		v.config.push_back("flow " + f->conf->name + ": " + verb_name(f->params.verb) + ", " + std::to_string(f->params.msg_bytes) +
				   " B, " + std::to_string(f->params.qps) + " QPs, " + ends_of(*f));
	return v;
}

void graph_sampled_flows(const Graph &g, Sampler *s)
{
	for (const auto &f : g.flows)
		shape_report(*f).sampled(*f, s);
}

} // namespace rp
