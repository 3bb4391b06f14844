/* repro.h: the point's settings as the template's #defines. */
#include "explore/repro.h"

#include "repro_template.inc"   // built from repro_template.c (meson.build)

#include <cstdlib>
#include <sstream>

namespace rp::explore {

namespace {

const std::map<std::string, std::string> kVerbs = {
	{"write", "V_WRITE"}, {"write_imm", "V_WRITE_IMM"}, {"send", "V_SEND"}, {"send_imm", "V_SEND_IMM"},
	{"read", "V_READ"}, {"fetch_add", "V_FETCH_ADD"}, {"cmp_swap", "V_CMP_SWAP"},
};

std::string get(const std::map<std::string, std::string> &set, const std::string &k, const std::string &dflt)
{
	auto it = set.find(k);
	return it == set.end() ? dflt : it->second;
}

/* A whole number >= 1, else false. */
bool count(const std::string &text, unsigned long *v)
{
	char *end = nullptr;
	*v = strtoul(text.c_str(), &end, 10);
	return !text.empty() && *end == '\0' && *v >= 1;
}

std::string quoted(const std::string &s)
{
	return "\"" + s + "\"";
}

/* A setting that must stay at the one value the template models. */
bool only(const std::map<std::string, std::string> &set, const std::string &k, const std::string &v, const std::string &why,
	  std::string *refused)
{
	const std::string got = get(set, k, v);
	if (got == v)
		return true;
	*refused = k + " = " + got + " (" + why + ")";
	return false;
}

const char *const kModelled[] = {"verb", "transport", "size", "qps", "flows", "placement", "batch", "signal_every",
				 "sq_depth", "window", "inline", "fence", "recv_queue", "device", "post_api", "cq_api",
				 "poll", "rate", "reliability"};

} // namespace

std::map<std::string, std::string> point_settings(const Space &s, const Point &p)
{
	std::map<std::string, std::string> set;
	for (const auto &[k, v] : s.fixed)
		set[k] = v;
	for (size_t d = 0; d < s.dims.size() && d < p.size(); d++)
		set[s.dims[d].name] = s.dims[d].values[p[d]];
	return set;
}

std::string repro_params(const std::map<std::string, std::string> &set, const char *name, std::string *refused)
{
	for (const auto &[k, v] : set) {
		bool known = false;
		for (const char *m : kModelled)
			known = known || k == m;
		if (!known) {
			*refused = k + " = " + v + " (not modelled by repro_template.c)";
			return "";
		}
	}
	if (!only(set, "post_api", "classic", "ibv_wr_* posting not modelled: chained ibv_post_send only", refused) ||
	    !only(set, "cq_api", "classic", "ibv_cq_ex polling not modelled: ibv_poll_cq only", refused) ||
	    !only(set, "poll", "busy", "adaptive polling not modelled: busy polling only", refused) ||
	    !only(set, "rate", "0", "pacing not modelled: as fast as it goes only", refused))
		return "";
	const std::string verb = get(set, "verb", "write_imm"), transport = get(set, "transport", "rc");
	const std::string dev = get(set, "device", "rxe0");
	auto v = kVerbs.find(verb);
	if (v == kVerbs.end()) {
		*refused = "verb = " + verb + " (not modelled by repro_template.c)";
		return "";
	}
	if (transport != "rc" && transport != "uc") {
		*refused = "transport = " + transport + " (only rc and uc)";
		return "";
	}
	/* rdmapipe's UC has software reliability unless told none: the program's UC has none. */
	if (transport == "uc" && get(set, "reliability", "none") != "none") {
		*refused = "reliability = " + get(set, "reliability", "") + " (rdmapipe's software retransmission over UC)";
		return "";
	}
	unsigned long size, qps, flows, batch, sig, sq, win;
	if (!count(get(set, "size", "64"), &size) || !count(get(set, "qps", "1"), &qps) ||
	    !count(get(set, "flows", "1"), &flows) || !count(get(set, "batch", "32"), &batch)) {
		*refused = "size, qps, flows or batch (not one whole number: a list of sizes is not modelled)";
		return "";
	}
	if (batch > 64) {
		*refused = "batch = " + std::to_string(batch) + " (repro_template.c chains at most 64 WRs)";
		return "";
	}
	const size_t gt = dev.find('>');
	const std::string a = dev.substr(0, gt), b = gt == std::string::npos ? a : dev.substr(gt + 1);
	/* Crossing flows on one device are the same traffic; across two they run both ways. */
	if (a != b && !only(set, "placement", "same", "flows both ways between two devices not modelled", refused))
		return "";
	qps *= flows;   // every flow its own QPs, all in one process as rdmapipe's one lcore pair
	// The pipeline's defaults (lib/conf/config.h): signal_every batch, sq_depth 4 x
	// max(batch, signal_every), window 1024 / qps and at least batch.
	if (!count(get(set, "signal_every", std::to_string(batch)), &sig))
		sig = batch;
	if (!count(get(set, "sq_depth", "x"), &sq))
		sq = 4 * std::max(batch, sig);
	if (!count(get(set, "window", "x"), &win))
		win = std::max(1024 / std::max(1ul, qps / flows), batch);
	const bool inl = get(set, "inline", "false") == "true", fence = get(set, "fence", "false") == "true";
	const bool srq = get(set, "recv_queue", "srq") != "qp";
	std::ostringstream o;
	o << "{ " << quoted(name) << ", " << v->second << ", " << (transport == "uc") << ", " << size << ", " << qps << ", "
	  << batch << ", " << sig << ", " << sq << ", " << win << ", " << inl << ", " << fence << ", " << srq << ", "
	  << quoted(a) << ", " << quoted(b) << " }";
	return o.str();
}

std::string repro_defines(const Space &s, const Finding &f, std::string *refused)
{
	const auto set = point_settings(s, f.minimal);
	if (!s.pipeline.empty()) {
		*refused = "pipeline = " + s.pipeline + " (a base pipeline file's other settings are not modelled)";
		return "";
	}
	const std::string pt = repro_params(set, "point", refused);
	if (pt.empty())
		return "";
	std::ostringstream o;
	o << "/* rdmapipe-explore finding " << f.id << " (" << anomaly_kind_name(f.verdict.kind) << "): "
	  << point_text(s, f.minimal) << " */\n";
	o << "#define RP_POINT " << pt << "\n";
	o << "#define RP_SECONDS " << s.search.point_seconds << "\n";
	o << "#define RP_STALL_S " << s.search.stall_timeout_s << "\n";
	switch (f.verdict.kind) {
	case AnomalyKind::performance: {
		if (f.verdict.ref_point.empty()) {
			*refused = "reference (the verdict names no reference point)";
			return "";
		}
		const std::string ref = repro_params(point_settings(s, f.verdict.ref_point), "reference", refused);
		if (ref.empty()) {
			*refused = "reference: " + *refused;
			return "";
		}
		o << "#define RP_KIND K_PERFORMANCE\n#define RP_REFERENCE " << ref << "\n";
		o << "#define RP_PERF_FLAG " << s.search.perf_flag << "\n";
		break;
	}
	case AnomalyKind::counters:
		o << "#define RP_KIND K_COUNTERS\n#define RP_COUNTER " << quoted(f.verdict.counter) << "\n";
		o << "#define RP_COUNTER_FLAG " << f.verdict.reference << "\n";
		break;
	default:
		o << "#define RP_KIND K_CORRECTNESS\n";
		break;
	}
	return o.str();
}

std::string perftest_command(const std::map<std::string, std::string> &set, double seconds)
{
	const std::string verb = get(set, "verb", "write_imm");
	std::string tool;
	if (verb == "write")
		tool = "ib_write_bw";
	else if (verb == "send")
		tool = "ib_send_bw";
	else if (verb == "read")
		tool = "ib_read_bw";
	else if (verb == "fetch_add")
		tool = "ib_atomic_bw -A FETCH_AND_ADD";
	else if (verb == "cmp_swap")
		tool = "ib_atomic_bw -A CMP_AND_SWAP";
	else
		return "";   // the immediates' sequence check has no perftest equivalent
	const std::string dev = get(set, "device", "rxe0");
	if (dev.find('>') != std::string::npos)
		return "";
	std::ostringstream o;
	o << tool << " -d " << dev << " -s " << get(set, "size", "64") << " -q " << get(set, "qps", "1") << " -D "
	  << std::max(1.0, seconds) << " -l " << get(set, "batch", "32");
	if (get(set, "transport", "rc") == "uc")
		o << " -c UC";
	if (get(set, "inline", "false") == "true")
		o << " -I " << get(set, "size", "64");
	if (set.count("signal_every"))
		o << " --cq-mod " << set.at("signal_every");
	if (set.count("sq_depth"))
		o << " -t " << set.at("sq_depth");
	o << "   # server; the client: the same followed by localhost";
	return o.str();
}

const char *repro_template()
{
	return kReproTemplate;
}

std::string repro_source(const std::string &defines)
{
	return defines + "\n" + repro_template();
}

} // namespace rp::explore
