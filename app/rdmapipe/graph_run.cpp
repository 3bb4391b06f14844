#include "graph_run.h"

#include "common.h"
#include "results.h"

#include "control/console.h"
#include "control/stats.h"
#include "control/telemetry.h"
#include "pipeline/graph.h"
#include "verbs/async_events.h"

#include <rte_cycles.h>
#include <rte_lcore.h>

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace rp {

namespace {

/* What each flow delivered and how much of it checked out. What "verified" means
 * depends on the verb: the responder checks what it receives (its header, and its
 * payload unless a verify stage downstream does); the requester checks read results
 * and atomic return values; plain writes are acknowledged, then checked by the
 * window's final state. */
struct FlowTally {
	uint64_t sent = 0, completed = 0, delivered = 0, verified = 0, failed_qps = 0, errors = 0, data_errors = 0;
	bool ok = false;
};

FlowTally tally(const GraphFlow &f, const Graph &g)
{
	const Requester &q = f.q;
	const Responder &v = f.v;
	const Verb verb = f.o.verb;
	const bool two_sided = verb_consumes_receive(verb);
	FlowTally t;
	t.sent = q.c.sent;
	t.completed = q.c.completed;
	t.delivered = two_sided ? v.c.received : q.c.completed;
	if (two_sided)
		t.verified = v.c.verified;
	else if (verb == Verb::write)
		t.verified = v.c.payload_errors == 0 && (v.c.window_slots_checked || !f.o.verify) ? q.c.completed : 0;
	else
		t.verified = q.c.verified;
	/* Payload errors a verify stage found in this flow's messages (when it sees only this flow's). */
	for (const auto &s : g.stages)
		if (s->conf->kind == StageKind::verify && s->origins.size() == 1 && s->origins[0] == &f) {
			t.data_errors += s->st.st.payload_errors;
			t.verified -= std::min(t.verified, s->st.st.payload_errors);
		}
	t.failed_qps = q.c.failed_qps;
	t.errors = q.c.wc_errors.total + v.c.wc_errors.total;
	t.data_errors += v.c.payload_errors + q.c.result_errors;
	const bool done = f.tx_stage->done.load() && f.tx_stage->rc == 0 && f.rx_stage->done.load() && f.rx_stage->rc == 0;
	const bool count_ok = f.o.duration_s > 0 || t.sent == f.o.messages;
	t.ok = done && count_ok && t.delivered == t.sent && t.verified == t.sent && t.errors == 0 && t.data_errors == 0;
	return t;
}

std::string lcore_role(const GraphLcore &l)
{
	std::string s;
	for (uint32_t i = 0; i < l.loop.nstages; i++)
		s += (i ? "," : "") + std::string(l.loop.stages[i]->name);
	return s;
}

/* What the console, the stats lines and telemetry see of this run. */
RunView make_view(const PipelineConf &c, const Graph &g, const std::string &what)
{
	RunView v;
	v.device = g.dev->name;
	v.what = what;
	v.tsc_hz = static_cast<double>(rte_get_tsc_hz());
	v.duration_s = c.run.duration_s;
	v.ctl = const_cast<RunControl *>(&g.run);
	v.port = g.dev->port;
	v.hw_base = hw_counters_read(g.dev->name, g.dev->port);
	for (const auto &fp : g.flows) {
		const GraphFlow &f = *fp;
		v.flows.push_back({f.conf->name, f.o.qps, f.o.verb, f.o.msg_bytes, f.o.batch, f.o.signal_every,
				   f.o.duration_s > 0 ? 0 : f.o.messages, &f.q.flow_live[0], &f.q.flow_ctl[0]});
		for (uint32_t k = 0; k < f.o.qps; k++) {
			v.qps.push_back({f.conf->name, k, f.q.qps[k].qp->qp_num, "requester"});
			v.qps.push_back({f.conf->name, k, f.v.qps[k].qp->qp_num, "responder"});
		}
	}
	for (const auto &l : g.lcores) {
		const RoleLive *live = !l->requesters.empty() ? &l->requesters[0]->q.live
				       : !l->responders.empty() ? &l->responders[0]->v.live : nullptr;
		v.lcores.push_back({l->lcore, lcore_role(*l), live});
	}
	for (const auto &f : g.flows)
		v.pools.push_back({f->conf->name + " send buffers", f->objs->tx_pool});
	for (const auto &l : g.lcores)
		if (l->rx_pool)
			v.pools.push_back({"lcore " + std::to_string(l->lcore) + " receive buffers", l->rx_pool});
	for (const auto &r : g.rings)
		v.rings.push_back({r->conf->name, r->ring});
	v.config = {"pipeline file: " + c.file,
		    "flows: " + std::to_string(g.flows.size()) + ", stages: " + std::to_string(g.stages.size()) +
			    ", lcores: " + std::to_string(g.lcores.size()),
		    "connected: " + g.flows[0]->objs->pairs.connected};
	for (const auto &f : g.flows)
		v.config.push_back("flow " + f->conf->name + ": " + verb_name(f->o.verb) + ", " + std::to_string(f->o.msg_bytes) +
				   " B, " + std::to_string(f->o.qps) + " QPs, lcore " + std::to_string(f->tx->lcore) + " -> lcore " +
				   std::to_string(f->rx->lcore));
	return v;
}

void print_stage(const GraphStage &s)
{
	const StageStats &st = s.st.st;
	printf("  stage %-13s %s on lcore %u: %" PRIu64 " messages in %" PRIu64 " bursts", (s.conf->name + ":").c_str(),
	       stage_kind_name(s.conf->kind), s.lcore->lcore, st.msgs, st.bursts);
	if (s.conf->kind == StageKind::verify)
		printf(", checked %" PRIu64 " (payload errors %" PRIu64 ", sequence errors %" PRIu64 ")", st.msgs, st.payload_errors,
		       st.seq_errors);
	if (s.conf->kind == StageKind::gen)
		printf(", made %" PRIu64 " of %" PRIu64, st.msgs, s.st.limit);
	if (s.conf->kind == StageKind::rdma_rx)
		printf(", %" PRIu64 " bursts held back by a full ring", s.flow->v.out_full);
	else if (!s.conf->outputs.empty())
		printf(", %" PRIu64 " bursts held back by a full ring", st.out_full);
	if (s.conf->kind == StageKind::gen && st.pool_empty)
		printf(", %" PRIu64 " bursts short of buffers", st.pool_empty);
	printf("\n");
}

int summarise(const PipelineConf &c, const RunOptions &cli, const Graph &g, const AsyncEventWatch &async,
	      const HwCounters &hw_base, const Sampler &sampler)
{
	uint64_t start = UINT64_MAX, end = 0;
	FlowTally all;
	bool pass = true;
	std::vector<FlowTally> t;
	for (const auto &f : g.flows) {
		t.push_back(tally(*f, g));
		const FlowTally &x = t.back();
		start = std::min(start, f->q.c.start_tsc);
		end = std::max({end, f->q.c.end_tsc, verb_consumes_receive(f->o.verb) ? f->v.c.end_tsc : 0});
		all.sent += x.sent;
		all.completed += x.completed;
		all.delivered += x.delivered;
		all.verified += x.verified;
		all.failed_qps += x.failed_qps;
		all.errors += x.errors;
		all.data_errors += x.data_errors;
		pass &= x.ok;
	}
	uint64_t stage_errors = 0, bytes = 0, posts = 0, srq_posts = 0, credits = 0;
	for (const auto &s : g.stages)
		if (s->conf->kind == StageKind::verify) {
			stage_errors += s->st.st.payload_errors + (s->st.ordered ? s->st.st.seq_errors : 0);
			pass &= s->st.done.load();
		}
	/* Payload errors a verify stage found among several flows' messages. */
	uint64_t unattributed = 0;
	for (const auto &s : g.stages)
		if (s->conf->kind == StageKind::verify && s->origins.size() != 1)
			unattributed += s->st.st.payload_errors;
	all.verified -= std::min(all.verified, unattributed);
	all.data_errors += unattributed;
	for (size_t i = 0; i < g.flows.size(); i++) {
		bytes += t[i].delivered * g.flows[i]->o.msg_bytes;
		posts += g.flows[i]->q.c.post_calls;
		credits += g.flows[i]->v.c.credit_writes;
	}
	for (const auto &l : g.lcores)
		srq_posts += l->refill.post_calls();
	const uint64_t held = graph_buffers_out(g);
	pass &= stage_errors == 0 && held == 0 && !g.run.abort.load();
	double secs = end > start ? tsc_to_s(end - start) : 1e-9;
	const GraphFlow &f0 = *g.flows[0];

	printf("summary:\n");
	printf("  device:              %s port %u, GID index %d, MTU %s\n", g.dev->name.c_str(), g.dev->port,
	       g.dev->gid_index, mtu_str(g.dev->port_attr.active_mtu));
	printf("  pipeline:            %s: %zu flow%s, %zu stages on %zu lcores\n", c.file.c_str(), g.flows.size(),
	       g.flows.size() > 1 ? "s" : "", g.stages.size(), g.lcores.size());
	printf("  connected:           %s\n", f0.objs->pairs.connected.c_str());
	printf("  completions:         %s\n", cq_ops_str(f0.q.ops));
	printf("  posting:             %s%s%s\n", g.use_wr ? "ibv_qp_ex (ibv_wr_start .. ibv_wr_complete)" : "chained ibv_post_send",
	       f0.o.inline_send ? ", inline" : "", cli.fence ? ", fenced chains" : "");
	for (size_t i = 0; i < g.flows.size(); i++) {
		const GraphFlow &f = *g.flows[i];
		const FlowTally &x = t[i];
		printf("  flow %-14s %s, %u B, %u QP%s, lcore %u -> lcore %u: sent %" PRIu64 ", completed %" PRIu64
		       ", received %" PRIu64 ", verified %" PRIu64 "%s\n",
		       (f.conf->name + ":").c_str(), verb_opcode_name(f.o.verb), f.o.msg_bytes, f.o.qps, f.o.qps > 1 ? "s" : "",
		       f.tx->lcore, f.rx->lcore, x.sent, x.completed, x.delivered, x.verified,
		       f.fed ? " (sends what its ring brings)" : f.o.rate_pps > 0 ? (", at " +
			       std::to_string(static_cast<uint64_t>(f.o.rate_pps)) + " msg/s").c_str() : "");
		print_wc_errors(("flow " + f.conf->name + " requester").c_str(), f.q.c.wc_errors);
		print_wc_errors(("flow " + f.conf->name + " responder").c_str(), f.v.c.wc_errors);
		if (f.q.c.fail_reason)
			printf("  flow %s requester failed: %s\n", f.conf->name.c_str(), f.q.c.fail_reason);
		if (f.v.c.fail_reason)
			printf("  flow %s responder failed: %s\n", f.conf->name.c_str(), f.v.c.fail_reason);
		if (f.v.c.sequence_errors || f.v.c.length_errors || f.v.c.unexpected_opcodes || f.v.c.unknown_qps ||
		    f.v.c.held_overflow)
			printf("  flow %s receiver:    sequence errors %" PRIu64 ", length errors %" PRIu64
			       ", unexpected opcodes %" PRIu64 ", unknown QPs %" PRIu64 ", beyond the window %" PRIu64 "\n",
			       f.conf->name.c_str(), f.v.c.sequence_errors, f.v.c.length_errors, f.v.c.unexpected_opcodes,
			       f.v.c.unknown_qps, f.v.c.held_overflow);
	}
	for (const auto &s : g.stages)
		if (s->conf->kind != StageKind::rdma_tx && s->conf->kind != StageKind::rdma_rx)
			print_stage(*s);
	for (const auto &l : g.lcores)
		printf("  lcore %-3u            %s; %" PRIu64 " of %" PRIu64 " iterations busy, CPU %.3f s%s\n", l->lcore,
		       lcore_role(*l).c_str(), l->loop.busy_iterations, l->loop.iterations, l->cpu_s,
		       l->loop.idler.sleeps ? (", slept " + std::to_string(l->loop.idler.sleeps) + " times").c_str() : "");
	printf("  messages sent:       %" PRIu64 "\n", all.sent);
	printf("  messages completed:  %" PRIu64 "\n", all.completed);
	printf("  messages received:   %" PRIu64 "\n", all.delivered);
	printf("  messages verified:   %" PRIu64 "\n", all.verified);
	printf("  bytes:               %" PRIu64 "\n", bytes);
	printf("  elapsed:             %.3f s\n", secs);
	printf("  message rate:        %.4f Mmsg/s\n", static_cast<double>(all.delivered) / secs / 1e6);
	printf("  throughput:          %.4f Gbit/s\n", static_cast<double>(bytes) * 8 / secs / 1e9);
	printf("  send posts:          %" PRIu64 " (%.1f WRs per ibv_post_send)\n", posts,
	       posts ? static_cast<double>(all.sent) / static_cast<double>(posts) : 0.0);
	printf("  srq posts:           %" PRIu64 "\n", srq_posts);
	printf("  credit writes:       %" PRIu64 "\n", credits);
	printf("  payload errors:      %" PRIu64 "\n", all.data_errors);
	printf("  completion errors:   %" PRIu64 "\n", all.errors);
	printf("  failed QPs:          %" PRIu64 "\n", all.failed_qps);
	printf("  lost messages:       %" PRIu64 "\n", all.sent > all.delivered ? all.sent - all.delivered : 0);
	printf("  buffers not returned: %" PRIu64 "\n", held);
	print_async_events(async);
	HwCounters hw = hw_counters_delta(hw_base, hw_counters_read(g.dev->name, g.dev->port));
	std::string hw_line;
	for (const auto &[name, n] : hw)
		hw_line += (hw_line.empty() ? "" : ", ") + name + " " + std::to_string(n);
	printf("  port counters:       %s\n", hw_line.empty() ? "none moved (or the device has none)" : hw_line.c_str());
	if (g.run.abort.load())
		printf("  run:                 stopped before its end (a signal, or a stage joined by rings failed)\n");
	printf("result: %s\n", pass ? "PASS" : "FAIL");

	Results res = results_of("rate", f0.o.verb, f0.o.msg_bytes, g.dev->name, secs, pass);
	for (size_t i = 0; i < g.flows.size(); i++) {
		const GraphFlow &f = *g.flows[i];
		FlowResult x;
		x.name = f.conf->name;
		x.qps = f.o.qps;
		x.sent = t[i].sent;
		x.completed = t[i].completed;
		x.verified = t[i].verified;
		x.bytes = t[i].delivered * f.o.msg_bytes;
		x.failed_qps = t[i].failed_qps;
		x.errors = &f.q.flow_errors[0];
		x.latency = &f.q.flow_latency[0];
		x.latency_what = "chain posted to its signalled completion";
		res.flows.push_back(x);
	}
	for (const auto &l : g.lcores) {
		uint64_t busy = l->loop.busy_iterations;
		res.lcores.push_back({l->lcore, "stages", busy, l->loop.iterations - busy, l->cpu_s});
	}
	res.period_s = sampler.period_s;
	res.series = sampler.series;
	RunOptions o = f0.o;
	return write_results(o, res, pass);
}

} // namespace

int run_graph(const PipelineConf &c, const RunOptions &cli)
{
	/* One device for now: every io context's. */
	const std::string &dev_name = c.io_contexts.empty() ? c.devices[0].name : c.io_contexts[0].device;
	for (const IoContextConf &io : c.io_contexts)
		if (io.device != dev_name) {
			fprintf(stderr, "rdmapipe: %s:%d: io_contexts: flows between two devices (%s, %s) do not run yet in this build\n",
				c.file.c_str(), io.line, dev_name.c_str(), io.device.c_str());
			return kExitUsage;
		}
	const unsigned main_lc = rte_get_main_lcore();
	for (const StageConf &st : c.stages) {
		if (!rte_lcore_is_enabled(st.lcore)) {
			fprintf(stderr, "rdmapipe: %s:%d: stage '%s': lcore %u is not in the EAL lcore set (-l)\n", c.file.c_str(),
				st.line, st.name.c_str(), st.lcore);
			return kExitUsage;
		}
		if (cli.interactive && st.lcore == main_lc) {
			fprintf(stderr, "rdmapipe: %s:%d: stage '%s': -i: the console takes the main lcore %u; put the stages on other "
					"lcores (or give EAL one more: -l)\n", c.file.c_str(), st.line, st.name.c_str(), main_lc);
			return kExitUsage;
		}
	}
	RunOptions dev_o = cli;
	for (const DeviceConf &d : c.devices)
		if (d.name == dev_name) {
			dev_o.device = d.name;
			dev_o.port = d.port;
			dev_o.gid_index = d.gid_index;
		}
	Device dev;
	DeviceCaps caps;
	AsyncEventWatch async;
	std::string err;
	if (int rc = open_device(dev_o, &dev, &caps); rc != kExitOk)
		return rc;
	if (cli.post_api == PostApi::wr && !caps.qp_ex)
		printf("rdmapipe: %s has no ibv_qp_ex send ops: --post-api wr falls back to classic\n", dev.name.c_str());
	int rc = kExitOk;
	{
		auto g = std::make_unique<Graph>();
		if (async_watch_start(&async, dev.ctx, &err) != 0) {
			rc = setup_error(dev.name + ": " + err);
		} else if (graph_build(c, cli, &dev, &caps, g.get(), &err) != 0) {
			rc = setup_error(err);
		} else {
			std::string what = "pipeline " + c.file;
			if (!cli.quiet) {
				printf("rdmapipe: %s on %s: %zu flow%s, %zu stages on lcores", what.c_str(), dev.name.c_str(),
				       g->flows.size(), g->flows.size() > 1 ? "s" : "", g->stages.size());
				for (const auto &l : g->lcores)
					printf(" %u", l->lcore);
				printf("\n");
			}
			fflush(stdout);
			RunView view = make_view(c, *g, what);
			Sampler sampler;
			for (const auto &f : g->flows)
				sampler.live.push_back(&f->q.flow_live[0]);
			sampler.view = &view;
			sampler.print_period_s = g->flows[0]->o.stats_period_s;
			const bool results = !g->flows[0]->o.output_json.empty();
			Console *con = nullptr;
			if (cli.interactive && (con = console_new(&view, 0, 1, isatty(0), &err)) == nullptr) {
				rc = setup_error(err);
			} else {
				std::vector<LcoreJob> jobs;
				for (auto &l : g->lcores)
					jobs.push_back({graph_lcore_run, l.get(), l->lcore, &l->done});
				bool con_done = false;
				rc = run_watched(
					jobs, &sampler, results || sampler.print_period_s > 0, &view, &g->run, &async,
					[&] {
						if (con && !con_done)
							con_done = console_poll(con);
					},
					[&] {
						if (con == nullptr)
							return;
						/* The run is over; the console stays until quit (or the input closes). */
						bool ok = true;
						for (const auto &l : g->lcores)
							ok &= l->rc == 0;
						if (!con_done)
							console_run_ended(con, ok ? "all sent and checked" : "with errors");
						while (!con_done && !g->run.abort.load()) {
							con_done = console_poll(con);
							usleep(10000);
						}
					});
				console_free(con);
				if (rc == kExitOk)
					rc = summarise(c, cli, *g, async, view.hw_base, sampler);
			}
		}
		async_watch_stop(&async);
	}   // the graph goes before the device
	device_close(&dev);
	return rc;
}

} // namespace rp
