/* The schema of a pipeline file: the keys of each section, each key's type and range
 * (read through reader.h), and config_load: the file into a PipelineConf, then
 * conf_validate (validate.cpp) across keys and objects. */
#include "conf/config.h"
#include "capture/pcap_writer.h"
#include "conf/reader.h"

#include <libconfig.h++>

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rp {

namespace {

using libconfig::Setting;

const std::vector<std::string> kRootKeys = {"version", "devices", "pools", "io_contexts", "flows", "rings", "stages", "run",
					    "pattern"};
const std::vector<std::string> kPatternKeys = {"kind", "flows", "root", "pairs", "devices", "port", "bw_flag", "lat_flag",
					       "confirm", "timeout"};
const std::vector<std::string> kPatternKinds = {"pairs", "ring", "all_to_all", "incast", "list"};
const std::vector<std::string> kDeviceKeys = {"name", "port", "gid_index"};
const std::vector<std::string> kPoolKeys = {"name", "elt_size", "count", "cache"};
const std::vector<std::string> kIoKeys = {"lcore", "device", "send_cq", "recv_cq", "srq", "srq_refill", "recv_queue", "poll", "cq_api"};
const std::vector<std::string> kFlowKeys = {"name", "peer", "listen", "local", "transport", "qps", "verb", "size", "sizes", "batch",
					    "signal_every", "sq_depth", "window", "inline", "rate", "messages",
					    "duration", "verify", "pool", "share_qps", "echoed", "post_api", "fence",
					    "rnr_retry", "retry_cnt", "min_rnr_timer", "reliability", "ack_every", "ack_us", "inject_loss", "chunk",
					    "flow_window", "traffic_class", "sl", "flow_label", "flow_label_spread", "hop_limit",
					    "gid_index"};
const std::vector<std::string> kRingKeys = {"name", "size", "multi_producer", "multi_consumer"};
const std::vector<std::string> kStageKeys = {"name", "kind", "lcore", "flow", "input", "output", "file", "snaplen"};
const std::vector<std::string> kRunKeys = {"duration", "warmup", "stats_period", "output", "connect", "stage_cycles",
					   "connect_timeout", "metrics", "push", "metrics_qp"};
const std::vector<std::string> kOutputKeys = {"json", "csv"};
/* The verb key's choices, kVerbs' names in its order (a choice's index is its row). */
const std::vector<std::string> kVerbNames = [] {
	std::vector<std::string> n;
	for (const VerbInfo &v : kVerbs)
		n.emplace_back(v.name);
	return n;
}();

constexpr uint32_t kMaxLcore = 1023;
constexpr uint32_t kMaxCqe = 1u << 22;
constexpr uint32_t kMaxRing = 1u << 24;

bool valid_name(const std::string &n)
{
	if (n.empty() || n.size() > 31)
		return false;
	for (char ch : n)
		if (!(isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-'))
			return false;
	return true;
}

int line_of(const Setting &s)
{
	return static_cast<int>(s.getSourceLine());
}

/* The name of an element of a list of groups (unique within it: conf_validate); the
 * reads that follow are the element's values. */
bool read_name(Reader &r, const Setting &g, std::string *out)
{
	r.step(kStepName);
	if (!r.string(g, "name", out, true))
		return false;
	if (!valid_name(*out))
		return r.fail(g["name"], "'" + *out + "' is not a name (1..31 letters, digits, '_' or '-')");
	r.step(kStepValues);
	return true;
}

bool read_devices(Reader &r, const Setting &root, PipelineConf *c)
{
	r.at(kSecDevices, kListHead);
	const Setting *l = r.list(root, "devices", true);
	if (l == nullptr)
		return false;
	if (l->getLength() == 0)
		return r.fail(*l, "at least one device is needed");
	for (int i = 0; i < l->getLength(); i++) {
		const Setting &g = (*l)[i];
		DeviceConf &d = c->devices.emplace_back();   // kept when refused: conf_validate checks what came before
		d.line = line_of(g);
		r.at(kSecDevices, i);
		if (!r.keys(g, kDeviceKeys, &d.keys) || !read_name(r, g, &d.name) || !r.uint_as(g, "port", 1, 254, &d.port))
			return false;
		if (const Setting *s = r.find(g, "gid_index")) {
			if (s->getType() == Setting::TypeString && std::string(static_cast<const char *>(*s)) == "auto")
				d.gid_index = -1;
			else if (!r.uint_as(g, "gid_index", 0, 255, &d.gid_index))
				return false;
		}
	}
	return true;
}

bool read_pools(Reader &r, const Setting &root, PipelineConf *c)
{
	r.at(kSecPools, kListHead);
	const Setting *l = r.list(root, "pools", false);
	if (l == nullptr)
		return !r.failed();   // each flow then gets a pool of its own, sized by the builder
	for (int i = 0; i < l->getLength(); i++) {
		const Setting &g = (*l)[i];
		PoolConf &p = c->pools.emplace_back();
		p.line = line_of(g);
		p.cache = 256;
		r.at(kSecPools, i);
		if (!r.keys(g, kPoolKeys, &p.keys) || !read_name(r, g, &p.name) ||
		    !r.uint_as(g, "elt_size", 8, kMaxMsgBytes, &p.elt_size, true) ||
		    !r.uint_as(g, "count", 1, kMaxPool, &p.count, true) || !r.uint_as(g, "cache", 0, 512, &p.cache))
			return false;
	}
	return true;
}

bool read_io_context(Reader &r, const Setting &g, const LcoreSet &lcores, IoContextConf *io)
{
	io->line = line_of(g);
	io->srq_given = r.find(g, "srq") != nullptr;   // sizes not given: derived by the builder
	int poll = 0, api = 0, rq = 0;
	if (!r.keys(g, kIoKeys, &io->keys))
		return false;
	r.step(kStepValues);
	if (!r.uint_as(g, "lcore", 0, kMaxLcore, &io->lcore, true) ||
	    !r.string(g, "device", &io->device, true) || !r.uint_as(g, "send_cq", 1, kMaxCqe, &io->send_cq) ||
	    !r.uint_as(g, "recv_cq", 1, kMaxCqe, &io->recv_cq) || !r.uint_as(g, "srq", 0, kMaxCqe, &io->srq) ||
	    !r.uint_as(g, "srq_refill", 1, kMaxCqe, &io->srq_refill) || !r.choice(g, "recv_queue", {"srq", "qp"}, &rq) ||
	    !r.choice(g, "poll", {"busy", "adaptive"}, &poll) || !r.choice(g, "cq_api", {"classic", "ex"}, &api))
		return false;
	io->adaptive_poll = poll == 1;
	io->cq_api = api == 1 ? CqApi::ex : CqApi::classic;
	io->rq_per_qp = rq == 1;
	if (!lcores.contains(io->lcore))
		return r.fail(g["lcore"], "lcore " + std::to_string(io->lcore) + " is not in the EAL lcore set (-l)");
	if (io->srq && io->srq_refill == 0)
		io->srq_refill = std::max<uint32_t>(1, io->srq / 8);
	return true;
}

bool read_io_contexts(Reader &r, const Setting &root, const LcoreSet &lcores, PipelineConf *c)
{
	r.at(kSecIoContexts, kListHead);
	const Setting *l = r.list(root, "io_contexts", false);
	if (l == nullptr)
		return !r.failed();   // derived per lcore from the stages (conf_validate)
	for (int i = 0; i < l->getLength(); i++) {
		r.at(kSecIoContexts, i);
		if (!read_io_context(r, (*l)[i], lcores, &c->io_contexts.emplace_back()))
			return false;
	}
	return true;
}

/* A UC flow's reliability (software unless it says none) and its settings; RC is
 * reliable in the NIC. */
bool read_reliability(Reader &r, const Setting &g, FlowConf *f)
{
	int rel = 0;
	r.step(kFlowReliabilityRead);
	if (!r.choice(g, "reliability", {"software", "none"}, &rel) || !r.uint_as(g, "ack_every", 1, kMaxAckEvery, &f->ack_every) ||
	    !r.uint_as(g, "ack_us", 1, kMaxAckUs, &f->ack_us))
		return false;
	f->reliability = f->transport == Transport::uc && rel == 0 ? Reliability::software : Reliability::none;
	r.step(kFlowChunkRead);
	if (!r.uint_as(g, "chunk", 0, kMaxChunk, &f->chunk))
		return false;
	r.step(kFlowLossRead);
	if (const Setting *s = r.find(g, "inject_loss")) {
		if (!s->isNumber())
			return r.fail(*s, "expected a fraction of data WRs (0..0.5)");
		f->inject_loss = as_double(*s);
		if (!(f->inject_loss >= 0 && f->inject_loss <= 0.5))
			return r.fail(*s, "inject_loss is outside 0..0.5");
	}
	return true;
}

/* The far end of a two-host flow: this host either names the server (peer) or is the
 * server (listen); the client may name its own address (local). */
bool read_flow_ends(Reader &r, const Setting &g, FlowConf *f)
{
	r.step(kFlowPeer);
	if (f->peer != "loopback" && !addr_ipv4_port(f->peer))
		return r.fail(g["peer"], "'" + f->peer + "' is not \"loopback\" or IPV4:PORT");
	r.step(kFlowEndsRead);
	if (!r.string(g, "listen", &f->listen) || !r.string(g, "local", &f->local))
		return false;
	r.step(kFlowListen);
	if (!f->listen.empty()) {
		if (!addr_listen(f->listen))
			return r.fail(g["listen"], "'" + f->listen + "' is not [IPV4:]PORT");
		f->peer = "";
	}
	r.step(kFlowLocal);
	if (!f->local.empty() && !addr_ipv4(f->local))
		return r.fail(g["local"], "'" + f->local + "' is not an IPv4 address");
	return true;
}

/* size = N, or sizes = [N, ...] used in turn (both: conf_validate refuses them). */
bool read_sizes(Reader &r, const Setting &g, FlowConf *f)
{
	r.step(kFlowSizes);
	if (r.find(g, "size"))
		return r.uint_as(g, "size", 1, kMaxMsgBytes, &f->sizes[0]);
	if (const Setting *s = r.find(g, "sizes")) {
		if (!s->isArray() && !s->isList())
			return r.fail(*s, "expected a list of sizes [64, 4096]");
		if (s->getLength() == 0 || s->getLength() > 64)
			return r.fail(*s, "expected 1..64 sizes");
		f->sizes.clear();
		for (int k = 0; k < s->getLength(); k++) {
			const Setting &e = (*s)[k];
			if (e.getType() != Setting::TypeInt && e.getType() != Setting::TypeInt64)
				return r.fail(e, "expected an integer");
			long long v = as_ll(e);
			if (v < 1 || v > kMaxMsgBytes)
				return r.fail(e, std::to_string(v) + " is outside 1.." + std::to_string(kMaxMsgBytes));
			f->sizes.push_back(static_cast<uint32_t>(v));
		}
	} else if (const uint32_t fixed = verb_info(f->verb).fixed_bytes) {
		f->sizes = {fixed};
	}
	return true;
}

/* What the file leaves out of a flow's queues: derived from batch, qps and the verb. */
void flow_defaults(FlowConf *f)
{
	f->signal_given = f->signal_every != 0;
	if (f->signal_every == 0)
		f->signal_every = f->batch;
	f->sq_depth_given = f->sq_depth != 0;
	if (f->sq_depth == 0)
		f->sq_depth = std::min<uint32_t>(kMaxSqDepth, kSqDepthPerUnit * std::max(f->batch, f->signal_every));
	f->window_given = f->window != 0;
	if (f->window == 0)
		f->window = std::max(f->batch, kDefaultWindow / f->qps);
}

/* RoCE traffic parameters: left out, the device's (or rdma_cm's) defaults. */
bool read_traffic(Reader &r, const Setting &g, Traffic *t)
{
	return r.uint_as(g, "traffic_class", 0, 255, &t->traffic_class) && r.uint_as(g, "sl", 0, 15, &t->sl) &&
	       r.uint_as(g, "flow_label", 0, kFlowLabelMax, &t->flow_label) &&
	       r.boolean(g, "flow_label_spread", &t->spread) && r.uint_as(g, "hop_limit", 1, 255, &t->hop_limit) &&
	       r.uint_as(g, "gid_index", 0, 255, &t->gid_index);
}

bool read_flow(Reader &r, const Setting &g, FlowConf *f)
{
	f->line = line_of(g);
	f->peer = "loopback";
	int transport = 0, verb = 3, post_api = 0;
	if (!r.keys(g, kFlowKeys, &f->keys) || !read_name(r, g, &f->name) || !r.string(g, "peer", &f->peer) ||
	    !r.choice(g, "transport", {"rc", "uc"}, &transport) || !r.uint_as(g, "qps", 1, kMaxQps, &f->qps) ||
	    !r.choice(g, "verb", kVerbNames, &verb, true) || !r.uint_as(g, "batch", 1, kMaxBatch, &f->batch) ||
	    !r.uint_as(g, "signal_every", 1, kMaxSqDepth / 2, &f->signal_every) ||
	    !r.uint_as(g, "sq_depth", 1, kMaxSqDepth, &f->sq_depth) || !r.uint_as(g, "window", 1, kMaxSlots, &f->window) ||
	    !r.uint_as(g, "flow_window", 0, kMaxSlots, &f->flow_window) ||
	    !r.boolean(g, "inline", &f->inline_send) || !r.uint(g, "messages", 1, UINT64_MAX >> 1, &f->messages) ||
	    !r.seconds(g, "duration", &f->duration_s) || !r.boolean(g, "verify", &f->verify) ||
	    !r.string(g, "pool", &f->pool) || !r.boolean(g, "share_qps", &f->share_qps) ||
	    !r.boolean(g, "echoed", &f->echoed) || !r.boolean(g, "fence", &f->fence) ||
	    !r.uint_as(g, "rnr_retry", 0, 7, &f->rnr_retry) || !r.uint_as(g, "retry_cnt", 0, 7, &f->retry_cnt) ||
	    !r.uint_as(g, "min_rnr_timer", 0, 31, &f->min_rnr_timer) || !r.choice(g, "post_api", {"classic", "wr"}, &post_api))
		return false;
	if (r.find(g, "duration") && f->duration_s == 0)
		f->duration_s = kUntilStoppedS;
	f->post_api = post_api ? PostApi::wr : PostApi::classic;
	f->transport = transport == 1 ? Transport::uc : Transport::rc;
	f->verb = kVerbs[verb].verb;
	if (!read_flow_ends(r, g, f) || !read_sizes(r, g, f) || !read_traffic(r, g, &f->traffic))
		return false;
	r.step(kFlowRate);
	if (const Setting *s = r.find(g, "rate")) {
		if (!s->isNumber())
			return r.fail(*s, "expected messages per second (a number, 0: unlimited)");
		f->rate_pps = as_double(*s);
		if (!std::isfinite(f->rate_pps) || f->rate_pps < 0 || f->rate_pps > 1e9)
			return r.fail(*s, "rate is outside 0..1e9 messages per second");
	}
	if (!read_reliability(r, g, f))
		return false;
	f->batch_given = r.find(g, "batch") != nullptr;
	f->flow_window_given = r.find(g, "flow_window") != nullptr;
	flow_defaults(f);
	return true;
}

bool read_flows(Reader &r, const Setting &root, PipelineConf *c)
{
	r.at(kSecFlows, kListHead);
	const Setting *l = r.list(root, "flows", true);
	if (l == nullptr)
		return false;
	for (int i = 0; i < l->getLength(); i++) {
		r.at(kSecFlows, i);
		if (!read_flow(r, (*l)[i], &c->flows.emplace_back()))
			return false;
	}
	return true;
}

bool read_rings(Reader &r, const Setting &root, PipelineConf *c)
{
	r.at(kSecRings, kListHead);
	const Setting *l = r.list(root, "rings", false);
	if (l == nullptr)
		return !r.failed();
	for (int i = 0; i < l->getLength(); i++) {
		const Setting &g = (*l)[i];
		RingConf &ring = c->rings.emplace_back();
		ring.line = line_of(g);
		r.at(kSecRings, i);
		if (!r.keys(g, kRingKeys, &ring.keys) || !read_name(r, g, &ring.name) ||
		    !r.uint_as(g, "size", 2, kMaxRing, &ring.size) || !r.boolean(g, "multi_producer", &ring.multi_producer) ||
		    !r.boolean(g, "multi_consumer", &ring.multi_consumer))
			return false;
		if (ring.size & (ring.size - 1))
			return r.fail(g["size"], std::to_string(ring.size) + " is not a power of two (rte_ring sizes are)");
	}
	return true;
}

std::vector<std::string> stage_kind_names()
{
	std::vector<std::string> n;
	for (const StageKindInfo *k : stage_kinds())
		n.push_back(k->name);
	return n;
}

bool read_stages(Reader &r, const Setting &root, const LcoreSet &lcores, PipelineConf *c)
{
	r.at(kSecStages, kListHead);
	const Setting *l = r.list(root, "stages", true);
	if (l == nullptr)
		return false;
	if (l->getLength() == 0)
		return r.fail(*l, "at least one stage is needed");
	for (int i = 0; i < l->getLength(); i++) {
		const Setting &g = (*l)[i];
		StageConf &st = c->stages.emplace_back();
		st.line = line_of(g);
		r.at(kSecStages, i);
		int kind = 0;
		if (!r.keys(g, kStageKeys, &st.keys) || !read_name(r, g, &st.name) ||
		    !r.choice(g, "kind", stage_kind_names(), &kind, true) || !r.uint_as(g, "lcore", 0, kMaxLcore, &st.lcore, true) ||
		    !r.string(g, "flow", &st.flow) || !r.names(g, "input", &st.inputs) || !r.names(g, "output", &st.outputs) ||
		    !r.string(g, "file", &st.file) || !r.uint_as(g, "snaplen", 1, kCaptureSnaplenMax, &st.snaplen))
			return false;
		st.kind = stage_kinds()[static_cast<size_t>(kind)];
		if (!lcores.contains(st.lcore))
			return r.fail(g["lcore"], "lcore " + std::to_string(st.lcore) + " is not in the EAL lcore set (-l)");
	}
	return true;
}

bool read_run(Reader &r, const Setting &root, PipelineConf *c)
{
	r.at(kSecRun, 0);
	const Setting *g = r.find(root, "run");
	if (g == nullptr)
		return true;
	if (!g->isGroup())
		return r.fail(*g, "expected a group { ... }");
	c->run.line = line_of(*g);
	if (!r.keys(*g, kRunKeys, &c->run.keys) || !r.seconds(*g, "duration", &c->run.duration_s) ||
	    !r.seconds(*g, "warmup", &c->run.warmup_s) || !r.seconds(*g, "stats_period", &c->run.stats_period_s))
		return false;
	if (r.find(*g, "duration") && c->run.duration_s == 0)
		c->run.duration_s = kUntilStoppedS;
	int connect = 0;
	if (!r.choice(*g, "connect", {"cm", "direct"}, &connect) || !r.boolean(*g, "stage_cycles", &c->run.stage_cycles))
		return false;
	c->run.connect = connect ? ConnectPath::direct : ConnectPath::cm;
	if (const Setting *s = r.find(*g, "connect_timeout")) {
		if (!s->isNumber())
			return r.fail(*s, "expected a number of seconds");
		const double v = as_double(*s);
		if (const std::string why = connect_timeout_problem(v); !why.empty()) {
			char b[32];
			snprintf(b, sizeof(b), "%g ", v);
			return r.fail(*s, b + why);
		}
		c->run.connect_timeout_s = v;
	}
	if (!r.string(*g, "metrics", &c->run.metrics))
		return false;
	if (!c->run.metrics.empty() && !addr_listen(c->run.metrics))
		return r.fail((*g)["metrics"], "'" + c->run.metrics + "' is not [IPV4:]PORT (the Prometheus endpoint's address)");
	if (!r.string(*g, "push", &c->run.push) || !r.boolean(*g, "metrics_qp", &c->run.metrics_qp))
		return false;
	if (!c->run.push.empty() && !push_url(c->run.push))
		return r.fail((*g)["push"], "'" + c->run.push + "' is not http://HOST[:PORT] (a Pushgateway)");
	if (const Setting *o = r.find(*g, "output")) {
		if (!o->isGroup())
			return r.fail(*o, "expected a group { json = \"FILE\"; csv = \"FILE\"; }");
		if (!r.keys(*o, kOutputKeys) || !r.string(*o, "json", &c->run.json) || !r.string(*o, "csv", &c->run.csv))
			return false;
	}
	return true;
}

/* A number in [lo, hi] (integers welcome). */
bool real(Reader &r, const Setting &g, const char *key, double lo, double hi, double *out)
{
	const Setting *s = r.find(g, key);
	if (s == nullptr)
		return true;
	if (!s->isNumber())
		return r.fail(*s, "expected a number");
	const double v = as_double(*s);
	if (!std::isfinite(v) || v < lo || v > hi) {
		char m[96];
		snprintf(m, sizeof m, "%g is outside %g..%g", v, lo, hi);
		return r.fail(*s, m);
	}
	*out = v;
	return true;
}

/* pairs = ( [sender, receiver], ... ): distinct ranks, each pair once. */
bool read_pairs(Reader &r, const Setting &pl, PatternConf *p)
{
	if (!pl.isList() && !pl.isArray())
		return r.fail(pl, "expected a list of [sender, receiver] rank pairs: ( [0, 1], [1, 0] )");
	if (pl.getLength() == 0)
		return r.fail(pl, "at least one pair is needed");
	for (int i = 0; i < pl.getLength(); i++) {
		const Setting &e = pl[i];
		if (!(e.isArray() || e.isList()) || e.getLength() != 2 || !e[0].isNumber() || !e[1].isNumber() ||
		    e[0].getType() == Setting::TypeFloat || e[1].getType() == Setting::TypeFloat)
			return r.fail(e, "expected [sender, receiver]: two rank numbers");
		const long long a = as_ll(e[0]), b = as_ll(e[1]);
		if (a < 0 || b < 0 || a >= (1 << 24) || b >= (1 << 24))
			return r.fail(e, "a rank is a number in 0..16777215");
		if (a == b)
			return r.fail(e, "rank " + std::to_string(a) + " to itself: a loopback flow does that");
		const RankPair rp{static_cast<uint32_t>(a), static_cast<uint32_t>(b)};
		if (std::find(p->pairs.begin(), p->pairs.end(), rp) != p->pairs.end())
			return r.fail(e, "pair [" + std::to_string(a) + ", " + std::to_string(b) + "] is listed twice");
		p->pairs.push_back(rp);
	}
	return true;
}

/* pattern.confirm: how many flagged pairs to re-run alone; true is the default bound,
 * false none. */
bool read_confirm(Reader &r, const Setting &g, uint32_t *confirm)
{
	const Setting *s = r.find(g, "confirm");
	if (s && s->getType() == Setting::TypeBoolean) {
		*confirm = static_cast<bool>(*s) ? PatternConf{}.confirm : 0;
		return true;
	}
	return r.uint_as(g, "confirm", 0, 1024, confirm);
}

/* The traffic pattern over an MPI job's ranks (docs/cluster.md). Rank counts are
 * known only when the job runs: what depends on them (incast's root, a listed pair's
 * ranks) is checked then (pattern_pairs). */
bool read_pattern(Reader &r, const Setting &root, PipelineConf *c)
{
	r.at(kSecPattern, 0, kPatternValues);
	const Setting *g = r.find(root, "pattern");
	if (g == nullptr)
		return true;
	PatternConf &p = c->pattern;
	p.line = line_of(*g);
	if (!g->isGroup())
		return r.fail(*g, "expected a group { kind = \"ring\"; ... }");
	int kind = 0;
	if (!r.keys(*g, kPatternKeys, &p.keys) || !r.choice(*g, "kind", kPatternKinds, &kind, true) ||
	    !r.names(*g, "flows", &p.flows, "flow name") || !r.uint_as(*g, "root", 0, 1u << 24, &p.root) ||
	    !r.names(*g, "devices", &p.devices, "device name") || !r.uint_as(*g, "port", 1, 65535, &p.port) ||
	    !real(r, *g, "bw_flag", 0, 1, &p.bw_flag) || !real(r, *g, "lat_flag", 1, 1e6, &p.lat_flag) ||
	    !read_confirm(r, *g, &p.confirm) ||
	    !r.seconds(*g, "timeout", &p.timeout_s, false))
		return false;
	p.kind = static_cast<PatternKind>(kind + 1);
	r.step(kPatternPairs);
	if (const Setting *pl = r.find(*g, "pairs"); pl && !read_pairs(r, *pl, &p))
		return false;
	r.step(kPatternDevices);
	if (r.find(*g, "devices") && p.devices.empty())
		return r.fail((*g)["devices"], "at least one device name is needed");
	return true;
}

} // namespace

bool addr_ipv4(const std::string &a)
{
	in_addr x;
	return inet_pton(AF_INET, a.c_str(), &x) == 1;
}

uint32_t addr_port(const std::string &a)
{
	const size_t colon = a.rfind(':');
	uint64_t port;
	return parse_size(a.c_str() + (colon == std::string::npos ? 0 : colon + 1), 1, 65535, &port) ? static_cast<uint32_t>(port) : 0;
}

bool addr_ipv4_port(const std::string &a)
{
	const size_t colon = a.rfind(':');
	return colon != std::string::npos && addr_port(a) != 0 && addr_ipv4(a.substr(0, colon));
}

bool push_url(const std::string &u, std::string *host, std::string *port)
{
	size_t at = u.rfind("http://", 0) == 0 ? 7 : u.rfind("https://", 0) == 0 ? 8 : 0;
	if (at == 0 || at == u.size())
		return false;
	const std::string rest = u.back() == '/' ? u.substr(at, u.size() - at - 1) : u.substr(at);
	const size_t colon = rest.rfind(':');
	const std::string h = colon == std::string::npos ? rest : rest.substr(0, colon);
	if (h.empty() || h.find_first_of("/?#@ ") != std::string::npos || (colon != std::string::npos && addr_port(rest) == 0))
		return false;
	if (host)
		*host = u.substr(0, at) + h;
	if (port)
		*port = colon == std::string::npos ? "9091" : rest.substr(colon + 1);
	return true;
}

bool addr_listen(const std::string &a)
{
	const size_t colon = a.rfind(':');
	return addr_port(a) != 0 && (colon == std::string::npos || colon == 0 || addr_ipv4(a.substr(0, colon)));
}

const char *pattern_kind_name(PatternKind k)
{
	return k == PatternKind::none ? "none" : kPatternKinds[static_cast<size_t>(k) - 1].c_str();
}

bool PatternConf::has(const std::string &flow) const
{
	return on() && std::find(flows.begin(), flows.end(), flow) != flows.end();
}


uint32_t FlowConf::max_size() const
{
	return *std::max_element(sizes.begin(), sizes.end());
}

const std::vector<std::string> &conf_flow_keys() { return kFlowKeys; }
const std::vector<std::string> &conf_io_keys() { return kIoKeys; }
const std::vector<std::string> &conf_run_keys() { return kRunKeys; }

std::string closest_name(const std::string &name, const std::vector<std::string> &known)
{
	/* Levenshtein distance; a hint only when it is close for the word's length. */
	std::string best;
	size_t best_d = SIZE_MAX;
	for (const std::string &k : known) {
		std::vector<size_t> prev(k.size() + 1), cur(k.size() + 1);
		for (size_t j = 0; j <= k.size(); j++)
			prev[j] = j;
		for (size_t i = 1; i <= name.size(); i++) {
			cur[0] = i;
			for (size_t j = 1; j <= k.size(); j++)
				cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (tolower(name[i - 1]) != tolower(k[j - 1]))});
			std::swap(prev, cur);
		}
		if (prev[k.size()] < best_d) {
			best_d = prev[k.size()];
			best = k;
		}
	}
	size_t allowed = name.size() <= 4 ? 1 : name.size() <= 8 ? 2 : 3;
	return best_d <= allowed ? best : std::string();
}

bool lcore_set_from_list(const char *list, LcoreSet *set)
{
	LcoreSet s;
	s.known = true;
	const char *p = list;
	while (*p) {
		char *end = nullptr;
		errno = 0;
		unsigned long a = strtoul(p, &end, 10);
		if (end == p || errno || a > kMaxLcore)
			return false;
		unsigned long b = a;
		p = end;
		if (*p == '-') {
			b = strtoul(p + 1, &end, 10);
			if (end == p + 1 || errno || b > kMaxLcore || b < a)
				return false;
			p = end;
		}
		if (s.has.size() <= b)
			s.has.resize(b + 1, false);
		for (unsigned long x = a; x <= b; x++)
			s.has[x] = true;
		if (*p == ',')
			p++;
		else if (*p)
			return false;
	}
	*set = s;
	return !s.has.empty();
}

bool lcore_set_from_mask(const char *mask, LcoreSet *set)
{
	LcoreSet s;
	s.known = true;
	errno = 0;
	char *end = nullptr;
	unsigned long long m = strtoull(mask, &end, 16);
	if (end == mask || *end || errno || m == 0)
		return false;
	for (unsigned i = 0; i < 64; i++)
		if (m >> i & 1) {
			s.has.resize(i + 1, false);
			s.has[i] = true;
		}
	*set = s;
	return true;
}

LcoreSet lcore_set_from_eal_args(int argc, char *const *argv)
{
	LcoreSet s;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = nullptr;
		bool mask = false;
		if ((strcmp(a, "-l") == 0 || strcmp(a, "--lcores") == 0) && i + 1 < argc)
			v = argv[++i];
		else if (strncmp(a, "-l", 2) == 0 && a[2])
			v = a + 2;
		else if (strcmp(a, "-c") == 0 && i + 1 < argc) {
			v = argv[++i];
			mask = true;
		}
		/* --lcores with '@' or '(' groups maps lcores to CPUs: its lcore ids are the
		 * numbers before '@'; not parsed here, the check then happens after EAL starts. */
		if (v && strpbrk(v, "@()") == nullptr) {
			LcoreSet t;
			if (mask ? lcore_set_from_mask(v, &t) : lcore_set_from_list(v, &t))
				s = t;
		}
	}
	return s;
}

int config_load(const std::string &path, const LcoreSet &lcores, PipelineConf *out, std::string *err)
{
	libconfig::Config cfg;
	try {
		cfg.readFile(path.c_str());
	} catch (const libconfig::FileIOException &) {
		*err = path + ": cannot read the file: " + strerror(errno ? errno : EIO);
		return -1;
	} catch (const libconfig::ParseException &e) {
		*err = std::string(e.getFile() ? e.getFile() : path.c_str()) + ":" + std::to_string(e.getLine()) + ": " +
		       e.getError() + " (libconfig syntax: name = value; groups { }, lists ( ), arrays [ ])";
		return -1;
	}
	PipelineConf c;
	c.file = path;
	Reader r(path, err);
	const Setting &root = cfg.getRoot();
	bool ok = false;
	try {
		if (!root.exists("version")) {
			r.fail_at(1, "version", "missing: the file must start with version = " + std::to_string(kConfigVersion) + ";");
		} else if (root["version"].getType() != Setting::TypeInt ||
			   as_ll(root["version"]) != kConfigVersion) {
			r.fail(root["version"], "this rdmapipe reads schema version " + std::to_string(kConfigVersion));
		} else {
			c.version = kConfigVersion;
			ok = r.keys(root, kRootKeys, &c.keys) && read_devices(r, root, &c) && read_pools(r, root, &c) &&
			     read_io_contexts(r, root, lcores, &c) && read_flows(r, root, &c) && read_rings(r, root, &c) &&
			     read_stages(r, root, lcores, &c) && read_run(r, root, &c) && read_pattern(r, root, &c);
		}
	} catch (const libconfig::ConfigException &e) {
		/* Every access above is checked first; this is a bug, but still not a crash. */
		*err = path + ": internal error reading the configuration: " + e.what();
		return -1;
	}
	/* The checks across keys that come before the reader's first refusal, if any. */
	if (conf_validate_before(&c, r.failed_pos(), err) != 0 || !ok)
		return -1;
	*out = std::move(c);
	return 0;
}

} // namespace rp
