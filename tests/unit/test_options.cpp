/* Argument parsing: defaults, every bound, cross-checks, and the exact error text. */
#include "conf/cli_pipeline.h"
#include "conf/config.h"
#include "conf/options.h"
#include "conf/options_table.h"
#include "conf/perftest.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "cmocka_cpp.h"   // last: it defines fail()

namespace {

rp::ParseResult parse(std::vector<std::string> args, rp::RunOptions *o, std::string *err)
{
	args.insert(args.begin(), "rdmapipe");
	std::vector<char *> argv;
	for (auto &a : args)
		argv.push_back(a.data());
	argv.push_back(nullptr);
	return rp::parse_options(static_cast<int>(args.size()), argv.data(), o, err);
}

void expect_error(std::vector<std::string> args, const char *msg)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse(args, &o, &err)), static_cast<int>(rp::ParseResult::error));
	assert_string_equal(err.c_str(), msg);
}

/* Options the parser takes whose pipeline the one validator refuses (a rule that lives
 * there only), with its message. */
void expect_refused_pipeline(std::vector<std::string> args, const char *msg)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse(args, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	rp::PipelineConf c = rp::pipeline_from_options(o, 1, 0);
	assert_int_equal(rp::conf_validate(&c, &err), -1);
	assert_string_equal(err.c_str(), msg);
}

void defaults(void **)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse({}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_true(o.device.empty());
	assert_int_equal(o.port, 1);
	assert_int_equal(o.gid_index, -1);
	assert_int_equal(o.msg_bytes, 64);
	assert_int_equal(o.messages, rp::kDefaultMessages);
	assert_int_equal(o.batch, 32);
	assert_int_equal(o.signal_every, 32);    // one signalled WR per chain
	assert_int_equal(o.sq_depth, 128);       // 4 x max(batch, signal_every)
	assert_int_equal(o.slots, 1024);
	assert_int_equal(o.srq_refill, 128);     // slots / 8
	assert_true(o.verify);
	assert_int_equal(o.corrupt_msg, UINT64_MAX);
}

void every_option(void **)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse({"-d", "rxe0", "-p", "2", "-g", "3", "-s", "64K", "-n", "500",
						 "-b", "16", "-S", "64", "--slots", "256", "--srq-refill", "40",
						 "--no-verify", "--inject-corruption", "7", "-q"},
						&o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_string_equal(o.device.c_str(), "rxe0");
	assert_int_equal(o.port, 2);
	assert_int_equal(o.gid_index, 3);
	assert_int_equal(o.msg_bytes, 65536);
	assert_int_equal(o.messages, 500);
	assert_int_equal(o.batch, 16);
	assert_int_equal(o.signal_every, 64);
	assert_int_equal(o.sq_depth, 256);       // 4 x signal_every when it exceeds batch
	assert_int_equal(o.slots, 256);
	assert_int_equal(o.srq_refill, 40);
	assert_false(o.verify);
	assert_int_equal(o.corrupt_msg, 7);
	assert_true(o.quiet);
}

void verbs_and_qps(void **)
{
	rp::RunOptions o;
	std::string err;
	const char *names[] = {"send", "send_imm", "write", "write_imm", "read", "fetch_add", "cmp_swap"};
	for (const char *n : names) {
		assert_int_equal(static_cast<int>(parse({"-v", n}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
		assert_string_equal(rp::verb_name(o.verb), n);
	}
	/* Atomics work on 8-byte words whatever the default size. */
	assert_int_equal(static_cast<int>(parse({"--verb", "cmp_swap"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.msg_bytes, 8);
	assert_string_equal(rp::verb_opcode_name(o.verb), "ATOMIC_CMP_AND_SWP");
	/* The default window (1024) is spread over the QPs, at least one chain each. */
	assert_int_equal(static_cast<int>(parse({"-Q", "4"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.qps, 4);
	assert_int_equal(o.slots, 256);
	assert_int_equal(o.srq_refill, 128);   // 4 x 256 / 8
	assert_int_equal(static_cast<int>(parse({"-Q", "64"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.slots, 32);
	assert_int_equal(static_cast<int>(parse({"-Q", "2", "--slots", "50"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.slots, 50);
	assert_int_equal(static_cast<int>(parse({"-Q", "3", "--inject-bad-rkey", "2"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.bad_rkey_qp, 2);
	assert_int_equal(static_cast<int>(parse({"--post-api", "wr", "--inline", "--fence", "--rnr-retry", "3",
						 "--min-rnr-timer", "1"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_true(o.post_api == rp::PostApi::wr);
	assert_true(o.inline_send && o.fence);
	assert_int_equal(o.rnr_retry, 3);
	assert_int_equal(o.min_rnr_timer, 1);
	assert_int_equal(o.retry_cnt, 7);   // the default
	assert_int_equal(static_cast<int>(parse({"-v", "send", "--retry-cnt", "6", "--inject-rnr", "1", "--inject-pool-squeeze",
						 "64"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.retry_cnt, 6);
	assert_int_equal(o.inject_rnr_lcore, 1);
	assert_int_equal(o.inject_pool_left, 64);
}

/* RoCE traffic parameters: each option sets its field, hex or decimal; left out, -1
 * (the device's default); out of range, refused naming the option. */
void traffic_options(void **)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(o.traffic.traffic_class, -1);
	assert_int_equal(o.traffic.flow_label, -1);
	assert_false(o.traffic.any());
	assert_int_equal(static_cast<int>(parse({"--tclass", "0x62", "--sl", "3", "--flow-label", "100", "--flow-label-spread",
						 "--hop-limit", "17"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.traffic.traffic_class, 0x62);
	assert_int_equal(o.traffic.sl, 3);
	assert_int_equal(o.traffic.flow_label, 100);
	assert_true(o.traffic.spread);
	assert_int_equal(o.traffic.hop_limit, 17);
	assert_int_equal(o.traffic.label_of(0), 100);
	assert_int_equal(o.traffic.label_of(3), 103);
	expect_error({"--tclass", "256"}, "--tclass: '256' is not an integer in 0..255");
	expect_error({"--sl", "16"}, "--sl: '16' is not an integer in 0..15");
	expect_error({"--flow-label", "0x100000"}, "--flow-label: '0x100000' is not an integer in 0..1048575");
	expect_error({"--hop-limit", "0"}, "--hop-limit: '0' is not an integer in 1..255");
	/* Spread labels wrap inside 1..0xFFFFF, never 0 (which would mean "the provider's hash"). */
	rp::Traffic t;
	t.spread = true;
	assert_int_equal(t.label_of(0), 1);
	t.flow_label = rp::kFlowLabelMax;
	assert_int_equal(t.label_of(0), rp::kFlowLabelMax);
	assert_int_equal(t.label_of(1), 1);
}

void duration_instead_of_count(void **)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse({"--duration", "2.5"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_true(o.duration_s == 2.5);
	assert_int_equal(o.messages, 0);
	expect_refused_pipeline({"-n", "5", "-t", "1"}, "-t/--duration: give messages or duration, not both");
	expect_error({"-t", "-1"}, "--duration: '-1' is not a number of seconds in (0, 1e6]");
	expect_error({"-t", "abc"}, "--duration: 'abc' is not a number of seconds in (0, 1e6]");
}

void bounds(void **)
{
	expect_error({"-b", "0"}, "--batch: '0' is not an integer in 1..512");
	expect_error({"-b", "513"}, "--batch: '513' is not an integer in 1..512");
	expect_error({"-s", "0"}, "--size: '0' is not an integer in 1..1073741824");
	expect_error({"-s", "2G"}, "--size: '2G' is not an integer in 1..1073741824");
	expect_error({"-s", "12x"}, "--size: '12x' is not an integer in 1..1073741824");
	expect_error({"-n", "-3"}, "--messages: '-3' is not an integer in 1..9223372036854775807");
	expect_error({"-p", "0"}, "--port: '0' is not an integer in 1..254");
	expect_error({"-g", "256"}, "--gid-index: '256' is not an integer in 0..255");
	expect_error({"--slots", "0"}, "--slots: '0' is not an integer in 1..1048575");
	expect_error({"-d", ""}, "--device: empty device name");
	expect_error({"-Q", "0"}, "--qps: '0' is not an integer in 1..1024");
	expect_error({"-Q", "1025"}, "--qps: '1025' is not an integer in 1..1024");
	expect_error({"-v", "writ"},
		     "--verb: 'writ' is not one of send, send_imm, write, write_imm, read, fetch_add, cmp_swap");
}

/* What the parser takes, the validator takes too. */
void expect_valid_pipeline(std::vector<std::string> args)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse(args, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	rp::PipelineConf c = rp::pipeline_from_options(o, 1, 0);
	if (rp::conf_validate(&c, &err) != 0)
		fail_msg("%s", err.c_str());
}

void cross_checks(void **)
{
	/* A refill point with the SRQ's size left to the builder (loopback_shapes' case,
	 * refused for a while as "set without an SRQ"). */
	expect_valid_pipeline({"-b", "7", "-S", "50", "--slots", "40", "--srq-refill", "9"});
	/* The receiver's memory, for the largest of a sweep's sizes too (the options' own
	 * copy of the rule checked the first size only). */
	expect_refused_pipeline({"-s", "1G", "--slots", "4", "-b", "4"},
				"the command line's pipeline (--dump-conf prints it): flows.[0]: window x size x qps is 4294967296 bytes; the receiver's memory "
				"for a flow is limited to 2 GiB");
	expect_refused_pipeline({"-s", "64,1G", "--slots", "4", "-b", "4"},
				"the command line's pipeline (--dump-conf prints it): flows.[0]: window x size x qps is 4294967296 bytes; the receiver's memory "
				"for a flow is limited to 2 GiB");
	/* The validator's rules, naming the option that set the key they refuse. */
	expect_refused_pipeline({"-S", "64", "--sq-depth", "100"}, "--sq-depth: send queue depth 100 is below 2 x signal_every (128)");
	expect_refused_pipeline({"-b", "64", "-S", "8", "--sq-depth", "32"},
				"--sq-depth: send queue depth 32 cannot hold one chain of batch 64");
	expect_refused_pipeline({"-b", "64", "--slots", "32"}, "--slots: 32 is below batch 64: a chain would not fit the receive window");
	expect_error({"--slots", "100", "--srq-refill", "101"}, "--srq-refill 101 exceeds --slots x --qps (100)");
	expect_error({"-Q", "4", "--inject-bad-rkey", "4"}, "--inject-bad-rkey 4: the flow has only 4 QP(s)");
	expect_error({"-v", "send", "--inject-bad-rkey", "0"}, "--inject-bad-rkey: send uses no rkey");
	expect_refused_pipeline({"-v", "fetch_add", "-s", "16"}, "-s/--size: fetch_add works on 8-byte words only");
	expect_refused_pipeline({"-v", "read", "--inline"}, "--inline: read carries no payload to inline");
	expect_error({"--post-api", "fast"}, "--post-api: 'fast' is not classic or wr");
	expect_error({"--rnr-retry", "8"}, "--rnr-retry: '8' is not an integer in 0..7");
	expect_error({"--min-rnr-timer", "32"}, "--min-rnr-timer: '32' is not an integer in 0..31");
	expect_error({"--retry-cnt", "8"}, "--retry-cnt: '8' is not an integer in 0..7");
	expect_error({"--inject-rnr", "1024"}, "--inject-rnr: '1024' is not an integer in 0..1023");
	expect_error({"--inject-pool-squeeze", "0"}, "--inject-pool-squeeze: '0' is not an integer in 1..4294967295");
}

void pingpong_and_cq_api(void **)
{
	rp::RunOptions o;
	std::string err;
	/* Ping-pong takes ib_send_lat's defaults: SEND, 2 B, one QP. */
	assert_int_equal(static_cast<int>(parse({"--pingpong"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_true(o.mode == rp::Mode::pingpong);
	assert_true(o.verb == rp::Verb::send);
	assert_int_equal(o.msg_bytes, rp::kDefaultPingPongBytes);
	assert_int_equal(o.messages, rp::kDefaultPingPongIterations);
	assert_int_equal(o.qps, 1);
	assert_int_equal(static_cast<int>(parse({"--pingpong", "-v", "send_imm", "-s", "64", "-n", "500", "--cq-api", "ex"},
						&o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_true(o.verb == rp::Verb::send_imm);
	assert_int_equal(o.msg_bytes, 64);
	assert_int_equal(o.messages, 500);
	assert_true(o.cq_api == rp::CqApi::ex);
	assert_int_equal(static_cast<int>(parse({}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_true(o.mode == rp::Mode::rate && o.cq_api == rp::CqApi::classic);
	/* Which verbs a ping-pong echoes is the validator's rule, said once. */
	assert_int_equal(static_cast<int>(parse({"--pingpong", "-v", "write"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	expect_refused_pipeline({"--pingpong", "-v", "read"}, "-v/--verb: a ping-pong (an echo stage) echoes send, send_imm or "
				"write (writes polled in memory, as ib_write_lat does): flow 'flow0' uses read");
	/* -s A,B,...: a size sweep; the first size is the run's until the builder splits it. */
	assert_int_equal(static_cast<int>(parse({"--pingpong", "-s", "2,1K,64K"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.sizes.size(), 3);
	assert_int_equal(o.sizes[1], 1024);
	assert_int_equal(o.msg_bytes, 2);
	expect_error({"-s", "64,,1K"}, "--size: '' is not an integer in 1..1073741824");
	expect_refused_pipeline({"-v", "fetch_add", "-s", "8,8"}, "-s/--size: fetch_add works on 8-byte words only");
	/* Two processes sweep in step: each step's client connects again (remote_flow). */
	assert_int_equal(static_cast<int>(parse({"--peer", "10.2.0.2:1", "-s", "64,128"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.sizes.size(), 2);
	/* N QPs: N ping-pongs side by side, one message in flight on each. */
	assert_int_equal(static_cast<int>(parse({"--pingpong", "-Q", "4", "-n", "4000"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.qps, 4);
	assert_int_equal(o.messages, 4000);
	expect_error({"--pingpong", "-t", "3"}, "--pingpong: give --messages (iterations) or -t 0 (until stopped), not --duration");
	expect_error({"--cq-api", "fast"}, "--cq-api: 'fast' is not classic or ex");
	/* Loopback QP pairs connect through rdma_cm unless told otherwise. */
	assert_true(o.connect == rp::ConnectPath::cm);
	assert_int_equal(static_cast<int>(parse({"--connect", "direct"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_true(o.connect == rp::ConnectPath::direct);
	expect_error({"--connect", "ud"}, "--connect: 'ud' is not cm or direct");
	assert_int_equal(static_cast<int>(parse({"--rate", "2.5e4"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_true(o.rate_pps == 25000.0);
	expect_error({"--rate", "0"}, "--rate: '0' is not a message rate in (0, 1e9] messages per second");
	expect_error({"--rate", "fast"}, "--rate: 'fast' is not a message rate in (0, 1e9] messages per second");
	expect_error({"--pingpong", "--rate", "100"}, "--pingpong: one message at a time, echoed; --rate does not apply");
	assert_int_equal(static_cast<int>(parse({"--transport", "uc", "-v", "write", "--reliability", "none"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_true(o.uc && o.reliability == rp::Reliability::none);
	/* UC is made reliable in software unless told otherwise. */
	assert_int_equal(static_cast<int>(parse({"--transport", "uc", "--ack-every", "8", "--ack-us", "50"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_true(o.reliability == rp::Reliability::software && o.ack_every == 8 && o.ack_us == 50);
	assert_int_equal(static_cast<int>(parse({"-v", "send_imm"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_true(o.reliability == rp::Reliability::none);   // RC: the NIC's
	assert_int_equal(static_cast<int>(parse({"--transport", "uc", "--inject-loss", "0.1", "--inject-bad-retx-header"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_true(o.inject_loss == 0.1 && o.inject_bad_retx_header);
	expect_refused_pipeline({"--transport", "uc", "-v", "write"},
				"--transport: software reliability needs a completion at the receiver: use write_imm, "
				"send or send_imm, or reliability = \"none\" for plain UC writes");
	/* A plain send is tracked too: the sequence rides in an immediate the application never sees. */
	assert_int_equal(static_cast<int>(parse({"--transport", "uc", "-v", "send"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_true(o.reliability == rp::Reliability::software && o.verb == rp::Verb::send);
	expect_refused_pipeline({"--reliability", "software"},
				"--reliability: reliability is for transport = \"uc\" (RC is reliable in the NIC)");
	expect_error({"--transport", "uc", "--reliability", "tcp"}, "--reliability: 'tcp' is not software or none");
	expect_refused_pipeline({"--transport", "uc", "--reliability", "none", "--ack-every", "4"},
				"--ack-every: ack_every is for reliability = \"software\" (transport = \"uc\")");
	expect_refused_pipeline({"--ack-us", "5"}, "--ack-us: ack_us is for reliability = \"software\" (transport = \"uc\")");
	expect_error({"--inject-loss", "0.1"}, "--inject-loss: needs --transport uc (an RC QP cannot skip a message)");
	expect_error({"--transport", "uc", "--inject-loss", "0.9"}, "--inject-loss: '0.9' is not a fraction in 0..0.5");
	expect_error({"--transport", "uc", "-v", "send_imm", "--inject-bad-retx-header"},
		     "--inject-bad-retx-header: needs --transport uc -v write_imm with software reliability");
	/* A ping-pong over UC is made reliable too (stop-and-wait). */
	assert_int_equal(static_cast<int>(parse({"--transport", "uc", "--pingpong"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_true(o.reliability == rp::Reliability::software && o.mode == rp::Mode::pingpong);
	expect_error({"--transport", "ud"}, "--transport: 'ud' is not rc or uc");
	expect_error({"--transport", "uc", "-v", "read"}, "--transport uc: read needs a reliable connection (rc)");
	/* Which end a setting acts on is the validator's rule, by role: --reversed swaps them. */
	expect_refused_pipeline({"--transport", "uc", "-v", "send_imm", "--listen", "18515", "--inject-loss", "0.1"},
				"the command line's pipeline (--dump-conf prints it): flows.[0]: --inject-loss acts where a flow sends: "
				"flow 'flow0' is received on this host, give it to the other");
	expect_refused_pipeline({"--transport", "uc", "-v", "send_imm", "--peer", "10.0.0.1:1", "--ack-every", "4"},
				"--ack-every: ack_every is the receiver's: the other host sends the ACKs, set it there");
	{
		rp::PipelineConf c;
		assert_int_equal(static_cast<int>(parse({"--transport", "uc", "-v", "send_imm", "--listen", "18515", "--reversed",
							"--inject-loss", "0.1"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
		if (rp::validated_pipeline(o, 1, 0, &c, &err) != 0)
			fail_msg("a reversed server's loss refused: %s", err.c_str());
		assert_true(c.stages.size() == 1 && c.stages[0].kind->end == rp::FlowEnd::requester && !c.flows[0].listen.empty());
	}
	expect_error({"--reversed"}, "--reversed: which end sends is a two-process run's choice (--listen or --peer)");
}

void flows_list(void **)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse({"-Q", "1,64"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.flows.size(), 2);
	assert_int_equal(o.flows[0], 1);
	assert_int_equal(o.flows[1], 64);
	assert_int_equal(o.qps, 65);
	assert_int_equal(o.slots, 1024 / 65 < 32 ? 32 : 1024 / 65);   // the window is shared by all QPs
	assert_int_equal(static_cast<int>(parse({"-Q", "8"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.flows.size(), 1);
	assert_int_equal(o.qps, 8);
	expect_error({"-Q", "1,"}, "--qps: '1,' is not a list of at most 16 integers in 1..1024");
	expect_error({"-Q", "1,,2"}, "--qps: '1,,2' is not a list of at most 16 integers in 1..1024");
	expect_error({"-Q", "1,0"}, "--qps: '1,0' is not a list of at most 16 integers in 1..1024");
	expect_error({"-Q", "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1"},
		     "--qps: '1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1' is not a list of at most 16 integers in 1..1024");
	expect_error({"-Q", "1000,100"}, "--qps 1000,100: 1100 QPs in all, at most 1024");
	expect_error({"-Q", "1,64", "--inject-bad-rkey", "65"}, "--inject-bad-rkey 65: the flows have only 65 QP(s)");
}

void two_processes(void **)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse({"--listen", "18515", "-n", "100"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_string_equal(o.listen.c_str(), "18515");
	assert_int_equal(static_cast<int>(parse({"--peer", "10.2.0.2:18515", "--local", "10.2.0.1"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_string_equal(o.peer.c_str(), "10.2.0.2:18515");
	assert_string_equal(o.local.c_str(), "10.2.0.1");
	expect_error({"--listen", "1", "--peer", "10.0.0.1:1"}, "--listen and --peer are exclusive: the server listens, the client names it");
	/* A ping-pong across two processes: the client pings, the server echoes. */
	assert_int_equal(static_cast<int>(parse({"--peer", "10.2.0.2:1", "--pingpong"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(static_cast<int>(o.mode), static_cast<int>(rp::Mode::pingpong));
	/* A duration across two processes: the client tells the server its final counts. */
	assert_int_equal(static_cast<int>(parse({"--listen", "1", "-t", "2"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	expect_error({"--local", "10.0.0.1"}, "--local goes with --peer (the client's address)");
	/* Addresses by the rule a file's listen, peer and local keys take (config.h), named
	 * by their option, before anything uses them (a bad port once aborted in stoul). */
	expect_error({"--peer", ""}, "--peer: '' is not ADDR:PORT");
	expect_error({"--peer", "10.0.0.1:x", "-Q", "1,1", "--dump-conf"}, "--peer: '10.0.0.1:x' is not ADDR:PORT");
	expect_error({"--peer", "10.0.0.1:65536"}, "--peer: '10.0.0.1:65536' is not ADDR:PORT");
	expect_error({"--peer", "host:1"}, "--peer: 'host:1' is not ADDR:PORT");
	expect_error({"--peer", "loopback"}, "--peer: 'loopback' is not ADDR:PORT");
	expect_error({"--listen", "x"}, "--listen: 'x' is not [ADDR:]PORT");
	expect_error({"--listen", "10.0.0.1:0"}, "--listen: '10.0.0.1:0' is not [ADDR:]PORT");
	assert_int_equal(static_cast<int>(parse({"--listen", ":18515"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(static_cast<int>(parse({"--listen", "10.2.0.2:18515"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	expect_error({"--peer", "10.0.0.1:1", "--local", "10.0.0"}, "--local: '10.0.0' is not an IPv4 address");
	/* Flow i takes PORT + i: the last one's must be a port. */
	expect_error({"--peer", "10.0.0.1:65535", "-Q", "1,1"}, "--peer: the 2 flows (-Q) take ports 65535..65536, past 65535: give a lower port");
	expect_error({"--listen", "65534", "-Q", "1,1,1"}, "--listen: the 3 flows (-Q) take ports 65534..65536, past 65535: give a lower port");
	assert_int_equal(static_cast<int>(parse({"--listen", "65534", "-Q", "1,1"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
}

void bad_syntax(void **)
{
	expect_error({"--bogus"}, "unknown option '--bogus'");
	expect_error({"-x"}, "unknown option '-x'");
	expect_error({"-n"}, "option '-n' needs a value");
	expect_error({"stray"}, "unexpected argument 'stray'");
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse({"--help"}, &o, &err)), static_cast<int>(rp::ParseResult::help));
	assert_int_equal(static_cast<int>(parse({"-V"}, &o, &err)), static_cast<int>(rp::ParseResult::version));
	/* The parser runs again cleanly after an error (getopt state is reset). */
	assert_int_equal(static_cast<int>(parse({"-b", "8"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.batch, 8);
}

/* Every row of the table is reached by its long name and its letter, and names itself
 * in its errors: an empty argument is refused as "--NAME: ...". */
void table_rows_name_themselves(void **)
{
	size_t rows = 0;
	for (const rp::OptionSpec &spec : rp::option_table()) {
		std::string name = std::string("--") + spec.name;
		std::vector<std::vector<std::string>> forms{{name}};
		if (spec.letter != 0)
			forms.push_back({std::string("-") + spec.letter});
		for (std::vector<std::string> args : forms) {
			rp::RunOptions o;
			std::string err;
			if (spec.metavar != nullptr)
				args.push_back("");
			rp::ParseResult r = parse(args, &o, &err);
			if (spec.metavar != nullptr) {
				assert_int_equal(static_cast<int>(r), static_cast<int>(rp::ParseResult::error));
				assert_true(err.rfind(name + ": ", 0) == 0 || err.rfind(name + " ", 0) == 0);
			} else {
				assert_true(r != rp::ParseResult::error || err.find("unknown option") == std::string::npos);
			}
		}
		rows++;
	}
	assert_true(rows > 50);
	/* --help's text shows every row that has one (--csv is told in --output's). */
	for (const rp::OptionSpec &spec : rp::option_table())
		assert_non_null(strstr(rp::options_usage(), (std::string("--") + spec.name + (spec.metavar ? " " : "")).c_str()));
}

/* A fixed choice: each word is taken, anything else is refused naming the words. */
void table_choices(void **)
{
	expect_error({"--recv-queue", "rq"}, "--recv-queue: 'rq' is not srq or qp");
	expect_error({"--poll", "spin"}, "--poll: 'spin' is not busy or adaptive");
	expect_error({"--poll", ""}, "--poll: '' is not busy or adaptive");
	for (const rp::OptionSpec &spec : rp::option_table()) {
		if (spec.choices == nullptr)
			continue;
		std::string words = spec.choices;
		int index = 0;
		for (size_t at = 0; at <= words.size(); index++) {
			size_t end = std::min(words.find(' ', at), words.size());
			std::string word = words.substr(at, end - at);
			assert_int_equal(rp::option_choice(spec, word.c_str()), index);
			rp::RunOptions o;
			std::string err;
			/* UC, so that --reliability applies; a word may still meet a cross-check. */
			parse({"--transport", "uc", std::string("--") + spec.name, word}, &o, &err);
			assert_true(err.find("' is not") == std::string::npos);
			at = end + 1;
		}
		assert_int_equal(rp::option_choice(spec, ""), -1);
	}
}

/* --plant's SPEC: effects, every operator, numbers with suffixes, names, and what is refused. */
void plant_parser(void **)
{
	rp::PlantSpec s;
	std::string err;
	assert_int_equal(rp::plant_parse("corrupt:size>=8K,qps>=4", &s, &err), 0);
	assert_int_equal(static_cast<int>(s.effect), static_cast<int>(rp::PlantEffect::corrupt));
	assert_int_equal(s.conds.size(), 2);
	assert_int_equal(static_cast<int>(s.conds[0].key), static_cast<int>(rp::PlantKey::size));
	assert_int_equal(static_cast<int>(s.conds[0].op), static_cast<int>(rp::PlantOp::ge));
	assert_true(s.conds[0].value == 8192);
	assert_string_equal(s.text.c_str(), "corrupt:size>=8K,qps>=4");
	assert_int_equal(rp::plant_parse("slow: batch <= 2, inline=true,verb!=read,transport=uc,rate<2.5", &s, &err), 0);
	assert_int_equal(static_cast<int>(s.effect), static_cast<int>(rp::PlantEffect::slow));
	assert_int_equal(s.conds.size(), 5);
	assert_int_equal(static_cast<int>(s.conds[1].key), static_cast<int>(rp::PlantKey::inline_send));
	assert_true(s.conds[1].value == 1);
	assert_int_equal(static_cast<int>(s.conds[2].op), static_cast<int>(rp::PlantOp::ne));
	assert_true(s.conds[2].value == static_cast<uint8_t>(rp::Verb::read));
	assert_true(s.conds[3].value == 1);
	assert_true(s.conds[4].value == 2.5);
	const char *ops[] = {"<", "<=", ">", ">=", "=", "!="};
	for (int i = 0; i < 6; i++) {
		assert_int_equal(rp::plant_parse(std::string("corrupt:qps") + ops[i] + "64", &s, &err), 0);
		assert_int_equal(static_cast<int>(s.conds[0].op), i);
	}
	struct { const char *spec, *err; } bad[] = {
		{"corrupt", "--plant 'corrupt': not EFFECT:COND[,COND...] (no ':')"},
		{"break:qps=1", "--plant 'break:qps=1': unknown effect 'break' (corrupt, slow or wedge)"},
		{"slow:", "--plant 'slow:': no condition after 'slow:'"},
		{"slow:qps=1,", "--plant 'slow:qps=1,': an empty condition"},
		{"slow:colour=red", "--plant 'slow:colour=red': unknown key 'colour' (one of size, qps, batch, signal_every, "
				    "sq_depth, window, flow_window, inline, fence, verb, transport, post_api, rate, messages, "
				    "reliability, verify)"},
		{"slow:=4", "--plant 'slow:=4': condition '=4' does not start with a key (size, qps, batch, signal_every, "
			    "sq_depth, window, flow_window, inline, fence, verb, transport, post_api, rate, messages, "
			    "reliability, verify)"},
		{"slow:qps~4", "--plant 'slow:qps~4': condition 'qps~4': no operator after 'qps' (one of < <= > >= = !=)"},
		{"slow:qps>=", "--plant 'slow:qps>=': condition 'qps>=': no value"},
		{"slow:size>=4X", "--plant 'slow:size>=4X': condition 'size>=4X': '4X' is not a number (64, 4K, 2.5)"},
		{"slow:qps=-1", "--plant 'slow:qps=-1': condition 'qps=-1': '-1' is not a number (64, 4K, 2.5)"},
		{"slow:verb<write", "--plant 'slow:verb<write': condition 'verb<write': verb is a name, compared with = or != only"},
		{"slow:transport=xx", "--plant 'slow:transport=xx': condition 'transport=xx': 'xx' is not one of: rc uc"},
		{"slow:inline=yes", "--plant 'slow:inline=yes': condition 'inline=yes': 'yes' is not true or false"},
	};
	for (const auto &b : bad) {
		assert_int_equal(rp::plant_parse(b.spec, &s, &err), -1);
		assert_string_equal(err.c_str(), b.err);
	}
	/* wedge crashes the kernel: taken only in tools/softroce's VM (SOFTROCE=vm). */
	const char *was = getenv("SOFTROCE");
	const std::string saved = was ? was : "";
	unsetenv("SOFTROCE");
	assert_int_equal(rp::plant_parse("wedge:qps=1", &s, &err), -1);
	assert_string_equal(err.c_str(), "--plant 'wedge:qps=1': wedge crashes the kernel it runs on: only in tools/softroce's VM "
					 "(SOFTROCE=vm)");
	setenv("SOFTROCE", "host", 1);
	assert_int_equal(rp::plant_parse("wedge:qps=1", &s, &err), -1);
	setenv("SOFTROCE", "vm", 1);
	assert_int_equal(rp::plant_parse("wedge:qps=1", &s, &err), 0);
	assert_int_equal(static_cast<int>(s.effect), static_cast<int>(rp::PlantEffect::wedge));
	if (was)
		setenv("SOFTROCE", saved.c_str(), 1);
	else
		unsetenv("SOFTROCE");
	/* Through the command line: repeatable, and a bad one is the option's error. */
	rp::RunOptions o;
	assert_int_equal(static_cast<int>(parse({"--plant", "corrupt:qps>=4", "--plant", "slow:batch<=2"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_int_equal(o.plants.size(), 2);
	expect_error({"--plant", "slow:qps"}, "--plant 'slow:qps': condition 'qps': no operator after 'qps' (one of < <= > >= = !=)");
}

/* Every condition must hold; each operator on both sides of its value; names by value. */
void plant_matcher(void **)
{
	rp::PlantValues v;
	v.set(rp::PlantKey::size, 8192);
	v.set(rp::PlantKey::qps, 4);
	v.set(rp::PlantKey::inline_send, 0);
	v.set(rp::PlantKey::verb, static_cast<uint8_t>(rp::Verb::write));
	auto match = [&](const char *spec) {
		rp::PlantSpec s;
		std::string err;
		assert_int_equal(rp::plant_parse(spec, &s, &err), 0);
		return rp::plant_matches(s, v);
	};
	assert_true(match("corrupt:size>=8K,qps>=4"));
	assert_false(match("corrupt:size>=8K,qps>=8"));
	assert_false(match("corrupt:size>8K"));
	assert_true(match("corrupt:size<=8K,size>4K"));
	assert_true(match("corrupt:qps<5"));
	assert_false(match("corrupt:qps<4"));
	assert_true(match("corrupt:qps=4"));
	assert_false(match("corrupt:qps!=4"));
	assert_true(match("corrupt:inline=false"));
	assert_false(match("slow:inline=true"));
	assert_true(match("slow:verb=write"));
	assert_false(match("slow:verb=write_imm"));
	assert_true(match("slow:verb!=read,qps>=1"));
}

/* --connect-timeout: how long connecting waits for the other host, the pipeline's
 * run.connect_timeout; --stall-timeout no longer touches it. The bad values are
 * refused naming the option, and so is a run with no other host to wait for. */
void connect_timeout(void **)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse({"--peer", "10.2.0.2:18515", "--connect-timeout", "2.5"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_true(o.connect_timeout_s == 2.5);
	assert_true(rp::pipeline_from_options(o, 1, 1).run.connect_timeout_s == 2.5);
	assert_int_equal(static_cast<int>(parse({"--listen", "18515", "--connect-timeout", "86400"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_true(rp::pipeline_from_options(o, 1, 1).run.connect_timeout_s == 86400);
	/* Not given: the default, 10 s, whatever the stall timeout. */
	assert_int_equal(static_cast<int>(parse({"--listen", "18515", "--stall-timeout", "30"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_true(o.connect_timeout_s == 0);
	const rp::PipelineConf c = rp::pipeline_from_options(o, 1, 1);
	assert_true(c.run.connect_timeout_s == rp::kDefaultConnectTimeoutS && rp::kDefaultConnectTimeoutS == 10);
	assert_true(c.run.stall_timeout_s == 30);
	for (const char *bad : {"0", "-1", "86401", "abc", "", "2s", "nan", "inf"})
		expect_error({"--peer", "10.2.0.2:1", "--connect-timeout", bad},
			     (std::string("--connect-timeout: '") + bad + "' is not a number of seconds in (0, 86400]").c_str());
	/* A loopback connects its ends through rdma_cm (it waits), unless directly or UC. */
	assert_int_equal(static_cast<int>(parse({"--connect-timeout", "2"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_true(rp::pipeline_from_options(o, 1, 1).run.connect_timeout_s == 2);
	for (const char *direct : {"--connect", "--transport"})
		expect_error({"--connect-timeout", "2", direct, std::string(direct) == "--connect" ? "direct" : "uc"},
			     "--connect-timeout: nothing waits for a connection: no flow connects to another host (--listen or "
			     "--peer; in a file, a flow's listen or peer = \"HOST:PORT\", or a pattern), and the loopback flows "
			     "connect their QPs directly (run.connect = \"direct\", or UC), not through rdma_cm");
	/* With -f, the file decides where it applies (checked when it is loaded). */
	assert_int_equal(static_cast<int>(parse({"-f", "x.conf", "--connect-timeout", "3"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	rp::PipelineConf f;
	f.run.connect_timeout_s = 7;
	rp::apply_cli(o, &f);
	assert_true(f.run.connect_timeout_s == 3);
	o = rp::RunOptions{};
	f.run.connect_timeout_s = 7;
	rp::apply_cli(o, &f);   // not given: the file's stands
	assert_true(f.run.connect_timeout_s == 7);
}

/* --dump-conf writes the connect timeout as the file's key, which reads back the same;
 * a loopback pipeline, where the key would be refused, has none. */
void connect_timeout_dump(void **)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse({"-d", "rxeA", "--peer", "10.2.0.2:18515", "--connect-timeout", "2.5"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	const std::string text = rp::pipeline_to_text(rp::pipeline_from_options(o, 1, 1), o);
	assert_non_null(strstr(text.c_str(), "\n  connect_timeout = 2.5;\n"));
	char path[] = "/tmp/test_options_dump_XXXXXX";
	const int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	std::ofstream(path) << text;
	rp::PipelineConf back;
	const int rc = rp::config_load(path, rp::LcoreSet{}, &back, &err);
	unlink(path);
	if (rc != 0)
		print_error("%s\n%s\n", err.c_str(), text.c_str());
	assert_int_equal(rc, 0);
	assert_true(back.run.connect_timeout_s == 2.5);
	assert_string_equal(back.flows[0].peer.c_str(), "10.2.0.2:18515");

	/* A loopback through rdma_cm waits for its connections; one connected directly does not. */
	assert_int_equal(static_cast<int>(parse({"-d", "rxe0"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
	assert_non_null(strstr(rp::pipeline_to_text(rp::pipeline_from_options(o, 1, 2), o).c_str(), "\n  connect_timeout = 10"));
	assert_int_equal(static_cast<int>(parse({"-d", "rxe0", "--connect", "direct"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_null(strstr(rp::pipeline_to_text(rp::pipeline_from_options(o, 1, 2), o).c_str(), "connect_timeout"));
}

/* --points refuses what makes no sense per point, naming it and why. */
void points_refusals(void **)
{
	rp::RunOptions o;
	std::string err;
	assert_int_equal(static_cast<int>(parse({"--points", "-q", "--plant", "slow:qps>=2", "--stall-timeout", "5"}, &o, &err)),
			 static_cast<int>(rp::ParseResult::ok));
	assert_true(o.points);
	expect_error({"--points", "-f", "a.conf"}, "--points with -f: the pipeline files come on stdin, one per line");
	expect_error({"--points", "--dump-conf"}, "--points with --dump-conf: there is no command-line pipeline to print");
	expect_error({"--points", "-i"}, "--points with -i: no console reads stdin, the requests do");
	expect_error({"--points", "--listen", "1"}, "--points with --listen: each point is a pipeline file (its flows name their peers)");
	expect_error({"--peer", "10.0.0.1:1", "--points"}, "--points with --peer: each point is a pipeline file (its flows name their peers)");
	expect_error({"--points", "--output", "a.json"},
		     "--points with --output: every point would overwrite it (each file's run.output is its results)");
	expect_error({"--points", "--csv", "a.csv"}, "--points with --csv: every point would overwrite it (each file's run.csv is its results)");
	expect_error({"--points", "-s", "64"}, "--points: each pipeline file describes its run; '-s' cannot be combined with it");
}

/* A perftest command line, translated and then parsed by rdmapipe's own parser (the
 * one door): the options it comes to, or the translation's refusal in *err. */
bool perftest(const std::string &test, std::vector<std::string> args, rp::RunOptions *o, rp::PerftestReportConf *rc,
	      std::string *err)
{
	std::vector<std::string> ours;
	if (rp::perftest_translate(test, args, &ours, rc, err) != 0)
		return false;
	*o = rp::RunOptions{};
	if (parse(ours, o, err) != rp::ParseResult::ok)
		fail_msg("rdmapipe's parser refused the translation of %s: %s", test.c_str(), err->c_str());
	return true;
}

void perftest_refused(const std::string &test, std::vector<std::string> args, const char *msg)
{
	rp::RunOptions o;
	rp::PerftestReportConf rc;
	std::string err;
	if (perftest(test, std::move(args), &o, &rc, &err))
		fail_msg("%s: translated, not refused", test.c_str());
	if (err.find(msg) == std::string::npos)
		fail_msg("%s: '%s', not '%s'", test.c_str(), err.c_str(), msg);
}

/* perftest's command lines (the front end): defaults as perftest's, -n per QP, the
 * ends, sizes, UC, atomics, rates; refusals named; the program's name picks the test. */
void perftest_front_end(void **)
{
	rp::RunOptions o;
	rp::PerftestReportConf rc;
	std::string err;
	assert_true(perftest("write_bw", {"-d", "rxeB"}, &o, &rc, &err));   // the server: perftest's port and defaults
	assert_true(o.verb == rp::Verb::write && o.msg_bytes == 65536 && o.messages == 5000 && o.listen == "18515" && o.peer.empty());
	assert_true(o.device == "rxeB" && o.quiet && rc.on && rc.bw && rc.server && rc.title == "RDMA_Write BW Test");
	assert_true(perftest("send_bw", {"-q", "2", "-n", "2000", "-s", "1024", "--port=18600", "10.2.0.2"}, &o, &rc, &err));
	assert_true(o.verb == rp::Verb::send && o.qps == 2 && o.messages == 4000 && o.msg_bytes == 1024);
	assert_true(o.peer == "10.2.0.2:18600" && o.listen.empty() && !rc.server && o.rq_per_qp);   // no --use-srq: an RQ per QP
	assert_true(perftest("send_bw", {"--use-srq", "-c", "UC", "-Q", "8", "-l", "4", "localhost"}, &o, &rc, &err));
	assert_true(o.peer == "127.0.0.1:18515" && !o.rq_per_qp && o.uc && o.reliability == rp::Reliability::none && o.signal_every == 8 && o.batch == 4);
	assert_true(perftest("send_lat", {"10.0.0.9"}, &o, &rc, &err));
	assert_true(o.mode == rp::Mode::pingpong && o.msg_bytes == 2 && o.messages == 1000 && !rc.bw);
	/* ib_write_lat: a ping-pong of writes, each end polling its slot (no receives). */
	assert_true(perftest("write_lat", {"-s", "64", "-n", "300", "10.0.0.9"}, &o, &rc, &err));
	assert_true(o.verb == rp::Verb::write && o.mode == rp::Mode::pingpong && o.msg_bytes == 64 && o.messages == 300 && !o.rq_per_qp);
	{
		rp::PipelineConf c;
		if (rp::validated_pipeline(o, 1, 2, &c, &err) != 0)
			fail_msg("ib_write_lat's pipeline refused: %s", err.c_str());
	}
	assert_true(perftest("write_lat", {"--write_with_imm", "10.0.0.9"}, &o, &rc, &err));   // 26.04's: no ping-pong of it here
	{
		rp::PipelineConf c;
		assert_int_equal(rp::validated_pipeline(o, 1, 2, &c, &err), -1);
		assert_non_null(strstr(err.c_str(), "a ping-pong (an echo stage) echoes send, send_imm or write"));
	}
	assert_true(perftest("read_lat", {"-s", "64", "10.0.0.9"}, &o, &rc, &err));   // one read in flight at a time
	assert_true(o.verb == rp::Verb::read && o.mode == rp::Mode::rate && o.batch == 1 && o.signal_every == 1 && o.sq_depth == 1);
	rp::PipelineConf c;
	if (rp::validated_pipeline(o, 1, 2, &c, &err) != 0)   // a send queue of one, every WR signalled: valid
		fail_msg("ib_read_lat's pipeline refused: %s", err.c_str());
	assert_true(perftest("atomic_bw", {"-A", "CMP_AND_SWAP", "10.0.0.9"}, &o, &rc, &err));
	assert_true(o.verb == rp::Verb::cmp_swap && o.msg_bytes == 8 && rc.atomic_type == "CMP_AND_SWAP");
	assert_true(perftest("write_bw", {"-a", "-n", "10", "-D", "3", "10.0.0.9"}, &o, &rc, &err) == false);   // a count or a time
	assert_true(perftest("write_bw", {"-a", "-D", "3", "10.0.0.9"}, &o, &rc, &err));
	assert_int_equal(o.sizes.size(), 23);   // 2 .. 8 MiB
	assert_true(o.sizes.front() == 2 && o.sizes.back() == 8388608 && o.duration_s == 3);
	assert_true(perftest("write_bw", {"-s", "1000", "--rate_limit", "8", "10.0.0.9"}, &o, &rc, &err));   // 8 Mb/s of 1000 B
	assert_true(o.rate_pps == 1000);
	assert_true(perftest("write_bw", {"-s", "64", "--rate_limit=5000", "--rate_units=p", "-I", "64", "10.0.0.9"}, &o, &rc, &err));
	assert_true(o.rate_pps == 5000 && o.inline_send);
	assert_true(perftest("write_bw", {"-s", "128", "-I", "64", "-T", "96", "--flow_label", "7", "-R", "-F", "10.0.0.9"}, &o, &rc, &err));
	assert_true(!o.inline_send && o.traffic.traffic_class == 96 && o.traffic.flow_label == 7);   // 128 B is not inlined under 64
	assert_true(perftest("send_lat", {"--send_with_imm", "--data_validation", "10.0.0.9"}, &o, &rc, &err));   // 26.04's
	assert_true(o.verb == rp::Verb::send_imm && o.mode == rp::Mode::pingpong && o.rq_per_qp);
	assert_true(perftest("write_bw", {"--write_with_imm", "--bind_source_ip", "10.0.0.1", "10.0.0.9"}, &o, &rc, &err));
	assert_true(o.verb == rp::Verb::write_imm && o.local == "10.0.0.1");
	perftest_refused("read_bw", {"--write_with_imm", "h"}, "--write_with_imm: ib_read_bw has no writes");
	perftest_refused("write_bw", {"--use_neuron", "0", "h"}, "--use_neuron is refused: GPU and mmap'ed buffers");
	assert_true(perftest("write_bw", {"--run_infinitely", "--report_gbits", "--out_json", "10.0.0.9"}, &o, &rc, &err));
	assert_true(rp::until_stopped(o.duration_s) && rc.gbits && rc.json && rc.json_file == "perftest_out.json");

	assert_true(perftest("send_lat", {"--output=latency", "10.0.0.9"}, &o, &rc, &err) && rc.output == "latency");
	perftest_refused("send_lat", {"--output", "bandwidth", "h"}, "--output: 'bandwidth': a latency test's is latency");
	perftest_refused("write_bw", {"--output", "fast", "h"}, "--output: 'fast' is not bandwidth, message_rate or latency");
	assert_true(perftest("send_lat", {"-H", "10.0.0.9"}, &o, &rc, &err) && rc.histogram);
	perftest_refused("send_bw", {"-H", "h"}, "-H (--report-histogrm): available only on latency tests");
	assert_true(perftest("write_bw", {"-w", "12.5", "-y", "0.01", "10.0.0.9"}, &o, &rc, &err) && rc.limit_bw == 12.5 && rc.limit_msgrate == 0.01);
	perftest_refused("send_lat", {"-w", "1", "h"}, "-w (--limit_bw): a floor of a bandwidth test");
	perftest_refused("write_bw", {"-y", "x", "h"}, "-y (--limit_msgrate): 'x' is not a figure of 0 or more");
	perftest_refused("write_bw", {"-m", "1024", "h"}, "-m (--mtu) is refused: the path MTU is the port's active MTU");
	perftest_refused("write_bw", {"--bogus"}, "'--bogus': not a perftest flag");
	perftest_refused("write_bw", {"-s"}, "-s (--size) needs a value");
	perftest_refused("write_bw", {"-R=1"}, "'-R=1': -R takes no value");
	perftest_refused("write_bw", {"h1", "h2"}, "'h2': one host only");
	perftest_refused("write_bw", {"-c", "UD"}, "-c (--connection): 'UD': rdmapipe runs RC and UC");
	perftest_refused("write_bw", {"--rate_limit", "5", "--rate_limit_type", "HW", "h"}, "rdmapipe paces in software only");
	perftest_refused("atomic_bw", {"-s", "64", "h"}, "-s 64: an atomic is 8 bytes");
	perftest_refused("write_bw", {"--client"}, "--client: no server host given");
	perftest_refused("nope_bw", {}, "'nope_bw' is not a test of this front end");
	/* --reversed: the server sends (its end is the flow's rdma_tx); -b: a flow each way,
	 * the way back on the port after, the other end's role. */
	{
		rp::PipelineConf c;
		assert_true(perftest("write_bw", {"--reversed"}, &o, &rc, &err) && o.reversed && rc.server && rc.sends());
		if (rp::validated_pipeline(o, 1, 2, &c, &err) != 0)
			fail_msg("--reversed server refused: %s", err.c_str());
		assert_true(c.flows.size() == 1 && c.flows[0].listen == "18515" && c.stages.size() == 1 &&
			    c.stages[0].kind->end == rp::FlowEnd::requester);
		assert_true(perftest("send_bw", {"-b", "10.0.0.9"}, &o, &rc, &err) && o.bidirectional && rc.bidirectional);
		assert_string_equal(rc.title.c_str(), "Send Bidirectional BW Test");
		if (rp::validated_pipeline(o, 1, 2, &c, &err) != 0)
			fail_msg("-b client refused: %s", err.c_str());
		assert_int_equal(c.flows.size(), 2);
		assert_string_equal(c.flows[1].name.c_str(), "flow0_back");
		assert_string_equal(c.flows[1].peer.c_str(), "10.0.0.9:18516");
		assert_int_equal(c.stages.size(), 2);
		assert_true(c.stages[0].kind->end == rp::FlowEnd::requester && c.stages[1].kind->end == rp::FlowEnd::responder &&
			    c.stages[1].flow == "flow0_back");
	}
	perftest_refused("send_lat", {"-b", "h"}, "Bidirectional is only available in BW test");
	{   /* A client of -b receives too: an SRQ refill given takes effect there. */
		rp::PipelineConf c;
		assert_int_equal(static_cast<int>(parse({"-v", "send", "--peer", "10.0.0.9:18515", "--bidirectional", "--srq-refill", "64"},
							&o, &err)), static_cast<int>(rp::ParseResult::ok));
		if (rp::validated_pipeline(o, 1, 0, &c, &err) != 0)
			fail_msg("-b client with --srq-refill refused: %s", err.c_str());
		assert_int_equal(c.io_contexts.size(), 1);
		assert_int_equal(c.io_contexts[0].srq_refill, 64);
	}
	{   /* Here (loopback): each flow's way back swaps the lcores. */
		rp::PipelineConf c;
		assert_int_equal(static_cast<int>(parse({"--bidirectional", "-Q", "1,2"}, &o, &err)), static_cast<int>(rp::ParseResult::ok));
		if (rp::validated_pipeline(o, 1, 2, &c, &err) != 0)
			fail_msg("--bidirectional loopback refused: %s", err.c_str());
		assert_int_equal(c.flows.size(), 4);
		assert_string_equal(c.flows[3].name.c_str(), "flow1_back");
		assert_int_equal(c.flows[3].qps, 2);
		for (const rp::StageConf &s : c.stages)
			if (s.flow == "flow1_back")
				assert_int_equal(s.lcore, s.kind->end == rp::FlowEnd::requester ? 2 : 1);
	}
	perftest_refused("write_bw", {"no-such-host.invalid"}, "host 'no-such-host.invalid': no IPv4 address");

	assert_string_equal(rp::perftest_test_of("/usr/lib/rdmapipe/perftest/ib_send_lat", "x").c_str(), "send_lat");
	assert_string_equal(rp::perftest_test_of("rdmapipe-perftest", "ib_read_bw").c_str(), "read_bw");
	assert_string_equal(rp::perftest_test_of("rdmapipe-perftest", "write_bw").c_str(), "write_bw");
	assert_string_equal(rp::perftest_test_of("rdmapipe", "ib_write_bw").c_str(), "");   // rdmapipe is itself
	std::vector<std::string> args = {"-s", "64", "--eal", "-l 0-3 --no-pci", "h"};
	const std::vector<std::string> eal = rp::perftest_eal_args(&args, "-l 9");
	assert_true(eal == (std::vector<std::string>{"-l", "0-3", "--no-pci"}) && args == (std::vector<std::string>{"-s", "64", "h"}));
	assert_true(rp::perftest_eal_args(&args, "-l 9") == (std::vector<std::string>{"-l", "9"}));   // the environment's
	for (const rp::PerftestFlagDoc &d : rp::perftest_flag_docs())   // every flag says what it becomes or why not
		assert_true(!d.flags.empty() && !d.what.empty() && (d.fate == "mapped" || d.fate == "meaningless" || d.fate == "refused"));
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(every_option),
		cmocka_unit_test(verbs_and_qps),
		cmocka_unit_test(traffic_options),
		cmocka_unit_test(duration_instead_of_count),
		cmocka_unit_test(bounds),
		cmocka_unit_test(cross_checks),
		cmocka_unit_test(pingpong_and_cq_api),
		cmocka_unit_test(flows_list),
		cmocka_unit_test(two_processes),
		cmocka_unit_test(bad_syntax),
		cmocka_unit_test(table_rows_name_themselves),
		cmocka_unit_test(table_choices),
		cmocka_unit_test(plant_parser),
		cmocka_unit_test(plant_matcher),
		cmocka_unit_test(points_refusals),
		cmocka_unit_test(connect_timeout),
		cmocka_unit_test(connect_timeout_dump),
		cmocka_unit_test(perftest_front_end),
	};
	return cmocka_run_group_tests_name("options", tests, nullptr, nullptr);
}
