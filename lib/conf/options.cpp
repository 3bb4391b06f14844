#include "conf/options.h"

#include <getopt.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace rp {

namespace {

enum LongOnly {
	OPT_NO_VERIFY = 256,
	OPT_CORRUPT,
	OPT_SRQ_REFILL,
	OPT_STALL,
	OPT_SLOTS,
	OPT_FLOW_WINDOW,
	OPT_SQ_DEPTH,
	OPT_BAD_RKEY,
	OPT_INJECT_RNR,
	OPT_RETRY_CNT,
	OPT_POOL_SQUEEZE,
	OPT_POST_API,
	OPT_INLINE,
	OPT_FENCE,
	OPT_RNR_RETRY,
	OPT_MIN_RNR_TIMER,
	OPT_POLL,
	OPT_CQ_API,
	OPT_RECV_QUEUE,
	OPT_CONNECT,
	OPT_RATE,
	OPT_TRANSPORT,
	OPT_RELIABILITY,
	OPT_ACK_EVERY,
	OPT_ACK_US,
	OPT_CHUNK,
	OPT_INJECT_LOSS,
	OPT_BAD_RETX_HDR,
	OPT_STATS_PERIOD,
	OPT_PINGPONG,
	OPT_OUTPUT,
	OPT_CSV,
	OPT_LISTEN,
	OPT_PEER,
	OPT_LOCAL,
	OPT_DUMP_CONF,
	OPT_STAGE_CYCLES,
};


const struct option kLongOpts[] = {
	{"verb", required_argument, nullptr, 'v'},
	{"qps", required_argument, nullptr, 'Q'},
	{"inject-bad-rkey", required_argument, nullptr, OPT_BAD_RKEY},
	{"inject-rnr", required_argument, nullptr, OPT_INJECT_RNR},
	{"inject-pool-squeeze", required_argument, nullptr, OPT_POOL_SQUEEZE},
	{"post-api", required_argument, nullptr, OPT_POST_API},
	{"cq-api", required_argument, nullptr, OPT_CQ_API},
	{"recv-queue", required_argument, nullptr, OPT_RECV_QUEUE},
	{"connect", required_argument, nullptr, OPT_CONNECT},
	{"rate", required_argument, nullptr, OPT_RATE},
	{"transport", required_argument, nullptr, OPT_TRANSPORT},
	{"reliability", required_argument, nullptr, OPT_RELIABILITY},
	{"ack-every", required_argument, nullptr, OPT_ACK_EVERY},
	{"ack-us", required_argument, nullptr, OPT_ACK_US},
	{"chunk", required_argument, nullptr, OPT_CHUNK},
	{"inject-loss", required_argument, nullptr, OPT_INJECT_LOSS},
	{"inject-bad-retx-header", no_argument, nullptr, OPT_BAD_RETX_HDR},
	{"stats-period", required_argument, nullptr, OPT_STATS_PERIOD},
	{"interactive", no_argument, nullptr, 'i'},
	{"pingpong", no_argument, nullptr, OPT_PINGPONG},
	{"output", required_argument, nullptr, OPT_OUTPUT},
	{"listen", required_argument, nullptr, OPT_LISTEN},
	{"peer", required_argument, nullptr, OPT_PEER},
	{"local", required_argument, nullptr, OPT_LOCAL},
	{"csv", required_argument, nullptr, OPT_CSV},
	{"inline", no_argument, nullptr, OPT_INLINE},
	{"fence", no_argument, nullptr, OPT_FENCE},
	{"poll", required_argument, nullptr, OPT_POLL},
	{"rnr-retry", required_argument, nullptr, OPT_RNR_RETRY},
	{"retry-cnt", required_argument, nullptr, OPT_RETRY_CNT},
	{"min-rnr-timer", required_argument, nullptr, OPT_MIN_RNR_TIMER},
	{"device", required_argument, nullptr, 'd'},
	{"port", required_argument, nullptr, 'p'},
	{"gid-index", required_argument, nullptr, 'g'},
	{"size", required_argument, nullptr, 's'},
	{"messages", required_argument, nullptr, 'n'},
	{"duration", required_argument, nullptr, 't'},
	{"batch", required_argument, nullptr, 'b'},
	{"signal-every", required_argument, nullptr, 'S'},
	{"sq-depth", required_argument, nullptr, OPT_SQ_DEPTH},
	{"slots", required_argument, nullptr, OPT_SLOTS},
	{"flow-window", required_argument, nullptr, OPT_FLOW_WINDOW},
	{"srq-refill", required_argument, nullptr, OPT_SRQ_REFILL},
	{"no-verify", no_argument, nullptr, OPT_NO_VERIFY},
	{"inject-corruption", required_argument, nullptr, OPT_CORRUPT},
	{"stall-timeout", required_argument, nullptr, OPT_STALL},
	{"config", required_argument, nullptr, 'f'},
	{"dump-conf", no_argument, nullptr, OPT_DUMP_CONF},
	{"stage-cycles", no_argument, nullptr, OPT_STAGE_CYCLES},
	{"quiet", no_argument, nullptr, 'q'},
	{"help", no_argument, nullptr, 'h'},
	{"version", no_argument, nullptr, 'V'},
	{nullptr, 0, nullptr, 0},
};

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

} // namespace

bool parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	return parse_u64(s, lo, hi, out);
}

const char *options_usage()
{
	return
"Usage: rdmapipe [EAL options] -- [options]\n"
"\n"
"Runs, on EAL lcores, one of: a loopback rate run (the default: a requester lcore\n"
"posts chains of one verb over RC QPs to a responder lcore on the same device), a\n"
"ping-pong latency run (--pingpong), one side of a two-host run over rdma_cm\n"
"(--listen / --peer), or the pipeline a file describes (-f). Every payload,\n"
"immediate, read result and atomic value is verified. A file with a pattern is a\n"
"job of N ranks: mpirun -np N rdmapipe [EAL options] -- -f FILE (docs/cluster.md).\n"
"\n"
"Options:\n"
"  -v, --verb NAME          send, send_imm, write, write_imm (default), read,\n"
"                           fetch_add, cmp_swap\n"
"  -Q, --qps N[,N...]       QPs in the flow (1..1024, default 1); a list makes one flow per\n"
"                           entry (up to 16, -Q 1,64), every QP of every flow sharing the\n"
"                           lcore's CQ pair and SRQ; each flow sends --messages; QPs are\n"
"                           numbered across the flows in order (for --inject-bad-rkey)\n"
"  -d, --device NAME        RDMA device (default: the first one found)\n"
"  -p, --port N             device port (default 1)\n"
"  -g, --gid-index N        GID index (default: the RoCE v2 IPv4 GID, found from sysfs)\n"
"  -s, --size BYTES[,...]   message size, 1..1G, K/M/G suffixes (default 64; atomics: 8);\n"
"                           a list (-s 64,1K,64K) is a size sweep: the run once per size\n"
"  -n, --messages N         stop after N messages (default 1000000)\n"
"  -t, --duration SEC       stop after SEC seconds instead of a count\n"
"  -b, --batch N            work requests per chain, one ibv_post_send each (1..512, default 32)\n"
"  -S, --signal-every N     one signalled work request per N (default: batch)\n"
"      --sq-depth N         send queue depth (default 4 x max(batch, signal-every))\n"
"      --slots N            responder window slots per QP (default 1024 / qps, at least batch)\n"
"      --flow-window N      messages in flight over all of a flow's QPs, credited once for\n"
"                           the flow, so the SRQ holds N whatever the QP count (0: none;\n"
"                           default 1024 where the QPs' windows add up to more: send,\n"
"                           send_imm, write_imm over RC or plain UC, --slots not given)\n"
"      --srq-refill N       repost SRQ receives once N are consumed (default slots x qps / 8)\n"
"      --recv-queue Q       srq: the receiving lcore's QPs share one SRQ (default); qp: each\n"
"                           QP its own receive queue, refilled once 1/8 of it is consumed\n"
"      --post-api API       classic: chained ibv_post_send (default); wr: ibv_qp_ex\n"
"                           ibv_wr_start ... ibv_wr_complete, where the device has it\n"
"      --inline             send payloads inline (send and write verbs, up to the device's max)\n"
"      --fence              IBV_SEND_FENCE on the first WR of each chain\n"
"      --cq-api API         classic: ibv_poll_cq into an array (default); ex: extended CQs,\n"
"                           ibv_start_poll / ibv_next_poll, where the device has them\n"
"  -i, --interactive        the console on the main lcore while the run goes on (show stats,\n"
"                           set rate, stop, start, quit, ...; needs 2 lcores besides the main one)\n"
"      --stats-period N     print a line per flow every N seconds (rate, outstanding, errors,\n"
"                           progress), then the summary\n"
"      --transport T        rc (default) or uc: unreliable connected QPs (sends and writes;\n"
"                           no acks, no RNR: a message with no receive posted is lost)\n"
"      --reliability R      with --transport uc: software (default: sequence numbers, ACK + SACK\n"
"                           on a UD control QP, fast and timed retransmission; write_imm, send\n"
"                           and send_imm) or none (plain UC: losses are counted, the run fails)\n"
"      --ack-every N        software reliability: an ACK every N messages of a QP (default 16) ...\n"
"      --ack-us N           ... or N us after the first unacknowledged one (default 100)\n"
"      --chunk N            software reliability, write_imm: cut each message into chunks of N\n"
"                           bytes, each its own WRITE_WITH_IMM, tracked and resent on its own\n"
"                           (default: the path MTU less 12 when a message does not fit one\n"
"                           packet; 0: never cut; at most 4095)\n"
"      --rate N             at most N messages per second per flow (a pace kept by the requester)\n"
"      --connect PATH       loopback runs: cm (default) connects the QP pairs through rdma_cm\n"
"                           on the device's own IPv4 address, as two hosts do; direct\n"
"                           gives each QP the other's number and GID (no IPv4 needed)\n"
"      --pingpong           latency: one message in flight per QP, echoed back by an echo\n"
"                           stage; reports half round-trip percentiles like ib_send_lat\n"
"                           (verb send or send_imm, default 2 B and 100000 round trips\n"
"                           over all QPs, inline where the device allows)\n"
"      --poll MODE          busy (default): poll without pause; adaptive: after a run of\n"
"                           empty polls, arm the CQs and sleep on a completion channel\n"
"      --rnr-retry N        RNR retries, 0..7 (7 = forever, default)\n"
"      --retry-cnt N        RC transport retries of an unanswered packet, 0..7 (default 7;\n"
"                           rxe retries forever at 7, so only the stall timeout notices a dead path)\n"
"      --min-rnr-timer N    responder's RNR NAK timer, IB encoding 0..31 (default 12 = 0.64 ms)\n"
"      --no-verify          do not check payloads (sequence is still checked)\n"
"      --inject-corruption N  flip one byte of message N before it is sent (tests the checker)\n"
"      --inject-bad-rkey Q  QP Q posts with a wrong rkey (tests completion-error handling)\n"
"      --inject-rnr L       lcore L's SRQ is never filled: SENDs to it are answered RNR NAK\n"
"                           (tests RNR handling; with -f too)\n"
"      --inject-pool-squeeze N  the first flow's send pool keeps only N buffers (tests\n"
"                           back-pressure on an exhausted pool; with -f too)\n"
"      --inject-loss F      UC: the sender skips posting this fraction (0..0.5) of data WRs while\n"
"                           tracking them as sent (with -f: the file's UC flows)\n"
"      --inject-bad-retx-header  software reliability: the first retransmission's header targets\n"
"                           outside the receiver's window (it must be refused and counted)\n"
"      --stall-timeout SEC  fail when nothing progresses for SEC seconds (default 10); two\n"
"                           processes also wait this long (at least 10 s) to connect\n"
"  -f, --config FILE        run the pipeline FILE describes (libconfig; see conf/default.conf);\n"
"                           'rdmapipe [EAL options] --check FILE' validates it without running\n"
"      --dump-conf          print the pipeline these options mean, as a file for -f, and exit\n"
"      --stage-cycles       count TSC cycles per stage call (summary, show stages, telemetry,\n"
"                           results; costs a TSC read per call)\n"
"      --listen [ADDR:]PORT two processes: be the server (the responder) on ADDR:PORT;\n"
"      --peer ADDR:PORT     ... or the client (the requester) of that server, over rdma_cm;\n"
"      --local ADDR         the client's own address (picks its device); both sides take\n"
"                           the same run options (the server checks them)\n"
"      --output FILE.json   write the results as JSON (docs/results.md); --csv FILE: as CSV\n"
"  -q, --quiet              print only the summary\n"
"  -h, --help               this text\n"
"  -V, --version            print the version\n"
"\n"
"Exit status: 0 every message arrived and verified; 1 the run failed (data, sequence or\n"
"completion errors); 2 bad arguments; 3 no usable RDMA device or setup failure.\n"
"\n"
"Example: rdmapipe -l 0-1 --in-memory -- -d rxe0 -s 64 -n 100000\n"
"No RDMA hardware? tools/softroce -- build/app/rdmapipe/rdmapipe ... runs it on soft-RoCE.\n";
}

/* Software reliability's settings go with UC and the verbs it can track; RC is
 * reliable in the NIC. Settles o->reliability (none unless UC). */
static int check_reliability(RunOptions *o, std::string *err)
{
	const bool soft = o->uc && o->reliability == Reliability::software;
	if (!o->uc && o->reliability_given) {
		*err = "--reliability: applies to --transport uc (RC is reliable in the NIC)";
		return -1;
	}
	if (soft && !verb_consumes_receive(o->verb)) {
		*err = "--transport uc -v write: software reliability needs a completion at the receiver: use write_imm, "
		       "send or send_imm, or --reliability none for plain UC writes";
		return -1;
	}
	if (o->chunk != kChunkAuto && (!soft || !verb_info(o->verb).chunkable)) {
		*err = "--chunk: cuts write_imm messages of --transport uc with software reliability";
		return -1;
	}
	if (!soft && (o->ack_every != kDefaultAckEvery || o->ack_us != kDefaultAckUs)) {
		*err = std::string(o->ack_every != kDefaultAckEvery ? "--ack-every" : "--ack-us") +
		       ": applies to --transport uc with software reliability";
		return -1;
	}
	if (o->inject_loss > 0 && !o->uc) {
		*err = "--inject-loss: needs --transport uc (an RC QP cannot skip a message)";
		return -1;
	}
	if (o->inject_loss > 0 && !soft && o->post_api == PostApi::wr) {
		*err = "--inject-loss: on plain UC leaves WRs out of ibv_post_send chains (--post-api classic, or software reliability)";
		return -1;
	}
	if (o->inject_bad_retx_header && (!soft || !verb_info(o->verb).chunkable)) {
		*err = "--inject-bad-retx-header: needs --transport uc -v write_imm with software reliability";
		return -1;
	}
	if (!o->uc)
		o->reliability = Reliability::none;
	return 0;
}

ParseResult parse_options(int argc, char **argv, RunOptions *o, std::string *err)
{
	*o = RunOptions{};
	for (int i = 1; i < argc; i++)
		o->argv_app.emplace_back(argv[i]);
	optind = 0;   // full re-initialisation (GNU), so the parser can run more than once
	opterr = 0;   // we report errors ourselves, naming the option
	bool have_messages = false, have_size = false, have_slots = false, have_verb = false;
	int c;
	uint64_t v;
	std::string shaping;   // the first option that describes the run (a pipeline file does that)
	while ((c = getopt_long(argc, argv, ":v:Q:d:p:g:s:n:t:b:S:f:qhVi", kLongOpts, nullptr)) != -1) {
		const char *a = optarg;
		if (shaping.empty() && c != 'f' && c != 'q' && c != 'h' && c != 'V' && c != OPT_STALL && c != OPT_CORRUPT && c != OPT_OUTPUT && c != OPT_CSV &&
		    c != OPT_BAD_RKEY && c != OPT_INJECT_RNR && c != OPT_POOL_SQUEEZE && c != OPT_INJECT_LOSS && c != OPT_BAD_RETX_HDR && c != OPT_STATS_PERIOD && c != OPT_DUMP_CONF && c != OPT_STAGE_CYCLES && c != 'i' && c != ':' &&
		    c != '?')
			shaping = argv[optind - 1 - (optarg && optarg == argv[optind - 1] ? 1 : 0)];
		switch (c) {
		case OPT_DUMP_CONF:
			o->dump_conf = true;
			break;
		case OPT_STAGE_CYCLES:
			o->stage_cycles = true;
			break;
		case 'f':
			if (*a == '\0') {
				*err = "--config: empty file name";
				return ParseResult::error;
			}
			o->config_file = a;
			break;
		case 'v':
			if (!verb_from_name(a, &o->verb)) {
				*err = std::string("--verb: '") + a + "' is not one of " + verb_names_list();
				return ParseResult::error;
			}
			have_verb = true;
			break;
		case 'Q': {
			/* N, or a list N,N,...: one flow per entry, all on the same lcores. */
			o->flows.clear();
			uint64_t total = 0;
			std::string list(a);
			size_t pos = 0;
			for (;;) {
				size_t comma = list.find(',', pos);
				std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
				if (!parse_u64(item.c_str(), 1, kMaxQps, &v) || o->flows.size() == kMaxFlows) {
					*err = strchr(a, ',') == nullptr
						? range_error("qps", a, 1, kMaxQps)
						: std::string("--qps: '") + a + "' is not a list of at most " +
						  std::to_string(kMaxFlows) + " integers in 1.." + std::to_string(kMaxQps);
					return ParseResult::error;
				}
				o->flows.push_back(static_cast<uint32_t>(v));
				total += v;
				if (comma == std::string::npos)
					break;
				pos = comma + 1;
			}
			if (total > kMaxQps) {
				*err = std::string("--qps ") + a + ": " + std::to_string(total) + " QPs in all, at most " +
				       std::to_string(kMaxQps);
				return ParseResult::error;
			}
			o->qps = static_cast<uint32_t>(total);
			break;
		}
		case OPT_POST_API:
			if (strcmp(a, "classic") == 0)
				o->post_api = PostApi::classic;
			else if (strcmp(a, "wr") == 0)
				o->post_api = PostApi::wr;
			else {
				*err = std::string("--post-api: '") + a + "' is not classic or wr";
				return ParseResult::error;
			}
			break;
		case OPT_CQ_API:
			if (strcmp(a, "classic") == 0)
				o->cq_api = CqApi::classic;
			else if (strcmp(a, "ex") == 0)
				o->cq_api = CqApi::ex;
			else {
				*err = std::string("--cq-api: '") + a + "' is not classic or ex";
				return ParseResult::error;
			}
			break;
		case OPT_RECV_QUEUE:
			if (strcmp(a, "srq") == 0 || strcmp(a, "qp") == 0)
				o->rq_per_qp = a[0] == 'q';
			else {
				*err = std::string("--recv-queue: '") + a + "' is not srq or qp";
				return ParseResult::error;
			}
			break;
		case OPT_CONNECT:
			if (strcmp(a, "cm") == 0)
				o->connect = ConnectPath::cm;
			else if (strcmp(a, "direct") == 0)
				o->connect = ConnectPath::direct;
			else {
				*err = std::string("--connect: '") + a + "' is not cm or direct";
				return ParseResult::error;
			}
			break;
		case 'i':
			o->interactive = true;
			break;
		case OPT_STATS_PERIOD: {
			char *end = nullptr;
			double v = strtod(a, &end);
			if (end == a || *end != '\0' || !(v >= 0.1) || v > 3600) {
				*err = std::string("--stats-period: '") + a + "' is not a period in 0.1..3600 seconds";
				return ParseResult::error;
			}
			o->stats_period_s = v;
			break;
		}
		case OPT_TRANSPORT:
			if (strcmp(a, "rc") == 0 || strcmp(a, "uc") == 0) {
				o->uc = a[0] == 'u';
			} else {
				*err = std::string("--transport: '") + a + "' is not rc or uc";
				return ParseResult::error;
			}
			break;
		case OPT_RELIABILITY:
			if (strcmp(a, "software") != 0 && strcmp(a, "none") != 0) {
				*err = std::string("--reliability: '") + a + "' is not software or none";
				return ParseResult::error;
			}
			o->reliability = a[0] == 's' ? Reliability::software : Reliability::none;
			o->reliability_given = true;
			break;
		case OPT_ACK_EVERY:
			if (!parse_u64(a, 1, kMaxAckEvery, &v)) {
				*err = range_error("ack-every", a, 1, kMaxAckEvery);
				return ParseResult::error;
			}
			o->ack_every = static_cast<uint32_t>(v);
			break;
		case OPT_ACK_US:
			if (!parse_u64(a, 1, kMaxAckUs, &v)) {
				*err = range_error("ack-us", a, 1, kMaxAckUs);
				return ParseResult::error;
			}
			o->ack_us = static_cast<uint32_t>(v);
			break;
		case OPT_CHUNK:
			if (!parse_u64(a, 0, kMaxChunk, &v)) {
				*err = range_error("chunk", a, 0, kMaxChunk);
				return ParseResult::error;
			}
			o->chunk = static_cast<uint32_t>(v);
			break;
		case OPT_INJECT_LOSS: {
			char *end = nullptr;
			double f = strtod(a, &end);
			if (end == a || *end || !(f >= 0 && f <= 0.5)) {
				*err = std::string("--inject-loss: '") + a + "' is not a fraction in 0..0.5";
				return ParseResult::error;
			}
			o->inject_loss = f;
			break;
		}
		case OPT_BAD_RETX_HDR:
			o->inject_bad_retx_header = true;
			break;
		case OPT_RATE: {
			char *end = nullptr;
			double v = strtod(a, &end);
			if (end == a || *end != '\0' || !(v > 0) || v > 1e9) {
				*err = std::string("--rate: '") + a + "' is not a message rate in (0, 1e9] messages per second";
				return ParseResult::error;
			}
			o->rate_pps = v;
			break;
		}
		case OPT_PINGPONG:
			o->mode = Mode::pingpong;
			break;
		case OPT_LISTEN:
		case OPT_PEER:
		case OPT_LOCAL:
			if (*a == '\0') {
				*err = std::string(c == OPT_LISTEN ? "--listen" : c == OPT_PEER ? "--peer" : "--local") +
				       ": empty address";
				return ParseResult::error;
			}
			(c == OPT_LISTEN ? o->listen : c == OPT_PEER ? o->peer : o->local) = a;
			break;
		case OPT_OUTPUT:
		case OPT_CSV:
			if (*a == '\0') {
				*err = std::string(c == OPT_OUTPUT ? "--output" : "--csv") + ": empty file name";
				return ParseResult::error;
			}
			(c == OPT_OUTPUT ? o->output_json : o->output_csv) = a;
			break;
		case OPT_POLL:
			if (strcmp(a, "busy") == 0)
				o->adaptive_poll = false;
			else if (strcmp(a, "adaptive") == 0)
				o->adaptive_poll = true;
			else {
				*err = std::string("--poll: '") + a + "' is not busy or adaptive";
				return ParseResult::error;
			}
			break;
		case OPT_INLINE:
			o->inline_send = true;
			break;
		case OPT_FENCE:
			o->fence = true;
			break;
		case OPT_RNR_RETRY:
			if (!parse_u64(a, 0, 7, &v)) {
				*err = range_error("rnr-retry", a, 0, 7);
				return ParseResult::error;
			}
			o->rnr_retry = static_cast<uint8_t>(v);
			break;
		case OPT_RETRY_CNT:
			if (!parse_u64(a, 0, 7, &v)) {
				*err = range_error("retry-cnt", a, 0, 7);
				return ParseResult::error;
			}
			o->retry_cnt = static_cast<uint8_t>(v);
			break;
		case OPT_MIN_RNR_TIMER:
			if (!parse_u64(a, 0, 31, &v)) {
				*err = range_error("min-rnr-timer", a, 0, 31);
				return ParseResult::error;
			}
			o->min_rnr_timer = static_cast<uint8_t>(v);
			break;
		case OPT_BAD_RKEY:
			if (!parse_u64(a, 0, kMaxQps - 1, &v)) {
				*err = range_error("inject-bad-rkey", a, 0, kMaxQps - 1);
				return ParseResult::error;
			}
			o->bad_rkey_qp = static_cast<int>(v);
			break;
		case OPT_INJECT_RNR:
			if (!parse_u64(a, 0, 1023, &v)) {
				*err = range_error("inject-rnr", a, 0, 1023);
				return ParseResult::error;
			}
			o->inject_rnr_lcore = static_cast<int>(v);
			break;
		case OPT_POOL_SQUEEZE:
			if (!parse_u64(a, 1, UINT32_MAX, &v)) {
				*err = range_error("inject-pool-squeeze", a, 1, UINT32_MAX);
				return ParseResult::error;
			}
			o->inject_pool_left = static_cast<uint32_t>(v);
			break;
		case 'd':
			if (*a == '\0') {
				*err = "--device: empty device name";
				return ParseResult::error;
			}
			o->device = a;
			break;
		case 'p':
			if (!parse_u64(a, 1, 254, &v)) {
				*err = range_error("port", a, 1, 254);
				return ParseResult::error;
			}
			o->port = static_cast<uint8_t>(v);
			break;
		case 'g':
			if (!parse_u64(a, 0, 255, &v)) {
				*err = range_error("gid-index", a, 0, 255);
				return ParseResult::error;
			}
			o->gid_index = static_cast<int>(v);
			break;
		case 's': {
			/* One size, or a list: a size sweep (the run once per size, in turn). */
			o->sizes.clear();
			std::string list = a;
			for (size_t at = 0; at <= list.size();) {
				size_t comma = list.find(',', at);
				std::string one = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
				if (!parse_u64(one.c_str(), 1, kMaxMsgBytes, &v) || o->sizes.size() == kMaxSweepSizes) {
					*err = o->sizes.size() == kMaxSweepSizes ? "--size: at most " + std::to_string(kMaxSweepSizes) + " sizes"
										 : range_error("size", one.c_str(), 1, kMaxMsgBytes);
					return ParseResult::error;
				}
				o->sizes.push_back(static_cast<uint32_t>(v));
				if (comma == std::string::npos)
					break;
				at = comma + 1;
			}
			o->msg_bytes = o->sizes[0];
			if (o->sizes.size() == 1)
				o->sizes.clear();
			have_size = true;
			break;
		}
		case 'n':
			if (!parse_u64(a, 1, UINT64_MAX >> 1, &v)) {
				*err = range_error("messages", a, 1, UINT64_MAX >> 1);
				return ParseResult::error;
			}
			o->messages = v;
			have_messages = true;
			break;
		case 't':
			if (!parse_seconds(a, &o->duration_s)) {
				*err = std::string("--duration: '") + a + "' is not a number of seconds in (0, 1e6]";
				return ParseResult::error;
			}
			break;
		case 'b':
			if (!parse_u64(a, 1, kMaxBatch, &v)) {
				*err = range_error("batch", a, 1, kMaxBatch);
				return ParseResult::error;
			}
			o->batch = static_cast<uint32_t>(v);
			o->batch_given = true;
			break;
		case 'S':
			if (!parse_u64(a, 1, kMaxSqDepth / 2, &v)) {
				*err = range_error("signal-every", a, 1, kMaxSqDepth / 2);
				return ParseResult::error;
			}
			o->signal_every = static_cast<uint32_t>(v);
			o->signal_given = true;
			break;
		case OPT_SQ_DEPTH:
			if (!parse_u64(a, 2, kMaxSqDepth, &v)) {
				*err = range_error("sq-depth", a, 2, kMaxSqDepth);
				return ParseResult::error;
			}
			o->sq_depth = static_cast<uint32_t>(v);
			break;
		case OPT_SLOTS:
			if (!parse_u64(a, 1, kMaxSlots, &v)) {
				*err = range_error("slots", a, 1, kMaxSlots);
				return ParseResult::error;
			}
			o->slots = static_cast<uint32_t>(v);
			have_slots = true;
			break;
		case OPT_FLOW_WINDOW:
			if (!parse_u64(a, 0, kMaxSlots, &v)) {
				*err = range_error("flow-window", a, 0, kMaxSlots);
				return ParseResult::error;
			}
			o->flow_window = static_cast<uint32_t>(v);
			o->flow_window_given = true;
			break;
		case OPT_SRQ_REFILL:
			if (!parse_u64(a, 1, kMaxSlots, &v)) {
				*err = range_error("srq-refill", a, 1, kMaxSlots);
				return ParseResult::error;
			}
			o->srq_refill = static_cast<uint32_t>(v);
			o->srq_refill_given = true;
			break;
		case OPT_NO_VERIFY:
			o->verify = false;
			break;
		case OPT_CORRUPT:
			if (!parse_u64(a, 0, UINT64_MAX >> 1, &v)) {
				*err = range_error("inject-corruption", a, 0, UINT64_MAX >> 1);
				return ParseResult::error;
			}
			o->corrupt_msg = v;
			break;
		case OPT_STALL:
			if (!parse_seconds(a, &o->stall_timeout_s)) {
				*err = std::string("--stall-timeout: '") + a + "' is not a number of seconds in (0, 1e6]";
				return ParseResult::error;
			}
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			return ParseResult::help;
		case 'V':
			return ParseResult::version;
		case ':':
			*err = std::string("option '") + argv[optind - 1] + "' needs a value";
			return ParseResult::error;
		default:
			*err = std::string("unknown option '") + argv[optind - 1] + "'";
			return ParseResult::error;
		}
	}
	if (optind < argc) {
		*err = std::string("unexpected argument '") + argv[optind] + "'";
		return ParseResult::error;
	}

	if (!o->config_file.empty()) {
		if (!shaping.empty()) {
			*err = "--config " + o->config_file + ": the pipeline file describes the run; '" + shaping +
			       "' cannot be combined with it";
			return ParseResult::error;
		}
		return ParseResult::ok;   // the file's flows are checked when it is loaded
	}
	/* Cross-checks and derived defaults. */
	if (o->uc && !verb_info(o->verb).uc) {
		*err = std::string("--transport uc: ") + verb_name(o->verb) + " needs a reliable connection (rc)";
		return ParseResult::error;
	}
	if (check_reliability(o, err) != 0)
		return ParseResult::error;
	if (!o->listen.empty() || !o->peer.empty()) {
		if (!o->listen.empty() && !o->peer.empty()) {
			*err = "--listen and --peer are exclusive: the server listens, the client names it";
			return ParseResult::error;
		}
		if (!o->listen.empty() && (o->inject_loss > 0 || o->inject_bad_retx_header)) {
			*err = std::string(o->inject_loss > 0 ? "--inject-loss" : "--inject-bad-retx-header") +
			       ": acts where the flow sends; with --listen this host receives (give it to the client)";
			return ParseResult::error;
		}
		if (!o->peer.empty() && (o->ack_every != kDefaultAckEvery || o->ack_us != kDefaultAckUs)) {
			*err = std::string(o->ack_every != kDefaultAckEvery ? "--ack-every" : "--ack-us") +
			       ": the receiver's; the server (--listen) sends the ACKs, give it there";
			return ParseResult::error;
		}
	}
	if (!o->local.empty() && o->peer.empty()) {
		*err = "--local goes with --peer (the client's address)";
		return ParseResult::error;
	}
	if (o->mode == Mode::pingpong) {
		/* Latency of one message at a time, echoed back: ib_send_lat's measurement. */
		if (!have_verb)
			o->verb = Verb::send;
		if (!verb_info(o->verb).fills_receive) {
			*err = std::string("--pingpong: ") + verb_name(o->verb) +
			       " is not echoed; ping-pong uses send or send_imm";
			return ParseResult::error;
		}
		if (o->rate_pps > 0) {
			*err = "--pingpong: one message at a time, echoed; --rate does not apply";
			return ParseResult::error;
		}
		if (o->duration_s > 0) {
			*err = "--pingpong: give --messages (iterations), not --duration";
			return ParseResult::error;
		}
		if (!have_size)
			o->msg_bytes = kDefaultPingPongBytes;
		if (!have_messages)
			o->messages = kDefaultPingPongIterations;
		have_messages = true;
	}
	if (const uint32_t fixed = verb_info(o->verb).fixed_bytes) {
		if (have_size && (o->msg_bytes != fixed || !o->sizes.empty())) {
			*err = std::string("--size ") + std::to_string(o->msg_bytes) + ": " + verb_name(o->verb) + " works on " +
			       std::to_string(fixed) + "-byte words only";
			return ParseResult::error;
		}
		o->msg_bytes = fixed;
	}
	if (o->inline_send && !verb_info(o->verb).inlinable) {
		*err = std::string("--inline: ") + verb_name(o->verb) + " carries no payload to inline";
		return ParseResult::error;
	}
	if (o->bad_rkey_qp >= 0 && verb_info(o->verb).remote_access == 0) {
		*err = std::string("--inject-bad-rkey: ") + verb_name(o->verb) + " uses no rkey";
		return ParseResult::error;
	}
	if (o->bad_rkey_qp >= static_cast<int>(o->qps)) {
		*err = "--inject-bad-rkey " + std::to_string(o->bad_rkey_qp) +
		       (o->flows.size() == 1 ? ": the flow has only " : ": the flows have only ") + std::to_string(o->qps) +
		       " QP(s)";
		return ParseResult::error;
	}
	if (have_messages && o->duration_s > 0) {
		*err = "--messages and --duration are exclusive: give one";
		return ParseResult::error;
	}
	if (!have_messages && o->duration_s == 0)
		o->messages = kDefaultMessages;
	if (o->signal_every == 0)
		o->signal_every = o->batch;
	uint32_t unit = o->batch > o->signal_every ? o->batch : o->signal_every;
	if (o->sq_depth == 0) {
		uint64_t d = static_cast<uint64_t>(kSqDepthPerUnit) * unit;
		o->sq_depth = d > kMaxSqDepth ? kMaxSqDepth : static_cast<uint32_t>(d);
	}
	/* A signalled WR every N frees SQ slots in steps of N: with less than 2N slots the
	 * sender would stall waiting for a completion it has not asked for yet. */
	if (o->sq_depth < 2ull * o->signal_every) {
		*err = "--sq-depth " + std::to_string(o->sq_depth) + " is below 2 x --signal-every (" +
		       std::to_string(2ull * o->signal_every) + ")";
		return ParseResult::error;
	}
	if (o->sq_depth < o->batch) {
		*err = "--sq-depth " + std::to_string(o->sq_depth) + " cannot hold one chain of --batch " +
		       std::to_string(o->batch);
		return ParseResult::error;
	}
	/* The default window is 1024 messages over the whole flow, at least a chain per QP. */
	o->slots_given = have_slots;
	if (!have_slots) {
		o->slots = kDefaultWindow / o->qps;
		if (o->slots < o->batch)
			o->slots = o->batch;
	}
	if (o->slots < o->batch) {
		*err = "--slots " + std::to_string(o->slots) + " is below --batch " +
		       std::to_string(o->batch) + ": a chain would not fit the receive window";
		return ParseResult::error;
	}
	if (o->flow_window && o->flow_window < o->batch) {
		*err = "--flow-window " + std::to_string(o->flow_window) + " is below --batch " + std::to_string(o->batch) +
		       ": a chain would not fit the flow's window";
		return ParseResult::error;
	}
	if (static_cast<uint64_t>(o->slots) * o->msg_bytes * o->qps > (1ull << 31)) {
		*err = "--slots x --size x --qps is " +
		       std::to_string(static_cast<uint64_t>(o->slots) * o->msg_bytes * o->qps) +
		       " bytes; the responder's memory is limited to 2 GiB";
		return ParseResult::error;
	}
	if (o->rq_per_qp && o->srq_refill_given) {
		*err = "--srq-refill: there is no SRQ with --recv-queue qp (each QP's receive queue is refilled once 1/8 of it is consumed)";
		return ParseResult::error;
	}
	/* The SRQ is shared by the flow's QPs: it holds every QP's window. */
	uint64_t window_total = static_cast<uint64_t>(o->slots) * o->qps;
	if (o->srq_refill == 0) {
		o->srq_refill = static_cast<uint32_t>(window_total / 8);
		if (o->srq_refill < o->batch)
			o->srq_refill = o->batch;
	}
	if (o->srq_refill > window_total) {
		*err = "--srq-refill " + std::to_string(o->srq_refill) + " exceeds --slots x --qps (" +
		       std::to_string(window_total) + ")";
		return ParseResult::error;
	}
	return ParseResult::ok;
}

} // namespace rp
