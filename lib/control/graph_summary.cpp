/* The summary's totals, over all flows: what moved and what went wrong, what
 * recovering cost, how the lcores polled; then the verdict and the results. */
#include "control/shape_report.h"
#include "control/report.h"

#include <cinttypes>
#include <csignal>

namespace rp {

namespace {

/* How the flows' messages were verified, when they share a verb (a phrase after the count). */
const char *verified_how(const GraphFlow &f)
{
	const FlowParams &o = f.params;
	if (f.remote && !f.remote->server && !verb_info(o.verb).self_checked)
		return " here (the server checks what arrives)";
	if (f.serves() && !verb_info(o.verb).responder_checks)
		return " here (reads are checked by the client)";
	if (!o.verify)
		return " (sequence only: --no-verify)";
	return f.form->shape == FlowShape::pingpong ? "" : verb_info(o.verb).verified_how;   // each message as it came
}

/* run.warmup: the rate of what completed after it, up to the last completion. */
void print_warmup(Report &out, const Graph &g)
{
	const double warmup_s = g.flows[0]->params.warmup_s;
	uint64_t warm = UINT64_MAX, after = 0, after_bytes = 0, left = 0, last = 0;
	for (const auto &f : g.flows)
		if (f->requester.warm_tsc) {
			warm = std::min(warm, f->requester.warm_tsc);
			last = std::max(last, f->requester.c.end_tsc);
			after += f->requester.c.completed - f->requester.warm_completed;
			after_bytes += (f->requester.c.completed - f->requester.warm_completed) * f->params.msg_bytes;
			left += f->requester.warm_completed;
		}
	if (warm != UINT64_MAX && last > warm) {
		double ws = tsc_to_s(last - warm);
		out.put("  after warm-up:       %.4f Mmsg/s, %.4f Gbit/s (%" PRIu64 " messages in the first %.1f s left out)\n",
		        static_cast<double>(after) / ws / 1e6, static_cast<double>(after_bytes) * 8 / ws / 1e9, left, warmup_s);
	} else {
		out.put("  after warm-up:       none: the run ended within the %.1f s warm-up\n", warmup_s);
	}
}

/* Two hosts: each end's connections, and how the run ended for them. */
void print_remote(Report &out, const Graph &g)
{
	for (const auto &f : g.flows) {
		if (!f->remote)
			continue;
		const RemoteEnd &e = *f->remote;
		const std::string who = g.flows.size() > 1 ? "flow " + f->conf->name + ": " : "";
		const unsigned n = f->params.qps;
		const char *other = e.listens ? "client" : "server";   // the other host, as rdma_cm has it
		if (e.server)
			out.put("  disconnected:        %s%u of %u connection%s%s%s\n", who.c_str(), e.down, n, n > 1 ? "s" : "",
			        e.why.empty() ? "" : ", first: ", e.why.c_str());
		else if (!e.why.empty())
			out.put("  connection lost:     %s%s\n", who.c_str(), e.why.c_str());
		if (e.probe_cq)
			out.put("  keep-alive reads:    %s%" PRIu64 " posted, %" PRIu64 " answered\n", who.c_str(), e.probes_posted,
			        e.probes_answered);
		if (e.final_counts && !e.server)
			out.put("  final counts:        %s%" PRIu64 " of %u written to the %s\n", who.c_str(), e.counts_written, n, other);
		if (e.final_counts && e.server) {
			unsigned told = 0;
			remote_sent(e, n, &told);
			out.put("  final counts:        %s%u of %u told by the %s%s\n", who.c_str(), told, n, other,
			        told < n ? " (it went away before its end)" : "");
		}
	}
}

/* UC flows made reliable in software: what recovering cost, per flow, as each end
 * here sees it (a two-host end only its own half). */
void print_reliability(Report &out, const Graph &g)
{
	for (const auto &fp : g.flows) {
		const GraphFlow &f = *fp;
		if (!f.reliable())
			continue;
		const std::string n = g.flows.size() > 1 ? "flow " + f.conf->name + ": " : "";
		shape_report(f).reliability(out, f, n);
	}
}

/* What moved and what went wrong, over all flows. */
void print_counts(Report &out, const Graph &g, const Totals &x, const std::vector<const AsyncEventWatch *> &async, const RunView &view)
{
	const GraphFlow &f0 = *g.flows[0];
	const FlowTally &all = x.all;
	out.put("  messages sent:       %" PRIu64 "\n", all.sent);
	out.put("  messages completed:  %" PRIu64 "\n", all.completed);
	out.put("  messages received:   %" PRIu64 "\n", all.delivered);
	out.put("  messages verified:   %" PRIu64 "%s\n", all.verified, x.same ? verified_how(f0) : "");
	if (x.writes)
		out.put("  window slots checked: %" PRIu64 "\n", x.v.window_slots_checked);
	if (x.atomics)
		out.put("  final words checked: %" PRIu64 "\n", x.v.counters_checked);
	out.put("  bytes:               %" PRIu64 "\n", x.bytes);
	out.put("  elapsed:             %.3f s\n", x.secs);
	out.put("  message rate:        %.4f Mmsg/s\n", static_cast<double>(all.delivered) / x.secs / 1e6);
	out.put("  throughput:          %.4f Gbit/s\n", static_cast<double>(x.bytes) * 8 / x.secs / 1e9);
	if (f0.params.warmup_s > 0)
		print_warmup(out, g);
	out.put("  send posts:          %" PRIu64 " (%.1f WRs per ibv_post_send)\n", x.q.post_calls,
	        x.q.post_calls ? static_cast<double>(x.wrs) / static_cast<double>(x.q.post_calls) : 0.0);
	if (x.two_sided) {
		if (x.srq_posts || !x.rq_posts)
			out.put("  srq posts:           %" PRIu64 " (%" PRIu64 " cut short by an empty receive pool)\n", x.srq_posts, x.shortfalls);
		if (x.rq_posts)   // recv_queue = "qp"
			out.put("  receive posts:       %" PRIu64 " to QPs' own receive queues (%" PRIu64 " cut short by an empty receive pool)\n",
			        x.rq_posts, x.shortfalls);
		out.put("  credit writes:       %" PRIu64 "%s\n", x.v.credit_writes,
		        x.v.flow_credit_moves ? (" (" + std::to_string(x.v.flow_credit_moves) + " flow credit moved to another QP, not landed in " +
						std::to_string(static_cast<int>(kCreditRetryS * 1000)) + " ms)").c_str() : "");
		out.put("  sequence errors:     %" PRIu64 "\n", x.v.sequence_errors);
		out.put("  length errors:       %" PRIu64 "\n", x.v.length_errors);
		out.put("  unexpected opcodes:  %" PRIu64 "\n", x.v.unexpected_opcodes);
		out.put("  unknown QPs:         %" PRIu64 "\n", x.v.unknown_qps);
	}
	out.put("  payload errors:      %" PRIu64 "\n", all.data_errors);
	out.put("  completion errors:   %" PRIu64 "\n", all.errors);
	out.put("  failed QPs:          %" PRIu64 "\n", all.failed_qps);
	out.put("  lost messages:       %" PRIu64 "\n", x.lost);
	print_reliability(out, g);
	out.put("  buffers not returned: %" PRIu64 "\n", x.held);
	print_remote(out, g);
	print_first_bad(out, g);
	print_async_events(out, async);
	std::string hw_line;
	for (const auto &[name, n] : ports_moved(view))
		hw_line += (hw_line.empty() ? "" : ", ") + name + " " + std::to_string(n);
	out.put("  port counters:       %s\n", hw_line.empty() ? "none moved (or the device has none)" : hw_line.c_str());
	const bool pp = x.npingpong == g.flows.size();
	print_wc_errors(out, pp ? "ping" : "requester", x.q.wc_errors);
	print_wc_errors(out, pp ? "echo" : "responder", x.v.wc_errors);
	if (g.flows.size() == 1)
		shape_report(f0).failures(out, f0);
	if (x.q.credit_anomalies)
		out.put("  credit anomalies:    %" PRIu64 "\n", x.q.credit_anomalies);
}

/* How the lcores polled and what CPU they took, also per message of the run. */
void print_lcores(Report &out, const Graph &g, const Totals &x)
{
	const double secs = x.secs;
	bool adaptive = false, busy = false;
	for (const auto &l : g.lcores)
		if (l->has_io)
			(l->conf->adaptive_poll ? adaptive : busy) = true;
	out.put("  polling:             %s\n", adaptive && busy ? "adaptive on some lcores, busy on the others"
					     : adaptive ? "adaptive (sleeps on a completion channel when idle)" : "busy");
	for (const auto &l : g.lcores) {
		out.put("  lcore %-3u            %s; %" PRIu64 " of %" PRIu64 " iterations busy, CPU %.3f s (%.2f us per message)%s",
		        l->lcore, lcore_stages(*l).c_str(), l->loop.busy_iterations, l->loop.iterations, l->cpu_s,
		        cpu_us_per_msg(*l, x), l->loop.idler.channel ? (", slept " + std::to_string(l->loop.idler.sleeps) +
									 " times, woken by events " + std::to_string(l->loop.idler.wakeups) + " times").c_str() : "");
		if (l->loop.passive_sleeps)
			out.put(", passive: slept %" PRIu64 " times until its end", l->loop.passive_sleeps);
		out.put("\n");
	}
	/* A requester lcore and a responder lcore (every command-line rate run): their CPU
	 * as a share of the run, as tools/bench reads it. */
	const GraphLcore *req = nullptr, *rsp = nullptr;
	for (const auto &l : g.lcores) {
		const std::string r = lcore_roles(*l);
		if (r == "requester")
			req = l.get();
		else if (r == "responder")
			rsp = l.get();
	}
	if (g.lcores.size() != 2 || !req || !rsp)
		return;
	for (const GraphLcore *l : {req, rsp}) {
		out.put("  %s CPU:       %.3f s (%.0f%% of %.3f s, %.2f us per message)", l == req ? "requester" : "responder",
		        l->cpu_s, 100 * l->cpu_s / secs, secs, cpu_us_per_msg(*l, x));
		if (l->loop.idler.channel)
			out.put(", %" PRIu64 " sleeps, %" PRIu64 " woken by events", l->loop.idler.sleeps, l->loop.idler.wakeups);
		out.put("\n");
	}
}

/* One flow of a requester here, not a ping-pong's: its chains' completion latency
 * (a reliable flow's RTT is in its reliability lines). */
void print_latency(Report &out, const Graph &g)
{
	const GraphFlow &f0 = *g.flows[0];
	const Histogram *lat = g.flows.size() == 1 ? shape_report(f0).completion_latency(f0) : nullptr;
	if (lat && lat->count() && !f0.reliable())
		out.put("  completion latency:  p50 %.1f us, p99 %.1f us, max %.1f us (chain posted to its signalled completion)\n",
		        static_cast<double>(lat->percentile(0.5)) / 1e3, static_cast<double>(lat->percentile(0.99)) / 1e3,
		        static_cast<double>(lat->max()) / 1e3);
}

const char *signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

/* How the run ended, and the verdict the tests grep for. */
void print_verdict(Report &out, const Graph &g, const Totals &x, int sig)
{
	if (const int end = g.run.end_signal.load())
		out.put("  run:                 went on until stopped, ended by %s: a last message per QP, every check made\n",
		        signal_name(end));
	if (sig)
		out.put("  run:                 stopped by %s before its end: no new posts, what was in flight completed; "
		        "the counts cover what ran\n", signal_name(sig));
	else if (g.run.abort.load())
		out.put("  run:                 stopped before its end (a stage joined by rings failed)\n");
	out.put("result: %s\n", sig ? "INTERRUPTED" : x.pass ? "PASS" : "FAIL");
}

void sweep_row(const Graph &g, const Totals &x, SweepRow *row)
{
	const GraphFlow &f0 = *g.flows[0];
	row->mmsgs = static_cast<double>(x.all.delivered) / x.secs / 1e6;
	row->gbps = static_cast<double>(x.bytes) * 8 / x.secs / 1e9;
	if (const Histogram *h = shape_report(f0).half_rtt(f0))
		row->median_us = us(h->percentile(0.5));
	row->pass = x.pass;
	row->ran = true;
}

} // namespace

/* A reliable ping-pong (stop-and-wait): pings sent again, repeats on either side. */
void print_pingpong_reliability(Report &out, const GraphFlow &f, const std::string &n)
{
	out.put("  reliability:         %ssoftware over UC, stop-and-wait (each echo acknowledges its ping)\n", n.c_str());
	if (f.tx)
		out.put("  retransmissions:     %s%" PRIu64 " (fast 0, timeout %" PRIu64 ")\n", n.c_str(), f.ping.retx_timeout,
		        f.ping.retx_timeout);
	if (f.rx)
		out.put("  repeated pings:      %s%" PRIu64 " (echoed again)\n", n.c_str(), f.pong.duplicates);
	if (f.tx)
		out.put("  duplicates dropped:  %s%" PRIu64 " (echoes already in)\n", n.c_str(), f.ping.duplicates);
}

/* A flow of requester and responder: the sender's retransmissions, ACKs received and
 * RTT; the receiver's ACKs sent, duplicates and headers. */
void print_ends_reliability(Report &out, const GraphFlow &f, const std::string &n)
{
	const RequesterCounters &q = f.requester.c;
	const ResponderCounters &v = f.responder.c;
	out.put("  reliability:         %ssoftware over UC, an ACK every %u messages or %u us\n", n.c_str(), f.params.ack_every,
	        f.params.ack_us);
	if (f.tx)
		out.put("  retransmissions:     %s%" PRIu64 " (fast %" PRIu64 ", timeout %" PRIu64 ")%s\n", n.c_str(),
		        q.retx_fast + q.retx_timeout, q.retx_fast, q.retx_timeout,
		        q.retx_deferred ? (", " + std::to_string(q.retx_deferred) + " put off by a full send queue").c_str() : "");
	const std::string sent = f.rx ? std::to_string(v.acks_sent) : "(by the server)";
	const std::string received = f.tx ? std::to_string(q.acks_received) : "(by the client)";
	out.put("  acks:                %ssent %s, received %s%s\n", n.c_str(), sent.c_str(), received.c_str(),
	        v.ack_no_room ? (", " + std::to_string(v.ack_no_room) + " put off by busy control slots").c_str() : "");
	if (f.tx)
		out.put("  sack holes:          %s%" PRIu64 "\n", n.c_str(), q.sack_holes);
	if (f.tx && q.restart_requests)
		out.put("  restart requests:    %s%" PRIu64 " (QPs paused until their receiver restarted them)\n", n.c_str(),
		        q.restart_requests);
	if (f.rx) {
		out.put("  duplicates dropped:  %s%" PRIu64 "\n", n.c_str(), v.duplicates);
		out.put("  out of order:        %s%" PRIu64 "\n", n.c_str(), v.out_of_order);
	}
	if (f.rx && f.params.verb == Verb::write_imm)
		out.put("  retransmitted writes: %s%" PRIu64 " taken, %" PRIu64 " refused (header outside the window or slot)\n",
		        n.c_str(), v.retx_received, v.retx_header_bad);
	if (v.outside_window)
		out.put("  outside the window:  %s%" PRIu64 " (dropped)\n", n.c_str(), v.outside_window);
	if (v.qp_restarts || v.restart_requests)
		out.put("  qp restarts:         %s%" PRIu64 " (a loss broke a multi-packet message: %" PRIu64
		        " reported broken, %" PRIu64 " asked for by the sender)\n",
		        n.c_str(), v.qp_restarts, v.broken, v.restart_requests);
	if (f.tx && f.requester.flow_latency[0].count()) {
		const Histogram &h = f.requester.flow_latency[0];
		out.put("  rtt:                 %sp50 %.1f us, p99 %.1f us (%" PRIu64 " samples, messages sent once)\n", n.c_str(),
		        static_cast<double>(h.percentile(0.5)) / 1000.0, static_cast<double>(h.percentile(0.99)) / 1000.0,
		        h.count());
	}
	if (q.injected_losses)
		out.put("  injected losses:     %s%" PRIu64 " data WRs never posted (inject_loss)\n", n.c_str(), q.injected_losses);
}

/* A run of one ping-pong: why its sides failed. */
void failures_pingpong(Report &out, const GraphFlow &f)
{
	for (const PingPong *p : {&f.ping, &f.pong})
		if (p->c.fail_reason)
			out.put("  %s failed:         %s\n", p->echo ? "echo" : "ping", p->c.fail_reason);
}

/* A run of one flow of a requester and a responder: why they failed. */
void failures_ends(Report &out, const GraphFlow &f)
{
	if (f.requester.c.fail_reason)
		out.put("  requester failed:    %s\n", f.requester.c.fail_reason);
	if (f.responder.c.fail_reason)
		out.put("  responder failed:    %s\n", f.responder.c.fail_reason);
}

/* A requester here: its chains' completion latency. */
const Histogram *ends_latency(const GraphFlow &f)
{
	return f.tx ? &f.requester.flow_latency[0] : nullptr;
}

/* A ping-pong timed here, where its pings are. */
const Histogram *pingpong_half_rtt(const GraphFlow &f)
{
	return f.tx ? f.hist.get() : nullptr;
}

bool graph_summary(Report &out, const PipelineConf &c, const Graph &g, const std::vector<const AsyncEventWatch *> &async,
		   const RunView &view, const Sampler &sampler, SweepRow *row, Results *res)
{
	const Totals x = totals_of(g);
	out.put("summary:\n");
	print_header(out, c, g, x);
	print_flows(out, g, x);
	print_counts(out, g, x, async, view);
	print_lcores(out, g, x);
	for (const auto &f : g.flows)
		if (shape_report(*f).half_rtt(*f))   // timed where the pings are
			print_pingpong(out, *f, x.npingpong > 1);
	print_latency(out, g);
	const int sig = g.run.stop_signal.load();
	print_verdict(out, g, x, sig);
	if (row)
		sweep_row(g, x, row);
	graph_results(g, x, view, sampler, sig, res);
	return x.pass;
}

} // namespace rp
