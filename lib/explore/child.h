/* The runner of real points: a child rdmapipe in --points mode (EAL started once, the
 * points run one after another in it), each point's pipeline file written and
 * validated first, its hw_counters read around it by the child. A child that hangs
 * past the point's timeout is killed (a hang; a host hang when its "alive" lines
 * stopped too); one that dies runs the point again alone in a fresh child (a crash if
 * it dies again); one that cannot start stops the search. With a runner command the
 * child runs through it (ssh HOST, tools/softroce --stdin --): killing the runner
 * restores its host (a VM goes with its qemu), and the next child starts anew. */
#pragma once

#include "control/hw_counters.h"
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
	std::string runner;                // "": the child runs here; else sh -c 'RUNNER "$@"' rdmapipe ...
	double start_timeout_s = 0;        // a runner's new child's time to say it is ready (a VM's boot)
};

class ChildRunner : public Runner {
public:
	ChildRunner(const Space &s, PointConf &pc, ChildConf cc) : space_(s), pc_(pc), cc_(std::move(cc)) {}
	~ChildRunner() override { stop(); }
	Outcome run(const Point &p) override;
	std::string fatal() const override { return fatal_; }
	/* The command that runs a point's file as the child did: for reproducers. */
	std::string command(const std::string &conf) const;
	/* ... as a person reads it (RUNNER rdmapipe ...), without the console's plumbing. */
	std::string shown_command(const std::string &conf) const;
	/* A shell command as run where the children run: through the runner (the child
	 * stopped first; bounded by the start's timeout and work_s, <0: a point's timeout;
	 * stdin /dev/null, the runner's own output to runner.log), else as it is. */
	std::string on_host(const std::string &cmd, double work_s = -1);
	/* ... through another runner (--repro-on's), the same way ("": here). */
	std::string through(const std::string &runner, const std::string &cmd, double work_s = -1);
	void stop();   // ends the child (at the end, or on a signal)

private:
	enum class Answer { done, died, timeout };
	int start();
	std::string child_file(const char *ext) const;
	std::string child_command(const std::string &conf) const;   // rdmapipe's own words, the runner's "$@"
	Answer ask(const std::string &conf, const std::string &log, int *rc, HwCounters *moved);
	bool line(const std::string &l, int *rc, HwCounters *moved);
	Answer await(double deadline, bool ready, int *rc, HwCounters *moved);
	Answer answer(const std::string &conf, const std::string &log, int *rc, Outcome *o, HwCounters *moved);
	bool host_silent() const;
	void hung(Outcome *o, const std::string &log);
	void reap(bool kill_it);
	void judge_exit(int rc, Outcome *o);
	void read_results(const std::string &path, Outcome *o);

	const Space &space_;
	PointConf &pc_;
	ChildConf cc_;
	std::string fatal_;
	pid_t pid_ = -1;
	int to_ = -1, from_ = -1;
	int said_ = -1;               // a runner's child's log, for its lines that are no answer
	std::string pending_;         // bytes read past the last answer
	uint64_t n_ = 0;              // points made
	uint32_t children_ = 0;       // children started
	uint32_t answered_ = 0;       // points the current child answered
	uint32_t setup_failed_ = 0;   // points in a row refused at setup, none ever run
	bool any_ran_ = false;
	int last_status_ = 0;         // waitpid's of the last child reaped
	double asked_at_ = 0;         // when the current request was written
	double alive_at_ = 0;         // the current child's last "alive" line (0: none yet)
	bool heartbeats_ = false;     // some child said "alive": silence means its host's
	double host_down_at_ = 0;     // a host hang restored at (0: none): a fresh child may fail while it comes back
};

/* s as one word of sh: in single quotes, each ' as '\'' (an output folder may hold any). */
std::string sh_quote(const std::string &s);

/* The last non-empty lines of a file (a log's reason). */
std::string file_tail(const std::string &path, int lines);

double now_s();   // a steady clock's seconds

/* sh -c cmd in dir where the children run (through their runner, or the one given),
 * its output appended to dir/out; the exit status (124: timed out). work_s bounds the
 * command's own time through a runner (<0: one point's). */
int shell_in(ChildRunner &child, const std::string &dir, const std::string &cmd, const std::string &out,
	     const std::string *runner = nullptr, double work_s = -1);

} // namespace rp::explore
