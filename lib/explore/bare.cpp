/* bare.h: the bare-verbs grid written, built and run once, its rates read back. */
#include "explore/bare.h"

#include "explore/output.h"
#include "explore/repro.h"
#include "explore/space.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace rp::explore {

namespace {

/* The grid's program: built, then each point bounded by point_timeout (its own alarm);
 * the whole by this much more (the build, the forks). */
constexpr double kBuildS = 60;

} // namespace

bool bare_line(const std::string &line, size_t *k, Outcome *o)
{
	unsigned long idx = 0;
	int used = 0;
	if (sscanf(line.c_str(), "bench %lu %n", &idx, &used) != 1 || used == 0)
		return false;
	const std::string rest = line.substr(static_cast<size_t>(used));
	*o = Outcome{};
	*k = idx;
	double rate = 0, gbps = 0;
	unsigned long long messages = 0;
	if (sscanf(rest.c_str(), "ok: %lf msg/s %lf Gbit/s %llu messages", &rate, &gbps, &messages) == 3) {
		o->rate = rate;
		o->gbps = gbps;
		o->messages = messages;
		return true;
	}
	o->pass = false;
	o->failure = rest.rfind("failed: ", 0) == 0 ? rest.substr(8) : rest;
	return true;
}

BareReference::BareReference(const Space &s, PointConf &pc, ChildRunner &child, std::string dir)
	: space_(s), pc_(pc), child_(child), dir_(std::move(dir))
{
}

int BareReference::write(std::string *why)
{
	if (write_program(why) == 0)
		return 0;
	unmeasured_ = *why;
	return -1;
}

int BareReference::write_program(std::string *why)
{
	const std::string d = dir_ + "/bare";
	if (mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
		*why = d + ": cannot make the folder";
		return -1;
	}
	if (!space_.pipeline.empty()) {
		*why = "pipeline = " + space_.pipeline + " (a base pipeline file's other settings are not modelled)";
		return -1;
	}
	grid_ = bare_grid(space_);
	std::string bench, first_why;
	for (size_t i = 0; i < grid_.size(); i++) {
		const std::string n = std::to_string(i + 1), rel = "bare/" + n + ".conf";
		PipelineConf c;
		std::string err;
		if (pc_.make(grid_[i], dir_ + "/" + rel, d + "/" + n + ".json", &err, &c) != 0) {
			why_not_.push_back("invalid: " + err);
			continue;
		}
		const std::string p = repro_params(c, point_settings(space_, grid_[i]), "bench", &err);
		why_not_.push_back(p.empty() ? "not modelled: " + err : "");
		if (p.empty()) {
			first_why = first_why.empty() ? err : first_why;
			continue;
		}
		bench += (modelled_.empty() ? "" : ", \\\n\t") + p;
		modelled_.push_back(i);
		confs_[grid_[i]] = rel;
	}
	if (modelled_.empty()) {
		*why = "no point of the grid is modelled by repro_template.c" + (first_why.empty() ? "" : ": " + first_why);
		return -1;
	}
	std::ostringstream o;
	o << "/* rdmapipe-explore's bare-verbs reference: " << modelled_.size() << " points of " << space_.file << " */\n";
	o << "#define RP_KIND K_BENCH\n#define RP_BENCH " << bench << "\n";
	o << "#define RP_SECONDS " << space_.search.point_seconds << "\n";
	o << "#define RP_STALL_S " << space_.search.stall_timeout_s << "\n";
	o << "#define RP_POINT_TIMEOUT_S " << static_cast<int>(space_.search.point_timeout_s + 0.5) << "\n";
	std::ofstream(d + "/bare.c") << repro_source(o.str());
	std::ofstream(d + "/bare.build") << repro_build_command("bare") << "\n";
	return 0;
}

double BareReference::estimate_s() const
{
	return static_cast<double>(modelled_.size()) * space_.search.point_timeout_s + kBuildS;
}

void BareReference::measure(const std::string &name, const std::string *runner)
{
	Run r;
	r.name = name;
	const std::string out = runner ? "bare." + name + ".out" : "bare.out";
	const double run_s = static_cast<double>(modelled_.size()) * space_.search.point_timeout_s + 10;
	const std::string cmd = repro_build_command("bare") + " && timeout -k 5 " + std::to_string(static_cast<int>(run_s)) + " ./bare";
	const double t0 = now_s();
	const int st = shell_in(child_, dir_ + "/bare", cmd, out, runner, run_s + kBuildS);
	r.elapsed_s = now_s() - t0;
	std::ifstream in(dir_ + "/bare/" + out);
	std::string last;
	for (std::string l; std::getline(in, l);) {
		size_t k = 0;
		Outcome o;
		if (bare_line(l, &k, &o) && k < modelled_.size())
			r.by_index[k] = o;
		else if (!l.empty())
			last = l;
	}
	if (r.by_index.size() < modelled_.size())
		r.failed = (last.empty() ? "exit status " + std::to_string(st) : last) +
			   " (bare/" + out + ")";
	runs_.push_back(std::move(r));
}

BareTable BareReference::table() const
{
	BareTable t;
	for (const Run &r : runs_)
		if (r.name == "children")
			for (const auto &[k, o] : r.by_index)
				t[grid_[modelled_[k]]] = o;
	return t;
}

int BareReference::record(std::string *err) const
{
	std::ofstream out(dir_ + "/bare.jsonl");
	for (const Run &r : runs_) {
		std::map<size_t, const Outcome *> ran;
		for (const auto &[k, o] : r.by_index)
			ran[modelled_[k]] = &o;
		for (size_t i = 0; i < grid_.size(); i++) {
			nlohmann::ordered_json j;
			j["on"] = r.name;
			j["point"] = nlohmann::ordered_json::object();
			for (size_t d = 0; d < space_.dims.size(); d++)
				if (setting_bare_key(space_.dims[d].name))
					j["point"][space_.dims[d].name] = space_.dims[d].values[grid_[i][d]];
			const auto it = ran.find(i);
			const Outcome *o = it == ran.end() ? nullptr : it->second;
			j["status"] = !why_not_[i].empty() ? "not run" : !o ? "no answer" : o->pass ? "ran" : "failed";
			j["rate"] = o ? o->rate : 0;
			j["gbps"] = o ? o->gbps : 0;
			j["messages"] = o ? o->messages : 0;
			j["failure"] = !why_not_[i].empty() ? why_not_[i] : !o ? r.failed : o->failure;
			j["conf"] = why_not_[i].empty() ? "bare/" + std::to_string(i + 1) + ".conf" : "";
			out << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
		}
	}
	if (!out) {
		*err = dir_ + "/bare.jsonl: cannot write it";
		return -1;
	}
	return 0;
}

std::string BareReference::report_section() const
{
	std::string r = "\n## Bare-verbs reference (plain libibverbs)\n\n";
	if (!unmeasured_.empty())
		return r + "Not measured: " + unmeasured_ + "\n";
	char flag[32];
	snprintf(flag, sizeof flag, "%g", space_.search.bare_flag);
	r += "Each of the space's verb, transport, size and device values, the other settings at their simplest, run for "
	     "point_seconds by repro_template.c's loop (`bare/bare.c`, built and run once at the start; bare.jsonl has each "
	     "line). A passing, unpaced point under bare_flag (" + std::string(flag) +
	     ") x its row's rate where the children ran is a performance anomaly.\n\n";
	bool failed = false;
	for (const Run &run : runs_)
		if (!run.failed.empty()) {
			r += "- " + run.name + ": " + md_cell(run.failed, 80) + "\n";
			failed = true;
		}
	r += failed ? "\n" : "";
	std::string keys;
	for (const Dim &d : space_.dims)
		if (setting_bare_key(d.name))
			keys += (keys.empty() ? "" : ", ") + d.name;
	r += "| " + (keys.empty() ? std::string("point") : keys) + " |";
	std::string rule = "|---|";
	for (const Run &run : runs_) {
		r += " " + run.name + " (" + std::to_string(static_cast<int>(run.elapsed_s + 0.5)) + " s) |";
		rule += "---|";
	}
	r += "\n" + rule + "\n";
	for (size_t i = 0; i < grid_.size(); i++) {
		r += "| " + bare_text(space_, grid_[i]) + " |";
		for (const Run &run : runs_) {
			std::string v = why_not_[i];
			for (const auto &[k, o] : run.by_index)
				if (modelled_[k] == i)
					v = o.pass ? rate_text(o.rate) + "/s" : "failed: " + o.failure;
			r += " " + md_cell(v.empty() ? "no answer" : v, 80) + " |";
		}
		r += "\n";
	}
	return r;
}

} // namespace rp::explore
