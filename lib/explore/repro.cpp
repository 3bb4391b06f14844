/* repro.h: the point's pipeline as the template's #defines. */
#include "explore/repro.h"

#include "explore/point_conf.h"
#include "repro_template.inc"   // built from repro_template.c (meson.build)

#include <cctype>
#include <sstream>

namespace rp::explore {

namespace {

/* The settings the template models, applied to the default base pipeline (one loopback
 * flow, copied `flows` times); a point with any other is refused by its name. */
const char *const kModelled[] = {"verb", "transport", "size", "qps", "flows", "placement", "batch", "signal_every",
				 "sq_depth", "window", "inline", "fence", "recv_queue", "device", "post_api", "cq_api",
				 "poll", "rate", "reliability"};

constexpr uint32_t kMaxChain = 64;   // repro_template.c's WRs per ibv_post_send

std::string get(const Settings &set, const std::string &k)
{
	for (const auto &[key, v] : set)
		if (key == k)
			return v;
	return "";
}

bool modelled(const std::string &k)
{
	for (const char *m : kModelled)
		if (k == m)
			return true;
	return false;
}

std::string refuse(std::string *refused, const std::string &why)
{
	*refused = why;
	return "";
}

/* The io context of the lcore where f's end (requester or responder) runs. */
const IoContextConf *end_io(const PipelineConf &c, const FlowConf &f, FlowEnd end)
{
	for (const StageConf &st : c.stages)
		if (st.flow == f.name && st.kind && st.kind->end == end)
			for (const IoContextConf &io : c.io_contexts)
				if (io.lcore == st.lcore)
					return &io;
	return nullptr;
}

/* "V_WRITE_IMM": the template's enum names the verbs as lib/conf spells them. */
std::string verb_enum(Verb v)
{
	std::string e = "V_";
	for (const char *p = verb_name(v); *p; p++)
		e += static_cast<char>(toupper(static_cast<unsigned char>(*p)));
	return e;
}

/* What the template cannot do with flow f, named; "" when it can. */
std::string unmodelled(const FlowConf &f, const IoContextConf &a, const IoContextConf &b)
{
	const bool reliable = f.transport == Transport::uc && f.reliability != Reliability::none;
	if (reliable)
		return "reliability = software (rdmapipe's software retransmission over UC)";
	if (f.sizes.size() != 1)
		return "size (a list of sizes is not modelled)";
	if (f.batch > kMaxChain)
		return "batch = " + std::to_string(f.batch) + " (repro_template.c chains at most 64 WRs)";
	/* The builder's flow window (graph_plan): one window over the flow's QPs. */
	const bool shareable = verb_consumes_receive(f.verb) && !b.rq_per_qp;
	const uint32_t fw = f.flow_window_given ? f.flow_window : default_flow_window(shareable, f.window_given, f.qps, f.window);
	if (fw)
		return "flow_window = " + std::to_string(fw) + " (one window over the flow's " + std::to_string(f.qps) +
		       " QPs, the engine's at qps x window over 1024: repro_template.c keeps a window per QP)";
	if (a.adaptive_poll != b.adaptive_poll || a.cq_api != b.cq_api)
		return "poll, cq_api (the two ends' io contexts differ: repro.c polls both ends alike)";
	return "";
}

/* Flow f as the template's fields, all but its QPs and flows; "" with *refused. */
std::string flow_fields(const PipelineConf &c, const FlowConf &f, std::string *refused)
{
	const IoContextConf *a = end_io(c, f, FlowEnd::requester), *b = end_io(c, f, FlowEnd::responder);
	if (!a || !b)
		return refuse(refused, "flow " + f.name + " (not one requester and one responder with io contexts)");
	if (const std::string why = unmodelled(f, *a, *b); !why.empty())
		return refuse(refused, why);
	std::ostringstream o;
	o << ".verb = " << verb_enum(f.verb) << ", .uc = " << (f.transport == Transport::uc) << ", .size = " << f.sizes[0]
	  << ", .batch = " << f.batch << ", .signal_every = " << f.signal_every << ", .sq_depth = " << f.sq_depth
	  << ", .window = " << f.window << ", .inline_send = " << f.inline_send << ", .fence = " << f.fence
	  << ", .srq = " << !b->rq_per_qp << ", .post_wr = " << (f.post_api == PostApi::wr)
	  << ", .cq_ex = " << (a->cq_api == CqApi::ex) << ", .adaptive_poll = " << a->adaptive_poll << ", .rate = " << f.rate_pps
	  << ", .dev_a = \"" << a->device << "\", .dev_b = \"" << b->device << "\"";
	return o.str();
}

} // namespace

std::string repro_params(const PipelineConf &c, const Settings &set, const char *name, std::string *refused)
{
	for (const auto &[k, v] : set)
		if (!modelled(k))
			return refuse(refused, k + " = " + v + " (not modelled by repro_template.c)");
	if (c.flows.empty())
		return refuse(refused, "flows (the pipeline has none)");
	const std::string first = flow_fields(c, c.flows[0], refused);
	if (first.empty())
		return "";
	/* Every flow its own QPs, all in one process as rdmapipe's one lcore pair: the
	 * flows must be copies of one (crossing between two devices makes them run both ways). */
	uint32_t qps = 0;
	for (const FlowConf &f : c.flows) {
		const std::string fields = flow_fields(c, f, refused);
		if (fields.empty())
			return "";
		if (fields != first || f.qps != c.flows[0].qps)
			return refuse(refused, get(set, "placement") == "crossing"
						       ? "placement = crossing (flows both ways between two devices not modelled)"
						       : "flows (flow " + f.name + " runs other traffic than " + c.flows[0].name + ")");
		qps += f.qps;
	}
	std::ostringstream o;
	o << "{ .name = \"" << name << "\", " << first << ", .qps = " << qps << ", .flows = " << c.flows.size() << " }";
	return o.str();
}

std::string repro_defines(const Space &s, const Finding &f, const ReproConfs &confs, std::string *refused)
{
	if (!s.pipeline.empty())
		return refuse(refused, "pipeline = " + s.pipeline + " (a base pipeline file's other settings are not modelled)");
	if (!confs.point)
		return refuse(refused, "the minimal point's pipeline (not read)");
	const std::string pt = repro_params(*confs.point, point_settings(s, f.minimal), "point", refused);
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
		if (f.verdict.ref_point.empty())
			return refuse(refused, "reference (the verdict names no reference point)");
		if (!confs.reference)
			return refuse(refused, "reference (its pipeline was not read)");
		const std::string ref = repro_params(*confs.reference, point_settings(s, f.verdict.ref_point), "reference", refused);
		if (ref.empty())
			return refuse(refused, "reference: " + *refused);
		o << "#define RP_KIND K_PERFORMANCE\n#define RP_REFERENCE " << ref << "\n";
		o << "#define RP_PERF_FLAG " << s.search.perf_flag << "\n";
		break;
	}
	case AnomalyKind::counters:
		o << "#define RP_KIND K_COUNTERS\n#define RP_COUNTER \"" << f.verdict.counter << "\"\n";
		o << "#define RP_COUNTER_FLAG " << f.verdict.reference << "\n";
		break;
	default:
		o << "#define RP_KIND K_CORRECTNESS\n";
		break;
	}
	return o.str();
}

std::string finding_failure(const Finding &f)
{
	if (f.verdict.kind == AnomalyKind::performance)
		return "slow";
	if (f.verdict.kind == AnomalyKind::counters)
		return "counter";
	const Outcome &o = f.minimal_outcome;
	if (o.status == RunStatus::hung || o.status == RunStatus::host_hung)
		return "hang";   // a host that stopped answering: its repro.c's runs are bounded as a hang
	if (o.status == RunStatus::crashed)
		return "crash";
	/* The engine's failure reasons (lib/engine: "stalled: ...", "gave up: ...", the
	 * receiver's mismatches and counts): the only account of it the results carry. */
	const auto says = [&](const char *w) { return o.failure.find(w) != std::string::npos; };
	if (says("stalled") || says("gave up"))
		return "stall";
	if (says("completion error"))
		return "completion";
	if (says("mismatch") || says("messages verified") || says("bad message") || says("sequence") || says("payload"))
		return "data";
	return "";
}

std::string repro_failure(int rc, const std::string &line)
{
	if (rc == 0)
		return "";
	if (rc == 124 || rc == 128 + 9)
		return "hang";
	if (rc > 128)
		return "crash";
	const size_t colon = line.find(':');
	return colon == std::string::npos ? "error" : line.substr(0, colon);
}

bool repro_shows(const std::string &finding, const std::string &repro)
{
	const auto no_progress = [](const std::string &k) { return k == "hang" || k == "stall"; };
	if (finding.empty())
		return repro != "slow" && repro != "counter" && !repro.empty();
	return repro == finding || (no_progress(finding) && no_progress(repro));
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
