#include "control/telemetry.h"
#include "log/log.h"

#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include <cstdio>
#include <cctype>
#include <cstring>
#include <mutex>

namespace rp {

namespace {

std::mutex g_mu;                      // control plane and telemetry thread only
const RunView *g_run = nullptr;

std::string fmt(double v, const char *f = "%.4f")
{
	char b[48];
	snprintf(b, sizeof(b), f, v);
	return b;
}

/* Every endpoint: nothing to describe without a run. */
/* A telemetry dict key: DPDK drops one with characters other than letters, digits
 * and underscores (pool names like "flow0 send buffers" were lost that way). */
std::string tel_key(std::string k)
{
	for (char &ch : k)
		if (!isalnum(static_cast<unsigned char>(ch)) && ch != '_')
			ch = '_';
	return k;
}

bool no_run(rte_tel_data *d)
{
	if (g_run)
		return false;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "state", "no run (setting up or finished)");
	return true;
}

int stats_cb(const char *, const char *params, rte_tel_data *d)
{
	std::lock_guard<std::mutex> lock(g_mu);
	if (no_run(d))
		return 0;
	const RunView &v = *g_run;
	const uint64_t now = rte_rdtsc();
	Sample start;   // zeros at the start of the run: rates are over the run so far
	start.tsc = v.start_tsc;
	start.flows.assign(v.flows.size(), FlowSample{});
	start.lcores.assign(v.lcores.size(), LcoreSample{});
	Sample cur = sample_take(v, now);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "elapsed_s", fmt(static_cast<double>(now - v.start_tsc) / v.tsc_hz, "%.3f").c_str());
	const std::string only = params ? params : "";
	bool found = only.empty();
	for (size_t i = 0; i < v.flows.size(); i++) {
		if (!only.empty() && v.flows[i].name != only)
			continue;
		found = true;
		FlowRates r = flow_rates(v, i, start, start, cur);
		rte_tel_data *f = rte_tel_data_alloc();
		if (f == nullptr)
			return -ENOMEM;
		rte_tel_data_start_dict(f);
		rte_tel_data_add_dict_u64(f, "sent", cur.flows[i].sent);
		rte_tel_data_add_dict_u64(f, "completed", cur.flows[i].completed);
		rte_tel_data_add_dict_u64(f, "errors", cur.flows[i].errors);
		rte_tel_data_add_dict_u64(f, "outstanding", r.outstanding);
		rte_tel_data_add_dict_string(f, "msg_per_s", fmt(r.msg_per_s, "%.1f").c_str());
		rte_tel_data_add_dict_string(f, "gbit_per_s", fmt(r.gbit_per_s).c_str());
		if (r.progress >= 0)
			rte_tel_data_add_dict_string(f, "progress", fmt(r.progress).c_str());
		if (v.flows[i].live && v.flows[i].live->reliable) {
			rte_tel_data_add_dict_u64(f, "retx_fast", cur.flows[i].retx_fast);
			rte_tel_data_add_dict_u64(f, "retx_timeout", cur.flows[i].retx_timeout);
		}
		if (v.flows[i].live && cur.flows[i].errors)
			rte_tel_data_add_dict_string(f, "errors_by_status", errors_by_status(*v.flows[i].live).c_str());
		rte_tel_data_add_dict_container(d, tel_key(v.flows[i].name).c_str(), f, 0);
	}
	if (!found)
		rte_tel_data_add_dict_string(d, "error", ("no flow '" + only + "'").c_str());
	if (only.empty()) {
		/* The port's counters that moved since the start: retransmissions, RNR, errors. */
		rte_tel_data *hw = rte_tel_data_alloc();
		if (hw == nullptr)
			return -ENOMEM;
		rte_tel_data_start_dict(hw);
		for (const auto &[name, n] : ports_moved(v))
			rte_tel_data_add_dict_u64(hw, name.c_str(), n);
		rte_tel_data_add_dict_container(d, "device_counters", hw, 0);
	}
	return 0;
}

int flows_cb(const char *, const char *, rte_tel_data *d)
{
	std::lock_guard<std::mutex> lock(g_mu);
	if (no_run(d))
		return 0;
	const RunView &v = *g_run;
	rte_tel_data_start_dict(d);
	for (const FlowView &fv : v.flows) {
		rte_tel_data *f = rte_tel_data_alloc();
		if (f == nullptr)
			return -ENOMEM;
		rte_tel_data_start_dict(f);
		rte_tel_data_add_dict_string(f, "verb", verb_opcode_name(fv.verb));
		rte_tel_data_add_dict_u64(f, "message_bytes", fv.msg_bytes);
		rte_tel_data_add_dict_u64(f, "qps", fv.qps);
		rte_tel_data_add_dict_u64(f, "batch", fv.ctl ? fv.ctl->batch.load(std::memory_order_relaxed) : fv.batch);
		rte_tel_data_add_dict_u64(f, "signal_every", fv.signal_every);
		uint64_t tpm = fv.ctl ? fv.ctl->tsc_per_msg.load(std::memory_order_relaxed) : 0;
		rte_tel_data_add_dict_u64(f, "rate_limit_msg_per_s", tpm ? static_cast<uint64_t>(v.tsc_hz / static_cast<double>(tpm)) : 0);
		rte_tel_data_add_dict_u64(f, "messages", fv.target);
		rte_tel_data_add_dict_container(d, tel_key(fv.name).c_str(), f, 0);
	}
	return 0;
}

int lcores_cb(const char *, const char *, rte_tel_data *d)
{
	std::lock_guard<std::mutex> lock(g_mu);
	if (no_run(d))
		return 0;
	const RunView &v = *g_run;
	Sample cur = sample_take(v, rte_rdtsc());
	rte_tel_data_start_dict(d);
	for (size_t i = 0; i < v.lcores.size(); i++) {
		rte_tel_data *l = rte_tel_data_alloc();
		if (l == nullptr)
			return -ENOMEM;
		rte_tel_data_start_dict(l);
		rte_tel_data_add_dict_string(l, "role", v.lcores[i].role.c_str());
		rte_tel_data_add_dict_u64(l, "polls_busy", cur.lcores[i].busy);
		rte_tel_data_add_dict_u64(l, "polls_idle", cur.lcores[i].idle);
		if (v.lcores[i].role == "responder") {
			rte_tel_data_add_dict_u64(l, "received", cur.lcores[i].received);
			rte_tel_data_add_dict_u64(l, "srq_posted", cur.lcores[i].srq_posted);
		}
		rte_tel_data_add_dict_container(d, ("lcore" + std::to_string(v.lcores[i].lcore)).c_str(), l, 0);
	}
	for (const PoolView &p : v.pools)
		rte_tel_data_add_dict_u64(d, tel_key(p.name + "_in_use").c_str(), rte_mempool_in_use_count(p.pool));
	for (const RingView &g : v.rings)
		rte_tel_data_add_dict_u64(d, tel_key(g.name + "_used").c_str(), rte_ring_count(g.ring));
	return 0;
}

int stages_cb(const char *, const char *, rte_tel_data *d)
{
	std::lock_guard<std::mutex> lock(g_mu);
	if (no_run(d))
		return 0;
	const RunView &v = *g_run;
	rte_tel_data_start_dict(d);
	for (const StageView &s : v.stages) {
		rte_tel_data *t = rte_tel_data_alloc();
		if (t == nullptr)
			return -ENOMEM;
		rte_tel_data_start_dict(t);
		rte_tel_data_add_dict_string(t, "kind", s.kind.c_str());
		rte_tel_data_add_dict_u64(t, "lcore", s.lcore);
		rte_tel_data_add_dict_u64(t, "calls", s.live->calls.load(std::memory_order_relaxed));
		rte_tel_data_add_dict_u64(t, "objects", s.live->msgs.load(std::memory_order_relaxed));
		if (v.stage_cycles)
			rte_tel_data_add_dict_u64(t, "busy_cycles", s.live->cycles.load(std::memory_order_relaxed));
		rte_tel_data_add_dict_container(d, tel_key(s.name).c_str(), t, 0);
	}
	return 0;
}

int config_cb(const char *, const char *, rte_tel_data *d)
{
	std::lock_guard<std::mutex> lock(g_mu);
	if (no_run(d))
		return 0;
	const RunView &v = *g_run;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "device", v.device.c_str());
	rte_tel_data_add_dict_string(d, "run", v.what.c_str());
	for (const std::string &l : v.config) {
		size_t colon = l.find(':');
		std::string k = colon == std::string::npos ? l : l.substr(0, colon);
		std::string val = colon == std::string::npos ? "" : l.substr(colon + 1);
		while (!val.empty() && val[0] == ' ')
			val.erase(0, 1);
		rte_tel_data_add_dict_string(d, tel_key(k).c_str(), val.c_str());
	}
	return 0;
}

} // namespace

int telemetry_register(std::string *err)
{
	struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} eps[] = {
		{"/rdmapipe/stats", stats_cb, "Per flow: sent, completed, errors, outstanding, rates, progress. Parameter: a flow name"},
		{"/rdmapipe/flows", flows_cb, "Per flow: verb, size, QPs, batch, signalling, rate limit, messages"},
		{"/rdmapipe/lcores", lcores_cb, "Per lcore: role, busy and idle polls; pools and rings in use"},
		{"/rdmapipe/stages", stages_cb, "Per stage: kind, lcore, calls, objects, busy cycles (run.stage_cycles)"},
		{"/rdmapipe/config", config_cb, "The device and the run's settings"},
	};
	for (auto &e : eps)
		if (int ret = rte_telemetry_register_cmd(e.cmd, e.fn, e.help); ret != 0) {
			*err = std::string("telemetry: registering ") + e.cmd + ": " + strerror(-ret);
			return -1;
		}
	RP_LOG(DEBUG, CONTROL, "rdmapipe: telemetry: /rdmapipe endpoints registered\n");
	return 0;
}

void telemetry_set_run(const RunView *v)
{
	std::lock_guard<std::mutex> lock(g_mu);
	g_run = v;
}

} // namespace rp
