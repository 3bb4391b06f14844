#include "conf/config.h"
#include "capture/pcap_writer.h"

#include <libconfig.h++>

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

namespace rp {

namespace {

using libconfig::Setting;

/* libconfig converts between number types only with AutoConvert, which would also
 * let 1.5 pass as an integer: read each type as what it is. */
long long as_ll(const Setting &s)
{
	if (s.getType() == Setting::TypeInt)
		return static_cast<int>(s);
	return static_cast<long long>(s);
}

double as_double(const Setting &s)
{
	return s.getType() == Setting::TypeFloat ? static_cast<double>(s) : static_cast<double>(as_ll(s));
}

/* Reads one file's settings, remembering the first error with its place. */
class Reader {
public:
	Reader(std::string file, std::string *err) : file_(std::move(file)), err_(err) {}

	bool failed() const { return failed_; }

	bool fail(const Setting &s, const std::string &msg)
	{
		return fail_at(static_cast<int>(s.getSourceLine()), s.isRoot() ? std::string("(top)") : s.getPath(), msg);
	}

	bool fail_at(int line, const std::string &path, const std::string &msg)
	{
		if (!failed_) {
			*err_ = file_ + ":" + std::to_string(line) + ": " + path + ": " + msg;
			failed_ = true;
		}
		return false;
	}

	/* Every key of `group` must be one of `known`. */
	bool keys(const Setting &group, const std::vector<std::string> &known)
	{
		for (int i = 0; i < group.getLength(); i++) {
			const Setting &c = group[i];
			std::string name = c.getName() ? c.getName() : "";
			if (std::find(known.begin(), known.end(), name) != known.end())
				continue;
			std::string hint = closest_name(name, known);
			return fail(c, "unknown setting" + (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"));
		}
		return true;
	}

	const Setting *find(const Setting &group, const char *key)
	{
		return group.exists(key) ? &group[key] : nullptr;
	}

	bool missing(const Setting &group, const char *key)
	{
		return fail(group, std::string("missing setting '") + key + "'");
	}

	/* Integer in lo..hi: a number, or a string with a K/M/G suffix ("64K"). */
	bool uint(const Setting &group, const char *key, uint64_t lo, uint64_t hi, uint64_t *out, bool required = false)
	{
		const Setting *s = find(group, key);
		if (s == nullptr)
			return required ? missing(group, key) : true;
		uint64_t v = 0;
		if (s->getType() == Setting::TypeInt || s->getType() == Setting::TypeInt64) {
			long long x = as_ll(*s);
			if (x < 0 || static_cast<uint64_t>(x) < lo || static_cast<uint64_t>(x) > hi)
				return fail(*s, std::to_string(x) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
			v = static_cast<uint64_t>(x);
		} else if (s->getType() == Setting::TypeString) {
			const char *str = *s;
			if (!parse_size(str, 0, UINT64_MAX, &v))
				return fail(*s, std::string("'") + str + "' is not an integer (K, M, G suffixes allowed)");
			if (v < lo || v > hi)
				return fail(*s, std::string(str) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
		} else {
			return fail(*s, "expected an integer");
		}
		*out = v;
		return true;
	}

	template <typename T>
	bool uint_as(const Setting &group, const char *key, uint64_t lo, uint64_t hi, T *out, bool required = false)
	{
		uint64_t v = *out;
		if (!uint(group, key, lo, hi, &v, required))
			return false;
		*out = static_cast<T>(v);
		return true;
	}

	bool seconds(const Setting &group, const char *key, double *out, bool allow_zero = true)
	{
		const Setting *s = find(group, key);
		if (s == nullptr)
			return true;
		if (!s->isNumber())
			return fail(*s, "expected a number of seconds");
		double v = as_double(*s);
		if (!std::isfinite(v) || v < 0 || (!allow_zero && v == 0) || v > 1e6)
			return fail(*s, std::to_string(v) + " is not a number of seconds in " + (allow_zero ? "[0" : "(0") + ", 1e6]");
		*out = v;
		return true;
	}

	bool boolean(const Setting &group, const char *key, bool *out)
	{
		const Setting *s = find(group, key);
		if (s == nullptr)
			return true;
		if (s->getType() != Setting::TypeBoolean)
			return fail(*s, "expected true or false");
		*out = *s;
		return true;
	}

	bool string(const Setting &group, const char *key, std::string *out, bool required = false)
	{
		const Setting *s = find(group, key);
		if (s == nullptr)
			return required ? missing(group, key) : true;
		if (s->getType() != Setting::TypeString)
			return fail(*s, "expected a string");
		*out = static_cast<const char *>(*s);
		if (out->empty())
			return fail(*s, "must not be empty");
		return true;
	}

	/* One of `names` (a string); *index gets its position. */
	bool choice(const Setting &group, const char *key, const std::vector<std::string> &names, int *index,
		    bool required = false)
	{
		std::string v;
		const Setting *s = find(group, key);
		if (s == nullptr)
			return required ? missing(group, key) : true;
		if (!string(group, key, &v))
			return false;
		for (size_t i = 0; i < names.size(); i++)
			if (names[i] == v) {
				*index = static_cast<int>(i);
				return true;
			}
		std::string all;
		for (const std::string &n : names)
			all += (all.empty() ? "" : ", ") + n;
		std::string hint = closest_name(v, names);
		return fail(*s, "'" + v + "' is not one of " + all + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
	}

	/* A string, or a list/array of strings. */
	bool names(const Setting &group, const char *key, std::vector<std::string> *out, const std::string &what = "ring name")
	{
		const Setting *s = find(group, key);
		if (s == nullptr)
			return true;
		if (s->getType() == Setting::TypeString) {
			std::string v;
			if (!string(group, key, &v))
				return false;
			out->push_back(v);
			return true;
		}
		if (!s->isArray() && !s->isList())
			return fail(*s, "expected a " + what + " or a list of " + what + "s");
		for (int i = 0; i < s->getLength(); i++) {
			const Setting &e = (*s)[i];
			if (e.getType() != Setting::TypeString || static_cast<const char *>(e)[0] == '\0')
				return fail(e, "expected a " + what + " (a string)");
			out->push_back(static_cast<const char *>(e));
		}
		return true;
	}

	/* A list of groups, possibly absent (then `required` says whether that is an error). */
	const Setting *list(const Setting &root, const char *key, bool required)
	{
		const Setting *s = find(root, key);
		if (s == nullptr) {
			if (required)
				missing(root, key);
			return nullptr;
		}
		if (!s->isList()) {
			fail(*s, "expected a list of groups: ( { ... }, { ... } )");
			return nullptr;
		}
		for (int i = 0; i < s->getLength(); i++)
			if (!(*s)[i].isGroup()) {
				fail((*s)[i], "expected a group { ... }");
				return nullptr;
			}
		return s;
	}

private:
	std::string file_;
	std::string *err_;
	bool failed_ = false;
};

const std::vector<std::string> kRootKeys = {"version", "devices", "pools", "io_contexts", "flows", "rings", "stages", "run",
					    "pattern"};
const std::vector<std::string> kPatternKeys = {"kind", "flows", "root", "pairs", "devices", "port", "bw_flag", "lat_flag",
					       "timeout"};
const std::vector<std::string> kPatternKinds = {"pairs", "ring", "all_to_all", "incast", "list"};
const std::vector<std::string> kDeviceKeys = {"name", "port", "gid_index"};
const std::vector<std::string> kPoolKeys = {"name", "elt_size", "count", "cache"};
const std::vector<std::string> kIoKeys = {"lcore", "device", "send_cq", "recv_cq", "srq", "srq_refill", "recv_queue", "poll", "cq_api"};
const std::vector<std::string> kFlowKeys = {"name", "peer", "listen", "local", "transport", "qps", "verb", "size", "sizes", "batch",
					    "signal_every", "sq_depth", "window", "inline", "rate", "messages",
					    "duration", "verify", "pool", "share_qps", "echoed", "post_api", "fence",
					    "rnr_retry", "retry_cnt", "min_rnr_timer", "reliability", "ack_every", "ack_us", "inject_loss", "chunk",
					    "flow_window"};
const std::vector<std::string> kRingKeys = {"name", "size", "multi_producer", "multi_consumer"};
const std::vector<std::string> kStageKeys = {"name", "kind", "lcore", "flow", "input", "output", "file", "snaplen"};
const std::vector<std::string> kRunKeys = {"duration", "warmup", "stats_period", "output", "connect", "stage_cycles"};
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
constexpr uint32_t kMaxPool = 1u << 24;

bool valid_name(const std::string &n)
{
	if (n.empty() || n.size() > 31)
		return false;
	for (char ch : n)
		if (!(isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-'))
			return false;
	return true;
}

/* The name of element i of a list of groups, unique within the list. */
bool read_name(Reader &r, const Setting &g, std::set<std::string> *seen, std::string *out)
{
	if (!r.string(g, "name", out, true))
		return false;
	if (!valid_name(*out))
		return r.fail(g["name"], "'" + *out + "' is not a name (1..31 letters, digits, '_' or '-')");
	if (!seen->insert(*out).second)
		return r.fail(g["name"], "'" + *out + "' is already used by another element of this list");
	return true;
}

bool ipv4(const std::string &a)
{
	in_addr x;
	return inet_pton(AF_INET, a.c_str(), &x) == 1;
}

/* "loopback" or IPV4:PORT (rdma_cm here speaks IPv4 addresses). */
bool parse_peer(const std::string &p)
{
	if (p == "loopback")
		return true;
	size_t colon = p.rfind(':');
	if (colon == std::string::npos || colon == 0 || colon + 1 == p.size())
		return false;
	uint64_t port;
	return parse_size(p.substr(colon + 1).c_str(), 1, 65535, &port) && ipv4(p.substr(0, colon));
}

bool read_devices(Reader &r, const Setting &root, PipelineConf *c)
{
	const Setting *l = r.list(root, "devices", true);
	if (l == nullptr)
		return false;
	if (l->getLength() == 0)
		return r.fail(*l, "at least one device is needed");
	std::set<std::string> seen;
	for (int i = 0; i < l->getLength(); i++) {
		const Setting &g = (*l)[i];
		DeviceConf d;
		d.line = static_cast<int>(g.getSourceLine());
		if (!r.keys(g, kDeviceKeys) || !read_name(r, g, &seen, &d.name) || !r.uint_as(g, "port", 1, 254, &d.port))
			return false;
		if (const Setting *s = r.find(g, "gid_index")) {
			if (s->getType() == Setting::TypeString && std::string(static_cast<const char *>(*s)) == "auto")
				d.gid_index = -1;
			else if (!r.uint_as(g, "gid_index", 0, 255, &d.gid_index))
				return false;
		}
		c->devices.push_back(d);
	}
	return true;
}

bool read_pools(Reader &r, const Setting &root, PipelineConf *c)
{
	const Setting *l = r.list(root, "pools", false);
	if (l == nullptr)
		return !r.failed();   // each flow then gets a pool of its own, sized by the builder
	std::set<std::string> seen;
	for (int i = 0; i < l->getLength(); i++) {
		const Setting &g = (*l)[i];
		PoolConf p;
		p.line = static_cast<int>(g.getSourceLine());
		p.cache = 256;
		if (!r.keys(g, kPoolKeys) || !read_name(r, g, &seen, &p.name) ||
		    !r.uint_as(g, "elt_size", 8, kMaxMsgBytes, &p.elt_size, true) ||
		    !r.uint_as(g, "count", 1, kMaxPool, &p.count, true) || !r.uint_as(g, "cache", 0, 512, &p.cache))
			return false;
		if (p.cache && p.cache * 3ull / 2 > p.count)
			return r.fail(g["cache"] , "a cache of " + std::to_string(p.cache) + " would strand most of the " +
				       std::to_string(p.count) + " buffers on one lcore (at most count x 2/3)");
		c->pools.push_back(p);
	}
	return true;
}

bool read_io_contexts(Reader &r, const Setting &root, const LcoreSet &lcores, PipelineConf *c)
{
	const Setting *l = r.list(root, "io_contexts", false);
	if (l == nullptr)
		return !r.failed();   // derived per lcore from the stages (cross_check)
	std::set<uint32_t> seen;
	for (int i = 0; i < l->getLength(); i++) {
		const Setting &g = (*l)[i];
		IoContextConf io;
		io.line = static_cast<int>(g.getSourceLine());
		io.srq_given = r.find(g, "srq") != nullptr;   // sizes not given: derived by the builder
		int poll = 0, api = 0, rq = 0;
		if (!r.keys(g, kIoKeys) || !r.uint_as(g, "lcore", 0, kMaxLcore, &io.lcore, true) ||
		    !r.string(g, "device", &io.device, true) || !r.uint_as(g, "send_cq", 1, kMaxCqe, &io.send_cq) ||
		    !r.uint_as(g, "recv_cq", 1, kMaxCqe, &io.recv_cq) || !r.uint_as(g, "srq", 0, kMaxCqe, &io.srq) ||
		    !r.uint_as(g, "srq_refill", 1, kMaxCqe, &io.srq_refill) || !r.choice(g, "recv_queue", {"srq", "qp"}, &rq) ||
		    !r.choice(g, "poll", {"busy", "adaptive"}, &poll) || !r.choice(g, "cq_api", {"classic", "ex"}, &api))
			return false;
		io.adaptive_poll = poll == 1;
		io.cq_api = api == 1 ? CqApi::ex : CqApi::classic;
		if (!lcores.contains(io.lcore))
			return r.fail(g["lcore"], "lcore " + std::to_string(io.lcore) + " is not in the EAL lcore set (-l)");
		if (!seen.insert(io.lcore).second)
			return r.fail(g["lcore"], "lcore " + std::to_string(io.lcore) + " already has an io context (one per lcore)");
		bool dev_ok = false;
		std::vector<std::string> devs;
		for (const DeviceConf &d : c->devices) {
			dev_ok |= d.name == io.device;
			devs.push_back(d.name);
		}
		if (!dev_ok) {
			std::string hint = closest_name(io.device, devs);
			return r.fail(g["device"], "no device named '" + io.device + "' in devices" +
					  (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
		}
		io.rq_per_qp = rq == 1;
		for (const char *k : {"srq", "srq_refill"})
			if (io.rq_per_qp && r.find(g, k))
				return r.fail(g[k], std::string("set, but recv_queue = \"qp\" gives each QP its own receive queue and the lcore no SRQ"));
		if (io.srq == 0 && r.find(g, "srq_refill"))
			return r.fail(g["srq_refill"], "set without an SRQ (srq = 0)");
		if (io.srq && io.srq_refill == 0)
			io.srq_refill = std::max<uint32_t>(1, io.srq / 8);
		if (io.srq_refill > io.srq && io.srq)
			return r.fail(g["srq_refill"], std::to_string(io.srq_refill) + " exceeds the SRQ depth " + std::to_string(io.srq));
		c->io_contexts.push_back(io);
	}
	return true;
}

/* A UC flow's reliability (software unless it says none) and its settings; RC is
 * reliable in the NIC. */
bool read_reliability(Reader &r, const Setting &g, FlowConf *f)
{
	int rel = 0;
	const bool uc = f->transport == Transport::uc;
	if (!r.choice(g, "reliability", {"software", "none"}, &rel) || !r.uint_as(g, "ack_every", 1, kMaxAckEvery, &f->ack_every) ||
	    !r.uint_as(g, "ack_us", 1, kMaxAckUs, &f->ack_us))
		return false;
	if (r.find(g, "reliability") && !uc)
		return r.fail(g["reliability"], "reliability is for transport = \"uc\" (RC is reliable in the NIC)");
	f->reliability = uc && rel == 0 ? Reliability::software : Reliability::none;
	const bool soft = f->reliability == Reliability::software;
	const Setting *rs = r.find(g, "reliability"), *ts = r.find(g, "transport");
	const Setting &at = rs ? *rs : ts ? *ts : g;
	if (soft && !verb_consumes_receive(f->verb))
		return r.fail(at, "software reliability needs a completion at the receiver: use write_imm, send or send_imm, or "
				  "reliability = \"none\" for plain UC writes");
	for (const char *k : {"ack_every", "ack_us"})
		if (r.find(g, k) && !soft)
			return r.fail(g[k], std::string(k) + " is for reliability = \"software\" (transport = \"uc\")");
	if (const Setting *s = r.find(g, "chunk")) {
		if (!r.uint_as(g, "chunk", 0, kMaxChunk, &f->chunk))
			return false;
		if (!soft || !verb_info(f->verb).chunkable)
			return r.fail(*s, "chunk cuts write_imm messages of software reliability (transport = \"uc\"): this flow "
					  "sends none");
	}
	if (const Setting *s = r.find(g, "inject_loss")) {
		if (!s->isNumber())
			return r.fail(*s, "expected a fraction of data WRs (0..0.5)");
		f->inject_loss = as_double(*s);
		if (!(f->inject_loss >= 0 && f->inject_loss <= 0.5))
			return r.fail(*s, "inject_loss is outside 0..0.5");
		if (!uc && f->inject_loss > 0)
			return r.fail(*s, "inject_loss needs transport = \"uc\" (an RC QP cannot skip a message)");
		if (f->post_api == PostApi::wr && !soft && f->inject_loss > 0)
			return r.fail(*s, "inject_loss on plain UC leaves WRs out of ibv_post_send chains (post_api = \"classic\", or software reliability)");
	}
	return true;
}

bool read_flows(Reader &r, const Setting &root, PipelineConf *c)
{
	const Setting *l = r.list(root, "flows", true);
	if (l == nullptr)
		return false;
	std::set<std::string> seen;
	for (int i = 0; i < l->getLength(); i++) {
		const Setting &g = (*l)[i];
		FlowConf f;
		f.line = static_cast<int>(g.getSourceLine());
		f.peer = "loopback";
		int transport = 0, verb = 3;
		if (!r.keys(g, kFlowKeys) || !read_name(r, g, &seen, &f.name) || !r.string(g, "peer", &f.peer) ||
		    !r.choice(g, "transport", {"rc", "uc"}, &transport) || !r.uint_as(g, "qps", 1, kMaxQps, &f.qps) ||
		    !r.choice(g, "verb", kVerbNames, &verb, true) || !r.uint_as(g, "batch", 1, kMaxBatch, &f.batch) ||
		    !r.uint_as(g, "signal_every", 1, kMaxSqDepth / 2, &f.signal_every) ||
		    !r.uint_as(g, "sq_depth", 2, kMaxSqDepth, &f.sq_depth) || !r.uint_as(g, "window", 1, kMaxSlots, &f.window) ||
		    !r.uint_as(g, "flow_window", 0, kMaxSlots, &f.flow_window) ||
		    !r.boolean(g, "inline", &f.inline_send) || !r.uint(g, "messages", 1, UINT64_MAX >> 1, &f.messages) ||
		    !r.seconds(g, "duration", &f.duration_s) || !r.boolean(g, "verify", &f.verify) ||
		    !r.string(g, "pool", &f.pool) || !r.boolean(g, "share_qps", &f.share_qps) ||
		    !r.boolean(g, "echoed", &f.echoed) || !r.boolean(g, "fence", &f.fence) || !r.uint_as(g, "rnr_retry", 0, 7, &f.rnr_retry) || !r.uint_as(g, "retry_cnt", 0, 7, &f.retry_cnt) ||
		    !r.uint_as(g, "min_rnr_timer", 0, 31, &f.min_rnr_timer))
			return false;
		int post_api = 0;
		if (!r.choice(g, "post_api", {"classic", "wr"}, &post_api))
			return false;
		f.post_api = post_api ? PostApi::wr : PostApi::classic;
		f.transport = transport == 1 ? Transport::uc : Transport::rc;
		f.verb = kVerbs[verb].verb;
		if (!parse_peer(f.peer))
			return r.fail(g["peer"], "'" + f.peer + "' is not \"loopback\" or IPV4:PORT");
		/* The far end of a two-host flow: this host either names the server (peer) or is
		 * the server (listen). */
		if (!r.string(g, "listen", &f.listen) || !r.string(g, "local", &f.local))
			return false;
		if (!f.listen.empty()) {
			if (r.find(g, "peer"))
				return r.fail(g["listen"], "give peer (this host is the client) or listen (it is the server), not both");
			std::string l = f.listen.find(':') == std::string::npos ? "0.0.0.0:" + f.listen : f.listen;
			if (l[0] == ':')
				l = "0.0.0.0" + l;
			if (!parse_peer(l))
				return r.fail(g["listen"], "'" + f.listen + "' is not [IPV4:]PORT");
			f.peer = "";
		}
		if (!f.local.empty() && !ipv4(f.local))
			return r.fail(g["local"], "'" + f.local + "' is not an IPv4 address");
		if (!f.local.empty() && (f.peer.empty() || f.peer == "loopback"))
			return r.fail(g["local"], "the client's own address goes with peer = \"HOST:PORT\"");
		if (f.transport == Transport::uc && !verb_info(f.verb).uc)
			return r.fail(g["transport"], std::string("UC has no ") + verb_name(f.verb) + " (RC only)");
		/* Two hosts: each end's settings act where it runs. */
		if (const Setting *s = r.find(g, "inject_loss"); s && !f.listen.empty())
			return r.fail(*s, "inject_loss acts where the flow sends: this host is its server (listen), set it on the client");
		for (const char *k : {"ack_every", "ack_us"})
			if (r.find(g, k) && !f.peer.empty() && f.peer != "loopback")
				return r.fail(g[k], std::string(k) + " is the receiver's: the server (listen) sends the ACKs, set it there");
		/* size = N, or sizes = [N, ...] used in turn; not both. */
		if (r.find(g, "size") && r.find(g, "sizes"))
			return r.fail(g["sizes"], "give size or sizes, not both");
		if (r.find(g, "size")) {
			if (!r.uint_as(g, "size", 1, kMaxMsgBytes, &f.sizes[0]))
				return false;
		} else if (const Setting *s = r.find(g, "sizes")) {
			if (!s->isArray() && !s->isList())
				return r.fail(*s, "expected a list of sizes [64, 4096]");
			if (s->getLength() == 0 || s->getLength() > 64)
				return r.fail(*s, "expected 1..64 sizes");
			f.sizes.clear();
			for (int k = 0; k < s->getLength(); k++) {
				const Setting &e = (*s)[k];
				if (e.getType() != Setting::TypeInt && e.getType() != Setting::TypeInt64)
					return r.fail(e, "expected an integer");
				long long v = as_ll(e);
				if (v < 1 || v > kMaxMsgBytes)
					return r.fail(e, std::to_string(v) + " is outside 1.." + std::to_string(kMaxMsgBytes));
				f.sizes.push_back(static_cast<uint32_t>(v));
			}
		}
		if (const uint32_t fixed = verb_info(f.verb).fixed_bytes; fixed && (f.sizes.size() != 1 || f.sizes[0] != fixed)) {
			if (r.find(g, "size") || r.find(g, "sizes"))
				return r.fail(g[r.find(g, "size") ? "size" : "sizes"], std::string(verb_name(f.verb)) + " works on " +
											   std::to_string(fixed) + "-byte words only");
			f.sizes = {fixed};
		}
		if (const Setting *s = r.find(g, "rate")) {
			if (!s->isNumber())
				return r.fail(*s, "expected messages per second (a number, 0: unlimited)");
			f.rate_pps = as_double(*s);
			if (!std::isfinite(f.rate_pps) || f.rate_pps < 0 || f.rate_pps > 1e9)
				return r.fail(*s, "rate is outside 0..1e9 messages per second");
		}
		if (r.find(g, "messages") && r.find(g, "duration"))
			return r.fail(g["duration"], "give messages or duration, not both");
		if (f.inline_send && !verb_info(f.verb).inlinable)
			return r.fail(g["inline"], std::string(verb_name(f.verb)) + " carries no payload to inline");
		if (!read_reliability(r, g, &f))
			return false;
		f.batch_given = r.find(g, "batch") != nullptr;
		f.signal_given = f.signal_every != 0;
		if (f.signal_every == 0)
			f.signal_every = f.batch;
		f.sq_depth_given = f.sq_depth != 0;
		if (f.sq_depth == 0)
			f.sq_depth = std::min<uint32_t>(kMaxSqDepth, kSqDepthPerUnit * std::max(f.batch, f.signal_every));
		/* A signalled WR every N frees the queue in steps of N: below 2N the sender waits on
		 * a completion it has not asked for. */
		if (f.sq_depth < 2ull * f.signal_every)
			return r.fail(r.find(g, "sq_depth") ? g["sq_depth"] : g, "send queue depth " + std::to_string(f.sq_depth) +
				       " is below 2 x signal_every (" + std::to_string(2ull * f.signal_every) + ")");
		if (f.sq_depth < f.batch)
			return r.fail(r.find(g, "sq_depth") ? g["sq_depth"] : g, "send queue depth " + std::to_string(f.sq_depth) +
				       " cannot hold one chain of batch " + std::to_string(f.batch));
		f.window_given = f.window != 0;
		f.flow_window_given = r.find(g, "flow_window") != nullptr;
		if (f.flow_window && f.flow_window < f.batch)
			return r.fail(g["flow_window"], std::to_string(f.flow_window) + " is below batch " + std::to_string(f.batch) +
				       ": a chain would not fit the flow's window");
		if (f.window == 0)
			f.window = std::max(f.batch, kDefaultWindow / f.qps);
		if (f.window < f.batch)
			return r.fail(g["window"], std::to_string(f.window) + " is below batch " + std::to_string(f.batch) +
				       ": a chain would not fit the receive window");
		uint64_t window_bytes = static_cast<uint64_t>(f.window) * f.max_size() * f.qps;
		if (window_bytes > (1ull << 31))
			return r.fail(g, "window x size x qps is " + std::to_string(window_bytes) +
					 " bytes; the receiver's memory for a flow is limited to 2 GiB");
		c->flows.push_back(f);
	}
	uint64_t total = 0;
	for (const FlowConf &f : c->flows)
		total += f.qps;
	if (c->flows.size() > kMaxFlows)
		return r.fail(*l, std::to_string(c->flows.size()) + " flows; at most " + std::to_string(kMaxFlows));
	if (total > kMaxQps)
		return r.fail(*l, std::to_string(total) + " QPs in all flows; at most " + std::to_string(kMaxQps));
	return true;
}

bool read_rings(Reader &r, const Setting &root, PipelineConf *c)
{
	const Setting *l = r.list(root, "rings", false);
	if (l == nullptr)
		return !r.failed();
	std::set<std::string> seen;
	for (int i = 0; i < l->getLength(); i++) {
		const Setting &g = (*l)[i];
		RingConf ring;
		ring.line = static_cast<int>(g.getSourceLine());
		if (!r.keys(g, kRingKeys) || !read_name(r, g, &seen, &ring.name) ||
		    !r.uint_as(g, "size", 2, kMaxRing, &ring.size) || !r.boolean(g, "multi_producer", &ring.multi_producer) ||
		    !r.boolean(g, "multi_consumer", &ring.multi_consumer))
			return false;
		if (ring.size & (ring.size - 1))
			return r.fail(g["size"], std::to_string(ring.size) + " is not a power of two (rte_ring sizes are)");
		c->rings.push_back(ring);
	}
	return true;
}

template <typename T>
std::vector<std::string> names_of(const std::vector<T> &v)
{
	std::vector<std::string> n;
	for (const T &x : v)
		n.push_back(x.name);
	return n;
}

/* "a gen stage", "an echo stage". */
std::string a_stage(StageKind k)
{
	return std::string(stage_kind(k).article) + " " + stage_kind_name(k) + " stage";
}

std::vector<std::string> stage_kind_names()
{
	std::vector<std::string> n;
	for (const StageKindInfo &k : kStageKinds)
		n.push_back(k.name);
	return n;
}

bool unknown_ref(Reader &r, const Setting &s, const char *what, const std::string &name, const std::vector<std::string> &known)
{
	std::string hint = closest_name(name, known);
	return r.fail(s, std::string("no ") + what + " named '" + name + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
}

bool read_stages(Reader &r, const Setting &root, const LcoreSet &lcores, PipelineConf *c)
{
	const Setting *l = r.list(root, "stages", true);
	if (l == nullptr)
		return false;
	if (l->getLength() == 0)
		return r.fail(*l, "at least one stage is needed");
	std::set<std::string> seen;
	const std::vector<std::string> rings = names_of(c->rings), flows = names_of(c->flows);
	for (int i = 0; i < l->getLength(); i++) {
		const Setting &g = (*l)[i];
		StageConf st;
		st.line = static_cast<int>(g.getSourceLine());
		int kind = 0;
		if (!r.keys(g, kStageKeys) || !read_name(r, g, &seen, &st.name) || !r.choice(g, "kind", stage_kind_names(), &kind, true) ||
		    !r.uint_as(g, "lcore", 0, kMaxLcore, &st.lcore, true) || !r.string(g, "flow", &st.flow) ||
		    !r.names(g, "input", &st.inputs) || !r.names(g, "output", &st.outputs) || !r.string(g, "file", &st.file) ||
		    !r.uint_as(g, "snaplen", 1, kCaptureSnaplenMax, &st.snaplen))
			return false;
		st.kind = static_cast<StageKind>(kind);
		if (!lcores.contains(st.lcore))
			return r.fail(g["lcore"], "lcore " + std::to_string(st.lcore) + " is not in the EAL lcore set (-l)");
		for (auto *v : {&st.inputs, &st.outputs})
			for (const std::string &n : *v)
				if (std::find(rings.begin(), rings.end(), n) == rings.end())
					return unknown_ref(r, g[v == &st.inputs ? "input" : "output"], "ring", n, rings);
		const StageKindInfo &kind_info = stage_kind(st.kind);
		if (kind_info.needs_flow && st.flow.empty())
			return r.fail(g, a_stage(st.kind) + " needs a flow");
		if (!kind_info.needs_flow && !st.flow.empty())
			return r.fail(g["flow"], a_stage(st.kind) + " takes no flow");
		if (!st.flow.empty() && std::find(flows.begin(), flows.end(), st.flow) == flows.end())
			return unknown_ref(r, g["flow"], "flow", st.flow, flows);
		if (kind_info.writes_file && st.file.empty())
			return r.fail(g, a_stage(st.kind) + " needs a file (the capture file it writes)");
		for (const char *key : {"file", "snaplen"})
			if (!kind_info.writes_file && r.find(g, key))
				return r.fail(g[key], a_stage(st.kind) + " takes no " + key + " (a capture stage writes a file)");
		/* What each kind reads and writes. */
		if (!kind_info.in.fits(st.inputs.size()))
			return r.fail(r.find(g, "input") ? g["input"] : g, a_stage(st.kind) + " takes " + ring_count_text(kind_info.in, true));
		if (!kind_info.out.fits(st.outputs.size()))
			return r.fail(r.find(g, "output") ? g["output"] : g, a_stage(st.kind) + " takes " + ring_count_text(kind_info.out, false));
		c->stages.push_back(st);
	}
	return true;
}

bool read_run(Reader &r, const Setting &root, PipelineConf *c)
{
	const Setting *g = r.find(root, "run");
	if (g == nullptr)
		return true;
	if (!g->isGroup())
		return r.fail(*g, "expected a group { ... }");
	if (!r.keys(*g, kRunKeys) || !r.seconds(*g, "duration", &c->run.duration_s) || !r.seconds(*g, "warmup", &c->run.warmup_s) ||
	    !r.seconds(*g, "stats_period", &c->run.stats_period_s))
		return false;
	int connect = 0;
	if (!r.choice(*g, "connect", {"cm", "direct"}, &connect) || !r.boolean(*g, "stage_cycles", &c->run.stage_cycles))
		return false;
	c->run.connect = connect ? ConnectPath::direct : ConnectPath::cm;
	if (const Setting *o = r.find(*g, "output")) {
		if (!o->isGroup())
			return r.fail(*o, "expected a group { json = \"FILE\"; csv = \"FILE\"; }");
		if (!r.keys(*o, kOutputKeys) || !r.string(*o, "json", &c->run.json) || !r.string(*o, "csv", &c->run.csv))
			return false;
	}
	if (c->run.warmup_s > 0 && c->run.duration_s > 0 && c->run.warmup_s >= c->run.duration_s)
		return r.fail((*g)["warmup"], "the warm-up must be shorter than the run's duration");
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

/* The traffic pattern over an MPI job's ranks (docs/cluster.md). Rank counts are
 * known only when the job runs: what depends on them (incast's root, a listed pair's
 * ranks) is checked then (pattern_pairs). */
bool read_pattern(Reader &r, const Setting &root, PipelineConf *c)
{
	const Setting *g = r.find(root, "pattern");
	if (g == nullptr)
		return true;
	PatternConf &p = c->pattern;
	p.line = static_cast<int>(g->getSourceLine());
	if (!g->isGroup())
		return r.fail(*g, "expected a group { kind = \"ring\"; ... }");
	int kind = 0;
	if (!r.keys(*g, kPatternKeys) || !r.choice(*g, "kind", kPatternKinds, &kind, true) ||
	    !r.names(*g, "flows", &p.flows, "flow name") || !r.uint_as(*g, "root", 0, 1u << 24, &p.root) ||
	    !r.names(*g, "devices", &p.devices, "device name") || !r.uint_as(*g, "port", 1, 65535, &p.port) ||
	    !real(r, *g, "bw_flag", 0, 1, &p.bw_flag) || !real(r, *g, "lat_flag", 1, 1e6, &p.lat_flag) ||
	    !r.seconds(*g, "timeout", &p.timeout_s, false))
		return false;
	p.kind = static_cast<PatternKind>(kind + 1);
	if (r.find(*g, "root") && p.kind != PatternKind::incast)
		return r.fail((*g)["root"], "root is incast's receiver; this pattern is " + kPatternKinds[static_cast<size_t>(kind)]);
	const Setting *pl = r.find(*g, "pairs");
	if ((pl != nullptr) != (p.kind == PatternKind::list))
		return pl ? r.fail(*pl, "pairs go with kind = \"list\"") : r.missing(*g, "pairs");
	if (pl) {
		if (!pl->isList() && !pl->isArray())
			return r.fail(*pl, "expected a list of [sender, receiver] rank pairs: ( [0, 1], [1, 0] )");
		if (pl->getLength() == 0)
			return r.fail(*pl, "at least one pair is needed");
		for (int i = 0; i < pl->getLength(); i++) {
			const Setting &e = (*pl)[i];
			if (!(e.isArray() || e.isList()) || e.getLength() != 2 || !e[0].isNumber() || !e[1].isNumber() ||
			    e[0].getType() == Setting::TypeFloat || e[1].getType() == Setting::TypeFloat)
				return r.fail(e, "expected [sender, receiver]: two rank numbers");
			const long long a = as_ll(e[0]), b = as_ll(e[1]);
			if (a < 0 || b < 0 || a >= (1 << 24) || b >= (1 << 24))
				return r.fail(e, "a rank is a number in 0..16777215");
			if (a == b)
				return r.fail(e, "rank " + std::to_string(a) + " to itself: a loopback flow does that");
			const RankPair rp{static_cast<uint32_t>(a), static_cast<uint32_t>(b)};
			if (std::find(p.pairs.begin(), p.pairs.end(), rp) != p.pairs.end())
				return r.fail(e, "pair [" + std::to_string(a) + ", " + std::to_string(b) + "] is listed twice");
			p.pairs.push_back(rp);
		}
	}
	const std::vector<std::string> flows = names_of(c->flows);
	for (const std::string &f : p.flows)
		if (std::find(flows.begin(), flows.end(), f) == flows.end())
			return unknown_ref(r, (*g)["flows"], "flow", f, flows);
	if (p.flows.empty())
		p.flows = flows;
	if (r.find(*g, "devices") && p.devices.empty())
		return r.fail((*g)["devices"], "at least one device name is needed");
	return true;
}

/* A pattern's flows, once the sections agree: each is a template the ranks run once
 * per pair, its rdma_tx stage on the sender's lcore and its rdma_rx (or echo) on the
 * receiver's; so no rings (a rank has as many of each stage as it has peers) and no
 * two-host ends of their own. */
bool check_pattern(Reader &r, const Setting &root, PipelineConf *c)
{
	const PatternConf &p = c->pattern;
	if (!p.on())
		return true;
	const Setting &g = root["pattern"];
	for (size_t i = 0; i < c->flows.size(); i++) {
		const FlowConf &f = c->flows[i];
		const Setting &fs = root["flows"][static_cast<int>(i)];
		if (!p.has(f.name)) {   // it runs as it is on every rank: several would take one port or peer
			if (f.peer != "loopback")
				return r.fail(fs[fs.exists("listen") ? "listen" : "peer"], "flow '" + f.name +
					      "' goes between two hosts, and every rank of a job would run it: put it in the pattern");
			continue;
		}
		if (f.peer != "loopback")
			return r.fail(fs[fs.exists("listen") ? "listen" : "peer"], "flow '" + f.name +
				      "' is in the pattern: its peers are the job's ranks, leave out peer and listen");
		for (const StageConf &st : c->stages)
			if (st.flow == f.name && !(st.inputs.empty() && st.outputs.empty()))
				return r.fail(fs, "flow '" + f.name + "' is in the pattern: its stage '" + st.name +
					      "' runs once per peer on each rank, so it takes no rings");
	}
	if (!p.devices.empty()) {
		std::set<std::string> used;
		for (const IoContextConf &io : c->io_contexts)
			used.insert(io.device);
		if (used.size() > 1)
			return r.fail(g["devices"], "devices picks each rank's one device, but the io contexts use " +
				      std::to_string(used.size()) + "; give them one device");
	}
	return true;
}

/* The receives a flow received through an SRQ (`srq`) takes there: its QPs' windows, or
 * the flow window they share (given, or the default; graph_plan refuses what cannot
 * share one). */
uint64_t flow_receives(const FlowConf &f, bool srq)
{
	const uint64_t per_qp = static_cast<uint64_t>(f.qps) * f.window;
	const bool shareable = srq && !(f.transport == Transport::uc && f.reliability == Reliability::software);
	const uint32_t fw = !shareable ? 0 : f.flow_window_given ? f.flow_window : default_flow_window(true, f.window_given, f.qps, f.window);
	if (fw == 0)
		return per_qp;
	return verb_info(f.verb).fills_receive ? fw : std::min<uint64_t>(fw, per_qp);   // a send's QPs each take up to fw
}

/* Checks across sections, once every section read cleanly. */
bool cross_check(Reader &r, const Setting &root, PipelineConf *c)
{
	auto at = [&](const char *list, size_t i, const char *key) -> const Setting & {
		const Setting &g = root[list][static_cast<int>(i)];
		return key && g.exists(key) ? g[key] : g;
	};
	/* Rings: one producer and one consumer stage, unless declared multi. */
	for (size_t i = 0; i < c->rings.size(); i++) {
		const RingConf &ring = c->rings[i];
		std::vector<std::string> prod, cons;
		for (const StageConf &st : c->stages) {
			for (const std::string &n : st.outputs)
				if (n == ring.name)
					prod.push_back(st.name);
			for (const std::string &n : st.inputs)
				if (n == ring.name)
					cons.push_back(st.name);
		}
		auto list = [](const std::vector<std::string> &v) {
			std::string s;
			for (const std::string &x : v)
				s += (s.empty() ? "" : ", ") + x;
			return s;
		};
		if (prod.empty() || cons.empty())
			return r.fail(at("rings", i, nullptr), std::string("ring '") + ring.name + "' has no " +
							 (prod.empty() ? "producer" : "consumer") + " stage");
		if (prod.size() > 1 && !ring.multi_producer)
			return r.fail(at("rings", i, nullptr), "ring '" + ring.name + "' has " + std::to_string(prod.size()) +
							 " producer stages (" + list(prod) + "): declare multi_producer = true, or give each its own ring");
		if (cons.size() > 1 && !ring.multi_consumer)
			return r.fail(at("rings", i, nullptr), "ring '" + ring.name + "' has " + std::to_string(cons.size()) +
							 " consumer stages (" + list(cons) + "): declare multi_consumer = true, or give each its own ring");
	}
	/* An lcore with RDMA stages and no io context gets one on the file's one device,
	 * sized by the builder. */
	for (size_t i = 0; i < c->stages.size(); i++) {
		const StageConf &st = c->stages[i];
		if (!stage_kind(st.kind).needs_io)
			continue;
		bool has_io = false;
		for (const IoContextConf &io : c->io_contexts)
			has_io |= io.lcore == st.lcore;
		if (has_io || c->devices.size() != 1)
			continue;
		IoContextConf io;
		io.lcore = st.lcore;
		io.device = c->devices[0].name;
		io.line = st.line;
		io.derived = true;
		c->io_contexts.push_back(io);
	}
	/* Stages that touch the NIC run on lcores with an io context. */
	for (size_t i = 0; i < c->stages.size(); i++) {
		const StageConf &st = c->stages[i];
		bool rdma = stage_kind(st.kind).needs_io;
		bool has_io = false;
		for (const IoContextConf &io : c->io_contexts)
			has_io |= io.lcore == st.lcore;
		if (rdma && !has_io)
			return r.fail(at("stages", i, "lcore"), a_stage(st.kind) + " needs an io context on lcore " +
							 std::to_string(st.lcore) + " (io_contexts): the file has " + std::to_string(c->devices.size()) +
							 " devices, say which one this lcore uses");
	}
	/* Every flow is posted by exactly one rdma_tx (or echo) stage and received by one rdma_rx. */
	for (size_t i = 0; i < c->flows.size(); i++) {
		const FlowConf &f = c->flows[i];
		unsigned tx = 0, rx = 0, echo = 0;
		for (const StageConf &st : c->stages) {
			if (st.flow != f.name)
				continue;
			const FlowEnd end = stage_kind(st.kind).end;
			tx += end == FlowEnd::requester;
			rx += end == FlowEnd::responder;
			echo += end == FlowEnd::echo;
		}
		/* Who posts and who receives: a loopback flow both here, a client flow posts here
		 * and is received by the server's host, a server flow the other way round. */
		const bool server = !f.listen.empty(), loopback = f.peer == "loopback";
		if (server && (tx != 0 || rx + echo != 1))
			return r.fail(at("flows", i, nullptr), "flow '" + f.name + "' listens (this host is the server): it needs one rdma_rx "
							 "or echo stage and no rdma_tx stage, it has " + std::to_string(rx + echo) + " and " +
							 std::to_string(tx));
		if (f.echoed && (server || loopback))
			return r.fail(at("flows", i, "echoed"), "echoed says a client's flow is echoed by its server on another host; "
								  "here an echo stage says it");
		if (f.echoed && tx != 1)
			return r.fail(at("flows", i, "echoed"), "an echoed flow (a ping-pong) has one rdma_tx stage, flow '" + f.name +
								  "' has " + std::to_string(tx));
		if (!server && tx == 0)
			return r.fail(at("flows", i, nullptr), "flow '" + f.name + "' has no rdma_tx stage; it needs one (or one per lcore that shares it)");
		if (f.share_qps && tx < 2)
			return r.fail(at("flows", i, "share_qps"), "sharing QPs needs two or more rdma_tx stages of flow '" + f.name +
									   "' (on the lcores that share them), it has " + std::to_string(tx));
		/* Several rdma_tx stages (lanes) post RDMA READs to a passive far end: the reads
		 * check their own results. A receiver could not tell interleaved messages apart,
		 * and with no rdma_rx stage nothing would check what writes or atomics left. */
		if (tx > 1 && (server || !loopback || f.verb != Verb::read || rx + echo != 0))
			return r.fail(at("flows", i, nullptr), "flow '" + f.name + "' has " + std::to_string(tx) +
							 " rdma_tx stages (lanes): that takes a loopback flow of RDMA READs (they "
							 "check their own results) and no rdma_rx stage");
		/* Lanes sharing QPs each post to every send queue: a depth left to its default is
		 * each lane's default share. */
		if (f.share_qps && tx > 1 && !f.sq_depth_given)
			c->flows[i].sq_depth = std::min<uint32_t>(kMaxSqDepth, tx * f.sq_depth);
		if (!server && !loopback && rx + echo != 0)
			return r.fail(at("flows", i, nullptr), "flow '" + f.name + "' goes to " + f.peer +
							 ": it is received there, not by an rdma_rx or echo stage here");
		if (loopback && !c->pattern.has(f.name))   // a pattern's two ends are two ranks
			for (const StageConf &a : c->stages)
				for (const StageConf &b : c->stages)
					if (a.flow == f.name && b.flow == f.name && stage_kind(a.kind).end == FlowEnd::requester &&
					    stage_kind(b.kind).end >= FlowEnd::responder && a.lcore == b.lcore)
						return r.fail(at("flows", i, nullptr), "flow '" + f.name + "' has both ends on lcore " +
										 std::to_string(a.lcore) + ": its rdma_tx and " +
										 stage_kind_name(b.kind) + " stages need lcores of their own");
		if (loopback && tx == 1 && rx + echo != 1)
			return r.fail(at("flows", i, nullptr), "loopback flow '" + f.name + "' needs exactly one rdma_rx or echo stage, it has " +
							 std::to_string(rx + echo));
		if ((echo || f.echoed) && !verb_info(f.verb).fills_receive)
			return r.fail(at("flows", i, "verb"), std::string("an echo stage returns sends: flow '") + f.name + "' uses " + verb_name(f.verb));
		bool pool_ok = f.pool.empty();   // none named: a pool of its own, sized by the builder
		for (const PoolConf &p : c->pools)
			if (p.name == f.pool) {
				pool_ok = true;
				if (p.elt_size < f.max_size())
					return r.fail(at("flows", i, "pool"), "pool '" + p.name + "' has " + std::to_string(p.elt_size) +
										      " B buffers, the flow sends up to " + std::to_string(f.max_size()) + " B");
			}
		if (!pool_ok)
			return unknown_ref(r, at("flows", i, "pool"), "pool", f.pool, names_of(c->pools));
	}
	/* Pools hold what their flows keep in flight: a send queue and one chain per QP. */
	for (size_t i = 0; i < c->pools.size(); i++) {
		const PoolConf &p = c->pools[i];
		uint64_t need = 0;
		std::string users;
		for (const FlowConf &f : c->flows)
			if (f.pool == p.name) {
				need += static_cast<uint64_t>(f.qps) * (f.sq_depth + f.batch);
				users += (users.empty() ? "" : ", ") + f.name;
			}
		if (need > p.count)
			return r.fail(at("pools", i, "count"), std::to_string(p.count) + " buffers cannot hold the " + std::to_string(need) +
							 " messages in flight of flow(s) " + users + " (qps x (sq_depth + batch))");
	}
	/* CQs that could overflow: a send CQ holds every WR of every QP posting on it (a failed
	 * QP flushes all of them); a receive CQ holds every posted receive. */
	for (size_t i = 0; i < c->io_contexts.size(); i++) {
		const IoContextConf &io = c->io_contexts[i];
		uint64_t send = 0, window = 0;
		bool receives = false;
		for (const StageConf &st : c->stages) {
			if (st.lcore != io.lcore)
				continue;
			for (const FlowConf &f : c->flows) {
				if (f.name != st.flow)
					continue;
				const FlowEnd end = stage_kind(st.kind).end;
				if (end == FlowEnd::requester || end == FlowEnd::echo)
					send += static_cast<uint64_t>(f.qps) * f.sq_depth;
				if ((end == FlowEnd::responder || end == FlowEnd::echo) && verb_consumes_receive(f.verb)) {
					receives = true;
					window += flow_receives(f, end == FlowEnd::responder && !io.rq_per_qp);
				}
			}
		}
		if (io.send_cq && send > io.send_cq)
			return r.fail(at("io_contexts", i, "send_cq"), "a send CQ of " + std::to_string(io.send_cq) + " could overflow: its QPs can have " +
								  std::to_string(send) + " work requests outstanding (qps x sq_depth)");
		if (receives && io.srq == 0 && io.srq_given)
			return r.fail(at("io_contexts", i, nullptr), "lcore " + std::to_string(io.lcore) +
								     " receives messages that consume receives, but its io context has no SRQ (srq = 0; recv_queue = \"qp\" gives each QP its own receive queue instead)");
		if (receives && io.srq && io.srq < window)
			return r.fail(at("io_contexts", i, "srq"), "an SRQ of " + std::to_string(io.srq) + " cannot hold the receive windows of its flows (" +
							      std::to_string(window) + " = qps x window)");
		if (receives && io.rq_per_qp && io.recv_cq && io.recv_cq < window)
			return r.fail(at("io_contexts", i, "recv_cq"), "a receive CQ of " + std::to_string(io.recv_cq) +
									 " could overflow: its QPs' receive queues hold at least " + std::to_string(window) +
									 " receives (qps x window), all of which can complete before a poll");
		if (receives && io.recv_cq && io.recv_cq < io.srq)
			return r.fail(at("io_contexts", i, "recv_cq"), "a receive CQ of " + std::to_string(io.recv_cq) +
									 " could overflow: every one of the SRQ's " + std::to_string(io.srq) +
									 " receives can complete before a poll");
	}
	return true;
}

} // namespace

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
			ok = r.keys(root, kRootKeys) && read_devices(r, root, &c) && read_pools(r, root, &c) &&
			     read_io_contexts(r, root, lcores, &c) && read_flows(r, root, &c) && read_rings(r, root, &c) &&
			     read_stages(r, root, lcores, &c) && read_run(r, root, &c) && read_pattern(r, root, &c) &&
			     cross_check(r, root, &c) && check_pattern(r, root, &c);
		}
	} catch (const libconfig::ConfigException &e) {
		/* Every access above is checked first; this is a bug, but still not a crash. */
		*err = path + ": internal error reading the configuration: " + e.what();
		return -1;
	}
	if (!ok)
		return -1;
	*out = std::move(c);
	return 0;
}

} // namespace rp
