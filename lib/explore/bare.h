/* The bare-verbs reference (issue 49 item 5, docs/explore.md): the space's grid of verb,
 * transport, size and device values (the other dimensions at their simplest) written as
 * one repro_template.c program of kind K_BENCH, built and run once at the start of a
 * search where the children run (one command: a VM runner boots a VM a command), and
 * through each --repro-on runner, each point's verified rate recorded (bare.jsonl,
 * report.md); the children's rates are the search's reference beside the neighbours. */
#pragma once

#include "explore/child.h"
#include "explore/point_conf.h"
#include "explore/search.h"

#include <map>
#include <string>
#include <vector>

namespace rp::explore {

/* One "bench K ..." line of the program: its point's outcome (ran and passed with a rate,
 * or failed with the line); false for any other line. */
bool bare_line(const std::string &line, size_t *k, Outcome *o);

class BareReference {
public:
	BareReference(const Space &s, PointConf &pc, ChildRunner &child, std::string dir);
	/* bare/bare.c of the grid's points that make a pipeline the template models (each
	 * one's pipeline in bare/N.conf); -1 with *why when none does (report_section says it). */
	int write(std::string *why);
	/* bare.c built and run once: where the children run (runner nullptr), else through
	 * the --repro-on runner NAME's command; its output in bare/bare[.NAME].out. */
	void measure(const std::string &name, const std::string *runner);
	BareTable table() const;                        // the children's outcomes by grid point
	const std::map<Point, std::string> &confs() const { return confs_; }   // grid point -> bare/N.conf
	int record(std::string *err) const;             // bare.jsonl
	std::string report_section() const;             // report.md's table, each runner a column; or why not written
	uint64_t points() const { return modelled_.size(); }
	double estimate_s() const;                      // the program's time, at most

private:
	int write_program(std::string *why);

	struct Run {
		std::string name;                    // "children", or --repro-on's NAME
		std::map<size_t, Outcome> by_index;  // modelled_ index -> what it gave
		std::string failed;                  // the build or the program failed: its last line
		double elapsed_s = 0;
	};
	const Space &space_;
	PointConf &pc_;
	ChildRunner &child_;
	std::string dir_;
	std::vector<Point> grid_;
	std::vector<std::string> why_not_;   // per grid point: "" (modelled), else invalid / not modelled: why
	std::vector<size_t> modelled_;       // the bench's points: indices into grid_
	std::map<Point, std::string> confs_;
	std::vector<Run> runs_;
	std::string unmeasured_;             // why write() wrote nothing ("": it did)
};

} // namespace rp::explore
