#include "conf/options_table.h"
#include "conf/config.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace rp {

namespace {

/* Accepts plain integers with an optional binary suffix (K, M, G): "64K" = 65536. */
bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (*s == '\0' || *s == '-')
		return false;
	errno = 0;
	char *end = nullptr;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno != 0 || end == s)
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	default: break;
	}
	if (*end != '\0')
		return false;
	if (shift != 0 && v > (UINT64_MAX >> shift))
		return false;
	v <<= shift;
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

bool parse_seconds(const char *s, double *out)
{
	errno = 0;
	char *end = nullptr;
	double v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1e6)
		return false;
	*out = v;
	return true;
}

std::string range_error(const char *opt, const char *val, uint64_t lo, uint64_t hi)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "--%s: '%s' is not an integer in %" PRIu64 "..%" PRIu64,
		 opt, val, lo, hi);
	return buf;
}

/* "--NAME: 'VALUE' WHAT": a value the option does not take. */
std::string bad_value(const ParseState &st, const char *a, const char *what)
{
	return std::string("--") + st.spec->name + ": '" + a + "' " + what;
}

template <typename T>
std::string set_uint(const ParseState &st, T *field, const char *a, uint64_t lo, uint64_t hi)
{
	uint64_t v;
	if (!parse_u64(a, lo, hi, &v))
		return range_error(st.spec->name, a, lo, hi);
	*field = static_cast<T>(v);
	return {};
}

/* A name, address or file: anything but empty ("--NAME: WHAT_IS_EMPTY"). */
std::string set_text(const ParseState &st, std::string *field, const char *a, const char *empty)
{
	if (*a == '\0')
		return std::string("--") + st.spec->name + ": " + empty;
	*field = a;
	return {};
}

/* An address, by the rule a file's key of the same meaning takes (config.h). */
std::string set_addr(const ParseState &st, std::string *field, const char *a, bool (*ok)(const std::string &), const char *what)
{
	if (!ok(a))
		return std::string("--") + st.spec->name + ": '" + a + "' is not " + what;
	*field = a;
	return {};
}

std::string set_seconds(const ParseState &st, double *field, const char *a)
{
	if (!parse_seconds(a, field))
		return bad_value(st, a, "is not a number of seconds in (0, 1e6]");
	return {};
}

int choice(const ParseState &st, const char *a)
{
	return option_choice(*st.spec, a);
}

/* N, or a list N,N,...: one flow per entry, all on the same lcores. */
std::string set_qps(ParseState &st, const char *a)
{
	RunOptions *o = st.o;
	o->flows.clear();
	uint64_t total = 0, v;
	std::string list(a);
	size_t pos = 0;
	for (;;) {
		size_t comma = list.find(',', pos);
		std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
		if (!parse_u64(item.c_str(), 1, kMaxQps, &v) || o->flows.size() == kMaxFlows)
			return strchr(a, ',') == nullptr
				? range_error("qps", a, 1, kMaxQps)
				: std::string("--qps: '") + a + "' is not a list of at most " +
				  std::to_string(kMaxFlows) + " integers in 1.." + std::to_string(kMaxQps);
		o->flows.push_back(static_cast<uint32_t>(v));
		total += v;
		if (comma == std::string::npos)
			break;
		pos = comma + 1;
	}
	if (total > kMaxQps)
		return std::string("--qps ") + a + ": " + std::to_string(total) + " QPs in all, at most " +
		       std::to_string(kMaxQps);
	o->qps = static_cast<uint32_t>(total);
	return {};
}

/* One size, or a list: a size sweep (the run once per size, in turn). */
std::string set_sizes(ParseState &st, const char *a)
{
	RunOptions *o = st.o;
	uint64_t v;
	o->sizes.clear();
	std::string list = a;
	for (size_t at = 0; at <= list.size();) {
		size_t comma = list.find(',', at);
		std::string one = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
		if (!parse_u64(one.c_str(), 1, kMaxMsgBytes, &v) || o->sizes.size() == kMaxSweepSizes)
			return o->sizes.size() == kMaxSweepSizes ? "--size: at most " + std::to_string(kMaxSweepSizes) + " sizes"
								 : range_error("size", one.c_str(), 1, kMaxMsgBytes);
		o->sizes.push_back(static_cast<uint32_t>(v));
		if (comma == std::string::npos)
			break;
		at = comma + 1;
	}
	o->msg_bytes = o->sizes[0];
	if (o->sizes.size() == 1)
		o->sizes.clear();
	st.have_size = true;
	return {};
}

/* A double in [lo, hi] (lo_open: (lo, hi]); else "--NAME: 'VALUE' WHAT". */
std::string set_real(const ParseState &st, double *field, const char *a, double lo, bool lo_open, double hi,
		     const char *what)
{
	char *end = nullptr;
	double v = strtod(a, &end);
	if (end == a || *end != '\0' || !(lo_open ? v > lo : v >= lo) || v > hi)
		return bad_value(st, a, what);
	*field = v;
	return {};
}

constexpr bool kShapes = true;   // describes the run (not with -f)
constexpr bool kAside = false;   // output, test hooks, modes of watching: with -f too

const OptionSpec kOptions[] = {
	{"verb", 'v', "NAME",
		"send, send_imm, write, write_imm (default), read,\n"
		"fetch_add, cmp_swap",
		nullptr, kShapes, [](ParseState &st, const char *a) {
			if (!verb_from_name(a, &st.o->verb))
				return bad_value(st, a, ("is not one of " + verb_names_list()).c_str());
			st.have_verb = true;
			return std::string();
		}, "verb"},
	{"qps", 'Q', "N[,N...]",
		"QPs in the flow (1..1024, default 1); a list makes one flow per\n"
		"entry (up to 16, -Q 1,64), every QP of every flow sharing the\n"
		"lcore's CQ pair and SRQ; each flow sends --messages; QPs are\n"
		"numbered across the flows in order (for --inject-bad-rkey)",
		nullptr, kShapes, set_qps, "qps"},
	{"device", 'd', "NAME",
		"RDMA device (default: the first one found)",
		nullptr, kShapes, [](ParseState &st, const char *a) {
			return set_text(st, &st.o->device, a, "empty device name");
		}},
	{"port", 'p', "N",
		"device port (default 1)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->port, a, 1, 254); }},
	{"gid-index", 'g', "N",
		"GID index (default: the RoCE v2 IPv4 GID, found from sysfs)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->gid_index, a, 0, 255); }},
	{"size", 's', "BYTES[,...]",
		"message size, 1..1G, K/M/G suffixes (default 64; atomics: 8);\n"
		"a list (-s 64,1K,64K) is a size sweep: the run once per size",
		nullptr, kShapes, set_sizes, "size"},
	{"messages", 'n', "N",
		"stop after N messages (default 1000000)",
		nullptr, kShapes, [](ParseState &st, const char *a) {
			st.have_messages = true;
			return set_uint(st, &st.o->messages, a, 1, UINT64_MAX >> 1);
		}, "messages"},
	{"duration", 't', "SEC",
		"stop after SEC seconds instead of a count; 0: until stopped\n"
		"(SIGINT, SIGTERM, the console's quit; then the summary, exit 0)",
		nullptr, kShapes, [](ParseState &st, const char *a) {
			if (strcmp(a, "0") == 0) {
				st.o->duration_s = kUntilStoppedS;
				return std::string();
			}
			return set_seconds(st, &st.o->duration_s, a);
		}, "duration"},
	{"batch", 'b', "N",
		"work requests per chain, one ibv_post_send each (1..512, default 32)",
		nullptr, kShapes, [](ParseState &st, const char *a) {
			st.o->batch_given = true;
			return set_uint(st, &st.o->batch, a, 1, kMaxBatch);
		}, "batch"},
	{"signal-every", 'S', "N",
		"one signalled work request per N (default: batch)",
		nullptr, kShapes, [](ParseState &st, const char *a) {
			st.o->signal_given = true;
			return set_uint(st, &st.o->signal_every, a, 1, kMaxSqDepth / 2);
		}, "signal_every"},
	{"sq-depth", 0, "N",
		"send queue depth (default 4 x max(batch, signal-every))",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->sq_depth, a, 1, kMaxSqDepth); }, "sq_depth"},
	{"slots", 0, "N",
		"responder window slots per QP (default 1024 / qps, at least batch)",
		nullptr, kShapes, [](ParseState &st, const char *a) {
			st.have_slots = true;
			return set_uint(st, &st.o->slots, a, 1, kMaxSlots);
		}, "window"},
	{"flow-window", 0, "N",
		"messages in flight over all of a flow's QPs, credited once for\n"
		"the flow, so the SRQ holds N whatever the QP count (0: none;\n"
		"default 1024 where the QPs' windows add up to more: send,\n"
		"send_imm, write_imm over RC or plain UC, --slots not given)",
		nullptr, kShapes, [](ParseState &st, const char *a) {
			st.o->flow_window_given = true;
			return set_uint(st, &st.o->flow_window, a, 0, kMaxSlots);
		}, "flow_window"},
	{"srq-refill", 0, "N",
		"repost SRQ receives once N are consumed (default slots x qps / 8)",
		nullptr, kShapes, [](ParseState &st, const char *a) {
			st.o->srq_refill_given = true;
			return set_uint(st, &st.o->srq_refill, a, 1, kMaxSlots);
		}, "srq_refill"},
	{"recv-queue", 0, "Q",
		"srq: the receiving lcore's QPs share one SRQ (default); qp: each\n"
		"QP its own receive queue, refilled once 1/8 of it is consumed",
		"srq qp", kShapes, [](ParseState &st, const char *a) {
			st.o->rq_per_qp = choice(st, a) == 1;
			return std::string();
		}, "recv_queue"},
	{"post-api", 0, "API",
		"classic: chained ibv_post_send (default); wr: ibv_qp_ex\n"
		"ibv_wr_start ... ibv_wr_complete, where the device has it",
		"classic wr", kShapes, [](ParseState &st, const char *a) {
			st.o->post_api = choice(st, a) == 1 ? PostApi::wr : PostApi::classic;
			return std::string();
		}, "post_api"},
	{"inline", 0, nullptr,
		"send payloads inline (send and write verbs, up to the device's max)",
		nullptr, kShapes, [](ParseState &st, const char *) {
			st.o->inline_send = true;
			return std::string();
		}, "inline"},
	{"fence", 0, nullptr,
		"IBV_SEND_FENCE on the first WR of each chain",
		nullptr, kShapes, [](ParseState &st, const char *) {
			st.o->fence = true;
			return std::string();
		}, "fence"},
	{"cq-api", 0, "API",
		"classic: ibv_poll_cq into an array (default); ex: extended CQs,\n"
		"ibv_start_poll / ibv_next_poll, where the device has them",
		"classic ex", kShapes, [](ParseState &st, const char *a) {
			st.o->cq_api = choice(st, a) == 1 ? CqApi::ex : CqApi::classic;
			return std::string();
		}, "cq_api"},
	{"interactive", 'i', nullptr,
		"the console on the main lcore while the run goes on (show stats,\n"
		"set rate, stop, start, quit, ...; needs 2 lcores besides the main one)",
		nullptr, kAside, [](ParseState &st, const char *) {
			st.o->interactive = true;
			return std::string();
		}},
	{"metrics", 0, "[ADDR:]PORT",
		"serve Prometheus metrics at http://ADDR:PORT/metrics while the\n"
		"run goes on (docs/metrics.md; default ADDR: every IPv4 address)",
		nullptr, kAside, [](ParseState &st, const char *a) {
			return set_addr(st, &st.o->metrics, a, addr_listen, "[IPV4:]PORT (a port in 1..65535)");
		}, "metrics"},
	{"push", 0, "URL",
		"push the metrics to a Pushgateway (http://HOST[:PORT], default\n"
		"port 9091) at the run's end, and every --stats-period if set",
		nullptr, kAside, [](ParseState &st, const char *a) {
			return set_addr(st, &st.o->push, a, [](const std::string &u) { return push_url(u); }, "http://HOST[:PORT] (a Pushgateway)");
		}, "push"},
	{"metrics-qp", 0, nullptr,
		"per-QP hardware counters in the metrics (rdma statistic qp: the\n"
		"kernel binds a counter to each QP; refused where the driver has\n"
		"none, as rxe, or without CAP_NET_ADMIN)",
		nullptr, kAside, [](ParseState &st, const char *) {
			st.o->metrics_qp = true;
			return std::string();
		}, "metrics_qp"},
	{"stats-period", 0, "N",
		"print a line per flow every N seconds (rate, outstanding, errors,\n"
		"progress), then the summary",
		nullptr, kAside, [](ParseState &st, const char *a) {
			return set_real(st, &st.o->stats_period_s, a, 0.1, false, 3600,
					"is not a period in 0.1..3600 seconds");
		}, "stats_period"},
	{"transport", 0, "T",
		"rc (default) or uc: unreliable connected QPs (sends and writes;\n"
		"no acks, no RNR: a message with no receive posted is lost)",
		"rc uc", kShapes, [](ParseState &st, const char *a) {
			st.o->uc = choice(st, a) == 1;
			return std::string();
		}, "transport"},
	{"reliability", 0, "R",
		"with --transport uc: software (default: sequence numbers, ACK + SACK\n"
		"on a UD control QP, fast and timed retransmission; write_imm, send\n"
		"and send_imm) or none (plain UC: losses are counted, the run fails)",
		"software none", kShapes, [](ParseState &st, const char *a) {
			st.o->reliability = choice(st, a) == 0 ? Reliability::software : Reliability::none;
			return std::string();
		}, "reliability"},
	{"ack-every", 0, "N",
		"software reliability: an ACK every N messages of a QP (default 16) ...",
		nullptr, kShapes, [](ParseState &st, const char *a) {
			return set_uint(st, &st.o->ack_every, a, 1, kMaxAckEvery);
		}, "ack_every"},
	{"ack-us", 0, "N",
		"... or N us after the first unacknowledged one (default 100)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->ack_us, a, 1, kMaxAckUs); }, "ack_us"},
	{"chunk", 0, "N",
		"software reliability, write_imm: cut each message into chunks of N\n"
		"bytes, each its own WRITE_WITH_IMM, tracked and resent on its own\n"
		"(default: the path MTU less 12 when a message does not fit one\n"
		"packet; 0: never cut; at most 4095)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->chunk, a, 0, kMaxChunk); }, "chunk"},
	{"rate", 0, "N",
		"at most N messages per second per flow (a pace kept by the requester)",
		nullptr, kShapes, [](ParseState &st, const char *a) {
			return set_real(st, &st.o->rate_pps, a, 0, true, 1e9,
					"is not a message rate in (0, 1e9] messages per second");
		}, "rate"},
	{"connect", 0, "PATH",
		"loopback runs: cm (default) connects the QP pairs through rdma_cm\n"
		"on the device's own IPv4 address, as two hosts do; direct\n"
		"gives each QP the other's number and GID (no IPv4 needed)",
		"cm direct", kShapes, [](ParseState &st, const char *a) {
			st.o->connect = choice(st, a) == 1 ? ConnectPath::direct : ConnectPath::cm;
			return std::string();
		}, "connect"},
	{"pingpong", 0, nullptr,
		"latency: one message in flight per QP, echoed back by an echo\n"
		"stage; reports half round-trip percentiles like ib_send_lat\n"
		"(verb send or send_imm; write: each end polls its slot in\n"
		"memory, like ib_write_lat; default 2 B and 100000 round trips\n"
		"over all QPs, inline where the device allows)",
		nullptr, kShapes, [](ParseState &st, const char *) {
			st.o->mode = Mode::pingpong;
			return std::string();
		}},
	{"poll", 0, "MODE",
		"busy (default): poll without pause; adaptive: after a run of\n"
		"empty polls, arm the CQs and sleep on a completion channel",
		"busy adaptive", kShapes, [](ParseState &st, const char *a) {
			st.o->adaptive_poll = choice(st, a) == 1;
			return std::string();
		}, "poll"},
	{"rnr-retry", 0, "N",
		"RNR retries, 0..7 (7 = forever, default)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->rnr_retry, a, 0, 7); }, "rnr_retry"},
	{"retry-cnt", 0, "N",
		"RC transport retries of an unanswered packet, 0..7 (default 7;\n"
		"rxe retries forever at 7, so only the stall timeout notices a dead path)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->retry_cnt, a, 0, 7); }, "retry_cnt"},
	{"min-rnr-timer", 0, "N",
		"responder's RNR NAK timer, IB encoding 0..31 (default 12 = 0.64 ms)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->min_rnr_timer, a, 0, 31); }, "min_rnr_timer"},
	{"tclass", 0, "N",
		"RoCE traffic class of the flow's packets, 0..255: DSCP << 2 | ECN\n"
		"(RoCE v2: the IP header's TOS byte; default 0, or rdma_cm's)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->traffic.traffic_class, a, 0, 255); }, "traffic_class"},
	{"sl", 0, "N",
		"service level, 0..15 (default 0; rdma_cm: derived from the class;\n"
		"rxe keeps none: refused there)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->traffic.sl, a, 0, 15); }, "sl"},
	{"flow-label", 0, "N",
		"flow label, 0..0xFFFFF (RoCE v2: picks the UDP source port, the\n"
		"ECMP hash's entropy; default: the provider hashes the QP numbers)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->traffic.flow_label, a, 0, kFlowLabelMax); }, "flow_label"},
	{"flow-label-spread", 0, nullptr,
		"QP i takes flow label N + i (from 1 without --flow-label):\n"
		"each QP its own UDP source port, so its own ECMP path",
		nullptr, kShapes, [](ParseState &st, const char *) {
			st.o->traffic.spread = true;
			return std::string();
		}, "flow_label_spread"},
	{"hop-limit", 0, "N",
		"GRH hop limit, 1..255 (InfiniBand; RoCE takes the IP route's: refused)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_uint(st, &st.o->traffic.hop_limit, a, 1, 255); }, "hop_limit"},
	{"no-verify", 0, nullptr,
		"do not check payloads (sequence is still checked)",
		nullptr, kShapes, [](ParseState &st, const char *) {
			st.o->verify = false;
			return std::string();
		}, "verify"},
	{"inject-corruption", 0, "N",
		"flip one byte of message N before it is sent (tests the checker)",
		nullptr, kAside, [](ParseState &st, const char *a) {
			return set_uint(st, &st.o->corrupt_msg, a, 0, UINT64_MAX >> 1);
		}},
	{"inject-bad-rkey", 0, "Q",
		"QP Q posts with a wrong rkey (tests completion-error handling)",
		nullptr, kAside, [](ParseState &st, const char *a) {
			return set_uint(st, &st.o->bad_rkey_qp, a, 0, kMaxQps - 1);
		}},
	{"inject-rnr", 0, "L",
		"lcore L's SRQ is never filled: SENDs to it are answered RNR NAK\n"
		"(tests RNR handling; with -f too)",
		nullptr, kAside, [](ParseState &st, const char *a) {
			return set_uint(st, &st.o->inject_rnr_lcore, a, 0, 1023);
		}},
	{"inject-pool-squeeze", 0, "N",
		"the first flow's send pool keeps only N buffers (tests\n"
		"back-pressure on an exhausted pool; with -f too)",
		nullptr, kAside, [](ParseState &st, const char *a) {
			return set_uint(st, &st.o->inject_pool_left, a, 1, UINT32_MAX);
		}},
	{"inject-loss", 0, "F",
		"UC: the sender skips posting this fraction (0..0.5) of data WRs while\n"
		"tracking them as sent (with -f: the file's UC flows)",
		nullptr, kAside, [](ParseState &st, const char *a) {
			return set_real(st, &st.o->inject_loss, a, 0, false, 0.5, "is not a fraction in 0..0.5");
		}},
	{"inject-bad-retx-header", 0, nullptr,
		"software reliability: the first retransmission's header targets\n"
		"outside the receiver's window (it must be refused and counted)",
		nullptr, kAside, [](ParseState &st, const char *) {
			st.o->inject_bad_retx_header = true;
			return std::string();
		}},
	{"plant", 0, "SPEC",
		"test hook on the flows in one corner of the run's space, repeatable:\n"
		"SPEC is EFFECT:KEY OP VALUE[,...], EFFECT corrupt (flip a byte of\n"
		"an early message), slow (pace the flow at 1000 msg/s) or wedge\n"
		"(crash the kernel, left hanging: in tools/softroce's VM only), KEY a\n"
		"flow's setting (size, qps, batch, verb, inline, ...), OP < <= > >=\n"
		"= !=; e.g. 'corrupt:size>=8K,qps>=4' (with -f and --points too)",
		nullptr, kAside, [](ParseState &st, const char *a) {
			PlantSpec p;
			std::string err;
			if (plant_parse(a, &p, &err) != 0)
				return err;
			st.o->plants.push_back(p);
			return std::string();
		}},
	{"stall-timeout", 0, "SEC",
		"fail a running flow when nothing progresses for SEC seconds\n"
		"(default 10); it does not bound connecting: --connect-timeout",
		nullptr, kAside, [](ParseState &st, const char *a) { return set_seconds(st, &st.o->stall_timeout_s, a); }},
	{"connect-timeout", 0, "SEC",
		"how long connecting waits: for the other host (a client for\n"
		"its server to listen, a server for its clients), or a loopback's\n"
		"ends through rdma_cm (default 10; with -f: the file's\n"
		"run.connect_timeout)",
		nullptr, kAside, [](ParseState &st, const char *a) {
			char *end = nullptr;
			const double v = strtod(a, &end);
			if (end == a || *end != '\0')
				return bad_value(st, a, connect_timeout_problem(0).c_str());
			if (std::string why = connect_timeout_problem(v); !why.empty())
				return bad_value(st, a, why.c_str());
			st.o->connect_timeout_s = v;
			return std::string();
		}, "connect_timeout"},
	{"config", 'f', "FILE",
		"run the pipeline FILE describes (libconfig; see conf/default.conf);\n"
		"'rdmapipe [EAL options] --check FILE' validates it without running",
		nullptr, kAside, [](ParseState &st, const char *a) {
			return set_text(st, &st.o->config_file, a, "empty file name");
		}},
	{"dump-conf", 0, nullptr,
		"print the pipeline these options mean, as a file for -f, and exit",
		nullptr, kAside, [](ParseState &st, const char *) {
			st.o->dump_conf = true;
			return std::string();
		}},
	{"points", 0, nullptr,
		"run many pipelines in one process, EAL started once: each line\n"
		"on stdin is CONF<TAB>LOG (a file, where its output goes) or\n"
		"--<TAB>LOG<TAB>ARG... (a command line's arguments), each answered\n"
		"'done<TAB>STATUS' on stdout (not with -f, -i, --dump-conf,\n"
		"--listen, --peer, --output, --csv)",
		nullptr, kAside, [](ParseState &st, const char *) {
			st.o->points = true;
			return std::string();
		}},
	{"stage-cycles", 0, nullptr,
		"count TSC cycles per stage call (summary, show stages, telemetry,\n"
		"results; costs a TSC read per call)",
		nullptr, kAside, [](ParseState &st, const char *) {
			st.o->stage_cycles = true;
			return std::string();
		}},
	{"listen", 0, "[ADDR:]PORT",
		"two processes: be the server (the receiving end) on ADDR:PORT;",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_addr(st, &st.o->listen, a, addr_listen, "[ADDR:]PORT"); }, "listen"},
	{"peer", 0, "ADDR:PORT",
		"... or the client (the sending end) of that server, over rdma_cm;",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_addr(st, &st.o->peer, a, addr_ipv4_port, "ADDR:PORT"); }, "peer"},
	{"reversed", 0, nullptr,
		"... the other way: the server sends, the client receives (both\n"
		"ends give it; perftest's --reversed);",
		nullptr, kShapes, [](ParseState &st, const char *) {
			st.o->reversed = true;
			return std::string();
		}},
	{"bidirectional", 0, nullptr,
		"each flow runs both ways at once: a second flow, FLOW_back, the\n"
		"other way (two processes: flow i's on PORT + flows + i; both\n"
		"ends give it; perftest's -b)",
		nullptr, kShapes, [](ParseState &st, const char *) {
			st.o->bidirectional = true;
			return std::string();
		}},
	{"local", 0, "ADDR",
		"the client's own address (picks its device); both sides take\n"
		"the same run options (the server checks them)",
		nullptr, kShapes, [](ParseState &st, const char *a) { return set_addr(st, &st.o->local, a, addr_ipv4, "an IPv4 address"); }, "local"},
	{"output", 0, "FILE.json",
		"write the results as JSON (docs/results.md); --csv FILE: as CSV",
		nullptr, kAside, [](ParseState &st, const char *a) {
			return set_text(st, &st.o->output_json, a, "empty file name");
		}},
	{"csv", 0, "FILE.csv",
		nullptr,   // in --output's line
		nullptr, kAside, [](ParseState &st, const char *a) {
			return set_text(st, &st.o->output_csv, a, "empty file name");
		}},
	{"quiet", 'q', nullptr,
		"print only the summary",
		nullptr, kAside, [](ParseState &st, const char *) {
			st.o->quiet = true;
			return std::string();
		}},
	{"help", 'h', nullptr,
		"this text",
		nullptr, kAside, [](ParseState &st, const char *) {
			st.stop = ParseResult::help;
			return std::string();
		}},
	{"version", 'V', nullptr,
		"print the version",
		nullptr, kAside, [](ParseState &st, const char *) {
			st.stop = ParseResult::version;
			return std::string();
		}},
};

constexpr const char *kUsageHead =
"Usage: rdmapipe [EAL options] -- [options]\n"
"\n"
"Runs, on EAL lcores, one of: a loopback rate run (the default: a requester lcore\n"
"posts chains of one verb over RC QPs to a responder lcore on the same device), a\n"
"ping-pong latency run (--pingpong), one side of a two-host run over rdma_cm\n"
"(--listen / --peer), or the pipeline a file describes (-f). Every payload,\n"
"immediate, read result and atomic value is verified. A file with a pattern is a\n"
"job of N ranks: mpirun -np N rdmapipe [EAL options] -- -f FILE (docs/cluster.md).\n"
"\n"
"Options:\n";

constexpr const char *kUsageTail =
"\n"
"Exit status: 0 every message arrived and verified; 1 the run failed (data, sequence or\n"
"completion errors); 2 bad arguments; 3 no usable RDMA device or setup failure.\n"
"\n"
"Example: rdmapipe -l 0-1 --in-memory -- -d rxe0 -s 64 -n 100000\n"
"No RDMA hardware? tools/softroce -- build/app/rdmapipe/rdmapipe ... runs it on soft-RoCE.\n";

constexpr size_t kHelpColumn = 27;   // where --help's descriptions start

/* "  -v, --verb NAME          send, ...": the option, then its text at kHelpColumn
 * (two spaces after an option that reaches it), continuation lines indented to it. */
void usage_row(std::string *out, const OptionSpec &spec)
{
	std::string left = spec.letter ? std::string("  -") + spec.letter + ", --" : std::string("      --");
	left += spec.name;
	if (spec.metavar)
		left += std::string(" ") + spec.metavar;
	left.append(left.size() < kHelpColumn ? kHelpColumn - left.size() : 2, ' ');
	*out += left;
	for (const char *p = spec.help; *p != '\0'; p++) {
		*out += *p;
		if (*p == '\n')
			out->append(kHelpColumn, ' ');
	}
	*out += '\n';
}

std::string make_usage()
{
	std::string out = kUsageHead;
	for (const OptionSpec &spec : kOptions)
		if (spec.help != nullptr)
			usage_row(&out, spec);
	return out + kUsageTail;
}

} // namespace

std::span<const OptionSpec> option_table()
{
	return kOptions;
}

std::string option_of_key(const std::string &key)
{
	const std::string k = key == "sizes" ? "size" : key;   // -s takes one size or a sweep's
	for (const OptionSpec &o : kOptions)
		if (o.key != nullptr && k == o.key)
			return (o.letter ? std::string("-") + o.letter + "/" : std::string()) + "--" + o.name;
	return "";
}

int option_choice(const OptionSpec &spec, const char *arg)
{
	if (spec.choices == nullptr)
		return -1;
	size_t len = strlen(arg);
	int i = 0;
	for (const char *p = spec.choices; *p != '\0'; i++) {
		size_t n = strcspn(p, " ");
		if (n == len && strncmp(p, arg, n) == 0)
			return i;
		p += n + (p[n] == ' ');
	}
	return -1;
}

bool parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	return parse_u64(s, lo, hi, out);
}

const char *options_usage()
{
	static const std::string usage = make_usage();
	return usage.c_str();
}

} // namespace rp
