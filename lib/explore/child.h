/* The runner of real points: a child rdmapipe in --points mode (EAL started once, the
 * points run one after another in it), each point's pipeline file written and
 * validated first, its hw_counters read around it. A child that hangs past the
 * point's timeout is killed (a hang); one that dies runs the point again alone in a
 * fresh child (a crash if it dies again); one that cannot start stops the search. */
#pragma once

#include "explore/explore.h"
#include "explore/point_conf.h"

#include <sys/types.h>

#include <string>
#include <vector>

namespace rp::explore {

struct ChildConf {
	std::string rdmapipe;              // the binary
	std::vector<std::string> eal;      // its EAL arguments
	std::vector<std::string> extra;    // its own, after --points (--plant SPEC, ...)
	std::string dir;                   // the output folder (absolute): points/ and child logs go there
};

class ChildRunner : public Runner {
public:
	ChildRunner(const Space &s, PointConf &pc, ChildConf cc) : space_(s), pc_(pc), cc_(std::move(cc)) {}
	~ChildRunner() override { stop(); }
	Outcome run(const Point &p) override;
	std::string fatal() const override { return fatal_; }
	/* The command that runs a point's file as the child did: for reproducers. */
	std::string command(const std::string &conf) const;
	void stop();   // ends the child (at the end, or on a signal)

private:
	enum class Answer { done, died, timeout };
	int start();
	Answer ask(const std::string &conf, const std::string &log, int *rc);
	Answer answer(const std::string &conf, const std::string &log, int *rc, Outcome *o);
	void reap(bool kill_it);
	void judge_exit(int rc, Outcome *o);
	void read_results(const std::string &path, Outcome *o);

	const Space &space_;
	PointConf &pc_;
	ChildConf cc_;
	std::string fatal_;
	pid_t pid_ = -1;
	int to_ = -1, from_ = -1;
	std::string pending_;         // bytes read past the last answer
	uint64_t n_ = 0;              // points made
	uint32_t children_ = 0;       // children started
	uint32_t answered_ = 0;       // points the current child answered
	uint32_t setup_failed_ = 0;   // points in a row refused at setup, none ever run
	bool any_ran_ = false;
	int last_status_ = 0;         // waitpid's of the last child reaped
};

/* The last non-empty lines of a file (a log's reason). */
std::string file_tail(const std::string &path, int lines);

} // namespace rp::explore
