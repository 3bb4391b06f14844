#include "loopback.h"

#include "common.h"
#include "results.h"
#include "pipeline/flow.h"

#include "control/console.h"
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
#include "verbs/memory.h"

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <algorithm>
#include <string>
#include <vector>

namespace rp {

namespace {

struct Roles {
	Requester req;
	Responder rsp;
	RunControl ctl;
	std::atomic<bool> responder_done{false};   // responder lcore: wo, main: ro
	std::atomic<bool> requester_finished{false};
	int req_rc = -1;
	int rsp_rc = -1;
	double req_cpu_s = 0, rsp_cpu_s = 0;   // CPU time each role's thread used
	unsigned req_lc = 0, rsp_lc = 0;
	Sampler sampler;                       // per-second series for the results files
	/* A pipeline file's stages after rdma_rx, on the responder's lcore: the responder
	 * hands received buffers to verify (through a ring), verify to sink. */
	bool stages = false;
	Stage rx_stage, verify_stage, sink_stage;
	LcoreLoop rx_loop;
	/* ... and before rdma_tx, on the requester's lcore: gen makes the messages. */
	bool gen = false;
	Stage gen_stage, tx_stage;
	LcoreLoop tx_loop;
};

int requester_lcore(void *arg)
{
	auto *r = static_cast<Roles *>(arg);
	double cpu0 = thread_cpu_s();
	if (r->gen) {
		requester_start(&r->req);
		lcore_loop_run(&r->tx_loop);   // the rdma_tx stage finishes the requester
		r->req_rc = r->tx_stage.done.load() ? r->tx_stage.rc : requester_finish(&r->req);
	} else {
		r->req_rc = requester_run(&r->req);
	}
	r->req_cpu_s = thread_cpu_s() - cpu0;
	r->requester_finished.store(true, std::memory_order_release);
	return r->req_rc;
}

int responder_lcore(void *arg)
{
	auto *r = static_cast<Roles *>(arg);
	double cpu0 = thread_cpu_s();
	if (r->stages) {
		responder_start(&r->rsp);
		lcore_loop_run(&r->rx_loop);   // the rdma_rx stage finishes the responder
		r->rsp_rc = r->rx_stage.done.load() ? r->rx_stage.rc : responder_finish(&r->rsp);
	} else {
		r->rsp_rc = responder_run(&r->rsp);
	}
	r->rsp_cpu_s = thread_cpu_s() - cpu0;
	/* A responder that gave up cannot be waited for by the requester: stop it too. */
	if (r->rsp_rc != 0 && !r->requester_finished.load(std::memory_order_acquire))
		r->ctl.abort.store(true);
	r->responder_done.store(true, std::memory_order_release);
	return r->rsp_rc;
}

/* Everything created at setup, torn down in reverse order by the destructor. */
struct Setup {
	Device dev;
	SharedIOContext req_io, rsp_io;
	AsyncEventWatch async;
	rte_ring *rings[3] = {nullptr, nullptr, nullptr};   // rdma_rx -> verify -> sink; gen -> rdma_tx
	std::unique_ptr<LoopbackFlow> flow = std::make_unique<LoopbackFlow>();

	~Setup()
	{
		async_watch_stop(&async);
		for (rte_ring *ring : rings)
			rte_ring_free(ring);
		flow.reset();   // its QPs go before the io contexts they use
		shared_io_context_destroy(&req_io);
		shared_io_context_destroy(&rsp_io);
		device_close(&dev);
	}
};

/* With stages after rdma_rx, the payload is checked by the verify stage: what it found
 * good. */
uint64_t stage_verified(const Roles &r)
{
	const StageStats &vs = r.verify_stage.st;
	return vs.msgs - vs.payload_errors;
}

/* Per flow (its QPs share the lcores' contexts with the other flows'): what it sent
 * and verified, its completion errors by status, its completion latency. */
std::vector<FlowResult> flow_results(const RunOptions &o, const Roles &r)
{
	const bool two_sided = verb_consumes_receive(o.verb);
	const bool write_ok = r.rsp.c.payload_errors == 0 && (r.rsp.c.window_slots_checked || !o.verify);
	std::vector<FlowResult> out;
	uint32_t qi = 0;
	for (uint32_t f = 0; f < r.req.nflows; f++) {
		FlowResult x;
		x.name = flow_name(o.flow_names, f);
		x.qps = o.flows[f];
		for (uint32_t k = 0; k < o.flows[f]; k++, qi++) {
			const RequesterQp &a = r.req.qps[qi];
			x.sent += a.sent;
			x.completed += a.completed;
			x.failed_qps += a.failed || r.rsp.qps[qi].failed;
			if (two_sided)
				x.verified += r.rsp.qps[qi].verified;
			else if (o.verb == Verb::write)
				x.verified += write_ok && !a.failed ? a.completed : 0;
			else
				x.verified += a.verified;
		}
		if (r.stages)   // one flow: its payloads were checked downstream
			x.verified = std::min(x.verified, stage_verified(r));
		x.bytes = x.completed * o.msg_bytes;
		x.errors = &r.req.flow_errors[f];
		x.latency = &r.req.flow_latency[f];
		x.latency_what = "chain posted to its signalled completion";
		out.push_back(x);
	}
	return out;
}

/* One line per flow, and its completion errors by status: a flow that failed says so,
 * the others show that they went on. */
void print_flows(const std::vector<FlowResult> &flows)
{
	for (size_t f = 0; f < flows.size(); f++) {
		const FlowResult &x = flows[f];
		printf("  flow %zu:%*s%u QP%s, sent %" PRIu64 ", completed %" PRIu64 ", verified %" PRIu64
		       ", failed QPs %" PRIu64 ", completion errors %" PRIu64 "\n",
		       f, f < 10 ? 14 : 13, "", x.qps, x.qps > 1 ? "s" : "", x.sent, x.completed, x.verified, x.failed_qps,
		       x.errors->total);
		for (unsigned st = 0; st < kWcStatusCount; st++)
			if (x.errors->by_status[st])
				printf("  flow %zu completion errors: %" PRIu64 " x %s\n", f, x.errors->by_status[st],
				       ibv_wc_status_str(static_cast<ibv_wc_status>(st)));
	}
}

std::string fmt_seconds(double s)
{
	char b[32];
	snprintf(b, sizeof(b), "%g s", s);
	return b;
}

/* What the console, the stats lines and telemetry see of this run. */
RunView make_view(const RunOptions &o, Setup &s, Roles &r)
{
	RunView v;
	v.device = s.dev.name;
	v.what = std::string("loopback ") + verb_opcode_name(o.verb) + ", " + std::to_string(o.msg_bytes) + " B";
	v.tsc_hz = static_cast<double>(rte_get_tsc_hz());
	v.duration_s = o.duration_s;
	v.ctl = &r.ctl;
	v.port = s.dev.port;
	v.hw_base = hw_counters_read(s.dev.name, s.dev.port);
	uint32_t qi = 0;
	for (uint32_t f = 0; f < r.req.nflows; f++) {
		FlowView fv;
		fv.name = flow_name(o.flow_names, f);
		fv.qps = o.flows[f];
		fv.verb = o.verb;
		fv.msg_bytes = o.msg_bytes;
		fv.batch = o.batch;
		fv.signal_every = o.signal_every;
		fv.target = o.duration_s > 0 ? 0 : o.messages;
		fv.live = &r.req.flow_live[f];
		fv.ctl = &r.req.flow_ctl[f];
		v.flows.push_back(fv);
		for (uint32_t k = 0; k < o.flows[f]; k++, qi++) {
			v.qps.push_back({fv.name, k, r.req.qps[qi].qp->qp_num, "requester"});
			v.qps.push_back({fv.name, k, r.rsp.qps[qi].qp->qp_num, "responder"});
		}
	}
	v.lcores = {{r.req_lc, "requester", &r.req.live}, {r.rsp_lc, "responder", &r.rsp.live}};
	v.pools.push_back({"requester buffers", s.flow->tx_pool});
	if (s.flow->rx_pool)
		v.pools.push_back({"receive buffers", s.flow->rx_pool});
	const char *ring_names[3] = {"rdma_rx -> verify", "verify -> sink", "gen -> rdma_tx"};
	for (int i = 0; i < 3; i++)
		if (s.rings[i])
			v.rings.push_back({ring_names[i], s.rings[i]});
	v.config = {"verb: " + std::string(verb_name(o.verb)),
		    "message size: " + std::to_string(o.msg_bytes) + " B",
		    "QPs: " + std::to_string(o.qps) + (o.flows.size() > 1 ? " in " + std::to_string(o.flows.size()) + " flows" : ""),
		    "batch: " + std::to_string(o.batch),
		    "signal every: " + std::to_string(o.signal_every),
		    "send queue: " + std::to_string(o.sq_depth),
		    "window: " + std::to_string(o.slots),
		    "messages: " + (o.duration_s > 0 ? "for " + fmt_seconds(o.duration_s)
						     : std::to_string(o.messages) + (o.flows.size() > 1 ? " per flow" : "")),
		    "connected: " + s.flow->pairs.connected,
		    "polling: " + std::string(o.adaptive_poll ? "adaptive" : "busy"),
		    "requester lcore: " + std::to_string(r.req_lc),
		    "responder lcore: " + std::to_string(r.rsp_lc)};
	if (!o.config_file.empty())
		v.config.push_back("pipeline file: " + o.config_file);
	return v;
}

int summarise(const RunOptions &o, const Setup &s, const Roles &r, const HwCounters &hw_base)
{
	const RequesterCounters &q = r.req.c;
	const ResponderCounters &v = r.rsp.c;
	const bool two_sided = verb_consumes_receive(o.verb);
	uint64_t end = two_sided && v.end_tsc > q.start_tsc ? v.end_tsc : q.end_tsc;
	double secs = tsc_to_s(end - q.start_tsc);
	if (secs <= 0)
		secs = 1e-9;
	/* What "verified" means depends on the verb: the responder checks what it
	 * receives; the requester checks read results and atomic return values; plain
	 * writes are acknowledged and then checked by the window's final state. */
	uint64_t delivered = two_sided ? v.received : q.completed;
	uint64_t verified;
	if (two_sided)
		verified = !r.stages ? v.verified : std::min(v.verified, stage_verified(r));
	else if (o.verb == Verb::write)
		verified = v.payload_errors == 0 && (v.window_slots_checked || !o.verify) ? q.completed : 0;
	else
		verified = q.verified;
	uint64_t lost = q.sent > delivered ? q.sent - delivered : 0;
	uint64_t completion_errors = q.wc_errors.total + v.wc_errors.total;
	uint64_t data_errors = v.payload_errors + q.result_errors + (r.stages ? r.verify_stage.st.payload_errors : 0);

	printf("summary:\n");
	printf("  device:              %s port %u, GID index %d, MTU %s\n", s.dev.name.c_str(), s.dev.port,
	       s.dev.gid_index, mtu_str(s.dev.port_attr.active_mtu));
	printf("  verb:                %s, %u B, %u QP%s%s, batch %u, signal every %u, send queue %u, window %u\n",
	       verb_opcode_name(o.verb), o.msg_bytes, o.qps, o.qps > 1 ? "s" : "",
	       o.flows.size() > 1 ? (" in " + std::to_string(o.flows.size()) + " flows").c_str() : "", o.batch,
	       o.signal_every, o.sq_depth, o.slots);
	printf("  connected:           %s\n", s.flow->pairs.connected.c_str());
	printf("  completions:         %s\n", cq_ops_str(r.req.ops));
	printf("  posting:             %s%s%s\n",
	       r.req.p.post_api == PostApi::wr ? "ibv_qp_ex (ibv_wr_start .. ibv_wr_complete)" : "chained ibv_post_send",
	       o.inline_send ? ", inline" : "", o.fence ? ", fenced chains" : "");
	if (o.rate_pps > 0 && !r.gen)
		printf("  rate limit:          %.0f msg/s per flow (paced by the requester)\n", o.rate_pps);
	printf("  messages sent:       %" PRIu64 "\n", q.sent);
	printf("  messages completed:  %" PRIu64 "\n", q.completed);
	if (two_sided)
		printf("  messages received:   %" PRIu64 "\n", v.received);
	printf("  messages verified:   %" PRIu64 "%s\n", verified,
	       !o.verify ? " (sequence only: --no-verify)"
	       : o.verb == Verb::write ? " (acknowledged, window's final state checked)"
	       : verb_is_atomic(o.verb) ? " (return values, final words checked)"
	       : o.verb == Verb::read ? " (read results)" : "");
	if (o.verb == Verb::write)
		printf("  window slots checked: %" PRIu64 "\n", v.window_slots_checked);
	if (verb_is_atomic(o.verb))
		printf("  final words checked: %" PRIu64 "\n", v.counters_checked);
	printf("  bytes:               %" PRIu64 "\n", delivered * o.msg_bytes);
	printf("  elapsed:             %.3f s\n", secs);
	printf("  message rate:        %.4f Mmsg/s\n", static_cast<double>(delivered) / secs / 1e6);
	printf("  throughput:          %.4f Gbit/s\n", static_cast<double>(delivered) * o.msg_bytes * 8 / secs / 1e9);
	if (o.warmup_s > 0) {
		/* run.warmup: the rate of what completed after it, up to the last completion. */
		if (r.req.warm_tsc && q.end_tsc > r.req.warm_tsc) {
			double ws = tsc_to_s(q.end_tsc - r.req.warm_tsc);
			printf("  after warm-up:       %.4f Mmsg/s, %.4f Gbit/s (%" PRIu64 " messages in the first %.1f s left out)\n",
			       static_cast<double>(q.completed - r.req.warm_completed) / ws / 1e6,
			       static_cast<double>(q.completed - r.req.warm_completed) * o.msg_bytes * 8 / ws / 1e9,
			       r.req.warm_completed, o.warmup_s);
		} else {
			printf("  after warm-up:       none: the run ended within the %.1f s warm-up\n", o.warmup_s);
		}
	}
	printf("  send posts:          %" PRIu64 " (%.1f WRs per ibv_post_send)\n", q.post_calls,
	       q.post_calls ? static_cast<double>(q.sent) / static_cast<double>(q.post_calls) : 0.0);
	if (two_sided) {
		printf("  srq posts:           %" PRIu64 " (%" PRIu64 " cut short by an empty receive pool)\n",
		       v.srq_post_calls, r.rsp.refill.buffer_shortfalls());
		printf("  credit writes:       %" PRIu64 "\n", v.credit_writes);
		printf("  sequence errors:     %" PRIu64 "\n", v.sequence_errors);
		printf("  length errors:       %" PRIu64 "\n", v.length_errors);
		printf("  unexpected opcodes:  %" PRIu64 "\n", v.unexpected_opcodes);
		printf("  unknown QPs:         %" PRIu64 "\n", v.unknown_qps);
	}
	printf("  payload errors:      %" PRIu64 "\n", data_errors);
	printf("  completion errors:   %" PRIu64 "\n", completion_errors);
	printf("  failed QPs:          %" PRIu64 "\n", q.failed_qps);
	printf("  lost messages:       %" PRIu64 "\n", lost);
	if (v.first_bad_seq != UINT64_MAX || q.first_bad_seq != UINT64_MAX) {
		bool rsp = v.first_bad_seq != UINT64_MAX;
		uint64_t seq = rsp ? v.first_bad_seq : q.first_bad_seq;
		uint32_t qp = rsp ? v.first_bad_qp : q.first_bad_qp;
		int64_t off = rsp ? v.first_bad_offset : q.first_bad_offset;
		if (off >= 0)
			printf("  first bad message:   QP %u seq %" PRIu64 ", byte %" PRId64 " differs from the pattern\n",
			       qp, seq, off);
		else if (verb_is_atomic(o.verb))
			printf("  first bad message:   QP %u value %" PRIu64 "\n", qp, seq);
		else
			printf("  first bad message:   QP %u seq %" PRIu64 "\n", qp, seq);
	}
	std::vector<FlowResult> flows = flow_results(o, r);
	if (r.req.nflows > 1)
		print_flows(flows);
	print_async_events(s.async);
	/* What the port counted meanwhile: retransmissions, RNR NAKs, sequence errors. */
	HwCounters hw = hw_counters_delta(hw_base, hw_counters_read(s.dev.name, s.dev.port));
	std::string hw_line;
	for (const auto &[name, n] : hw)
		hw_line += (hw_line.empty() ? "" : ", ") + name + " " + std::to_string(n);
	printf("  port counters:       %s\n", hw_line.empty() ? "none moved (or the device has none)" : hw_line.c_str());
	print_wc_errors("requester", q.wc_errors);
	print_wc_errors("responder", v.wc_errors);
	if (q.fail_reason)
		printf("  requester failed:    %s\n", q.fail_reason);
	if (v.fail_reason)
		printf("  responder failed:    %s\n", v.fail_reason);
	if (q.credit_anomalies)
		printf("  credit anomalies:    %" PRIu64 "\n", q.credit_anomalies);
	double wall = tsc_to_s(std::max(q.end_tsc, v.end_tsc) - q.start_tsc);
	printf("  polling:             %s\n", o.adaptive_poll ? "adaptive (sleeps on a completion channel when idle)" : "busy");
	printf("  requester CPU:       %.3f s (%.0f%% of %.3f s)", r.req_cpu_s, wall > 0 ? 100 * r.req_cpu_s / wall : 0.0, wall);
	if (o.adaptive_poll)
		printf(", %" PRIu64 " sleeps, %" PRIu64 " woken by events", r.req.idler.sleeps, r.req.idler.wakeups);
	printf("\n  responder CPU:       %.3f s (%.0f%%)", r.rsp_cpu_s, wall > 0 ? 100 * r.rsp_cpu_s / wall : 0.0);
	if (o.adaptive_poll)
		printf(", %" PRIu64 " sleeps, %" PRIu64 " woken by events", r.rsp.idler.sleeps, r.rsp.idler.wakeups);
	printf("\n");

	const Histogram &lat = r.req.flow_latency[0];
	if (r.req.nflows == 1 && lat.count())
		printf("  completion latency:  p50 %.1f us, p99 %.1f us, max %.1f us (chain posted to its signalled completion)\n",
		       static_cast<double>(lat.percentile(0.5)) / 1e3, static_cast<double>(lat.percentile(0.99)) / 1e3,
		       static_cast<double>(lat.max()) / 1e3);

	if (r.gen)
		printf("  stages on lcore %u:  gen -> ring -> rdma_tx; gen made %" PRIu64 " (%" PRIu64
		       " bursts held back by a full ring)%s\n",
		       r.req_lc, r.gen_stage.st.msgs, r.gen_stage.st.out_full,
		       o.rate_pps > 0 ? (", at " + std::to_string(static_cast<uint64_t>(o.rate_pps)) + " msg/s").c_str() : "");
	bool stages_ok = true;
	if (r.stages) {
		const StageStats &vs = r.verify_stage.st;
		printf("  stages on lcore %u:  rdma_rx -> ring -> verify%s; verify checked %" PRIu64 " (payload errors %" PRIu64
		       "), %" PRIu64 " bursts held back by a full ring\n",
		       r.rsp_lc, r.sink_stage.ops ? " -> ring -> sink" : "", vs.msgs, vs.payload_errors, r.rsp.out_full);
		if (r.sink_stage.ops)
			printf("  sink freed:          %" PRIu64 "\n", r.sink_stage.st.msgs);
		stages_ok = vs.msgs == v.received && vs.payload_errors == 0 &&
			    (!r.sink_stage.ops || r.sink_stage.st.msgs == vs.msgs);
	}
	bool pass = r.req_rc == 0 && r.rsp_rc == 0 && lost == 0 && verified == q.sent && completion_errors == 0 &&
		    data_errors == 0 && stages_ok;
	printf("result: %s\n", pass ? "PASS" : "FAIL");

	Results res = results_of("rate", o.verb, o.msg_bytes, s.dev.name, secs, pass);
	res.flows = std::move(flows);
	res.lcores = {{r.req_lc, "requester", q.polls_busy, q.polls_idle, r.req_cpu_s},
		      {r.rsp_lc, "responder", v.polls_busy, v.polls_idle, r.rsp_cpu_s}};
	res.period_s = r.sampler.period_s;
	res.series = r.sampler.series;
	return write_results(o, res, pass);
}

} // namespace

int run_loopback(const RunOptions &o)
{
	unsigned req_lc, rsp_lc;
	if (int rc = place_roles(o, "loopback run (a requester and a responder)", &req_lc, &rsp_lc); rc != kExitOk)
		return rc;

	std::string err;
	Setup s;
	DeviceCaps caps;
	if (int rc = open_device(o, &s.dev, &caps); rc != kExitOk)
		return rc;
	const Verb verb = o.verb;
	if (verb_is_atomic(verb) && caps.atomics == IBV_ATOMIC_NONE)
		return setup_error(s.dev.name + ": " + verb_name(verb) + " needs atomics, and the device has none (atomic_cap NONE)");
	if (o.inline_send && o.msg_bytes > caps.max_inline) {
		fprintf(stderr, "rdmapipe: --inline with %u B messages: %s inlines at most %u B\n", o.msg_bytes,
			s.dev.name.c_str(), caps.max_inline);
		return kExitUsage;
	}
	/* The ibv_qp_ex path where asked for and present; else the chained post, said once. */
	bool use_wr = o.post_api == PostApi::wr && caps.qp_ex;
	if (o.post_api == PostApi::wr && !caps.qp_ex)
		printf("rdmapipe: %s has no ibv_qp_ex send ops: --post-api wr falls back to classic\n",
		       s.dev.name.c_str());

	const VerbsOps *ops = pick_cq_ops(o, s.dev, caps);
	const bool use_cq_ex = ops != &kIbvOps;

	if (async_watch_start(&s.async, s.dev.ctx, &err) != 0)
		return setup_error(s.dev.name + ": " + err);

	/* Sizing, checked against the device before anything is created. */
	const uint32_t nqps = o.qps;
	s.flow->shape = role_shape(o);
	const RoleShape &shape = s.flow->shape;
	if (check_role_limits(shape, s.dev, 2ull * nqps, &err) != 0)
		return setup_error(err);

	/* One SharedIOContext's worth of objects per role: a send CQ and a receive CQ shared
	 * by all its QPs, and on the responder the SRQ. */
	if (shared_io_context_create(s.dev, static_cast<uint32_t>(shape.req_send_cq), 1, 0, o.adaptive_poll, use_cq_ex, &s.req_io,
				     &err) != 0 ||
	    shared_io_context_create(s.dev, static_cast<uint32_t>(shape.rsp_send_cq), static_cast<uint32_t>(shape.rsp_recv_cq),
				shape.srq_depth, o.adaptive_poll, use_cq_ex, &s.rsp_io, &err) != 0)
		return setup_error(err);

	auto r = std::make_unique<Roles>();
	uint64_t hz = rte_get_tsc_hz();
	Requester &q = r->req;
	Responder &v = r->rsp;
	if (loopback_flow_setup(o, "", s.dev, ops, use_wr, s.req_io, s.rsp_io, &r->ctl, s.flow.get(), &q, &v, &err) != 0)
		return setup_error(err);

	if (o.tx_gen_stage) {
		/* gen -> ring -> rdma_tx on the requester's lcore: the messages are made there,
		 * at the flow's rate, and posted as they come. */
		if (!(verb == Verb::send || verb == Verb::send_imm || verb == Verb::write || verb == Verb::write_imm) ||
		    o.msg_bytes < 8 || o.duration_s > 0) {
			fprintf(stderr, "rdmapipe: a gen stage feeds send and write messages of 8 B or more, for a message count\n");
			return kExitUsage;
		}
		if ((s.rings[2] = rte_ring_create("rp_gen_tx", o.tx_ring_size, static_cast<int>(rte_socket_id()),
						  RING_F_SP_ENQ | RING_F_SC_DEQ)) == nullptr)
			return setup_error("ring rp_gen_tx (" + std::to_string(o.tx_ring_size) + "): rte_ring_create: " +
					   rte_strerror(rte_errno));
		r->gen = true;
		if (requester_set_input(&q, s.rings[2], s.flow->tx_pool, &s.flow->tx_mrs, &err) != 0)
			return setup_error(err);
		stage_init(&r->gen_stage, &kSourceStage, "gen");
		r->gen_stage.out = s.rings[2];
		r->gen_stage.pool = s.flow->tx_pool;
		r->gen_stage.msg_bytes = o.msg_bytes;
		r->gen_stage.limit = o.messages * o.flows.size();
		if (o.rate_pps > 0)
			r->gen_stage.tsc_per_msg = static_cast<uint64_t>(static_cast<double>(hz) / o.rate_pps);
		r->gen_stage.next_tsc = 0;
		stage_init(&r->tx_stage, &kRdmaTxStage, "rdma_tx");
		r->tx_stage.ctx = &q;
		r->tx_loop.stages[r->tx_loop.nstages++] = &r->gen_stage;
		r->tx_loop.stages[r->tx_loop.nstages++] = &r->tx_stage;
		v.self_describing = true;
	}
	if (o.rx_verify_stage) {
		/* rdma_rx -> ring -> verify [-> ring -> sink], all on the responder's lcore. */
		if (s.flow->rx_pool == nullptr || o.msg_bytes < 8) {
			fprintf(stderr, "rdmapipe: a verify stage after rdma_rx needs send or send_imm messages of 8 B or more\n");
			return kExitUsage;
		}
		const unsigned flags = RING_F_SP_ENQ | RING_F_SC_DEQ;
		for (int i = 0; i < (o.rx_sink_stage ? 2 : 1); i++)
			if ((s.rings[i] = rte_ring_create(i ? "rp_verify_sink" : "rp_rx_verify", o.rx_ring_size,
							  static_cast<int>(rte_socket_id()), flags)) == nullptr)
				return setup_error(std::string("ring ") + (i ? "rp_verify_sink" : "rp_rx_verify") + " (" +
						   std::to_string(o.rx_ring_size) + "): rte_ring_create: " + rte_strerror(rte_errno));
		r->stages = true;
		v.out = s.rings[0];
		v.payload_downstream = true;
		stage_init(&r->rx_stage, &kRdmaRxStage, "rdma_rx");
		r->rx_stage.ctx = &v;
		stage_init(&r->verify_stage, &kVerifyStage, "verify");
		r->verify_stage.in = s.rings[0];
		r->verify_stage.out = s.rings[1];
		r->verify_stage.pool = s.flow->rx_pool;
		r->verify_stage.msg_bytes = o.msg_bytes;
		r->verify_stage.ordered = false;   // the QPs' messages interleave
		stage_feed(&r->verify_stage, &r->rx_stage);
		r->rx_loop.stages[r->rx_loop.nstages++] = &r->rx_stage;
		r->rx_loop.stages[r->rx_loop.nstages++] = &r->verify_stage;
		if (o.rx_sink_stage) {
			stage_init(&r->sink_stage, &kSinkStage, "sink");
			r->sink_stage.in = s.rings[1];
			r->sink_stage.pool = s.flow->rx_pool;
			stage_feed(&r->sink_stage, &r->verify_stage);
			r->rx_loop.stages[r->rx_loop.nstages++] = &r->sink_stage;
		}
		q.p.self_describing = true;
	}

	if (!o.quiet)
		printf("rdmapipe: loopback %s on %s, %u QP%s: requester lcore %u -> responder lcore %u, %s\n",
		       verb_opcode_name(verb), s.dev.name.c_str(), nqps, nqps > 1 ? "s" : "", req_lc, rsp_lc,
		       o.duration_s > 0 ? (std::to_string(o.duration_s) + " s").c_str()
					: (std::to_string(o.messages) + (o.flows.size() > 1 ? " messages per flow" : " messages")).c_str());
	fflush(stdout);
	r->req_lc = req_lc;
	r->rsp_lc = rsp_lc;
	for (uint32_t f = 0; f < q.nflows; f++)
		r->sampler.live.push_back(&q.flow_live[f]);
	/* The control plane's view: stats lines, telemetry, the console. */
	RunView view = make_view(o, s, *r);
	r->sampler.view = &view;
	r->sampler.print_period_s = o.stats_period_s;
	Console *con = nullptr;
	if (o.interactive && (con = console_new(&view, 0, 1, isatty(0), &err)) == nullptr)
		return setup_error(err);
	bool con_done = false;
	int rc = run_watched(
		{{responder_lcore, r.get(), rsp_lc, &r->responder_done}, {requester_lcore, r.get(), req_lc, &r->requester_finished}},
		&r->sampler, !o.output_json.empty() || o.stats_period_s > 0, &view, &r->ctl, &s.async,
		[&] {
			if (con && !con_done)
				con_done = console_poll(con);
		},
		[&] {
			if (con == nullptr)
				return;
			/* The run is over; the console stays until quit (or the input closes). */
			if (!con_done)
				console_run_ended(con, r->req_rc == 0 && r->rsp_rc == 0 ? "all sent and checked" : "with errors");
			while (!con_done && !r->ctl.abort.load()) {
				con_done = console_poll(con);
				usleep(10000);
			}
		});
	console_free(con);
	if (rc != kExitOk)
		return rc;

	return summarise(o, s, *r, view.hw_base);
}

} // namespace rp
