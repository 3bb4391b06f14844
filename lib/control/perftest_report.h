/* A run's results as perftest prints them (the perftest front end, conf/perftest.h;
 * docs/perftest.md): its header block, its bandwidth or latency table with perftest 4.5's
 * column titles and number formats, and --out_json as valid JSON with perftest's field
 * names plus rdmapipe's verification counts under "rdmapipe". */
#pragma once

#include "conf/perftest.h"
#include "control/report_writer.h"
#include "control/results.h"

#include <string>
#include <vector>

namespace rp {

struct Device;

/* The port as perftest's header and JSON give it. */
struct PerftestPort {
	unsigned mtu = 0;             // bytes (active path MTU)
	int gid_index = -1;
	const char *link_type = "";   // "Ethernet", "IB"
};
PerftestPort perftest_port_of(const Device &dev);

/* perftest's header block and the table's title line (once, before the first row). */
void perftest_header(Report &out, const PerftestReportConf &c, const Results &r, const PerftestPort &port);


/* The table's closing line (none with --output). */
void perftest_footer(Report &out, const PerftestReportConf &c);

/* A row's figures, for the table and the JSON (and the unit tests). */
struct PerftestFigures {
	uint64_t bytes = 0, iterations = 0;
	double bw_peak = 0, bw_avg = 0, msg_rate = 0;   // MB/sec (2^20) or Gb/sec; Mpps
	double t_min = 0, t_max = 0, t_typical = 0, t_avg = 0, t_stdev = 0, p99 = 0, p999 = 0;   // usec
	bool observed = false;   // this end saw the messages (a one-sided test's server does not)
};
PerftestFigures perftest_figures(const PerftestReportConf &c, const Results &r);

/* What --out_json keeps of a run (a size), taken before its graph goes. */
struct PerftestRun {
	PerftestFigures f;
	PerftestPort port;
	std::string device;
	bool pass = false;
	uint64_t sent = 0, completed = 0, verified = 0, errors = 0;
	double elapsed_s = 0;
};
PerftestRun perftest_run_of(const PerftestReportConf &c, const Results &r, const PerftestPort &port);

/* The table's row for one run (a size), f its figures, samples its latency histogram
 * (-H; nullptr: none), or nothing where this end saw no message (the server of a
 * one-sided test, as perftest's prints none). */
void perftest_row(Report &out, const PerftestReportConf &c, const PerftestFigures &f, const Histogram *samples);

/* --out_json: the runs (a size each) as perftest's JSON, valid. Returns 0, or -1 with
 * *err naming the file and the cause. */
int perftest_write_json(const std::string &path, const PerftestReportConf &c, const std::vector<PerftestRun> &runs,
			std::string *err);

} // namespace rp
