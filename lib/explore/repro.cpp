/* repro.h: the point's pipeline as the template's #defines. */
#include "explore/repro.h"

#include "explore/point_conf.h"
#include "repro_template.inc"   // built from repro_template.c (meson.build)

#include <algorithm>
#include <cctype>
#include <sstream>

namespace rp::explore {

namespace {

/* The settings the template models, applied to the default base pipeline (one loopback
 * flow, copied `flows` times); a point with any other is refused by its name. */
const char *const kModelled[] = {"verb", "transport", "size", "qps", "flows", "placement", "batch", "signal_every",
				 "sq_depth", "window", "inline", "fence", "recv_queue", "device", "post_api", "cq_api",
				 "poll", "rate", "reliability", "flow_window"};

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

/* What the template cannot do with a flow between io contexts a and b, named; "" when it can. */
std::string unmodelled(const IoContextConf &a, const IoContextConf &b)
{
	if (a.adaptive_poll != b.adaptive_poll)
		return "poll (the two ends' io contexts differ: repro.c's one loop cannot sleep one end alone)";
	return "";
}

/* Flow f as the template's fields, all but its devices, QPs and flows; "" with
 * *refused. Its window is the engine's: a send's QPs may each take all of the flow
 * window they share (graph_plan.cpp, plan_flow_window). */
std::string flow_fields(const FlowConf &f, const IoContextConf &a, const IoContextConf &b, std::string *refused)
{
	if (const std::string why = unmodelled(a, b); !why.empty())
		return refuse(refused, why);
	const uint32_t fw = flow_window_of(f, !b.rq_per_qp);
	const uint32_t window = fw && verb_info(f.verb).fills_receive ? fw : f.window;
	std::ostringstream o;
	o << ".verb = " << verb_enum(f.verb) << ", .uc = " << (f.transport == Transport::uc) << ", .size = " << f.sizes[0]
	  << ", .batch = " << f.batch << ", .signal_every = " << f.signal_every << ", .sq_depth = " << f.sq_depth
	  << ", .window = " << window << ", .inline_send = " << f.inline_send << ", .fence = " << f.fence
	  << ", .srq = " << !b.rq_per_qp << ", .post_wr = " << (f.post_api == PostApi::wr)
	  << ", .adaptive_poll = " << a.adaptive_poll << ", .rate = " << f.rate_pps
	  << ", .flow_window = " << fw;
	if (f.sizes.size() > 1) {   // a size sweep: the pipeline once per size, in turn (graph_sweep)
		o << ", .steps = " << f.sizes.size() << ", .sweep = {";
		for (size_t k = 0; k < f.sizes.size(); k++)
			o << (k ? ", " : " ") << f.sizes[k];
		o << " }";
	}
	return o.str();
}

/* An io context's SRQ as the builder sizes it (graph_size.cpp, size_lcore): the windows
 * of the flows received there and a refill batch (the file's, else an eighth of them, at
 * least the largest batch); the file's larger SRQ wins. {0, 0}: no flow received there
 * consumes receives through it. */
std::pair<uint64_t, uint64_t> srq_of(const PipelineConf &c, const IoContextConf &io)
{
	uint64_t window = 0;
	uint32_t batch = 1;
	for (const FlowConf &f : c.flows) {
		const IoContextConf *b = end_io(c, f, FlowEnd::responder);
		if (b != &io)
			continue;
		batch = std::max(batch, f.batch);
		if (verb_consumes_receive(f.verb))
			window += flow_srq_receives(f, true);
	}
	if (window == 0 || io.rq_per_qp)
		return {0, 0};
	const uint64_t refill = io.srq_refill ? io.srq_refill : std::max<uint64_t>(batch, window / 8);
	return {std::max<uint64_t>(window + refill, io.srq), refill};
}

} // namespace

std::string repro_params(const PipelineConf &c, const Settings &set, const char *name, std::string *refused)
{
	for (const auto &[k, v] : set)
		if (!modelled(k))
			return refuse(refused, k + " = " + v + " (not modelled by repro_template.c)");
	if (c.flows.empty())
		return refuse(refused, "flows (the pipeline has none)");
	/* The two io contexts of the first flow's ends are repro.c's two sides; every flow
	 * runs between them, either way (placement = crossing swaps every other flow's), its
	 * own QPs, all in one process as rdmapipe's one lcore pair: the flows must otherwise
	 * be copies of one. */
	const IoContextConf *side[2] = {end_io(c, c.flows[0], FlowEnd::requester), end_io(c, c.flows[0], FlowEnd::responder)};
	std::string first;
	uint32_t qps = 0;
	uint64_t reversed = 0;
	for (size_t i = 0; i < c.flows.size(); i++) {
		const FlowConf &f = c.flows[i];
		const IoContextConf *a = end_io(c, f, FlowEnd::requester), *b = end_io(c, f, FlowEnd::responder);
		if (!a || !b)
			return refuse(refused, "flow " + f.name + " (not one requester and one responder with io contexts)");
		const bool rev = a == side[1] && b == side[0] && a != b;
		if (!rev && (a != side[0] || b != side[1]))
			return refuse(refused, "flow " + f.name + " (its ends on other io contexts than " + c.flows[0].name + "'s)");
		if (i >= 64 && rev)
			return refuse(refused, "flows (a crossing flow after the 64th)");
		const std::string fields = flow_fields(f, *a, *b, refused);
		if (fields.empty())
			return "";
		if (i == 0)
			first = fields;
		if (fields != first || f.qps != c.flows[0].qps)
			return refuse(refused, "flows (flow " + f.name + " runs other traffic than " + c.flows[0].name + ")");
		reversed |= static_cast<uint64_t>(rev) << i;
		qps += f.qps;
	}
	const auto [d0, r0] = srq_of(c, *side[0]);
	const auto [d1, r1] = srq_of(c, *side[1]);
	std::ostringstream o;
	o << "{ .name = \"" << name << "\", " << first << ", .cq_ex = { " << (side[0]->cq_api == CqApi::ex) << ", "
	  << (side[1]->cq_api == CqApi::ex) << " }, .srq_depth = { " << d0 << ", " << d1 << " }, .srq_refill = { " << r0
	  << ", " << r1 << " }, .reversed = 0x" << std::hex << reversed << std::dec << ", .dev_a = \"" << side[0]->device
	  << "\", .dev_b = \"" << side[1]->device << "\", .qps = " << qps << ", .flows = " << c.flows.size() << " }";
	return o.str();
}

std::string repro_caveat(const PipelineConf &c)
{
	for (const FlowConf &f : c.flows)
		if (f.transport == Transport::uc && f.reliability != Reliability::none)
			return "UC without rdmapipe's software reliability: repro.c runs the UC traffic beneath it; its ACKs "
			       "and retransmissions, rdmapipe's own protocol, are not sent, so a finding that needs them is rdmapipe's";
	return "";
}

std::string repro_caveat(const ReproConfs &confs)
{
	for (const PipelineConf *c : {confs.point, confs.reference})
		if (c && !repro_caveat(*c).empty())
			return repro_caveat(*c);
	return "";
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
	if (const std::string caveat = repro_caveat(confs); !caveat.empty())
		o << "/* " << caveat << " */\n";
	o << "#define RP_POINT " << pt << "\n";
	o << "#define RP_SECONDS " << s.search.point_seconds << "\n";
	o << "#define RP_STALL_S " << s.search.stall_timeout_s << "\n";
	switch (f.verdict.kind) {
	case AnomalyKind::performance: {
		if (confs.point->flows[0].sizes.size() > 1)
			return refuse(refused, "size (a list of sizes: repro.c judges one rate, not a size sweep's per step)");
		if (f.verdict.ref_point.empty())
			return refuse(refused, "reference (the verdict names no reference point)");
		if (!confs.reference)
			return refuse(refused, "reference (its pipeline was not read)");
		const std::string ref = repro_params(*confs.reference, point_settings(s, f.verdict.ref_point), "reference", refused);
		if (ref.empty())
			return refuse(refused, "reference: " + *refused);
		o << "#define RP_KIND K_PERFORMANCE\n#define RP_REFERENCE " << ref << "\n";
		o << "#define RP_PERF_FLAG " << (f.verdict.bare ? s.search.bare_flag : s.search.perf_flag) << "\n";
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
