#include "control/stats.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rp {

Sample sample_take(const RunView &v, uint64_t tsc)
{
	Sample s;
	s.tsc = tsc;
	s.flows.reserve(v.flows.size());
	for (const FlowView &f : v.flows) {
		FlowSample x;
		if (f.live) {
			/* completed before sent: a message counted complete was counted sent first
			 * (one writer, program order), so outstanding never goes negative. */
			x.completed = f.live->completed.load(std::memory_order_relaxed);
			x.errors = f.live->errors.load(std::memory_order_relaxed);
			x.sent = f.live->sent.load(std::memory_order_relaxed);
			x.retx_fast = f.live->retx_fast.load(std::memory_order_relaxed);
			x.retx_timeout = f.live->retx_timeout.load(std::memory_order_relaxed);
		}
		s.flows.push_back(x);
	}
	s.lcores.reserve(v.lcores.size());
	for (const LcoreView &l : v.lcores) {
		LcoreSample x;
		if (l.live) {
			x.busy = l.live->polls_busy.load(std::memory_order_relaxed);
			x.idle = l.live->polls_idle.load(std::memory_order_relaxed);
			x.received = l.live->received.load(std::memory_order_relaxed);
			x.srq_posted = l.live->srq_posted.load(std::memory_order_relaxed);
		}
		s.lcores.push_back(x);
	}
	return s;
}

FlowRates flow_rates(const RunView &v, size_t flow, const Sample &base, const Sample &since, const Sample &now)
{
	FlowRates r;
	const FlowView &f = v.flows[flow];
	const FlowSample &a = since.flows[flow], &b = now.flows[flow], &z = base.flows[flow];
	double secs = now.tsc > since.tsc && v.tsc_hz > 0 ? static_cast<double>(now.tsc - since.tsc) / v.tsc_hz : 0;
	uint64_t done = b.completed >= a.completed ? b.completed - a.completed : 0;
	if (secs > 0) {
		r.msg_per_s = static_cast<double>(done) / secs;
		r.gbit_per_s = r.msg_per_s * f.msg_bytes * 8 / 1e9;
	}
	r.completed = b.completed >= z.completed ? b.completed - z.completed : 0;
	r.errors = b.errors >= z.errors ? b.errors - z.errors : 0;
	r.outstanding = b.sent >= b.completed ? b.sent - b.completed : 0;
	r.retx_fast = b.retx_fast >= z.retx_fast ? b.retx_fast - z.retx_fast : 0;
	r.retx_timeout = b.retx_timeout >= z.retx_timeout ? b.retx_timeout - z.retx_timeout : 0;
	if (f.target)
		r.progress = std::min(1.0, static_cast<double>(b.completed) / static_cast<double>(f.target));
	else if (v.duration_s > 0 && !until_stopped(v.duration_s) && v.tsc_hz > 0 && now.tsc > v.start_tsc)
		r.progress = std::min(1.0, static_cast<double>(now.tsc - v.start_tsc) / v.tsc_hz / v.duration_s);
	return r;
}

std::string stats_line(const RunView &v, size_t flow, const FlowRates &r)
{
	const FlowView &f = v.flows[flow];
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "  %-10s %9.4f Mmsg/s %8.4f Gbit/s  outstanding %" PRIu64 "  errors %" PRIu64,
			 f.name.c_str(), r.msg_per_s / 1e6, r.gbit_per_s, r.outstanding, r.errors);
	std::string line(buf, static_cast<size_t>(n > 0 ? n : 0));
	if (f.live && f.live->reliable) {
		snprintf(buf, sizeof(buf), "  retx %" PRIu64 " (fast %" PRIu64 ", timeout %" PRIu64 ")", r.retx_fast + r.retx_timeout,
			 r.retx_fast, r.retx_timeout);
		line += buf;
	}
	if (f.target)
		snprintf(buf, sizeof(buf), "  %" PRIu64 " of %" PRIu64 " (%.1f%%)", r.completed, f.target, 100 * r.progress);
	else if (r.progress >= 0)
		snprintf(buf, sizeof(buf), "  %" PRIu64 " done, %.0f%% of %.1f s", r.completed, 100 * r.progress, v.duration_s);
	else
		snprintf(buf, sizeof(buf), "  %" PRIu64 " done", r.completed);
	return line + buf;
}

std::string stats_block(const RunView &v, const Sample &base, const Sample &since, const Sample &now)
{
	char head[64];
	double at = v.tsc_hz > 0 && now.tsc > v.start_tsc ? static_cast<double>(now.tsc - v.start_tsc) / v.tsc_hz : 0;
	snprintf(head, sizeof(head), "stats at %.1f s:\n", at);
	std::string out = head;
	for (size_t i = 0; i < v.flows.size(); i++)
		out += stats_line(v, i, flow_rates(v, i, base, since, now)) + "\n";
	/* A side that only receives (a two-process server) has no flows of its own to
	 * show: its receivers' rates instead. */
	if (v.flows.empty()) {
		double secs = now.tsc > since.tsc && v.tsc_hz > 0 ? static_cast<double>(now.tsc - since.tsc) / v.tsc_hz : 0;
		for (size_t i = 0; i < v.lcores.size() && i < now.lcores.size(); i++) {
			if (v.lcores[i].role != "responder")
				continue;
			const LcoreSample &a = since.lcores[i], &b = now.lcores[i];
			char line[200];
			snprintf(line, sizeof(line), "  lcore %-3u  %9.4f Mmsg/s received  %" PRIu64 " in all, SRQ receives posted %u\n",
				 v.lcores[i].lcore, secs > 0 ? static_cast<double>(b.received - a.received) / secs / 1e6 : 0.0,
				 b.received - base.lcores[i].received, b.srq_posted);
			out += line;
		}
	}
	return out;
}

double parse_rate(const std::string &text, uint32_t msg_bytes, std::string *err)
{
	const char *s = text.c_str();
	char *end = nullptr;
	errno = 0;
	double v = strtod(s, &end);
	std::string unit = end ? end : "";
	double mult = 1;
	bool bits = false;
	if (unit.empty() || unit == "pps")
		mult = 1;
	else if (unit == "Kpps")
		mult = 1e3;
	else if (unit == "Mpps")
		mult = 1e6;
	else if (unit == "Gbps")
		bits = true, mult = 1e9;
	else if (unit == "Mbps")
		bits = true, mult = 1e6;
	else
		mult = -1;
	if (end == s || errno != 0 || mult < 0 || !std::isfinite(v) || v < 0) {
		*err = "'" + text + "' is not a rate: give messages per second (20000, 20000pps, 1.5Mpps) or a bit rate "
		       "(2Gbps, 500Mbps); 0 lifts the limit";
		return -1;
	}
	double pps = bits ? v * mult / (8.0 * msg_bytes) : v * mult;
	if (pps > 1e9) {
		*err = "'" + text + "' is more than 1e9 messages per second";
		return -1;
	}
	return pps;
}

std::string errors_by_status(const FlowLive &live)
{
	std::string out;
	for (unsigned st = 0; st < kWcStatusCount; st++)
		if (uint64_t n = live.by_status[st].load(std::memory_order_relaxed))
			out += (out.empty() ? "" : ", ") + std::to_string(n) + " x " + ibv_wc_status_str(static_cast<ibv_wc_status>(st));
	return out;
}

int flow_index(const RunView &v, const std::string &name, std::string *known)
{
	known->clear();
	for (size_t i = 0; i < v.flows.size(); i++) {
		if (v.flows[i].name == name)
			return static_cast<int>(i);
		*known += (i ? ", " : "") + v.flows[i].name;
	}
	return -1;
}

HwCounters ports_moved(const RunView &v)
{
	HwCounters all;
	for (const RunView::Port &p : v.ports)
		for (const auto &[name, n] : hw_counters_delta(p.base, hw_counters_read(p.device, p.port)))
			all.emplace_back(v.ports.size() > 1 ? p.device + ":" + name : name, n);
	return all;
}

} // namespace rp
