#include "conf/cli_pipeline.h"

#include <algorithm>
#include <cstdio>
#include <thread>
#include <vector>

namespace rp {

namespace {

/* "size = 64", or a sweep's "sizes = [64, 4096]". */
/* A flow's traffic keys the command line set, as the file says them ("" : none). */
std::string traffic_text(const Traffic &tr)
{
	std::string t;
	auto add = [&](const char *k, int v) {
		if (v >= 0)
			t += std::string(" ") + k + " = " + std::to_string(v) + ";";
	};
	add("traffic_class", tr.traffic_class);
	add("sl", tr.sl);
	add("flow_label", tr.flow_label);
	if (tr.spread)
		t += " flow_label_spread = true;";
	add("hop_limit", tr.hop_limit);
	add("gid_index", tr.gid_index);
	return t;
}

std::string sizes_text(const std::vector<uint32_t> &sizes)
{
	if (sizes.size() == 1)
		return "size = " + std::to_string(sizes[0]);
	std::string t = "sizes = [";
	for (size_t i = 0; i < sizes.size(); i++)
		t += (i ? ", " : "") + std::to_string(sizes[i]);
	return t + "]";
}

bool among(const std::vector<std::string> &keys, const std::string &k)
{
	return std::find(keys.begin(), keys.end(), k) != keys.end();
}

/* The keys the options set, recorded as given on the objects that have them (line 0):
 * the validator checks what was given and names its option (option_of_key). */
void mark_given(const RunOptions &o, PipelineConf *c)
{
	for (const std::string &k : o.keys_given) {
		if (among(conf_flow_keys(), k))
			for (FlowConf &f : c->flows)
				f.keys.set(k, 0);
		if (among(conf_io_keys(), k))
			for (IoContextConf &io : c->io_contexts)
				io.keys.set(k, 0);
		if (among(conf_run_keys(), k))
			c->run.keys.set(k, 0);
	}
}

/* Whether this process sends a flow of the command line: the client does, the server
 * with --reversed; a --bidirectional flow's way back the other way round. */
bool sends_here(const RunOptions &o, bool back)
{
	return (!o.peer.empty() != o.reversed) != back;
}

/* Flow i of the command line, named `name` (its pool's name too), on PORT + port_i;
 * back: --bidirectional's way back. */
FlowConf flow_of(const RunOptions &o, size_t i, size_t port_i, bool back, const std::string &name, const std::vector<uint32_t> &sizes)
{
	const bool server = !o.listen.empty(), client = !o.peer.empty();
	FlowConf f;
	f.name = name;
	f.peer = client ? addr_plus(o.peer, port_i) : server ? "" : "loopback";
	f.listen = server ? addr_plus(o.listen, port_i) : "";
	f.local = o.local;
	f.echoed = (server || client) && sends_here(o, back) && o.mode == Mode::pingpong;   // the other end's echo stage answers it
	f.transport = o.uc ? Transport::uc : Transport::rc;
	f.reliability = o.uc ? o.reliability : Reliability::none;
	f.ack_every = o.ack_every;
	f.ack_us = o.ack_us;
	f.inject_loss = o.inject_loss;
	f.qps = o.flows[i];
	f.verb = o.verb;
	f.sizes = sizes;   // several: a size sweep
	f.batch = o.batch;
	f.signal_every = o.signal_every;
	f.sq_depth = o.sq_depth;
	f.window = o.slots;
	f.window_given = o.slots_given;
	f.flow_window = o.flow_window;
	f.flow_window_given = o.flow_window_given;
	f.batch_given = o.batch_given;
	f.signal_given = o.signal_given;
	f.chunk = o.chunk;
	f.inline_send = o.inline_send;
	f.rate_pps = o.rate_pps;
	f.verify = o.verify;
	f.pool = name;
	f.post_api = o.post_api;
	f.fence = o.fence;
	f.rnr_retry = o.rnr_retry;
	f.retry_cnt = o.retry_cnt;
	f.min_rnr_timer = o.min_rnr_timer;
	f.traffic = o.traffic;
	if (o.duration_s > 0)
		f.duration_s = o.duration_s;
	else
		f.messages = o.messages ? o.messages : kDefaultMessages;
	return f;
}

/* Its stages: an rdma_tx on the requester's lcore and an rdma_rx (ping-pong: an echo) on
 * the responder's; two processes, this process's end only (the server receives, the
 * client sends; --reversed the other way); a way back the other way round (lcores
 * swapped, here). */
void add_stages(const RunOptions &o, const std::string &name, unsigned tx_lcore, unsigned rx_lcore, bool back, PipelineConf *c)
{
	const bool two = !o.listen.empty() || !o.peer.empty();
	const bool server = two && !sends_here(o, back), client = two && sends_here(o, back);
	if (back && !two)
		std::swap(tx_lcore, rx_lcore);
	StageConf tx, rx;
	tx.name = name + "_tx";
	tx.kind = stage_kind_of_end(FlowEnd::requester);
	tx.lcore = tx_lcore;
	tx.flow = name;
	const bool pp = o.mode == Mode::pingpong;
	rx.name = name + (pp ? "_echo" : "_rx");
	rx.kind = stage_kind_of_end(pp ? FlowEnd::echo : FlowEnd::responder);
	rx.lcore = rx_lcore;
	rx.flow = name;
	if (server) {
		rx.lcore = tx_lcore;
		c->stages.push_back(rx);
		return;
	}
	c->stages.push_back(tx);
	if (!client)
		c->stages.push_back(rx);
}

} // namespace

PipelineConf pipeline_from_options(const RunOptions &o, unsigned tx_lcore, unsigned rx_lcore)
{
	/* Two processes: this one's end on one lcore (tx_lcore); `receives`: it receives a
	 * flow (the server's, --reversed the client's, --bidirectional both). */
	const bool server = !o.listen.empty(), client = !o.peer.empty();
	const bool receives = (server || client) && (!sends_here(o, false) || o.bidirectional);
	PipelineConf c;
	c.file = kCliPipeline;
	c.version = kConfigVersion;
	DeviceConf d;
	d.name = o.device;   // "": the first device found
	d.port = o.port;
	d.gid_index = o.gid_index;
	c.devices.push_back(d);
	std::vector<unsigned> lcs{tx_lcore, rx_lcore};
	if (server || client)
		lcs = {tx_lcore};
	for (unsigned lc : lcs) {
		IoContextConf io;
		io.lcore = lc;
		io.device = d.name;
		io.srq_refill = (lc == rx_lcore || receives) && o.srq_refill_given ? o.srq_refill : 0;   // else the builder's
		io.adaptive_poll = o.adaptive_poll;
		io.cq_api = o.cq_api;
		io.rq_per_qp = o.rq_per_qp;
		c.io_contexts.push_back(io);
	}
	for (size_t i = 0; i < o.flows.size(); i++) {
		const std::string name = i < o.flow_names.size() ? o.flow_names[i] : "flow" + std::to_string(i);
		PoolConf p;
		p.name = name;
		const std::vector<uint32_t> sizes = o.sizes.empty() ? std::vector<uint32_t>{o.msg_bytes} : o.sizes;
		/* count: conf_size's; a pool's buffers are 8 B at least (ping-pong's 2 B fit). */
		p.elt_size = std::max<uint32_t>(8, *std::max_element(sizes.begin(), sizes.end()));
		c.pools.push_back(p);
		c.flows.push_back(flow_of(o, i, i, false, name, sizes));
		add_stages(o, name, tx_lcore, rx_lcore, false, &c);
		if (!o.bidirectional)
			continue;
		p.name = name + "_back";
		c.pools.push_back(p);
		c.flows.push_back(flow_of(o, i, o.flows.size() + i, true, p.name, sizes));
		add_stages(o, p.name, tx_lcore, rx_lcore, true, &c);
	}
	c.run.warmup_s = o.warmup_s;
	c.run.connect = o.connect;
	c.run.stage_cycles = o.stage_cycles;
	c.run.stats_period_s = o.stats_period_s;
	c.run.metrics = o.metrics;
	c.run.push = o.push;
	c.run.metrics_qp = o.metrics_qp;
	c.run.json = o.output_json;
	c.run.csv = o.output_csv;
	apply_cli(o, &c);
	mark_given(o, &c);
	conf_size(&c);
	return c;
}

/* [ADDR:]PORT + i: flow i of a two-process run (each its own connections), a job
 * rank's metrics port. */
std::string addr_plus(const std::string &a, size_t i)
{
	const size_t colon = a.rfind(':');
	if (i == 0)
		return a;
	return (colon == std::string::npos ? "" : a.substr(0, colon + 1)) + std::to_string(addr_port(a) + i);
}

int validated_pipeline(const RunOptions &o, unsigned tx_lcore, unsigned rx_lcore, PipelineConf *c, std::string *err)
{
	*c = pipeline_from_options(o, tx_lcore, rx_lcore);
	return conf_validate(c, err);
}

void apply_cli(const RunOptions &o, PipelineConf *c)
{
	HooksConf &h = c->hooks;
	h.corrupt_msg = o.corrupt_msg;
	h.bad_rkey_qp = o.bad_rkey_qp;
	h.inject_rnr_lcore = o.inject_rnr_lcore;
	h.inject_pool_left = o.inject_pool_left;
	h.inject_loss = o.inject_loss;
	h.inject_bad_retx_header = o.inject_bad_retx_header;
	h.plants = o.plants;
	c->run.stall_timeout_s = o.stall_timeout_s;
	if (o.connect_timeout_s > 0)
		c->run.connect_timeout_s = o.connect_timeout_s;
	c->run.quiet = o.quiet;
	c->run.stage_cycles |= o.stage_cycles;
	if (o.stats_period_s > 0)
		c->run.stats_period_s = o.stats_period_s;
	if (!o.metrics.empty())
		c->run.metrics = o.metrics;
	if (!o.push.empty())
		c->run.push = o.push;
	c->run.metrics_qp |= o.metrics_qp;
	if (!o.output_json.empty())
		c->run.json = o.output_json;
	if (!o.output_csv.empty())
		c->run.csv = o.output_csv;
}

bool cli_lcores(const LcoreSet &lcores, bool interactive, bool one_end, unsigned *tx_lcore, unsigned *rx_lcore,
		std::string *err)
{
	std::vector<unsigned> on;
	if (lcores.known) {
		for (unsigned i = 0; i < lcores.has.size(); i++)
			if (lcores.has[i])
				on.push_back(i);
	} else {
		for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); i++)
			on.push_back(i);
	}
	const size_t workers = on.size() - 1;   // the first is the main lcore
	if (one_end) {   // two processes: this one's end on the first worker, or main (not with -i)
		if (interactive && workers == 0) {
			*err = "-i: the console takes the main lcore " + std::to_string(on[0]) + ", and the run needs 1 more: pass -l 0-1";
			return false;
		}
		*tx_lcore = *rx_lcore = workers ? on[1] : on[0];
		return true;
	}
	if (workers == 0) {
		*err = "a loopback run needs 2 lcores; EAL has only lcore " + std::to_string(on[0]) + ": pass -l 0-1";
		return false;
	}
	if (interactive && workers < 2) {
		*err = "-i: the console takes the main lcore " + std::to_string(on[0]) +
		       ", and the loopback run needs 2 more: pass -l 0-2";
		return false;
	}
	*rx_lcore = workers == 1 ? on[0] : on[1];
	*tx_lcore = workers == 1 ? on[1] : on[2];
	return true;
}

namespace {

std::string num(double v)
{
	char b[32];
	snprintf(b, sizeof(b), "%g", v);
	std::string s = b;
	if (s.find_first_of(".e") == std::string::npos)
		s += ".0";   // libconfig: a float, not an integer
	return s;
}

} // namespace

namespace {

/* Flow f as the file's group (last: no comma after it). */
std::string flow_text(const FlowConf &f, bool last)
{
	/* Settings left to their defaults stay so: the builder fits them to the device
	 * (and a window to the chunks), which the file would otherwise pin. A window the
	 * file would derive otherwise (-Q A,B: the command line's is over all flows'
	 * QPs, a file's over each flow's) is written. */
	const std::string ends = !f.listen.empty() ? "listen = \"" + f.listen + "\""
				 : "peer = \"" + f.peer + "\"" + (f.local.empty() ? "" : "; local = \"" + f.local + "\"");
	std::string t = "  { name = \"" + f.name + "\"; " + ends + "; transport = \"" +
	     (f.transport == Transport::uc ? "uc" : "rc") + "\"; qps = " + std::to_string(f.qps) + "; verb = \"" +
	     verb_name(f.verb) + "\"; " + sizes_text(f.sizes) +
	     (f.batch_given ? "; batch = " + std::to_string(f.batch) : std::string()) +
	     (f.signal_given ? "; signal_every = " + std::to_string(f.signal_every) : std::string()) +
	     "; sq_depth = " + std::to_string(f.sq_depth) +
	     (f.window_given || f.window != std::max(f.batch, kDefaultWindow / f.qps) ? "; window = " + std::to_string(f.window)
										   : std::string()) +
	     (f.flow_window_given ? "; flow_window = " + std::to_string(f.flow_window) : std::string()) +
	     "; inline = " + (f.inline_send ? "true" : "false") +
	     "; rate = " + num(f.rate_pps) + "; " +
	     (f.duration_s > 0 ? "duration = " + num(until_stopped(f.duration_s) ? 0 : f.duration_s) : "messages = " + std::to_string(f.messages) + "L") +
	     "; verify = " + (f.verify ? "true" : "false") + "; pool = \"" + f.pool + "\";\n    post_api = \"" +
	     (f.post_api == PostApi::wr ? "wr" : "classic") + "\"; fence = " + (f.fence ? "true" : "false") +
	     "; rnr_retry = " + std::to_string(f.rnr_retry) + "; retry_cnt = " + std::to_string(f.retry_cnt) + "; min_rnr_timer = " + std::to_string(f.min_rnr_timer) + "; }" +
	     (last ? "" : ",") + "\n";
	if (f.echoed)   // inside the group: before its closing brace
		t.insert(t.rfind(" }"), " echoed = true;");
	if (f.transport == Transport::uc) {
		std::string rel = std::string("\n    reliability = \"") + (f.reliability == Reliability::software ? "software" : "none") + "\";";
		if (f.reliability == Reliability::software && !f.echoed)   // a ping-pong's echoes are its ACKs
			rel += " ack_every = " + std::to_string(f.ack_every) + "; ack_us = " + std::to_string(f.ack_us) + ";";
		if (f.chunk != kChunkAuto)
			rel += " chunk = " + std::to_string(f.chunk) + ";";
		if (f.inject_loss > 0)
			rel += " inject_loss = " + num(f.inject_loss) + ";";
		t.insert(t.rfind(" }"), rel);
	}
	if (const std::string tr = traffic_text(f.traffic); !tr.empty())
		t.insert(t.rfind(" }"), "\n   " + tr);
	return t;
}

} // namespace

std::string pipeline_to_text(const PipelineConf &c, const RunOptions &o)
{
	std::string t = "# The pipeline of: rdmapipe ... --";
	for (const std::string &a : o.argv_app)
		t += " " + a;
	t += "\n# (rdmapipe --dump-conf). Run it with -f, check it with --check.\n";
	t += "version = " + std::to_string(c.version) + ";\n";
	t += "devices = (\n";
	for (const DeviceConf &d : c.devices)
		t += "  { name = \"" + d.name + "\"; port = " + std::to_string(d.port) + "; gid_index = " +
		     (d.gid_index < 0 ? std::string("\"auto\"") : std::to_string(d.gid_index)) + "; }\n";
	t += ");\npools = (\n";
	for (size_t i = 0; i < c.pools.size(); i++) {
		const PoolConf &p = c.pools[i];
		t += "  { name = \"" + p.name + "\"; elt_size = " + std::to_string(p.elt_size) + "; count = " +
		     std::to_string(p.count) + "; cache = " + std::to_string(p.cache) + "; }" + (i + 1 < c.pools.size() ? "," : "") + "\n";
	}
	t += ");\nio_contexts = (\n";
	/* Queue sizes are the builder's, from the flows and fitted to the device: written,
	 * they would pin what the device may not hold. */
	for (size_t i = 0; i < c.io_contexts.size(); i++) {
		const IoContextConf &io = c.io_contexts[i];
		t += "  { lcore = " + std::to_string(io.lcore) + "; device = \"" + io.device + "\";" +
		     (io.srq_refill ? " srq_refill = " + std::to_string(io.srq_refill) + ";" : std::string()) + (io.rq_per_qp ? " recv_queue = \"qp\";" : "") + " poll = \"" +
		     (io.adaptive_poll ? "adaptive" : "busy") + "\"; cq_api = \"" + (io.cq_api == CqApi::ex ? "ex" : "classic") + "\"; }" +
		     (i + 1 < c.io_contexts.size() ? "," : "") + "\n";
	}
	t += ");\nflows = (\n";
	for (size_t i = 0; i < c.flows.size(); i++)
		t += flow_text(c.flows[i], i + 1 == c.flows.size());
	t += ");\nstages = (\n";
	for (size_t i = 0; i < c.stages.size(); i++) {
		const StageConf &s = c.stages[i];
		t += "  { name = \"" + s.name + "\"; kind = \"" + s.kind->name + "\"; lcore = " + std::to_string(s.lcore) +
		     "; flow = \"" + s.flow + "\"; }" + (i + 1 < c.stages.size() ? "," : "") + "\n";
	}
	t += ");\nrun = {\n  warmup = " + num(c.run.warmup_s) + ";\n  stats_period = " + num(c.run.stats_period_s) +
	     ";\n  connect = \"" + (c.run.connect == ConnectPath::direct ? "direct" : "cm") + "\";\n  stage_cycles = " +
	     (c.run.stage_cycles ? "true" : "false") + ";\n";
	if (conf_waits_to_connect(c))   // elsewhere the key is refused: it would bound nothing
		t += "  connect_timeout = " + num(c.run.connect_timeout_s) + ";\n";
	if (!c.run.metrics.empty())
		t += "  metrics = \"" + c.run.metrics + "\";\n";
	if (!c.run.push.empty())
		t += "  push = \"" + c.run.push + "\";\n";
	if (c.run.metrics_qp)
		t += "  metrics_qp = true;\n";
	if (!c.run.json.empty() || !c.run.csv.empty()) {
		t += "  output = {";
		if (!c.run.json.empty())
			t += " json = \"" + c.run.json + "\";";
		if (!c.run.csv.empty())
			t += " csv = \"" + c.run.csv + "\";";
		t += " };\n";
	}
	t += "};\n";
	return t;
}

} // namespace rp
