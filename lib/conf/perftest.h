/* perftest's command lines as a front end (issue 47; docs/perftest.md): `ib_write_bw -d
 * rxe0 -s 4096 HOST` and the other tests, translated flag by flag into rdmapipe's own
 * arguments, which then go through the one option parser, validator and engine as every
 * run does. The translation is a table (kPerftestFlags): each perftest flag mapped,
 * meaningless here (accepted, says why), or refused naming why. Nothing is validated
 * here that the option parser or the validator checks. Plain data: no DPDK, no verbs. */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rp {

struct FlowConf;   // conf/config.h (which options.h, including this, comes before)

/* What the report needs of the perftest command line: its test, its units, its files. */
struct PerftestReportConf {
	bool on = false;              // the run speaks perftest (its table, not rdmapipe's summary)
	std::string test;             // "write_bw", "send_lat", ...
	std::string title;            // "RDMA_Write BW Test", as perftest's header says it
	bool bw = true;               // a bandwidth test (else latency)
	bool server = false;          // no host given
	bool reversed = false;        // --reversed: the server sends
	bool bidirectional = false;   // -b: both ends send at once (a flow each way); the table's figures are both ways
	bool sends() const { return server == reversed; }   // this end posts (its TX depth is in the header)
	bool gbits = false;           // --report_gbits
	bool json = false;            // --out_json
	std::string json_file;        // --out_json_file (perftest's default: perftest_out.json)
	std::string atomic_type;      // -A: CMP_AND_SWAP or FETCH_AND_ADD (atomic tests)
	uint32_t qps = 1, tx_depth = 0, cq_mod = 0, post_list = 1, inline_size = 0;
	bool use_srq = false, uc = false, duration = false;
	bool no_peak = false;         // -N: BW peak reported as 0
	bool histogram = false;       // -H: every sample, sorted, before the row (latency tests)
	double limit_bw = -1;         // -w: the run fails below this BW average (the table's units; < 0: none)
	double limit_msgrate = -1;    // -y: ... below this MsgRate (Mpps)
	std::string output;           // --output: "bandwidth", "message_rate", "latency" (its one figure only); "": all
};

/* The test named by the program (ib_write_bw, a link) or, for rdmapipe-perftest, by
 * its first argument: "write_bw", ... ("" when neither names one). */
std::string perftest_test_of(const std::string &program, const std::string &first_arg);

/* args (the perftest arguments, without the program and test name) for `test`:
 * rdmapipe's arguments into *out and the report's settings into *rc. Returns 0, or -1
 * with *err naming the perftest flag and why (an unknown flag, one refused here, a
 * missing value). */
int perftest_translate(const std::string &test, const std::vector<std::string> &args, std::vector<std::string> *out,
		       PerftestReportConf *rc, std::string *err);

/* The EAL arguments a perftest command line runs with: --eal "..." (taken out of args)
 * or $RDMAPIPE_EAL, else a default of two lcores with no hugepage files. */
std::vector<std::string> perftest_eal_args(std::vector<std::string> *args, const char *env);

/* One row of docs/perftest.md's table: a perftest flag and what becomes of it. */
struct PerftestFlagDoc {
	std::string flags;   // "-s, --size"
	std::string fate;    // "mapped", "meaningless", "refused"
	std::string what;    // the rdmapipe option it becomes, or why not
};
std::vector<PerftestFlagDoc> perftest_flag_docs();

/* A flow as perftest_command says it: the flow (the first of `flows` copies) and where
 * it runs. */
struct PerftestFlow {
	const FlowConf &flow;
	uint32_t flows = 1;           // copies of it at once (their QPs all in one perftest)
	std::string device;           // "A>B": two devices (two perftest ends: not one line)
	bool srq = true;              // its receiver's SRQ, else a receive queue per QP
	bool adaptive_poll = false;
	bool cq_ex = false;
	double seconds = 1;
};

/* The perftest bandwidth test (the server's line) that runs p's traffic, or "" where
 * perftest cannot say it (a fence, extended CQs, software reliability, a list of sizes,
 * two devices): the inverse of perftest_translate, read from the same tables. */
std::string perftest_command(const PerftestFlow &p);

/* The tests the front end runs, for --help and the links. */
const std::vector<std::string> &perftest_tests();

} // namespace rp
