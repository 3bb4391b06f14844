/* The output folder of a search (docs/explore.md): points.jsonl as it goes, each
 * finding's anomalies/ID/ (reproduce.conf, command, results.json, log, mfs.txt) as it
 * is minimised, space.json, findings.json and report.md at the end; a progress line. */
#pragma once

#include "explore/child.h"
#include "explore/explore.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace rp::explore {

/* s as one cell of a markdown table: no '|' nor newline, at most width characters. */
std::string md_cell(std::string s, size_t width = 160);

struct SearchTotals {
	uint64_t points = 0, invalid = 0, cached = 0, skipped = 0, crashed = 0, hung = 0;
	double elapsed_s = 0;
	std::string fatal;
	bool interrupted = false;
	uint32_t stopped_after = 0;   // --stop-after N ended the search: N (0: it did not)
};

class FolderRecorder : public Recorder {
public:
	/* dir: absolute; command: how the search was started (for the report). */
	FolderRecorder(const Space &s, ChildRunner &child, std::string dir, std::string command, bool progress);
	~FolderRecorder() override;
	int open(std::string *err);
	void point(const Point &p, const Outcome &o, const Verdict &v, const char *phase) override;
	void finding(const Finding &f) override;
	void progress(uint64_t points, uint64_t anomalies, double elapsed_s, double budget_left_s) override;
	/* space.json and findings.json (what plot-explore reads) ... */
	int finish(std::string *err);
	/* The finding's standalone label ("reproduces without rdmapipe (...)", ...), and
	 * --repro-on's ("; 6.12: does not (0 of 3 runs)"). */
	std::string label(uint32_t id) const
	{
		auto it = labels_.find(id);
		auto on = on_.find(id);
		return (it == labels_.end() ? "" : it->second) + (on == on_.end() || on->second.empty() ? "" : "; " + on->second);
	}
	/* Each finding's repro.c also built and run through these runners (--repro-on
	 * NAME=CMD: tools/softroce --kernel 6.12 ...), its label saying per NAME. */
	void repro_on(const std::vector<std::pair<std::string, std::string>> &v)
	{
		for (const auto &[name, cmd] : v)
			repro_on_.push_back({name, cmd});
	}
	/* The bare-verbs reference measured at start (bare.h): its report.md section, and
	 * its grid points' pipelines (a bare-flagged finding's repro.c reference). */
	void bare_reference(std::string section, const std::map<Point, std::string> &confs)
	{
		bare_section_ = std::move(section);
		confs_.insert(confs.begin(), confs.end());
	}
	/* ... then report.md (linking the plots there are). */
	int report(const SearchTotals &t, std::string *err);

private:
	std::string values_json(const Point &p) const;
	void write_finding_files(const Finding &f);
	std::string standalone(const Finding &f);
	struct ReproOn {   // --repro-on NAME=CMD
		std::string name, cmd;
	};
	std::string run_repro(const Finding &f, const std::string &dir, const ReproOn *on = nullptr);
	std::string judge_repro(const Finding &f, const std::string &dir, const std::string &tag, const std::vector<int> &rcs,
				bool childrens);
	std::string repro_elsewhere(const Finding &f, const std::string &dir);
	bool load_conf(const std::string &rel, PipelineConf *c, std::string *err) const;
	std::string perftest_line(const PipelineConf &c) const;
	std::string standalone_section();   // repro.c written, compiled, run: the label
	const Space &space_;
	ChildRunner &child_;
	std::string dir_, command_;
	bool progress_;
	FILE *points_ = nullptr;
	uint64_t lines_ = 0;
	std::string last_anomaly_conf_;    // the search-phase anomaly the next finding comes from
	std::vector<std::pair<Finding, std::string>> findings_;   // and where each was found
	std::map<uint32_t, std::string> labels_;   // finding id -> "reproduces without rdmapipe (...)", "only in rdmapipe (...)", ...
	std::map<uint32_t, std::pair<uint32_t, uint32_t>> repro_runs_;   // finding id -> repro.c's runs showing it, of
	std::map<Point, std::string> confs_;          // every point run -> its pipeline file (the reference's, for repro.c)
	std::map<uint32_t, std::string> perftest_;    // finding id -> perftest's command for its minimal point ("": none)
	std::vector<ReproOn> repro_on_;
	std::string bare_section_;
	std::map<uint32_t, std::string> on_;          // finding id -> "6.1: reproduces (...); 6.12: does not (...)"
};

} // namespace rp::explore
