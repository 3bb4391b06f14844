/* The console's commands through DPDK's cmdline, fed from a pipe as if typed: what
 * each prints, and what each changes in the run (FlowControl, RunControl) — and that
 * a bad command or value prints a hint and changes nothing. No EAL, no device. */
#include "control/console.h"
#include "view_rig.h"

#include "cmocka_cpp.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace {

struct Rig : ViewRig {
	int in[2], out[2];
	rp::Console *con = nullptr;

	Rig() : ViewRig(1000)
	{
		v.what = "loopback RDMA_WRITE_WITH_IMM, 64 B";
		v.config = {"verb: write_imm", "batch: 32"};
		v.qps = {{"bw", 0, 17, "requester"}, {"bw", 0, 18, "responder"}};
		assert_int_equal(pipe(in), 0);
		assert_int_equal(pipe(out), 0);
		fcntl(out[0], F_SETFL, O_NONBLOCK);
		std::string err;
		con = rp::console_new(&v, in[0], out[1], false, &err);
		assert_non_null(con);
		drain();
	}
	~Rig()
	{
		rp::console_free(con);
		for (int fd : {in[0], in[1], out[0], out[1]})
			close(fd);
	}
	std::string drain()
	{
		std::string s;
		char buf[4096];
		ssize_t n;
		while ((n = read(out[0], buf, sizeof(buf))) > 0)
			s.append(buf, static_cast<size_t>(n));
		return s;
	}
	/* Types a line; returns what the console printed for it. */
	std::string type(const std::string &line, bool *done = nullptr) { return keys(line + "\n", done); }
	/* Types keys as they are (control keys, escape sequences). */
	std::string keys(const std::string &k, bool *done = nullptr)
	{
		assert_int_equal(write(in[1], k.data(), k.size()), static_cast<ssize_t>(k.size()));
		bool d = rp::console_poll(con);
		if (done)
			*done = d;
		return drain();
	}
};

bool has(const std::string &out, const char *what)
{
	if (out.find(what) != std::string::npos)
		return true;
	print_error("output lacks '%s'; it was:\n%s\n", what, out.c_str());
	return false;
}

void set_rate_and_batch(void **)
{
	Rig g;
	assert_true(has(g.type("set rate bw 20000"), "flow bw: at most 20000 msg/s"));
	assert_int_equal(g.ctl.tsc_per_msg.load(), 1000000000 / 20000);
	assert_true(has(g.type("set rate bw 2Gbps"), "flow bw: at most 3906250 msg/s (2.0000 Gbit/s)"));
	assert_int_equal(g.ctl.tsc_per_msg.load(), 256);
	assert_true(has(g.type("set rate bw 0"), "flow bw: no rate limit"));
	assert_int_equal(g.ctl.tsc_per_msg.load(), 0);
	assert_true(has(g.type("set batch bw 8"), "flow bw: chains of at most 8 WRs"));
	assert_int_equal(g.ctl.batch.load(), 8);
	assert_true(has(g.type("show flows"), "bw         RDMA_WRITE_WITH_IMM, 64 B, 4 QPs, batch 8, signal every 32, 1000 messages"));
}

void bad_input_changes_nothing(void **)
{
	Rig g;
	g.type("set rate bw 1000");
	const uint64_t tpm = g.ctl.tsc_per_msg.load();
	assert_true(has(g.type("set rate bw 5zz"), "set rate: '5zz' is not a rate: give messages per second"));
	assert_true(has(g.type("set rate nope 100"), "set rate: no flow 'nope' (flows: bw)"));
	assert_int_equal(g.ctl.tsc_per_msg.load(), tpm);
	assert_true(has(g.type("set batch bw 64"), "set batch: 64 is outside 1..32 (flow 'bw' was set up with chains of 32"));
	assert_true(has(g.type("set batch bw 0"), "set batch: 0 is outside 1..32"));
	assert_int_equal(g.ctl.batch.load(), 32);
	assert_true(has(g.type("set batch bw 99999999999"), "unknown command or arguments: 'set batch bw 99999999999'"));
	assert_true(has(g.type("frobnicate the NIC"), "unknown command or arguments: 'frobnicate the NIC' (help lists"));
	assert_true(has(g.type("show stats flow nope"), "show stats flow: no flow 'nope' (flows: bw)"));
	assert_true(has(g.type("show stats lcore 7"), "show stats lcore: lcore 7 runs nothing here (lcores: 1, 2)"));
	/* A line longer than cmdline's buffer is cut, not overflowed. */
	g.type(std::string(2000, 'x'));
	assert_int_equal(g.ctl.tsc_per_msg.load(), tpm);
	assert_int_equal(g.ctl.batch.load(), 32);
	assert_false(g.run.paused.load() || g.run.end_now.load());
}

void show_commands(void **)
{
	Rig g;
	g.live.sent.store(300);
	g.live.completed.store(250);
	g.req.polls_busy.store(75);
	g.req.polls_idle.store(25);
	std::string s = g.type("show stats");
	assert_true(has(s, "stats at "));
	assert_true(has(s, "outstanding 50  errors 0  250 of 1000 (25.0%)"));
	assert_true(has(g.type("show stats flow bw"), "sent 300, completed 250, errors 0 (since start)"));
	g.live.errors.store(3);
	g.live.by_status[IBV_WC_REM_ACCESS_ERR].store(1);
	g.live.by_status[IBV_WC_WR_FLUSH_ERR].store(2);
	assert_true(has(g.type("show stats flow bw"), "completion errors: 2 x Work Request Flushed Error, 1 x remote access error"));
	assert_true(has(g.type("show stats lcore 1"), "lcore 1   requester  busy polls 75, idle polls 25 (75.0% busy)"));
	assert_true(has(g.type("show stats all"), "lcore 2   responder"));
	assert_true(has(g.type("show lcores"), "lcore 2: responder"));
	assert_true(has(g.type("show qps"), "qp_num 18     responder"));
	assert_true(has(g.type("show config"), "batch: 32"));
	assert_true(has(g.type("show pools"), "(none in this run)"));
	assert_true(has(g.type("help"), "set rate FLOW VALUE"));
	/* clear stats: totals start again from now. */
	assert_true(has(g.type("clear stats"), "stats cleared"));
	g.live.completed.store(400);
	g.live.sent.store(400);
	assert_true(has(g.type("show stats flow bw"), "outstanding 0  errors 0  150 of 1000"));
}

void start_stop_quit(void **)
{
	Rig g;
	assert_true(has(g.type("stop"), "stopped: the senders post nothing new"));
	assert_true(g.run.paused.load());
	assert_true(has(g.type("stop"), "already stopped"));
	assert_true(has(g.type("start"), "started"));
	assert_false(g.run.paused.load());
	bool done = false;
	g.type("quit", &done);
	assert_true(done);
	assert_true(g.run.end_now.load());
}

/* The line editing keys: the command run is the edited line. C-u is ours (rdline has
 * none), the others rdline's. */
void line_editing(void **)
{
	Rig g;
	const std::string up = "\033[A", ctrl_a = "\001", ctrl_e = "\005", ctrl_f = "\006", ctrl_u = "\025",
			  ctrl_w = "\027", ctrl_y = "\031";
	assert_true(has(g.keys("frobnicate" + ctrl_u + "set rate bw 111\n"), "flow bw: at most 111 msg/s"));
	assert_int_equal(g.ctl.tsc_per_msg.load(), 1000000000 / 111);
	/* C-u keeps what is right of the caret and C-y pastes back what it killed. */
	std::string s = g.keys("set rate bw 222" + ctrl_a + ctrl_f + ctrl_f + ctrl_f + ctrl_f + ctrl_u + "\n");
	assert_true(has(s, "unknown command or arguments: 'rate bw 222'"));
	s = g.keys("set rate bw 333" + ctrl_a + ctrl_f + ctrl_f + ctrl_f + ctrl_f + ctrl_u + ctrl_y + "\n");
	assert_true(has(s, "flow bw: at most 333 msg/s"));
	/* C-u on an empty line, and with the caret at the start: nothing lost. */
	assert_true(has(g.keys(ctrl_u + "set rate bw 334" + ctrl_a + ctrl_u + "\n"), "flow bw: at most 334 msg/s"));
	assert_true(has(g.keys("set rate bw 999" + ctrl_w + "444\n"), "flow bw: at most 444 msg/s"));
	assert_true(has(g.keys("rate bw 55" + ctrl_a + "set " + ctrl_e + "5\n"), "flow bw: at most 555 msg/s"));
	/* History: the up arrow recalls the last line, twice the one before. */
	assert_true(has(g.keys(up + ctrl_w + "666\n"), "flow bw: at most 666 msg/s"));
	assert_true(has(g.keys(up + up + "\n"), "flow bw: at most 555 msg/s"));
	assert_int_equal(g.ctl.tsc_per_msg.load(), 1000000000 / 555);
}

void closed_input_ends_the_run(void **)
{
	Rig g;
	close(g.in[1]);
	g.in[1] = open("/dev/null", O_WRONLY);   // the destructor closes something
	assert_true(rp::console_poll(g.con));
	assert_true(g.run.end_now.load());
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(set_rate_and_batch),
		cmocka_unit_test(bad_input_changes_nothing),
		cmocka_unit_test(show_commands),
		cmocka_unit_test(start_stop_quit),
		cmocka_unit_test(line_editing),
		cmocka_unit_test(closed_input_ends_the_run),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
