#include "control/job_report.h"

#include "pipeline/graph.h"   // graph_sweep: the sizes of each step

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <stdexcept>

namespace rp {

using json = nlohmann::ordered_json;   // keys in the documented order

namespace {

/* One pair of ranks in one step: what its two ends said of it. */
struct PairRow {
	size_t step = 0;
	JobFlow jf;
	uint32_t bytes = 0;
	bool pingpong = false;                       // its latency is a ping-pong's (flagged on it)
	bool client_in = false, server_in = false;   // each end's flow found in its rank's results
	double rate = 0, gbps = 0;
	double p50 = -1, p99 = -1;                   // half round trip or completion latency, us (-1: none)
	uint64_t sent = 0, completed = 0, verified = 0, errors = 0, failed_qps = 0;
	bool pass = false;
	std::string why;                             // FAIL: the first cause
	std::vector<std::string> flags;
	double ref_rate = 0, ref_p50 = -1;           // its flow and step's best pair's: what flags compare with
	std::string confirmed;                       // flagged: what its re-run alone said ("": not flagged, or pattern.confirm 0)
	std::vector<PairRow> alone;                  // that re-run (none: not re-run)
};

const json *flow_in(const json &doc, const std::string &name)
{
	if (!doc.contains("flows"))
		return nullptr;
	for (const json &f : doc["flows"])
		if (f.value("name", "") == name)
			return &f;
	return nullptr;
}

uint64_t error_count(const json &f)
{
	uint64_t n = 0;
	if (f.contains("completion_errors"))
		for (const auto &e : f["completion_errors"].items())
			n += e.value().get<uint64_t>();
	return n;
}

/* A flow's completion errors by status, "" if none: "transport retry counter exceeded 4, ...". */
std::string error_list(const json &f)
{
	std::string s;
	if (f.contains("completion_errors"))
		for (const auto &e : f["completion_errors"].items())
			s += (s.empty() ? "" : ", ") + e.key() + " " + std::to_string(e.value().get<uint64_t>());
	return s;
}

/* The steps' JSON per rank, parsed once (an empty document where a rank has none). */
std::vector<std::vector<json>> parse_steps(const std::vector<JobRank> &ranks, size_t nsteps)
{
	std::vector<std::vector<json>> d(ranks.size(), std::vector<json>(nsteps, json::object()));
	for (size_t r = 0; r < ranks.size(); r++)
		for (size_t k = 0; k < nsteps && k < ranks[r].steps.size(); k++)
			d[r][k] = json::parse(ranks[r].steps[k], nullptr, false);
	return d;
}

/* Where flow f of this step reads each end, and what each end says of it. */
PairRow pair_row(const std::vector<JobRank> &ranks, const std::vector<std::vector<json>> &docs, size_t k, const JobFlow &jf,
		 uint32_t bytes)
{
	PairRow p;
	p.step = k;
	p.jf = jf;
	p.bytes = bytes;
	const json *cl = docs[jf.pair.from][k].is_object() ? flow_in(docs[jf.pair.from][k], jf.name) : nullptr;
	const json *sv = docs[jf.pair.to][k].is_object() ? flow_in(docs[jf.pair.to][k], jf.name) : nullptr;
	p.client_in = cl != nullptr;
	p.server_in = sv != nullptr;
	if (cl) {
		p.rate = cl->value("message_rate", 0.0);
		p.gbps = cl->value("gbit_per_s", 0.0);
		p.sent = cl->value("messages_sent", uint64_t{0});
		p.completed = cl->value("messages_completed", uint64_t{0});
		p.errors += error_count(*cl);
		p.failed_qps += cl->value("failed_qps", uint64_t{0});
		if (cl->contains("latency_us")) {
			p.p50 = (*cl)["latency_us"].value("p50", -1.0);
			p.p99 = (*cl)["latency_us"].value("p99", -1.0);
		}
	}
	if (sv) {
		p.verified = sv->value("messages_verified", uint64_t{0});
		p.errors += error_count(*sv);
		p.failed_qps += sv->value("failed_qps", uint64_t{0});
	}
	auto end_why = [&](uint32_t r, const json *f, const char *end) -> std::string {
		if (!ranks[r].reported)
			return "rank " + std::to_string(r) + " (" + end + ") sent no results: " + ranks[r].error;
		if (f == nullptr)
			return "rank " + std::to_string(r) + " (" + end + ") did not run it" +
			       (ranks[r].error.empty() ? "" : ": " + ranks[r].error);
		if (f->value("result", "FAIL") != "PASS") {
			std::string why = f->value("failure", ranks[r].error);
			const std::string errs = error_list(*f);
			if (!errs.empty())
				why += (why.empty() ? "" : " ") + ("(" + errs + ")");
			return "rank " + std::to_string(r) + " (" + end + ") failed it" + (why.empty() ? "" : ": " + why);
		}
		return "";
	};
	p.why = end_why(jf.pair.from, cl, "sender");
	if (p.why.empty())
		p.why = end_why(jf.pair.to, sv, "receiver");
	p.pass = p.why.empty();
	return p;
}

/* What is out of tolerance in p's figures against its reference: its rate, and (ping-
 * pongs: a rate flow's completion latency is its queue's, not the path's) its latency. */
std::vector<std::string> out_of_tolerance(const PatternConf &pat, const PairRow &p)
{
	std::vector<std::string> f;
	if (p.ref_rate > 0 && p.rate < pat.bw_flag * p.ref_rate)
		f.push_back("rate");
	if (p.pingpong && p.ref_p50 > 0 && p.p50 > pat.lat_flag * p.ref_p50)
		f.push_back("latency");
	return f;
}

/* ClusterKit's bad pairs: among the pairs of one flow and step, those out of tolerance
 * against the best pair's rate and median latency. */
unsigned flag_rows(const PatternConf &pat, std::vector<PairRow> *rows)
{
	unsigned flagged = 0;
	for (PairRow &p : *rows) {
		for (const PairRow &q : *rows)
			if (q.step == p.step && q.jf.tmpl == p.jf.tmpl && q.client_in && q.pass) {
				p.ref_rate = std::max(p.ref_rate, q.rate);
				if (q.p50 >= 0 && (p.ref_p50 < 0 || q.p50 < p.ref_p50))
					p.ref_p50 = q.p50;
			}
		if (!p.client_in || !p.pass)
			continue;   // a failed pair is reported as failed, not compared
		p.flags = out_of_tolerance(pat, p);
		flagged += !p.flags.empty();
	}
	return flagged;
}

/* The loaded run, pair by pair and step by step, flagged. */
struct Rows {
	std::vector<RankPair> pairs;
	std::vector<JobFlow> jfs;
	std::vector<PipelineConf> steps;
	std::vector<std::vector<json>> docs;
	std::vector<PairRow> rows;
	unsigned flagged = 0;
};

Rows loaded_rows(const PipelineConf &c, const std::vector<JobRank> &ranks)
{
	Rows x;
	std::string err;
	pattern_pairs(c, static_cast<uint32_t>(ranks.size()), &x.pairs, &err);   // checked before the run
	x.jfs = job_flows(c, x.pairs);
	if (graph_sweep(c, &x.steps, &err) != 0)
		x.steps = {c};
	x.docs = parse_steps(ranks, x.steps.size());
	for (size_t k = 0; k < x.steps.size(); k++)
		for (const JobFlow &jf : x.jfs) {
			uint32_t bytes = 0;
			for (const FlowConf &f : x.steps[k].flows)
				if (f.name == jf.tmpl)
					bytes = f.sizes[0];
			x.rows.push_back(pair_row(ranks, x.docs, k, jf, bytes));
			for (const StageConf &st : c.stages)
				x.rows.back().pingpong |= st.flow == jf.tmpl && st.kind->end == FlowEnd::echo;
		}
	x.flagged = flag_rows(c.pattern, &x.rows);
	return x;
}

/* ClusterKit's confirmation: each flagged pair re-run alone, against the loaded run's
 * reference (its best pair's figures), is bad alone or slow only under load. */
void confirm_rows(const PatternConf &pat, const JobAlone &alone, std::vector<PairRow> *rows)
{
	const size_t n = alone.ranks.size();
	for (size_t i = 0; i < alone.rounds.size(); i++) {
		const JobConfirm &k = alone.rounds[i];
		auto it = std::find_if(rows->begin(), rows->end(),
				       [&](const PairRow &p) { return p.step == k.step && p.jf.name == k.jf.name; });
		if (it == rows->end() || it->flags.empty())
			continue;
		std::vector<std::vector<json>> docs(n, std::vector<json>(1, json::object()));
		for (size_t r = 0; r < n; r++)
			if (i < alone.ranks[r].steps.size() && !alone.ranks[r].steps[i].empty())
				docs[r][0] = json::parse(alone.ranks[r].steps[i], nullptr, false);
		PairRow a = pair_row(alone.ranks, docs, 0, it->jf, it->bytes);
		a.step = it->step;
		a.pingpong = it->pingpong;
		a.ref_rate = it->ref_rate;
		a.ref_p50 = it->ref_p50;
		if (a.pass)
			a.flags = out_of_tolerance(pat, a);
		it->confirmed = !a.pass ? "failed alone" : !a.flags.empty() ? "bad alone" : "slow only under load";
		it->alone = {a};
	}
	for (PairRow &p : *rows)
		if (!p.flags.empty() && p.confirmed.empty() && pat.confirm > 0)
			p.confirmed = "not re-run";
}

std::string flag_text(const PairRow &p)
{
	std::string s;
	for (const std::string &f : p.flags)
		s += (s.empty() ? "" : "+") + f;
	return s;
}

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, f);
	vsnprintf(buf, sizeof buf, f, ap);
	va_end(ap);
	return buf;
}

std::string lat_cell(double v)
{
	return v < 0 ? std::string("-") : fmt("%.2f", v);
}

/* A flagged row's verdict: "rate -> bad alone (alone: 612.0 msg/s, p50 -)". */
std::string confirm_cell(const PairRow &p)
{
	std::string s = flag_text(p);
	if (p.confirmed.empty())
		return s;
	s += " -> " + p.confirmed;
	if (!p.alone.empty()) {
		const PairRow &a = p.alone[0];
		s += a.pass ? fmt(" (alone: %.1f msg/s, p50 %s us)", a.rate, lat_cell(a.p50).c_str()) : " (" + a.why + ")";
	}
	return s;
}

/* Per rank: its host, device and result, what it sent over its pairs (a size sweep:
 * the mean over the steps) and its errors. */
void rank_table(const std::vector<JobRank> &ranks, const std::vector<std::vector<json>> &docs,
		const std::vector<PairRow> &rows, size_t nsteps, std::string *t)
{
	*t += fmt("  %-5s %-16s %-8s %-15s %-10s %12s %8s  %s\n", "rank", "host", "device", "address", "result", "msg/s sent",
		  "errors", "");
	for (size_t r = 0; r < ranks.size(); r++) {
		const JobRank &x = ranks[r];
		double rate = 0;
		uint64_t errors = 0;
		std::string result = x.reported ? (x.exit == 0 ? "PASS" : "FAIL") : "NO RESULTS";
		for (const json &d : docs[r])
			if (d.is_object() && d.contains("flows"))
				for (const json &f : d["flows"])
					errors += error_count(f);
		for (const PairRow &p : rows)
			if (p.jf.pair.from == r)
				rate += p.rate / static_cast<double>(nsteps);
		*t += fmt("  %-5zu %-16.16s %-8.8s %-15.15s %-10s %12.1f %8" PRIu64 "  %s\n", r, x.info.host.c_str(),
			  x.info.device.c_str(), x.info.addr.c_str(), result.c_str(), rate, errors,
			  x.error.empty() ? "" : x.error.c_str());
	}
}

json rank_json(size_t rank, const JobRank &x, const std::vector<json> &docs)
{
	json steps = json::array();
	for (const json &d : docs)
		if (d.is_object() && d.contains("run"))
			steps.push_back(d);
	json o = {{"rank", rank},
		  {"host", x.info.host},
		  {"device", x.info.device},
		  {"address", x.info.addr},
		  {"gid", x.info.gid},
		  {"gid_index", x.info.gid_index},
		  {"port", x.info.port},
		  {"reported", x.reported}, {"exit_status", x.exit},  {"results", std::move(steps)}};
	if (!x.error.empty())
		o["error"] = x.error;
	return o;
}

json pair_json(const PairRow &p, const std::vector<std::string> &step_names)
{
	json o = {{"flow", p.jf.tmpl},
		  {"name", p.jf.name},
		  {"from", p.jf.pair.from},
		  {"to", p.jf.pair.to},
		  {"message_bytes", p.bytes},
		  {"messages_sent", p.sent},
		  {"messages_completed", p.completed},
		  {"messages_verified", p.verified},
		  {"message_rate", p.rate},
		  {"gbit_per_s", p.gbps},
		  {"errors", p.errors},
		  {"failed_qps", p.failed_qps},
		  {"result", p.pass ? "PASS" : "FAIL"},
		  {"flags", p.flags}};
	if (step_names.size() > 1)
		o["step"] = step_names[p.step];
	if (p.p50 >= 0)
		o["latency_us"] = {{"p50", p.p50}, {"p99", p.p99}};
	if (!p.pass)
		o["reason"] = p.why;
	if (!p.confirmed.empty())
		o["confirmed"] = p.confirmed;
	if (!p.alone.empty()) {
		const PairRow &a = p.alone[0];
		json al = {{"messages_sent", a.sent}, {"messages_verified", a.verified}, {"message_rate", a.rate},
			   {"gbit_per_s", a.gbps},    {"errors", a.errors},	      {"failed_qps", a.failed_qps},
			   {"result", a.pass ? "PASS" : "FAIL"}, {"flags", a.flags}};
		if (a.p50 >= 0)
			al["latency_us"] = {{"p50", a.p50}, {"p99", a.p99}};
		if (!a.pass)
			al["reason"] = a.why;
		o["alone"] = std::move(al);
	}
	return o;
}

} // namespace

JobReport job_report(const PipelineConf &c, const std::vector<JobRank> &ranks, const std::vector<std::string> &step_names,
		     const JobAlone &alone)
{
	JobReport out;
	const PatternConf &pat = c.pattern;
	Rows x = loaded_rows(c, ranks);
	const std::vector<RankPair> &pairs = x.pairs;
	const std::vector<JobFlow> &jfs = x.jfs;
	const auto &docs = x.docs;
	std::vector<PairRow> &rows = x.rows;
	out.flagged = x.flagged;
	confirm_rows(pat, alone, &rows);
	for (const PairRow &p : rows) {
		out.bad_alone += p.confirmed == "bad alone";
		out.load_only += p.confirmed == "slow only under load";
	}
	out.pass = true;
	for (const JobRank &x : ranks)
		out.pass &= x.reported && x.exit == 0;
	for (const PairRow &p : rows)
		out.pass &= p.pass;

	std::string &t = out.table;
	t += fmt("job: %zu ranks, pattern %s, %zu pairs, %zu flows per step\n", ranks.size(), pattern_kind_name(pat.kind),
		 pairs.size(), jfs.size());
	rank_table(ranks, docs, rows, x.steps.size(), &t);
	t += fmt("  %-14s %-7s %9s %12s %10s %10s %10s %8s  %s\n", "pair", "size", "msg/s", "Gbit/s", "p50 us", "p99 us",
		 "verified", "errors", "result");
	for (const PairRow &p : rows) {
		std::string pair = fmt("%s %u->%u", p.jf.tmpl.c_str(), p.jf.pair.from, p.jf.pair.to);
		std::string res = p.pass ? "PASS" : "FAIL (" + p.why + ")";
		if (!p.flags.empty())
			res += "  FLAGGED: " + confirm_cell(p);
		t += fmt("  %-14s %-7u %9.1f %12.6f %10s %10s %10" PRIu64 " %8" PRIu64 "  ", pair.c_str(), p.bytes, p.rate, p.gbps,
			 lat_cell(p.p50).c_str(), lat_cell(p.p99).c_str(), p.verified, p.errors + p.failed_qps) +
		     res + "\n";
	}
	t += fmt("  flagged pairs: %u (rate under %.2f x the best pair's, or a ping-pong's median latency over %.2f x the best)\n",
		 out.flagged, pat.bw_flag, pat.lat_flag);
	if (out.flagged > 0 && pat.confirm > 0)
		t += fmt("  re-run alone (at most pattern.confirm = %u): %zu, %u bad alone, %u slow only under load\n", pat.confirm,
			 alone.rounds.size(), out.bad_alone, out.load_only);
	t += fmt("job result: %s\n", out.pass ? "PASS" : "FAIL");

	json doc;
	doc["rdmapipe"] = {{"version", RDMAPIPE_VERSION}, {"job_results_schema", kJobResultsSchema}};
	doc["job"] = {{"ranks", ranks.size()},
		      {"pattern", pattern_kind_name(pat.kind)},
		      {"pairs", pairs.size()},
		      {"bw_flag", pat.bw_flag},
		      {"lat_flag", pat.lat_flag},
		      {"flagged", out.flagged},
		      {"confirm", pat.confirm},
		      {"bad_alone", out.bad_alone},
		      {"slow_only_under_load", out.load_only},
		      {"result", out.pass ? "PASS" : "FAIL"}};
	doc["ranks"] = json::array();
	for (size_t r = 0; r < ranks.size(); r++)
		doc["ranks"].push_back(rank_json(r, ranks[r], docs[r]));
	doc["pairs"] = json::array();
	for (const PairRow &p : rows)
		doc["pairs"].push_back(pair_json(p, step_names));
	out.json = doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";

	out.csv = "step,flow,from,to,message_bytes,messages_sent,messages_completed,messages_verified,message_rate,gbit_per_s,"
		  "latency_p50_us,latency_p99_us,errors,failed_qps,result,flags,confirmed\n";
	for (const PairRow &p : rows)
		out.csv += fmt("%s,%s,%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.1f,%.6f,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%s,%s,%s\n",
			       step_names.size() > 1 ? step_names[p.step].c_str() : "", p.jf.tmpl.c_str(), p.jf.pair.from,
			       p.jf.pair.to, p.bytes, p.sent, p.completed, p.verified, p.rate, p.gbps, p.p50 < 0 ? 0.0 : p.p50,
			       p.p99 < 0 ? 0.0 : p.p99, p.errors, p.failed_qps, p.pass ? "PASS" : "FAIL", flag_text(p).c_str(),
			       p.confirmed.c_str());
	return out;
}

std::vector<JobConfirm> job_to_confirm(const PipelineConf &c, const std::vector<JobRank> &ranks)
{
	std::vector<JobConfirm> v;
	for (const PairRow &p : loaded_rows(c, ranks).rows)
		if (!p.flags.empty() && v.size() < c.pattern.confirm)
			v.push_back({p.step, p.jf});
	return v;
}

std::string confirm_text(const std::vector<JobConfirm> &v)
{
	json a = json::array();
	for (const JobConfirm &k : v)
		a.push_back({k.step, k.jf.tmpl, k.jf.index, k.jf.pair.from, k.jf.pair.to});
	return a.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string rank_info_text(const RankInfo &r)
{
	json o = {{"host", r.host}, {"device", r.device}, {"addr", r.addr}, {"gid", r.gid}, {"gid_index", r.gid_index},
		  {"local", r.local}, {"port", r.port}, {"failed", r.failed}};
	return o.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

/* What a rank sent, read by fill (which throws on a missing or mistyped field). */
template <typename Fill>
int read_words(const std::string &text, const char *what, std::string *err, Fill fill)
{
	const json o = json::parse(text, nullptr, false);
	try {
		if (o.is_discarded())
			throw std::runtime_error("not JSON");
		fill(o);
	} catch (const std::exception &e) {
		*err = std::string("a rank's ") + what + " do not read: " + e.what();
		return -1;
	}
	return 0;
}

} // namespace

int rank_info_parse(const std::string &text, RankInfo *r, std::string *err)
{
	return read_words(text, "setup words", err, [r](const json &o) {
		r->host = o.at("host").get<std::string>();
		r->device = o.at("device").get<std::string>();
		r->addr = o.at("addr").get<std::string>();
		r->gid = o.at("gid").get<std::string>();
		r->gid_index = o.at("gid_index").get<int>();
		r->local = o.at("local").get<uint32_t>();
		r->port = o.at("port").get<uint32_t>();
		r->failed = o.at("failed").get<std::string>();
	});
}

std::string rank_results_text(int exit, const std::string &error, const std::vector<std::string> &steps)
{
	json o = {{"exit", exit}, {"error", error}, {"steps", json::array()}};
	for (const std::string &s : steps)
		o["steps"].push_back(s);
	return o.dump(-1, ' ', false, json::error_handler_t::replace);
}

int rank_results_parse(const std::string &text, JobRank *r, std::string *err)
{
	return read_words(text, "results", err, [r](const json &o) {
		r->exit = o.at("exit").get<int>();
		r->error = o.at("error").get<std::string>();
		r->steps = o.at("steps").get<std::vector<std::string>>();
		r->reported = true;
	});
}

int confirm_parse(const std::string &text, std::vector<JobConfirm> *v, std::string *err)
{
	return read_words(text, "pairs to confirm", err, [v](const json &o) {
		v->clear();
		for (const json &e : o.get<std::vector<json>>()) {
			JobConfirm k;
			k.step = e.at(0).get<size_t>();
			k.jf.tmpl = e.at(1).get<std::string>();
			k.jf.index = e.at(2).get<uint32_t>();
			k.jf.pair = {e.at(3).get<uint32_t>(), e.at(4).get<uint32_t>()};
			k.jf.name = job_flow_name(k.jf.tmpl, k.jf.pair);
			v->push_back(k);
		}
	});
}

} // namespace rp
