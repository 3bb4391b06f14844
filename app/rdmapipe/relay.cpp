#include "relay.h"

#include "common.h"
#include "results.h"
#include "pipeline/flow.h"

#include "control/stats.h"
#include "control/telemetry.h"

#include "pipeline/lcore_loop.h"
#include "pipeline/stage.h"

#include "engine/requester.h"
#include "engine/responder.h"
#include "verbs/async_events.h"
#include "verbs/caps.h"
#include "verbs/device.h"
#include "verbs/io_context.h"

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rp {

namespace {

struct Relay;

/* One lcore's part of the relay: its stages in file order, and the (at most one)
 * requester and responder whose QPs share its io context. */
struct Lane {
	unsigned lcore = 0;
	LcoreLoop loop;
	Requester *q = nullptr;
	Responder *v = nullptr;
	Relay *relay = nullptr;
	double cpu_s = 0;
	std::atomic<bool> done{false};   // this lcore: wo, main: ro
};

struct Relay {
	Requester in_q, out_q;
	Responder in_v, out_v;
	RunControl in_ctl, out_ctl;
	Stage in_tx, in_rx, verify, out_tx, out_rx;
	Lane lanes[5];
	unsigned nlanes = 0;
	Sampler sampler;
};

/* A failed stage stops them all: the others would only wait for it until they stall. */
void stop_all(Relay *r)
{
	r->in_ctl.abort.store(true);
	r->out_ctl.abort.store(true);
}

int lane_run(void *arg)
{
	auto *l = static_cast<Lane *>(arg);
	double cpu0 = thread_cpu_s();
	if (l->q)
		requester_start(l->q);
	if (l->v)
		responder_start(l->v);
	int rc = lcore_loop_run(&l->loop);   // the RDMA stages finish their roles
	for (uint32_t i = 0; i < l->loop.nstages; i++)
		if (l->loop.stages[i]->rc != 0)
			rc = -1;
	l->cpu_s = thread_cpu_s() - cpu0;
	if (rc != 0)
		stop_all(l->relay);
	l->done.store(true, std::memory_order_release);
	return rc;
}

Lane *lane_of(Relay *r, unsigned lcore)
{
	for (unsigned i = 0; i < r->nlanes; i++)
		if (r->lanes[i].lcore == lcore)
			return &r->lanes[i];
	Lane *l = &r->lanes[r->nlanes++];
	l->lcore = lcore;
	l->relay = r;
	return l;
}

/* Everything created at setup, torn down in reverse order by the destructor. */
struct Setup {
	Device dev;
	std::map<unsigned, SharedIOContext> io;   // one per lcore with an RDMA stage
	AsyncEventWatch async;
	rte_ring *rx_ring = nullptr, *tx_ring = nullptr;
	std::unique_ptr<LoopbackFlow> in = std::make_unique<LoopbackFlow>();
	std::unique_ptr<LoopbackFlow> out = std::make_unique<LoopbackFlow>();

	~Setup()
	{
		async_watch_stop(&async);
		rte_ring_free(rx_ring);
		rte_ring_free(tx_ring);
		out.reset();   // QPs before the io contexts they use; out's before in's pool
		in.reset();
		for (auto &kv : io)
			shared_io_context_destroy(&kv.second);
		device_close(&dev);
	}
};

/* What one lcore's io context must hold: the CQs and SRQ of the roles placed on it. */
struct IoNeeds {
	uint64_t send_cq = 0, recv_cq = 0;
	uint32_t srq = 0;
};

void print_flow(const char *what, const std::string &name, const RunOptions &o, const Requester &q, const Responder &v,
		unsigned tx_lc, unsigned rx_lc)
{
	printf("  flow %-10s %s, %u B, %u QP%s, lcore %u -> lcore %u: sent %" PRIu64 ", completed %" PRIu64
	       ", received %" PRIu64 ", %s %" PRIu64 "\n",
	       (name + ":").c_str(), verb_opcode_name(o.verb), o.msg_bytes, o.qps, o.qps > 1 ? "s" : "", tx_lc, rx_lc,
	       q.c.sent, q.c.completed, v.c.received, what, v.c.verified);
	print_wc_errors(("flow " + name + " requester").c_str(), q.c.wc_errors);
	print_wc_errors(("flow " + name + " responder").c_str(), v.c.wc_errors);
	if (q.c.fail_reason)
		printf("  flow %s requester failed: %s\n", name.c_str(), q.c.fail_reason);
	if (v.c.fail_reason)
		printf("  flow %s responder failed: %s\n", name.c_str(), v.c.fail_reason);
}

FlowResult flow_result(const std::string &name, const RunOptions &o, const Requester &q, uint64_t verified)
{
	FlowResult x;
	x.name = name;
	x.qps = o.qps;
	x.sent = q.c.sent;
	x.completed = q.c.completed;
	x.verified = verified;
	x.bytes = q.c.completed * o.msg_bytes;
	for (uint32_t i = 0; i < q.nqps; i++)
		x.failed_qps += q.qps[i].failed;
	x.errors = &q.flow_errors[0];
	x.latency = &q.flow_latency[0];
	x.latency_what = "chain posted to its signalled completion";
	return x;
}

int summarise(const RelayPlan &p, const Setup &s, const Relay &r)
{
	const uint64_t m = p.in.messages;
	const StageStats &vs = r.verify.st;
	uint64_t start = r.in_q.c.start_tsc;
	uint64_t end = std::max({r.in_q.c.end_tsc, r.out_q.c.end_tsc, r.out_v.c.end_tsc});
	double secs = end > start ? tsc_to_s(end - start) : 1e-9;
	uint64_t errors = r.in_q.c.wc_errors.total + r.in_v.c.wc_errors.total + r.out_q.c.wc_errors.total +
			  r.out_v.c.wc_errors.total;
	uint64_t payload = vs.payload_errors + r.out_v.c.payload_errors;
	/* in's receive buffers are in its pool or posted in its SRQ, whatever happened. */
	const uint64_t in_pool = s.in->shape.rx_pool_n;
	uint64_t held = in_pool - std::min<uint64_t>(in_pool, rte_mempool_avail_count(s.in->rx_pool) + r.in_v.refill.posted());

	printf("summary:\n");
	printf("  device:              %s port %u, GID index %d, MTU %s\n", s.dev.name.c_str(), s.dev.port,
	       s.dev.gid_index, mtu_str(s.dev.port_attr.active_mtu));
	printf("  connected:           %s; %s\n", s.in->pairs.connected.c_str(), s.out->pairs.connected.c_str());
	printf("  relay:               rdma_rx (lcore %u) -> %s -> %s (lcore %u) -> %s -> rdma_tx (lcore %u)\n", p.in_rx,
	       p.rx_ring_name.c_str(), p.verify_name.c_str(), p.verify, p.tx_ring_name.c_str(), p.out_tx);
	print_flow("in sequence", p.in_name, p.in, r.in_q, r.in_v, p.in_tx, p.in_rx);
	printf("  stage %-9s checked %" PRIu64 " (payload errors %" PRIu64 "), %" PRIu64
	       " bursts held back by a full ring; rdma_rx held back %" PRIu64 "\n",
	       (p.verify_name + ":").c_str(), vs.msgs, vs.payload_errors, vs.out_full, r.in_v.out_full);
	print_flow("verified", p.out_name, p.out, r.out_q, r.out_v, p.out_tx, p.out_rx);
	printf("  messages sent:       %" PRIu64 "\n", r.in_q.c.sent);
	printf("  messages verified:   %" PRIu64 " (checked by %s, then again at flow %s's receiver)\n",
	       std::min(vs.msgs - vs.payload_errors, r.out_v.c.verified), p.verify_name.c_str(), p.out_name.c_str());
	printf("  elapsed:             %.3f s\n", secs);
	printf("  relayed rate:        %.4f Mmsg/s\n", static_cast<double>(r.out_v.c.received) / secs / 1e6);
	printf("  payload errors:      %" PRIu64 "\n", payload);
	printf("  completion errors:   %" PRIu64 "\n", errors);
	printf("  buffers not returned: %" PRIu64 "\n", held);
	print_async_events(s.async);
	for (unsigned i = 0; i < r.nlanes; i++) {
		const Lane &l = r.lanes[i];
		printf("  lcore %u:             ", l.lcore);
		for (uint32_t k = 0; k < l.loop.nstages; k++)
			printf("%s%s", k ? ", " : "", l.loop.stages[k]->name);
		printf("; %" PRIu64 " of %" PRIu64 " iterations busy, CPU %.3f s\n", l.loop.busy_iterations,
		       l.loop.iterations, l.cpu_s);
	}
	bool rc_ok = true;
	for (const Stage *st : {&r.in_tx, &r.in_rx, &r.out_tx, &r.out_rx})
		rc_ok &= st->done.load() && st->rc == 0;
	/* Every message went the whole way, was checked twice, and every buffer came back. */
	bool pass = rc_ok && r.in_q.c.sent == m && r.in_v.c.received == m && vs.msgs == m && r.out_q.c.sent == m &&
		    r.out_v.c.received == m && r.out_v.c.verified == m && payload == 0 && errors == 0 && held == 0;
	printf("result: %s\n", pass ? "PASS" : "FAIL");

	Results res = results_of("rate", p.in.verb, p.in.msg_bytes, s.dev.name, secs, pass);
	res.flows = {flow_result(p.in_name, p.in, r.in_q, vs.msgs - vs.payload_errors),
		     flow_result(p.out_name, p.out, r.out_q, r.out_v.c.verified)};
	for (unsigned i = 0; i < r.nlanes; i++) {
		const Lane &l = r.lanes[i];
		res.lcores.push_back({l.lcore, l.q && l.v ? "requester+responder" : l.q ? "requester" : l.v ? "responder" : "stages",
				      l.loop.busy_iterations, l.loop.iterations - l.loop.busy_iterations, l.cpu_s});
	}
	res.period_s = r.sampler.period_s;
	res.series = r.sampler.series;
	return write_results(p.in, res, pass);
}

} // namespace

int run_relay(const RelayPlan &p)
{
	for (unsigned lc : {p.in_tx, p.in_rx, p.verify, p.out_tx, p.out_rx})
		if (!rte_lcore_is_enabled(lc)) {
			fprintf(stderr, "rdmapipe: relay: lcore %u is not in the EAL lcore set (-l)\n", lc);
			return kExitUsage;
		}
	std::string err;
	Setup s;
	DeviceCaps caps;
	if (int rc = open_device(p.in, &s.dev, &caps); rc != kExitOk)
		return rc;
	for (const RunOptions *o : {&p.in, &p.out})
		if (o->inline_send && o->msg_bytes > caps.max_inline) {
			fprintf(stderr, "rdmapipe: inline %u B messages: %s inlines at most %u B\n", o->msg_bytes,
				s.dev.name.c_str(), caps.max_inline);
			return kExitUsage;
		}
	const VerbsOps *ops = pick_cq_ops(p.in, s.dev, caps);
	const bool use_cq_ex = ops != &kIbvOps;
	if (async_watch_start(&s.async, s.dev.ctx, &err) != 0)
		return setup_error(s.dev.name + ": " + err);

	/* Sizing. in's receive buffers travel on: through both rings and out's send queues
	 * until out's completions return them, so its pool holds all of that too. */
	s.in->shape = role_shape(p.in);
	s.out->shape = role_shape(p.out);
	s.in->shape.rx_pool_n += p.rx_ring + p.tx_ring + 2 * kStageBurst + p.out.qps * (p.out.sq_depth + p.out.batch);
	for (const LoopbackFlow *f : {s.in.get(), s.out.get()})
		if (check_role_limits(f->shape, s.dev, 2ull * (p.in.qps + p.out.qps), &err) != 0)
			return setup_error(err);
	std::map<unsigned, IoNeeds> needs;
	needs[p.in_tx].send_cq += s.in->shape.req_send_cq;
	needs[p.in_rx].send_cq += s.in->shape.rsp_send_cq;
	needs[p.in_rx].recv_cq += s.in->shape.rsp_recv_cq;
	needs[p.in_rx].srq = s.in->shape.srq_depth;
	needs[p.out_tx].send_cq += s.out->shape.req_send_cq;
	needs[p.out_rx].send_cq += s.out->shape.rsp_send_cq;
	needs[p.out_rx].recv_cq += s.out->shape.rsp_recv_cq;
	needs[p.out_rx].srq = s.out->shape.srq_depth;
	/* One SharedIOContext per lcore: the roles placed there share its CQs. */
	for (auto &[lc, n] : needs) {
		if (n.send_cq > static_cast<uint64_t>(s.dev.dev_attr.max_cqe))
			return setup_error(s.dev.name + ": lcore " + std::to_string(lc) + "'s send CQ would need " +
					   std::to_string(n.send_cq) + " entries, the device allows " +
					   std::to_string(s.dev.dev_attr.max_cqe));
		if (shared_io_context_create(s.dev, static_cast<uint32_t>(n.send_cq), static_cast<uint32_t>(std::max<uint64_t>(n.recv_cq, 1)),
					     n.srq, false, use_cq_ex, &s.io[lc], &err) != 0)
			return setup_error("lcore " + std::to_string(lc) + "'s io context: " + err);
	}

	auto r = std::make_unique<Relay>();
	if (loopback_flow_setup(p.in, p.in_name.c_str(), s.dev, ops, false, s.io[p.in_tx], s.io[p.in_rx], &r->in_ctl,
					 s.in.get(), &r->in_q, &r->in_v, &err) != 0)
		return setup_error(err);
	if (loopback_flow_setup(p.out, p.out_name.c_str(), s.dev, ops, false, s.io[p.out_tx], s.io[p.out_rx],
					 &r->out_ctl, s.out.get(), &r->out_q, &r->out_v, &err) != 0)
		return setup_error(err);

	const unsigned flags = RING_F_SP_ENQ | RING_F_SC_DEQ;
	const int socket = static_cast<int>(rte_socket_id());
	if ((s.rx_ring = rte_ring_create(("rp_" + p.rx_ring_name).substr(0, 30).c_str(), p.rx_ring, socket, flags)) == nullptr ||
	    (s.tx_ring = rte_ring_create(("rp_" + p.tx_ring_name).substr(0, 30).c_str(), p.tx_ring, socket, flags)) == nullptr)
		return setup_error("ring " + (s.rx_ring ? p.tx_ring_name : p.rx_ring_name) + ": rte_ring_create: " +
				   rte_strerror(rte_errno));

	/* in: self-describing payloads, received buffers handed to the ring, not checked
	 * here. verify checks each one's content on its own (QPs interleave). out: posts
	 * in's buffers as they come from the ring, and its receiver checks them again. */
	r->in_q.p.self_describing = true;
	r->in_v.out = s.rx_ring;
	if (requester_set_input(&r->out_q, s.tx_ring, s.in->rx_pool, &s.in->rx_mrs, &err) != 0)
		return setup_error(err);
	r->out_v.self_describing = true;

	stage_init(&r->in_tx, &kRdmaTxStage, ("rdma_tx " + p.in_name).c_str());
	r->in_tx.ctx = &r->in_q;
	stage_init(&r->in_rx, &kRdmaRxStage, ("rdma_rx " + p.in_name).c_str());
	r->in_rx.ctx = &r->in_v;
	stage_init(&r->verify, &kVerifyStage, p.verify_name.c_str());
	r->verify.in = s.rx_ring;
	r->verify.out = s.tx_ring;
	r->verify.pool = s.in->rx_pool;
	r->verify.msg_bytes = p.in.msg_bytes;
	r->verify.ordered = false;
	stage_feed(&r->verify, &r->in_rx);
	stage_init(&r->out_tx, &kRdmaTxStage, ("rdma_tx " + p.out_name).c_str());
	r->out_tx.ctx = &r->out_q;
	stage_init(&r->out_rx, &kRdmaRxStage, ("rdma_rx " + p.out_name).c_str());
	r->out_rx.ctx = &r->out_v;

	/* Stages onto their lcores, in the file's order of the relay. */
	struct {
		Stage *st;
		unsigned lc;
		Requester *q;
		Responder *v;
	} place[] = {{&r->in_tx, p.in_tx, &r->in_q, nullptr},
		     {&r->in_rx, p.in_rx, nullptr, &r->in_v},
		     {&r->verify, p.verify, nullptr, nullptr},
		     {&r->out_tx, p.out_tx, &r->out_q, nullptr},
		     {&r->out_rx, p.out_rx, nullptr, &r->out_v}};
	for (auto &x : place) {
		Lane *l = lane_of(r.get(), x.lc);
		l->loop.stages[l->loop.nstages++] = x.st;
		if (x.q)
			l->q = x.q;
		if (x.v)
			l->v = x.v;
	}
	for (unsigned i = 0; i < r->nlanes; i++)
		if (r->lanes[i].q && r->lanes[i].v)
			share_send_cq(r->lanes[i].q, r->lanes[i].v);

	if (!p.in.quiet)
		printf("rdmapipe: relay on %s: %" PRIu64 " %s of %u B, flow %s (lcore %u -> %u) -> %s (lcore %u) -> flow %s "
		       "(lcore %u -> %u)\n",
		       s.dev.name.c_str(), p.in.messages, verb_opcode_name(p.in.verb), p.in.msg_bytes, p.in_name.c_str(),
		       p.in_tx, p.in_rx, p.verify_name.c_str(), p.verify, p.out_name.c_str(), p.out_tx, p.out_rx);
	fflush(stdout);
	r->sampler.live = {&r->in_q.flow_live[0], &r->out_q.flow_live[0]};
	/* Stats lines and telemetry: both flows, every lane, the rings and in's pool. */
	RunView view;
	view.device = s.dev.name;
	view.what = "relay of " + std::string(verb_opcode_name(p.in.verb)) + ", " + std::to_string(p.in.msg_bytes) + " B";
	view.tsc_hz = static_cast<double>(rte_get_tsc_hz());
	view.ctl = &r->in_ctl;
	view.port = s.dev.port;
	view.hw_base = hw_counters_read(s.dev.name, s.dev.port);
	const struct {
		const RunOptions *o;
		const std::string *name;
		Requester *q;
	} fl[] = {{&p.in, &p.in_name, &r->in_q}, {&p.out, &p.out_name, &r->out_q}};
	for (const auto &x : fl)
		view.flows.push_back({*x.name, x.o->qps, x.o->verb, x.o->msg_bytes, x.o->batch, x.o->signal_every,
				      x.o->messages, &x.q->flow_live[0], &x.q->flow_ctl[0]});
	for (unsigned i = 0; i < r->nlanes; i++) {
		const Lane &l = r->lanes[i];
		view.lcores.push_back({l.lcore, l.q && l.v ? "requester+responder" : l.q ? "requester" : l.v ? "responder" : "stages",
				       l.q ? &l.q->live : l.v ? &l.v->live : nullptr});
	}
	view.pools = {{p.in_name + " receive buffers", s.in->rx_pool}, {p.out_name + " receive buffers", s.out->rx_pool}};
	view.rings = {{p.rx_ring_name, s.rx_ring}, {p.tx_ring_name, s.tx_ring}};
	view.config = {"relay: rdma_rx (lcore " + std::to_string(p.in_rx) + ") -> " + p.rx_ring_name + " -> " + p.verify_name +
			       " (lcore " + std::to_string(p.verify) + ") -> " + p.tx_ring_name + " -> rdma_tx (lcore " +
			       std::to_string(p.out_tx) + ")",
		       "messages: " + std::to_string(p.in.messages)};
	r->sampler.view = &view;
	r->sampler.print_period_s = p.in.stats_period_s;
	std::vector<LcoreJob> jobs;
	for (unsigned i = 0; i < r->nlanes; i++)
		jobs.push_back({lane_run, &r->lanes[i], r->lanes[i].lcore, &r->lanes[i].done});
	/* A signal aborts in; its failure stops the rest. */
	if (int rc = run_watched(jobs, &r->sampler, !p.in.output_json.empty() || p.in.stats_period_s > 0, &view, &r->in_ctl,
				 &s.async);
	    rc != kExitOk)
		return rc;
	return summarise(p, s, *r);
}

} // namespace rp
