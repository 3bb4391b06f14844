#include "share.h"

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

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace rp {

namespace {

struct Share;

/* One lcore posting to the flow's QPs (all of them, or its share). */
struct Lane {
	unsigned lcore = 0;
	Requester q;
	RunControl ctl;
	Stage tx;
	LcoreLoop loop;
	Share *share = nullptr;
	double cpu_s = 0;
	std::atomic<bool> done{false};   // this lcore: wo, main: ro
};

struct Share {
	std::vector<std::unique_ptr<Lane>> lanes;
	Sampler sampler;
};

int lane_run(void *arg)
{
	auto *l = static_cast<Lane *>(arg);
	double cpu0 = thread_cpu_s();
	requester_start(&l->q);
	int rc = lcore_loop_run(&l->loop);   // the rdma_tx stage finishes the requester
	if (rc != 0 || l->tx.rc != 0)
		for (auto &other : l->share->lanes)   // the others would only stall without it
			other->ctl.abort.store(true);
	l->cpu_s = thread_cpu_s() - cpu0;
	l->done.store(true, std::memory_order_release);
	return rc;
}

/* Everything created at setup, torn down in reverse order by the destructor. */
struct Setup {
	Device dev;
	std::vector<SharedIOContext> req_io;   // shared: one; else one per lane
	SharedIOContext passive_io;            // the far ends' QPs: never polled, READs need no CPU there
	AsyncEventWatch async;
	std::vector<rte_ring *> rings;         // shared: each lane's handed-over completions
	std::vector<std::unique_ptr<LoopbackFlow>> flows;
	std::vector<std::unique_ptr<Requester>> templates;   // shared: the flow's QPs, set up once
	std::vector<std::unique_ptr<Responder>> passive;
	RunControl setup_ctl;

	~Setup()
	{
		async_watch_stop(&async);
		for (rte_ring *r : rings)
			rte_ring_free(r);
		flows.clear();   // QPs before the io contexts they use
		for (SharedIOContext &io : req_io)
			shared_io_context_destroy(&io);
		shared_io_context_destroy(&passive_io);
		device_close(&dev);
	}
};

/* Lane t's part of m messages. */
uint64_t lane_messages(uint64_t m, size_t t, size_t lanes)
{
	return m / lanes + (t < m % lanes);
}

int summarise(const SharePlan &p, const Setup &s, const Share &sh)
{
	const RunOptions &o = p.o;
	const size_t nl = sh.lanes.size();
	uint64_t sent = 0, completed = 0, verified = 0, errors = 0, handed = 0, start = UINT64_MAX, end = 0;
	double cpu = 0;
	bool rc_ok = true;
	for (const auto &l : sh.lanes) {
		const RequesterCounters &c = l->q.c;
		sent += c.sent;
		completed += c.completed;
		verified += c.verified;
		errors += c.wc_errors.total;
		handed += c.handed_over;
		start = std::min(start, c.start_tsc);
		end = std::max(end, c.end_tsc);
		cpu += l->cpu_s;
		rc_ok &= l->tx.done.load() && l->tx.rc == 0;
	}
	double secs = end > start ? tsc_to_s(end - start) : 1e-9;
	const uint32_t per_lane_depth = p.shared ? o.sq_depth / static_cast<uint32_t>(nl) : o.sq_depth;

	printf("summary:\n");
	printf("  device:              %s port %u, GID index %d, MTU %s\n", s.dev.name.c_str(), s.dev.port,
	       s.dev.gid_index, mtu_str(s.dev.port_attr.active_mtu));
	if (p.shared)
		printf("  QP sharing:          %u QPs shared by %zu lcores (each posts to every QP; one send CQ, "
		       "polled by all, completions handed to their lane through rings)\n", o.qps, nl);
	else
		printf("  QP sharing:          none: %u QPs split over %zu lcores (%zu each, a send CQ each)\n", o.qps, nl,
		       o.qps / nl);
	printf("  connected:           %s%s\n", s.flows[0]->pairs.connected.c_str(), s.flows.size() > 1 ? " (per lane)" : "");
	printf("  verb:                %s, %u B, batch %u, signal every %u%s, send queue per lane and QP %u\n",
	       verb_opcode_name(o.verb), o.msg_bytes, o.batch, o.signal_every,
	       o.signal_every == 1 ? " (all signalled)" : " (selective)", per_lane_depth);
	for (const auto &l : sh.lanes) {
		const RequesterCounters &c = l->q.c;
		printf("  lane on lcore %-3u    sent %" PRIu64 ", completed %" PRIu64 ", verified %" PRIu64
		       ", handed over %" PRIu64 ", handed in %" PRIu64 ", CPU %.3f s (%.0f ns/msg)\n",
		       l->lcore, c.sent, c.completed, c.verified, c.handed_over, c.handed_in, l->cpu_s,
		       c.completed ? l->cpu_s * 1e9 / static_cast<double>(c.completed) : 0.0);
		print_wc_errors(("lane " + std::to_string(l->lcore)).c_str(), c.wc_errors);
		if (c.fail_reason)
			printf("  lane lcore %u failed: %s\n", l->lcore, c.fail_reason);
	}
	printf("  messages sent:       %" PRIu64 "\n", sent);
	printf("  messages verified:   %" PRIu64 " (read results)\n", verified);
	printf("  elapsed:             %.3f s\n", secs);
	printf("  message rate:        %.4f Mmsg/s\n", static_cast<double>(completed) / secs / 1e6);
	printf("  CPU per message:     %.0f ns (all lanes' CPU time / messages)\n",
	       completed ? cpu * 1e9 / static_cast<double>(completed) : 0.0);
	printf("  completions handed between lanes: %" PRIu64 "\n", handed);
	printf("  completion errors:   %" PRIu64 "\n", errors);
	print_async_events(s.async);
	bool pass = rc_ok && sent == o.messages && completed == sent && verified == sent && errors == 0;
	printf("result: %s\n", pass ? "PASS" : "FAIL");

	Results res = results_of("rate", o.verb, o.msg_bytes, s.dev.name, secs, pass);
	for (const auto &l : sh.lanes) {
		FlowResult x;
		x.name = p.name + "@lcore" + std::to_string(l->lcore);
		x.qps = l->q.nqps;
		x.sent = l->q.c.sent;
		x.completed = l->q.c.completed;
		x.verified = l->q.c.verified;
		x.bytes = x.completed * o.msg_bytes;
		x.failed_qps = l->q.c.failed_qps;
		x.errors = &l->q.flow_errors[0];
		x.latency = &l->q.flow_latency[0];
		x.latency_what = "chain posted to its signalled completion";
		res.flows.push_back(x);
		res.lcores.push_back({l->lcore, "requester", l->q.c.polls_busy, l->q.c.polls_idle, l->cpu_s});
	}
	res.period_s = sh.sampler.period_s;
	res.series = sh.sampler.series;
	return write_results(o, res, pass);
}

} // namespace

int run_share(const SharePlan &p)
{
	const RunOptions &o = p.o;
	const size_t nl = p.lanes.size();
	for (unsigned lc : p.lanes)
		if (!rte_lcore_is_enabled(lc)) {
			fprintf(stderr, "rdmapipe: QP sharing: lcore %u is not in the EAL lcore set (-l)\n", lc);
			return kExitUsage;
		}
	std::string err;
	Setup s;
	DeviceCaps caps;
	if (int rc = open_device(o, &s.dev, &caps); rc != kExitOk)
		return rc;
	const VerbsOps *ops = pick_cq_ops(o, s.dev, caps);
	const bool use_cq_ex = ops != &kIbvOps;
	if (async_watch_start(&s.async, s.dev.ctx, &err) != 0)
		return setup_error(s.dev.name + ": " + err);
	if (shared_io_context_create(s.dev, 1, 1, 0, false, false, &s.passive_io, &err) != 0)
		return setup_error("the far ends' io context: " + err);

	auto sh = std::make_unique<Share>();
	for (size_t t = 0; t < nl; t++) {
		sh->lanes.push_back(std::make_unique<Lane>());
		sh->lanes[t]->lcore = p.lanes[t];
		sh->lanes[t]->share = sh.get();
	}

	if (p.shared) {
		/* The flow's N QPs once, on one send CQ; then a requester per lane on all of
		 * them, with its share of every send queue. */
		auto f = std::make_unique<LoopbackFlow>();
		f->shape = role_shape(o);
		if (check_role_limits(f->shape, s.dev, 2ull * o.qps, &err) != 0)
			return setup_error(err);
		s.req_io.resize(1);
		if (shared_io_context_create(s.dev, static_cast<uint32_t>(f->shape.req_send_cq), 1, 0, false, use_cq_ex,
					     &s.req_io[0], &err) != 0)
			return setup_error(err);
		s.templates.push_back(std::make_unique<Requester>());
		s.passive.push_back(std::make_unique<Responder>());
		Requester &tq = *s.templates[0];
		if (loopback_flow_setup(o, p.name.c_str(), s.dev, s.dev, ops, false, s.req_io[0], s.passive_io, &s.setup_ctl,
						 f.get(), &tq, s.passive[0].get(), &err) != 0)
			return setup_error(err);
		const unsigned ring_size = rte_align32pow2(o.qps * o.sq_depth + 1);
		for (size_t t = 0; t < nl; t++) {
			std::string name = "rp_lane" + std::to_string(t);
			rte_ring *ring = rte_ring_create(name.c_str(), ring_size, static_cast<int>(rte_socket_id()), RING_F_SC_DEQ);
			if (ring == nullptr)
				return setup_error("ring " + name + " (" + std::to_string(ring_size) + "): rte_ring_create: " +
						   rte_strerror(rte_errno));
			s.rings.push_back(ring);
		}
		for (size_t t = 0; t < nl; t++) {
			Requester &q = sh->lanes[t]->q;
			RunOptions lo = o;
			lo.messages = lane_messages(o.messages, t, nl);
			lo.sq_depth = o.sq_depth / static_cast<uint32_t>(nl);
			q.ops = ops;
			q.send_cq = s.req_io[0].send_cq;
			q.pool = tq.pool;
			q.mrs = tq.mrs;
			q.ctl = &sh->lanes[t]->ctl;
			q.p = requester_params(lo, false, rte_get_tsc_hz());
			if (requester_init(&q, o.qps, &err) != 0)
				return setup_error(err);
			for (uint32_t i = 0; i < o.qps; i++) {
				q.qps[i].qp = tq.qps[i].qp;
				q.qps[i].remote = tq.qps[i].remote;
			}
			if (requester_add_qps(&q, &err) != 0 ||
			    requester_set_lane(&q, static_cast<uint32_t>(t), s.rings.data(), static_cast<uint32_t>(nl), &err) != 0)
				return setup_error(err);
		}
		s.flows.push_back(std::move(f));
	} else {
		/* Partitioned: lane t is a flow of its own, N / T QPs on its own send CQ. */
		s.req_io.resize(nl);
		for (size_t t = 0; t < nl; t++) {
			RunOptions lo = o;
			lo.qps = o.qps / static_cast<uint32_t>(nl);
			lo.flows = {lo.qps};
			lo.messages = lane_messages(o.messages, t, nl);
			auto f = std::make_unique<LoopbackFlow>();
			f->shape = role_shape(lo);
			if (check_role_limits(f->shape, s.dev, 2ull * o.qps, &err) != 0)
				return setup_error(err);
			if (shared_io_context_create(s.dev, static_cast<uint32_t>(f->shape.req_send_cq), 1, 0, false, use_cq_ex,
						     &s.req_io[t], &err) != 0)
				return setup_error(err);
			s.passive.push_back(std::make_unique<Responder>());
			std::string tag = p.name + std::to_string(t);
			if (loopback_flow_setup(lo, tag.c_str(), s.dev, s.dev, ops, false, s.req_io[t], s.passive_io,
							 &sh->lanes[t]->ctl, f.get(), &sh->lanes[t]->q, s.passive.back().get(), &err) != 0)
				return setup_error(err);
			s.flows.push_back(std::move(f));
		}
	}
	for (auto &l : sh->lanes) {
		stage_init(&l->tx, &kRdmaTxStage, "rdma_tx");
		l->tx.ctx = &l->q;
		l->loop.stages[l->loop.nstages++] = &l->tx;
		sh->sampler.live.push_back(&l->q.flow_live[0]);
	}

	if (!o.quiet)
		printf("rdmapipe: QP sharing on %s: %" PRIu64 " %s of %u B over %u QPs %s %zu lcores, signal every %u\n",
		       s.dev.name.c_str(), o.messages, verb_opcode_name(o.verb), o.msg_bytes, o.qps,
		       p.shared ? "shared by" : "split over", nl, o.signal_every);
	fflush(stdout);
	/* Stats lines and telemetry: a flow per lane (its messages over the QPs it posts to). */
	RunView view;
	view.device = s.dev.name;
	view.what = std::string("QP sharing, ") + verb_opcode_name(o.verb) + ", " + std::to_string(o.msg_bytes) + " B";
	view.tsc_hz = static_cast<double>(rte_get_tsc_hz());
	view.ctl = &sh->lanes[0]->ctl;
	view.ports = {{s.dev.name, s.dev.port, hw_counters_read(s.dev.name, s.dev.port)}};
	for (size_t t = 0; t < nl; t++) {
		Lane &l = *sh->lanes[t];
		view.flows.push_back({p.name + "@lcore" + std::to_string(l.lcore), l.q.nqps, o.verb, o.msg_bytes, o.batch,
				      o.signal_every, lane_messages(o.messages, t, nl), &l.q.flow_live[0], &l.q.flow_ctl[0]});
		view.lcores.push_back({l.lcore, "requester", &l.q.live});
	}
	view.config = {std::string("QPs: ") + std::to_string(o.qps) + (p.shared ? " shared by " : " split over ") +
			       std::to_string(nl) + " lcores",
		       "signal every: " + std::to_string(o.signal_every)};
	sh->sampler.view = &view;
	sh->sampler.print_period_s = o.stats_period_s;
	std::vector<LcoreJob> jobs;
	for (auto &l : sh->lanes)
		jobs.push_back({lane_run, l.get(), l->lcore, &l->done});
	/* A signal aborts lane 0; its failure stops the rest. */
	if (int rc = run_watched(jobs, &sh->sampler, !o.output_json.empty() || o.stats_period_s > 0, &view,
				 &sh->lanes[0]->ctl, {&s.async});
	    rc != kExitOk)
		return rc;
	return summarise(p, s, *sh);
}

} // namespace rp
