#include "conf/options.h"

#include "conf/config.h"
#include "conf/options_table.h"

#include <getopt.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace rp {

namespace {

constexpr int kLongOnly = 256;   // getopt's value of a row with no letter: kLongOnly + its index

/* getopt_long's arrays, made once from the table. */
struct GetoptArrays {
	std::vector<struct option> longs;
	std::string shorts = ":";   // leading ':': a missing value is told apart from an unknown option
};

const GetoptArrays &getopt_arrays()
{
	static const GetoptArrays arrays = [] {
		GetoptArrays g;
		std::span<const OptionSpec> table = option_table();
		for (size_t i = 0; i < table.size(); i++) {
			const OptionSpec &s = table[i];
			int val = s.letter ? s.letter : kLongOnly + static_cast<int>(i);
			g.longs.push_back({s.name, s.metavar ? required_argument : no_argument, nullptr, val});
			if (s.letter) {
				g.shorts += s.letter;
				if (s.metavar)
					g.shorts += ':';
			}
		}
		g.longs.push_back({nullptr, 0, nullptr, 0});
		return g;
	}();
	return arrays;
}

/* The row getopt_long answered with c, nullptr for ':', '?' or anything else. */
const OptionSpec *spec_of(int c)
{
	std::span<const OptionSpec> table = option_table();
	if (c >= kLongOnly && static_cast<size_t>(c - kLongOnly) < table.size())
		return &table[c - kLongOnly];
	for (const OptionSpec &s : table)
		if (s.letter != 0 && s.letter == c)
			return &s;
	return nullptr;
}

/* "a or b", "a, b or c": the words of a choices list, for an error. */
std::string choices_text(const char *choices)
{
	std::string out;
	for (const char *p = choices; *p != '\0';) {
		size_t n = strcspn(p, " ");
		if (!out.empty())
			out += p[n] == '\0' ? " or " : ", ";
		out.append(p, n);
		p += n + (p[n] == ' ');
	}
	return out;
}

std::string apply_option(ParseState *st, const OptionSpec &spec, const char *arg)
{
	st->spec = &spec;
	if (spec.choices != nullptr && option_choice(spec, arg) < 0)
		return std::string("--") + spec.name + ": '" + arg + "' is not " + choices_text(spec.choices);
	std::string err = spec.set(*st, arg);
	if (err.empty() && spec.key != nullptr)
		st->o->keys_given.emplace_back(spec.key);
	return err;
}

/* Applies each option in turn; *shaping gets the first one that describes the run
 * as it was typed (a pipeline file does that). */
ParseResult read_arguments(int argc, char **argv, ParseState *st, std::string *shaping, std::string *err)
{
	const GetoptArrays &g = getopt_arrays();
	optind = 0;   // full re-initialisation (GNU), so the parser can run more than once
	opterr = 0;   // we report errors ourselves, naming the option
	int c;
	while ((c = getopt_long(argc, argv, g.shorts.c_str(), g.longs.data(), nullptr)) != -1) {
		const OptionSpec *spec = spec_of(c);
		if (spec == nullptr) {
			*err = std::string(c == ':' ? "option '" : "unknown option '") + argv[optind - 1] +
			       (c == ':' ? "' needs a value" : "'");
			return ParseResult::error;
		}
		if (shaping->empty() && spec->shapes)
			*shaping = argv[optind - 1 - (optarg && optarg == argv[optind - 1] ? 1 : 0)];
		*err = apply_option(st, *spec, optarg);
		if (!err->empty())
			return ParseResult::error;
		if (st->stop != ParseResult::ok)
			return st->stop;
	}
	if (optind < argc) {
		*err = std::string("unexpected argument '") + argv[optind] + "'";
		return ParseResult::error;
	}
	return ParseResult::ok;
}

/* The test hooks of loss and retransmission (the command line's, not a flow's keys) go
 * with UC and the verbs they act on; a flow's reliability settings are the validator's.
 * Settles o->reliability (none unless UC). */
int check_reliability(RunOptions *o, std::string *err)
{
	const bool soft = o->uc && o->reliability == Reliability::software;
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


/* Flow i of a two-process run listens on (or connects to) PORT + i (cli_pipeline.cpp):
 * the last one's port must still be one. */
int check_ports(const RunOptions &o, std::string *err)
{
	const std::string &a = o.peer.empty() ? o.listen : o.peer;
	if (a.empty() || o.flows.size() < 2)
		return 0;
	const uint64_t port = addr_port(a), last = port + o.flows.size() - 1;   // a checked at its option
	if (last <= 65535)
		return 0;
	*err = std::string(o.peer.empty() ? "--listen" : "--peer") + ": the " + std::to_string(o.flows.size()) +
	       " flows (-Q) take ports " + std::to_string(port) + ".." + std::to_string(last) +
	       ", past 65535: give a lower port";
	return -1;
}

/* What the transport allows, and who gives what in a two-process run. */
int check_transport(RunOptions *o, std::string *err)
{
	if (o->uc && !verb_info(o->verb).uc) {
		*err = std::string("--transport uc: ") + verb_name(o->verb) + " needs a reliable connection (rc)";
		return -1;
	}
	if (check_reliability(o, err) != 0)
		return -1;
	const bool two = !o->listen.empty() || !o->peer.empty();
	if (!o->listen.empty() && !o->peer.empty()) {
		*err = "--listen and --peer are exclusive: the server listens, the client names it";
		return -1;
	}
	if (o->reversed && !two) {
		*err = "--reversed: which end sends is a two-process run's choice (--listen or --peer)";
		return -1;
	}
	/* (inject_loss and the ACK settings act at one end: the validator says which.) */
	if (two && o->inject_bad_retx_header && !o->listen.empty() != o->reversed) {
		*err = "--inject-bad-retx-header: acts where the flow sends; this host receives it (give it to the other)";
		return -1;
	}
	if (!o->local.empty() && o->peer.empty()) {
		*err = "--local goes with --peer (the client's address)";
		return -1;
	}
	if (o->connect_timeout_s > 0 && o->listen.empty() && o->peer.empty() && !loopback_through_cm(o->connect, o->uc)) {
		*err = std::string("--connect-timeout: ") + kConnectTimeoutNoWait;
		return -1;
	}
	return 0;
}

/* Latency of one message at a time, echoed back: ib_send_lat's measurement. */
int settle_pingpong(ParseState *st, std::string *err)
{
	RunOptions *o = st->o;
	if (!st->have_verb)
		o->verb = Verb::send;
	if (o->rate_pps > 0) {
		*err = "--pingpong: one message at a time, echoed; --rate does not apply";
		return -1;
	}
	if (o->duration_s > 0 && !until_stopped(o->duration_s)) {
		*err = "--pingpong: give --messages (iterations) or -t 0 (until stopped), not --duration";
		return -1;
	}
	if (!st->have_size)
		o->msg_bytes = kDefaultPingPongBytes;
	if (!st->have_messages)
		o->messages = kDefaultPingPongIterations;
	st->have_messages = true;
	return 0;
}

/* What the verb allows of the test hooks, its size where none was given, and how long
 * the run lasts (a size, inline or a count the verb refuses: the validator's). */
int check_verb(ParseState *st, std::string *err)
{
	RunOptions *o = st->o;
	/* A verb of fixed size takes its size where none was given (the validator refuses
	 * any other). */
	if (const uint32_t fixed = verb_info(o->verb).fixed_bytes; fixed && !st->have_size)
		o->msg_bytes = fixed;
	if (o->bad_rkey_qp >= 0 && verb_info(o->verb).remote_access == 0) {
		*err = std::string("--inject-bad-rkey: ") + verb_name(o->verb) + " uses no rkey";
		return -1;
	}
	if (o->bad_rkey_qp >= static_cast<int>(o->qps)) {
		*err = "--inject-bad-rkey " + std::to_string(o->bad_rkey_qp) +
		       (o->flows.size() == 1 ? ": the flow has only " : ": the flows have only ") + std::to_string(o->qps) +
		       " QP(s)";
		return -1;
	}
	if (!st->have_messages && o->duration_s == 0)
		o->messages = kDefaultMessages;
	return 0;
}

/* The send queue and the receive window, derived where not given. The rules between
 * them and the batch, the signalling and the sizes (a chain fits each; sq_depth at least
 * 2 x signal_every; the receiver's 2 GiB) are the validator's: conf_validate checks the
 * pipeline these options make, as it does a file's, and names the option. */
void settle_queues(const ParseState &st)
{
	RunOptions *o = st.o;
	if (o->signal_every == 0)
		o->signal_every = o->batch;
	uint32_t unit = o->batch > o->signal_every ? o->batch : o->signal_every;
	if (o->sq_depth == 0) {
		uint64_t d = static_cast<uint64_t>(kSqDepthPerUnit) * unit;
		o->sq_depth = d > kMaxSqDepth ? kMaxSqDepth : static_cast<uint32_t>(d);
	}
	/* The default window is 1024 messages over the whole flow, at least a chain per QP. */
	o->slots_given = st.have_slots;
	if (!st.have_slots) {
		o->slots = kDefaultWindow / o->qps;
		if (o->slots < o->batch)
			o->slots = o->batch;
	}
}

/* The SRQ's refill point: derived where not given, within the window the SRQ holds. */
int settle_srq(RunOptions *o, std::string *err)
{
	if (o->rq_per_qp && o->srq_refill_given) {
		*err = "--srq-refill: there is no SRQ with --recv-queue qp (each QP's receive queue is refilled once 1/8 of it is consumed)";
		return -1;
	}
	/* The SRQ is shared by the flow's QPs: it holds every QP's window. */
	uint64_t window_total = static_cast<uint64_t>(o->slots) * o->qps;
	if (o->srq_refill == 0) {
		o->srq_refill = static_cast<uint32_t>(window_total / 8);
		if (o->srq_refill < o->batch)
			o->srq_refill = o->batch;
	}
	if (o->srq_refill > window_total && !o->srq_refill_given)
		o->srq_refill = static_cast<uint32_t>(window_total);   // a window below the batch: the validator's
	if (o->srq_refill > window_total) {
		*err = "--srq-refill " + std::to_string(o->srq_refill) + " exceeds --slots x --qps (" +
		       std::to_string(window_total) + ")";
		return -1;
	}
	return 0;
}

/* --points runs the files stdin names, each as -f would: what describes a run, or
 * writes one file for all of them, or waits on a person or a peer, does not go with it. */
int check_points(const RunOptions &o, const std::string &shaping, std::string *err)
{
	const char *bad = !o.config_file.empty() ? "-f: the pipeline files come on stdin, one per line"
			  : o.dump_conf		 ? "--dump-conf: there is no command-line pipeline to print"
			  : o.interactive	 ? "-i: no console reads stdin, the requests do"
			  : !o.listen.empty()	 ? "--listen: each point is a pipeline file (its flows name their peers)"
			  : !o.peer.empty()	 ? "--peer: each point is a pipeline file (its flows name their peers)"
			  : !o.output_json.empty() ? "--output: every point would overwrite it (each file's run.output is its results)"
			  : !o.output_csv.empty()  ? "--csv: every point would overwrite it (each file's run.csv is its results)"
						   : nullptr;
	if (bad != nullptr) {
		*err = std::string("--points with ") + bad;
		return -1;
	}
	if (!shaping.empty()) {
		*err = "--points: each pipeline file describes its run; '" + shaping + "' cannot be combined with it";
		return -1;
	}
	return 0;
}

} // namespace

std::string connect_timeout_problem(double s)
{
	if (s > 0 && s <= kMaxConnectTimeoutS)   // NaN fails both
		return "";
	char b[64];
	snprintf(b, sizeof(b), "is not a number of seconds in (0, %g]", kMaxConnectTimeoutS);
	return b;
}

ParseResult parse_options(int argc, char **argv, RunOptions *o, std::string *err)
{
	*o = RunOptions{};
	for (int i = 1; i < argc; i++)
		o->argv_app.emplace_back(argv[i]);
	ParseState st;
	st.o = o;
	std::string shaping;   // the first option that describes the run (a pipeline file does that)
	ParseResult r = read_arguments(argc, argv, &st, &shaping, err);
	if (r != ParseResult::ok)
		return r;
	if (o->points)
		return check_points(*o, shaping, err) == 0 ? ParseResult::ok : ParseResult::error;
	if (!o->config_file.empty()) {
		if (!shaping.empty()) {
			*err = "--config " + o->config_file + ": the pipeline file describes the run; '" + shaping +
			       "' cannot be combined with it";
			return ParseResult::error;
		}
		return ParseResult::ok;   // the file's flows are checked when it is loaded
	}
	/* Cross-checks and derived defaults. */
	if (check_transport(o, err) != 0 || (o->mode == Mode::pingpong && settle_pingpong(&st, err) != 0) ||
	    check_verb(&st, err) != 0 || (settle_queues(st), settle_srq(o, err) != 0) || check_ports(*o, err) != 0)
		return ParseResult::error;
	return ParseResult::ok;
}

} // namespace rp
