/* The search's output folder. */
#include "explore/output.h"

#include "conf/perftest.h"
#include "explore/repro.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace rp::explore {

namespace {

using nlohmann::json;

bool write_text(const std::string &path, const std::string &text)
{
	std::ofstream out(path);
	out << text;
	return static_cast<bool>(out);
}

std::string read_text(const std::string &path)
{
	std::ifstream in(path);
	std::stringstream ss;
	ss << in.rdbuf();
	return ss.str();
}

/* The file's number (an exit status a step wrote), false when it has none. */
bool read_status(const std::string &path, int *v)
{
	std::ifstream in(path);
	return static_cast<bool>(in >> *v);
}

/* repro.c built (once: TAGbuild.rc says it was) and run from run first+1 to runs, as one
 * command where it runs, so a VM runner boots once for them all; each step's output and
 * exit status in TAGbuild.out/.rc, TAGrunI.out/.rc beside repro.c. */
std::string repro_script(const std::string &tag, uint32_t first, uint32_t runs, int timeout_s)
{
	const std::string b = tag + "build";
	std::string s = "[ -e " + b + ".rc ] || { (command -v cc > /dev/null || { echo 'no cc'; exit 127; }; " +
			repro_build_command() + ") > " + b + ".out 2>&1; echo $? > " + b + ".rc; }; [ \"$(cat " + b +
			".rc)\" = 0 ] || exit 0";
	for (uint32_t i = first; i < runs; i++) {
		const std::string r = tag + "run" + std::to_string(i + 1);
		s += "; timeout -k 5 " + std::to_string(timeout_s) + " ./repro > " + r + ".out 2>&1; echo $? > " + r + ".rc";
	}
	return s;
}

constexpr double kBuildSeconds = 120;   // repro.c's build where it runs, on a slow guest

std::string last_line(const std::string &path)
{
	std::string text = read_text(path), line;
	std::istringstream in(text);
	for (std::string l; std::getline(in, l);)
		if (!l.empty())
			line = l;
	return line;
}

std::string duration_text(double s)
{
	char b[32];
	if (s >= 3600)
		snprintf(b, sizeof b, "%dh%02dm", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
	else
		snprintf(b, sizeof b, "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
	return b;
}

/* A reproducer runs where it is: its results beside it, not over the search's evidence. */
std::string relocate(std::string conf, const std::string &from, const std::string &to)
{
	for (size_t at = conf.find(from); at != std::string::npos; at = conf.find(from, at + to.size()))
		conf.replace(at, from.size(), to);
	return conf;
}

} // namespace

std::string md_cell(std::string s, size_t width)
{
	for (char &c : s)
		if (c == '|' || c == '\n')
			c = c == '|' ? '/' : ' ';
	return s.size() > width ? s.substr(0, width - 3) + "..." : s;
}

FolderRecorder::FolderRecorder(const Space &s, ChildRunner &child, std::string dir, std::string command, bool progress)
	: space_(s), child_(child), dir_(std::move(dir)), command_(std::move(command)), progress_(progress)
{
}

FolderRecorder::~FolderRecorder()
{
	if (points_)
		fclose(points_);
}

int FolderRecorder::open(std::string *err)
{
	for (const std::string &d : {dir_, dir_ + "/points", dir_ + "/anomalies"})
		if (mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
			*err = d + ": cannot make the folder: " + strerror(errno);
			return -1;
		}
	points_ = fopen((dir_ + "/points.jsonl").c_str(), "w");
	if (points_ == nullptr) {
		*err = dir_ + "/points.jsonl: " + strerror(errno);
		return -1;
	}
	return 0;
}

std::string FolderRecorder::values_json(const Point &p) const
{
	json v = json::object();
	for (size_t i = 0; i < space_.dims.size() && i < p.size(); i++)
		v[space_.dims[i].name] = space_.dims[i].values[p[i]];
	return v.dump();
}

void FolderRecorder::point(const Point &p, const Outcome &o, const Verdict &v, const char *phase)
{
	json j;
	j["n"] = ++lines_;
	j["phase"] = phase;
	j["point"] = json::parse(values_json(p));
	j["status"] = run_status_name(o.status);
	j["exit"] = o.exit_code;
	j["pass"] = o.pass;
	j["rate"] = o.rate;
	j["gbps"] = o.gbps;
	j["p50_us"] = o.p50_us;
	j["p99_us"] = o.p99_us;
	j["messages"] = o.messages;
	j["failure"] = o.failure;
	j["counters"] = json::object();
	for (const auto &kv : o.counters)
		j["counters"][kv.first] = kv.second;
	j["conf"] = o.conf;
	j["log"] = o.log;
	j["results"] = o.results;
	j["elapsed_s"] = o.elapsed_s;
	j["verdict"] = anomaly_kind_name(v.kind);
	j["why"] = v.why;
	fprintf(points_, "%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
	fflush(points_);
	if (v.anomaly() && std::string(phase) == "search")
		last_anomaly_conf_ = o.conf;
	if (o.status == RunStatus::ran && !o.conf.empty())
		confs_[p] = o.conf;
}

/* perftest's command for a point's first flow (its ends' io contexts say how it polls),
 * or "" where perftest cannot say it. */
std::string FolderRecorder::perftest_line(const PipelineConf &c) const
{
	if (c.flows.empty() || c.io_contexts.empty())
		return "";
	const FlowConf &f = c.flows[0];
	std::string device;
	bool srq = true, adaptive = false, cq_ex = false;
	for (const StageConf &st : c.stages)
		for (const IoContextConf &io : c.io_contexts)
			if (st.flow == f.name && st.kind && io.lcore == st.lcore) {
				const bool requester = st.kind->end == FlowEnd::requester;
				device = requester ? io.device + device : device + ">" + io.device;
				srq = requester ? srq : !io.rq_per_qp;
				adaptive |= io.adaptive_poll;
				cq_ex |= io.cq_api == CqApi::ex;
			}
	const size_t gt = device.find('>');
	if (gt != std::string::npos && device.substr(0, gt) == device.substr(gt + 1))
		device = device.substr(0, gt);   // one device: loopback
	const std::string cmd = perftest_command({f, static_cast<uint32_t>(c.flows.size()), device, srq, adaptive, cq_ex,
						  space_.search.point_seconds});
	return cmd.empty() ? "" : cmd + "   # server; the client: the same followed by localhost";
}

/* A point's pipeline as the child ran it (its points/N.conf), read as rdmapipe reads it. */
bool FolderRecorder::load_conf(const std::string &rel, PipelineConf *c, std::string *err) const
{
	if (rel.empty()) {
		*err = "no pipeline file recorded";
		return false;
	}
	return config_load(dir_ + "/" + rel, LcoreSet{}, c, err) == 0;
}

void FolderRecorder::write_finding_files(const Finding &f)
{
	const std::string d = dir_ + "/anomalies/" + std::to_string(f.id);
	mkdir(d.c_str(), 0755);
	const Outcome &o = f.minimal_outcome;
	const std::string conf = relocate(read_text(dir_ + "/" + o.conf), dir_ + "/" + o.results, "results.json");
	write_text(d + "/reproduce.conf", conf);
	write_text(d + "/command", child_.command("reproduce.conf") + "\n");
	write_text(d + "/results.json", read_text(dir_ + "/" + o.results));
	write_text(d + "/log", read_text(dir_ + "/" + o.log));
	std::string m = "anomaly " + std::to_string(f.id) + ": " + anomaly_kind_name(f.verdict.kind) + "\n";
	m += "needs:   " + (f.mfs_text.empty() ? std::string("(nothing: the simplest point shows it)") : f.mfs_text) + "\n";
	m += "why:     " + f.verdict.why + "\n";
	m += "found:   " + point_text(space_, f.point) + "\n";
	m += "minimal: " + point_text(space_, f.minimal) + "\n";
	m += "shown:   " + std::to_string(f.shown) + " of " + std::to_string(f.runs) + " runs of the minimal point\n";
	write_text(d + "/mfs.txt", m);
}

/* anomalies/ID/repro.c (issue 49): written, compiled and run search.repeats times
 * (search.need of them must show the anomaly, as minimisation's rule), each bounded by
 * point_timeout; the label says whether the finding shows without rdmapipe. */
std::string FolderRecorder::standalone(const Finding &f)
{
	const std::string d = dir_ + "/anomalies/" + std::to_string(f.id);
	PipelineConf point, ref;
	std::string refused, err;
	ReproConfs confs;
	if (load_conf(f.minimal_outcome.conf, &point, &err))
		confs.point = &point;
	const auto rc = confs_.find(f.verdict.ref_point);
	if (f.verdict.kind == AnomalyKind::performance && rc != confs_.end() && load_conf(rc->second, &ref, &err))
		confs.reference = &ref;
	if (confs.point)
		perftest_[f.id] = perftest_line(point);
	const std::string defines = repro_defines(space_, f, confs, &refused);
	if (!err.empty())
		refused += " (" + err + ")";
	if (defines.empty()) {
		write_text(d + "/repro.txt", "no standalone reproducer: " + refused + "\n");
		return "no standalone reproducer: " + refused;
	}
	write_text(d + "/repro.c", repro_source(defines));
	write_text(d + "/repro.build", repro_build_command() + "\n");
	const bool beneath = !repro_caveat(confs).empty();
	return run_repro(f, d) + (beneath ? " [repro.c: UC without rdmapipe's software reliability]" : "");
}

/* repro.c built and run search.repeats times where it runs (through on's runner, else
 * the children's), each run bounded by point_timeout, and judged: only its runs that
 * show the finding's own failure count (finding_failure, repro_shows). A run its host
 * died in is a hang; the runs after it go on, the host restored by a new runner. */
std::string FolderRecorder::run_repro(const Finding &f, const std::string &d, const ReproOn *on)
{
	const SearchConf &c = space_.search;
	const int timeout_s = static_cast<int>(c.point_timeout_s + 0.5);
	const std::string tag = "repro." + (on ? on->name + "." : ""), runner = on ? " (" + on->name + ")" : "";
	std::vector<int> rcs(c.repeats, -1);
	for (uint32_t first = 0; first < c.repeats;) {
		const double work_s = kBuildSeconds + (c.repeats - first) * (timeout_s + 5.0);
		const int st = shell_in(child_, d, repro_script(tag, first, c.repeats, timeout_s), tag + "sh.out",
					on ? &on->cmd : nullptr, work_s);
		int built = -1;
		if (!read_status(d + "/" + tag + "build.rc", &built))
			return "repro.c not built: its runner" + runner + " ended with exit " + std::to_string(st) + " (runner.log)";
		if (built != 0)
			return "repro.c not compiled: " + last_line(d + "/" + tag + "build.out") + " (" + tag + "build.out)";
		while (first < c.repeats && read_status(d + "/" + tag + "run" + std::to_string(first + 1) + ".rc", &rcs[first]))
			first++;
		if (first == c.repeats)
			break;
		if (st != 124 && st != 128 + 9)
			return "repro.c's run " + std::to_string(first + 1) + " not run: its runner" + runner + " ended with exit " +
			       std::to_string(st) + " (runner.log)";
		rcs[first++] = 124;   // the host stopped answering in it, and was stopped with its runner
	}
	return judge_repro(f, d, tag, rcs, on == nullptr);
}

/* repro.c's runs (their exit statuses rcs, outputs TAGrunI.out) as the finding's label. */
std::string FolderRecorder::judge_repro(const Finding &f, const std::string &d, const std::string &tag,
					const std::vector<int> &rcs, bool childrens)
{
	const SearchConf &c = space_.search;
	const std::string want = finding_failure(f);
	uint32_t shown = 0, other = 0, setup_errors = 0;
	std::string seen, seen_other, seen_setup;
	for (uint32_t i = 0; i < rcs.size(); i++) {
		const int rc = rcs[i];
		const std::string line = last_line(d + "/" + tag + "run" + std::to_string(i + 1) + ".out");
		const std::string got = repro_failure(rc, line);
		const std::string said = got == "hang" ? "killed after point_timeout (a hang)" : line;
		if (rc == 2 || rc == 126 || rc == 127) {   // its own setup, or no timeout(1) to run it: never "only in rdmapipe"
			setup_errors++;
			seen_setup = line;
		} else if (!got.empty() && repro_shows(want, got)) {
			shown++;
			seen = said;
		} else if (!got.empty()) {
			other++;
			seen_other = said;
		}
	}
	if (childrens)
		repro_runs_[f.id] = {shown, c.repeats};
	const std::string of = " of " + std::to_string(c.repeats) + " runs";
	if (setup_errors > c.repeats - c.need)
		return "repro.c setup error: " + seen_setup;
	if (shown >= c.need)
		return "reproduces without rdmapipe (" + std::to_string(shown) + of + ": " + seen + ")";
	if (other > 0)
		return "repro.c showed another failure: " + seen_other + " (" + std::to_string(other) + of + "; the finding's: " +
		       (want.empty() ? f.verdict.why : want) + ")";
	return "only in rdmapipe (repro.c showed it in " + std::to_string(shown) + of + ")";
}

/* repro.c built and run through each --repro-on runner (another kernel, another host),
 * each judged as the children's runs are: "6.12: reproduces (3 of 3 runs: ...)". */
std::string FolderRecorder::repro_elsewhere(const Finding &f, const std::string &d)
{
	std::string all;
	for (const ReproOn &on : repro_on_) {
		std::string v = run_repro(f, d, &on);
		for (const auto &[from, to] : {std::pair{"reproduces without rdmapipe", "reproduces"},
					       std::pair{"only in rdmapipe (repro.c showed it in ", "does not ("},
					       std::pair{"repro.c not compiled: ", "not compiled: "}})
			if (v.rfind(from, 0) == 0)
				v = to + v.substr(strlen(from));
		all += (all.empty() ? "" : "; ") + on.name + ": " + v;
	}
	return all;
}

void FolderRecorder::finding(const Finding &f)
{
	write_finding_files(f);
	labels_[f.id] = standalone(f);
	const std::string d = dir_ + "/anomalies/" + std::to_string(f.id);
	if (!repro_on_.empty() && access((d + "/repro.c").c_str(), F_OK) == 0)
		on_[f.id] = repro_elsewhere(f, d);
	const std::string label = this->label(f.id);
	write_text(d + "/standalone.txt", label + "\n");
	if (progress_)
		fprintf(stderr, "\nexplore: anomaly %u standalone: %s\n", f.id, label.c_str());
	findings_.emplace_back(f, last_anomaly_conf_);
	if (progress_)
		fprintf(stderr, "\nexplore: anomaly %u (%s): %s\n", f.id, anomaly_kind_name(f.verdict.kind), f.mfs_text.c_str());
}

void FolderRecorder::progress(uint64_t points, uint64_t anomalies, double elapsed_s, double budget_left_s)
{
	if (!progress_)
		return;
	const bool tty = isatty(2);
	fprintf(stderr, "%sexplore: %llu points, %llu anomal%s, %s elapsed", tty ? "\r" : "",
		static_cast<unsigned long long>(points), static_cast<unsigned long long>(anomalies), anomalies == 1 ? "y" : "ies",
		duration_text(elapsed_s).c_str());
	if (budget_left_s >= 0)
		fprintf(stderr, ", %s left", duration_text(budget_left_s).c_str());
	fprintf(stderr, tty ? "   " : "\n");
}

} // namespace rp::explore

namespace rp::explore {

namespace {

bool exists(const std::string &path)
{
	struct stat st;
	return stat(path.c_str(), &st) == 0;
}

} // namespace

int FolderRecorder::finish(std::string *err)
{
	json sp;
	sp["file"] = space_.file;
	sp["strategy"] = strategy_name(space_.search.strategy);
	sp["seed"] = space_.search.seed;
	sp["dims"] = json::array();
	for (const Dim &d : space_.dims)
		sp["dims"].push_back({{"name", d.name}, {"values", d.values}, {"numeric", d.numeric()}, {"simplest", d.values[d.simplest]}});
	json fs = json::array();
	for (const auto &[f, at] : findings_) {
		fs.push_back({{"id", f.id}, {"kind", anomaly_kind_name(f.verdict.kind)}, {"why", f.verdict.why}, {"mfs", f.mfs_text},
			      {"point", json::parse(values_json(f.point))}, {"minimal", json::parse(values_json(f.minimal))},
			      {"found_at", at}, {"runs", f.runs}, {"shown", f.shown}, {"standalone", labels_[f.id]}});
		if (!on_[f.id].empty())
			fs.back()["standalone_on"] = on_[f.id];   // --repro-on's runners, each NAME: its verdict
	}
	if (!write_text(dir_ + "/space.json", sp.dump(2) + "\n") || !write_text(dir_ + "/findings.json", fs.dump(2) + "\n")) {
		*err = dir_ + ": cannot write space.json and findings.json";
		return -1;
	}
	return 0;
}

/* Each finding's standalone reproducer: its label, how to build and run it, perftest's
 * command where perftest can say the point, and a finding only in rdmapipe written up
 * as a bug of ours. */
std::string FolderRecorder::standalone_section()
{
	if (findings_.empty())
		return "";
	std::string r = "\n## Standalone reproducers (repro.c, plain libibverbs)\n\n";
	for (const auto &[f, at] : findings_) {
		const std::string id = std::to_string(f.id), label = labels_[f.id];
		r += "- **" + id + "**: " + label + "\n";
		if (exists(dir_ + "/anomalies/" + id + "/repro.c"))
			r += "  - `cd anomalies/" + id + " && " + repro_build_command() + " && ./repro`\n";
		if (label.rfind("only in rdmapipe", 0) == 0)
			r += "  - **a bug of rdmapipe's**: the same traffic on plain verbs (repro.c) does not show `" +
			     md_cell(f.verdict.why) + "`; reproduce it with anomalies/" + id + "/command\n";
		const std::string pt = perftest_[f.id];
		if (!pt.empty())
			r += "  - perftest: `" + pt + "`\n";
		if (!on_[f.id].empty())
			r += "  - elsewhere (--repro-on): " + md_cell(on_[f.id]) + "\n";
	}
	return r;
}

int FolderRecorder::report(const SearchTotals &t, std::string *err)
{
	std::string r = "# rdmapipe-explore report\n\n";
	r += "`" + command_ + "`\n\n";
	r += "- space: `" + space_.file + "`, strategy " + strategy_name(space_.search.strategy) + ", seed " +
	     std::to_string(space_.search.seed) + "\n";
	r += "- " + std::to_string(t.points) + " points measured in " + std::to_string(static_cast<int>(t.elapsed_s)) + " s (" +
	     std::to_string(t.invalid) + " invalid, " + std::to_string(t.cached) + " reused, " + std::to_string(t.skipped) +
	     " skipped for containing a known anomaly's settings, " + std::to_string(t.crashed) + " crashed, " +
	     std::to_string(t.hung) + " hung)\n";
	if (!t.fatal.empty())
		r += "- **stopped**: " + t.fatal + "\n";
	if (t.interrupted)
		r += "- **interrupted** by a signal\n";
	if (t.stopped_after > 0)
		r += "- stopped after " + std::to_string(t.stopped_after) + " finding" + (t.stopped_after == 1 ? "" : "s") +
		     " (--stop-after), the budget not spent\n";
	r += "\n## Findings\n\n";
	if (findings_.empty())
		r += "None.\n";
	else
		r += "| # | kind | needs (minimal settings) | why | shown | reproducer |\n|---|---|---|---|---|---|\n";
	for (const auto &[f, at] : findings_)
		r += "| " + std::to_string(f.id) + " | " + anomaly_kind_name(f.verdict.kind) + " | " + md_cell(f.mfs_text) + " | " +
		     md_cell(f.verdict.why) + " | " + std::to_string(f.shown) + " of " + std::to_string(f.runs) + " | [anomalies/" +
		     std::to_string(f.id) + "](anomalies/" + std::to_string(f.id) + "/reproduce.conf) |\n";
	r += standalone_section();
	r += bare_section_;
	r += "\n## Plots\n\n";
	if (exists(dir_ + "/plots/overview.png"))
		r += "![every point's rate in the order measured](plots/overview.png)\n\n";
	for (const Dim &d : space_.dims)
		if (exists(dir_ + "/plots/rate-by-" + d.name + ".png"))
			r += "![rate by " + d.name + "](plots/rate-by-" + d.name + ".png)\n\n";
	r += "## Dimensions\n\n| setting | values | simplest |\n|---|---|---|\n";
	for (const Dim &d : space_.dims) {
		std::string v;
		for (const std::string &x : d.values)
			v += (v.empty() ? "" : ", ") + x;
		r += "| " + d.name + " | " + md_cell(v) + " | " + d.values[d.simplest] + " |\n";
	}
	if (!write_text(dir_ + "/report.md", r)) {
		*err = dir_ + "/report.md: cannot write it";
		return -1;
	}
	return 0;
}

} // namespace rp::explore
