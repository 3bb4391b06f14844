#include "control/console.h"

/* cmdline_parse_check (is a line a command?) is still marked experimental in 22.11. */
#define ALLOW_EXPERIMENTAL_API 1

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>
#include <cmdline_rdline.h>
#include <cmdline_socket.h>
#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cinttypes>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace rp {

namespace {

/* Every command's tokens write into one result layout: words, then a number. */
struct CmdResult {
	cmdline_fixed_string_t w[4];
	uint32_t n;
};

using Handler = void (*)(Console *c, const CmdResult &r);

struct Command;

} // namespace

struct Console {
	RunView *view = nullptr;
	cmdline *cl = nullptr;
	bool tty = false;
	int in_fd = 0;
	bool ended_told = false;
	Sample base, last;                        // clear stats; the last show stats
	/* The parse context: instances built at setup (cmdline's instance ends in a
	 * flexible array of tokens, which C++ cannot initialise statically). */
	std::vector<std::unique_ptr<cmdline_parse_token_string_t>> strings;
	std::vector<std::unique_ptr<cmdline_parse_token_num_t>> nums;
	std::vector<void *> insts;                // malloc'd cmdline_parse_inst_t + tokens
	std::vector<std::unique_ptr<Command>> commands;
	std::vector<cmdline_parse_inst_t *> ctx;  // NULL-terminated
	/* The same commands without the catch-all, to ask whether a line is one of them. */
	std::vector<cmdline_parse_inst_t *> known_ctx;
	cmdline *checker = nullptr;
	int null_fd = -1;
};

namespace {

struct Command {
	Console *c;
	Handler h;
};

void out(Console *c, const std::string &s)
{
	cmdline_printf(c->cl, "%s", s.c_str());
}

Sample now_sample(const Console *c)
{
	return sample_take(*c->view, rte_rdtsc());
}

/* ---- show ---------------------------------------------------------------------- */

std::string lcore_line(const RunView &v, size_t i, const Sample &base, const Sample &now)
{
	const LcoreView &l = v.lcores[i];
	const LcoreSample &a = base.lcores[i], &b = now.lcores[i];
	uint64_t busy = b.busy - a.busy, idle = b.idle - a.idle;
	char buf[256];
	snprintf(buf, sizeof(buf), "  lcore %-3u %-10s busy polls %" PRIu64 ", idle polls %" PRIu64 " (%.1f%% busy)", l.lcore,
		 l.role.c_str(), busy, idle, busy + idle ? 100.0 * static_cast<double>(busy) / static_cast<double>(busy + idle) : 0.0);
	std::string s = buf;
	if (l.role == "responder") {
		snprintf(buf, sizeof(buf), ", received %" PRIu64 ", SRQ receives posted %u", b.received - a.received, b.srq_posted);
		s += buf;
	}
	return s + "\n";
}

void show_stats(Console *c, const CmdResult &r)
{
	const RunView &v = *c->view;
	Sample now = now_sample(c);
	std::string what = r.w[2];
	std::string text;
	if (what.empty() || what == "all") {
		text = stats_block(v, c->base, c->last, now);
		if (what == "all") {
			for (size_t i = 0; i < v.lcores.size(); i++)
				text += lcore_line(v, i, c->base, now);
			/* Retransmissions and protocol errors, where the device counts them. */
			HwCounters d = ports_moved(v);
			std::string ports;
			for (const RunView::Port &p : v.ports)
				ports += (ports.empty() ? "" : ", ") + p.device + " port " + std::to_string(p.port);
			text += "  " + ports + " counters since the start:";
			if (d.empty())
				text += " none moved (or the device has none)";
			for (const auto &[name, n] : d)
				text += " " + name + " " + std::to_string(n) + ",";
			if (!d.empty())
				text.pop_back();
			text += "\n";
		}
	} else if (what == "flow") {
		std::string known;
		int f = flow_index(v, r.w[3], &known);
		if (f < 0) {
			out(c, "show stats flow: no flow '" + std::string(r.w[3]) + "' (flows: " + known + ")\n");
			return;
		}
		FlowRates fr = flow_rates(v, static_cast<size_t>(f), c->base, c->last, now);
		const FlowView &fv = v.flows[f];
		char buf[256];
		snprintf(buf, sizeof(buf), "    sent %" PRIu64 ", completed %" PRIu64 ", errors %" PRIu64 " (since start)\n",
			 now.flows[f].sent, now.flows[f].completed, now.flows[f].errors);
		text = stats_line(v, static_cast<size_t>(f), fr) + "\n" + buf;
		if (fv.live) {
			std::string by = errors_by_status(*fv.live);
			if (!by.empty())
				text += "    completion errors: " + by + "\n";
		}
		if (fv.ctl) {
			uint64_t tpm = fv.ctl->tsc_per_msg.load(std::memory_order_relaxed);
			snprintf(buf, sizeof(buf), "    batch %u (set up with %u), rate limit %s\n",
				 fv.ctl->batch.load(std::memory_order_relaxed), fv.batch,
				 tpm ? (std::to_string(static_cast<uint64_t>(v.tsc_hz / static_cast<double>(tpm))) + " msg/s").c_str()
				     : "none");
			text += buf;
		}
	} else {   // lcore N
		for (size_t i = 0; i < v.lcores.size(); i++)
			if (v.lcores[i].lcore == r.n)
				text += lcore_line(v, i, c->base, now);
		if (text.empty()) {
			std::string known;
			for (const LcoreView &l : v.lcores)
				known += (known.empty() ? "" : ", ") + std::to_string(l.lcore);
			out(c, "show stats lcore: lcore " + std::to_string(r.n) + " runs nothing here (lcores: " + known + ")\n");
			return;
		}
	}
	c->last = now;
	out(c, text);
}

void show_what(Console *c, const CmdResult &r)
{
	const RunView &v = *c->view;
	const std::string what = r.w[1];
	std::string text;
	char buf[320];
	if (what == "flows") {
		for (const FlowView &f : v.flows) {
			uint64_t tpm = f.ctl ? f.ctl->tsc_per_msg.load(std::memory_order_relaxed) : 0;
			snprintf(buf, sizeof(buf), "  %-10s %s, %u B, %u QP%s, batch %u, signal every %u, %s, rate limit %s\n",
				 f.name.c_str(), verb_opcode_name(f.verb), f.msg_bytes, f.qps, f.qps > 1 ? "s" : "",
				 f.ctl ? f.ctl->batch.load(std::memory_order_relaxed) : f.batch, f.signal_every,
				 f.target ? (std::to_string(f.target) + " messages").c_str() : "for the run's duration",
				 tpm ? (std::to_string(static_cast<uint64_t>(v.tsc_hz / static_cast<double>(tpm))) + " msg/s").c_str()
				     : "none");
			text += buf;
		}
	} else if (what == "lcores") {
		for (const LcoreView &l : v.lcores) {
			snprintf(buf, sizeof(buf), "  lcore %u: %s\n", l.lcore, l.role.c_str());
			text += buf;
		}
	} else if (what == "qps") {
		for (const QpView &q : v.qps) {
			snprintf(buf, sizeof(buf), "  %-10s QP %-4u qp_num %-6u %s\n", q.flow.c_str(), q.index, q.qp_num, q.role.c_str());
			text += buf;
		}
	} else if (what == "pools") {
		for (const PoolView &p : v.pools) {
			unsigned avail = rte_mempool_avail_count(p.pool), used = rte_mempool_in_use_count(p.pool);
			snprintf(buf, sizeof(buf), "  %-24s %u buffers of %u B: %u in use, %u free\n", p.name.c_str(), p.pool->size,
				 p.pool->elt_size, used, avail);
			text += buf;
		}
	} else if (what == "rings") {
		for (const RingView &g : v.rings) {
			snprintf(buf, sizeof(buf), "  %-24s %u slots: %u used, %u free\n", g.name.c_str(), rte_ring_get_capacity(g.ring),
				 rte_ring_count(g.ring), rte_ring_free_count(g.ring));
			text += buf;
		}
	} else if (what == "stages") {
		for (const StageView &s : v.stages) {
			const uint64_t calls = s.live->calls.load(std::memory_order_relaxed);
			const uint64_t msgs = s.live->msgs.load(std::memory_order_relaxed);
			const uint64_t cycles = s.live->cycles.load(std::memory_order_relaxed);
			snprintf(buf, sizeof(buf), "  %-14s %-8s lcore %-3u calls %-12" PRIu64 " objects %-12" PRIu64 " objs/call %.2f",
				 s.name.c_str(), s.kind.c_str(), s.lcore, calls, msgs,
				 calls ? static_cast<double>(msgs) / static_cast<double>(calls) : 0.0);
			text += buf;
			if (v.stage_cycles) {
				snprintf(buf, sizeof(buf), "  cycles/obj %.1f", msgs ? static_cast<double>(cycles) / static_cast<double>(msgs) : 0.0);
				text += buf;
			}
			text += "\n";
		}
	} else {   // config
		text = "  " + v.what + " on " + v.device + "\n";
		for (const std::string &l : v.config)
			text += "  " + l + "\n";
	}
	out(c, text.empty() ? "  (none in this run)\n" : text);
}

/* ---- control ------------------------------------------------------------------- */

void clear_stats(Console *c, const CmdResult &)
{
	c->base = c->last = now_sample(c);
	out(c, "stats cleared\n");
}

void start_cmd(Console *c, const CmdResult &)
{
	bool was = c->view->ctl->paused.exchange(false);
	out(c, was ? "started: the senders post again\n" : "already running\n");
}

void stop_cmd(Console *c, const CmdResult &)
{
	bool was = c->view->ctl->paused.exchange(true);
	out(c, was ? "already stopped (start resumes)\n"
		   : "stopped: the senders post nothing new, what is in flight completes (start resumes, quit ends the run)\n");
}

void quit_cmd(Console *c, const CmdResult &)
{
	/* The run ends the way a duration run does: a last, flagged message per QP. */
	c->view->ctl->end();
	cmdline_quit(c->cl);
}

int flow_or_error(Console *c, const char *cmd, const char *name)
{
	std::string known;
	int f = flow_index(*c->view, name, &known);
	if (f < 0)
		out(c, std::string(cmd) + ": no flow '" + name + "' (flows: " + known + ")\n");
	else if (c->view->flows[f].ctl == nullptr) {
		out(c, std::string(cmd) + ": flow '" + name + "' is sent by the other process\n");
		f = -1;
	}
	return f;
}

void set_rate(Console *c, const CmdResult &r)
{
	int f = flow_or_error(c, "set rate", r.w[2]);
	if (f < 0)
		return;
	FlowView &fv = c->view->flows[f];
	std::string err;
	double pps = parse_rate(r.w[3], fv.msg_bytes, &err);
	if (pps < 0) {
		out(c, "set rate: " + err + "\n");
		return;
	}
	uint64_t tpm = pps > 0 ? static_cast<uint64_t>(c->view->tsc_hz / pps) : 0;
	if (pps > 0 && tpm == 0)
		tpm = 1;
	fv.ctl->tsc_per_msg.store(tpm, std::memory_order_relaxed);
	char buf[160];
	if (pps > 0)
		snprintf(buf, sizeof(buf), "flow %s: at most %.0f msg/s (%.4f Gbit/s)\n", fv.name.c_str(), pps,
			 pps * fv.msg_bytes * 8 / 1e9);
	else
		snprintf(buf, sizeof(buf), "flow %s: no rate limit\n", fv.name.c_str());
	out(c, buf);
}

void set_batch(Console *c, const CmdResult &r)
{
	int f = flow_or_error(c, "set batch", r.w[2]);
	if (f < 0)
		return;
	FlowView &fv = c->view->flows[f];
	if (r.n < 1 || r.n > fv.batch) {
		out(c, "set batch: " + std::to_string(r.n) + " is outside 1.." + std::to_string(fv.batch) + " (flow '" + fv.name +
			       "' was set up with chains of " + std::to_string(fv.batch) + "; start with a larger -b to go higher)\n");
		return;
	}
	fv.ctl->batch.store(r.n, std::memory_order_relaxed);
	out(c, "flow " + fv.name + ": chains of at most " + std::to_string(r.n) + " WRs\n");
}

void help_cmd(Console *c, const CmdResult &)
{
	out(c, "commands (TAB completes, up and down recall):\n"
	       "  show stats [all | flow NAME | lcore N]   rates since the last show, totals since start or clear\n"
	       "  show flows | lcores | qps | pools | rings | stages | config\n"
	       "  clear stats                              totals start again from now\n"
	       "  set rate FLOW VALUE                      e.g. 20000, 1.5Mpps, 2Gbps; 0 lifts the limit\n"
	       "  set batch FLOW N                         WRs per chain, 1 .. the set-up batch\n"
	       "  stop | start                             pause the senders, resume them\n"
	       "  quit                                     end the run (last messages, checks, summary)\n");
}

void unknown_cmd(Console *c, const CmdResult &r)
{
	std::string line = r.w[0];
	while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' '))
		line.pop_back();
	out(c, "unknown command or arguments: '" + line + "' (help lists the commands; TAB completes)\n");
}

/* The catch-all's token: the rest of the line, but only when it is no command (else
 * cmdline would find the line ambiguous). Set while a console parses (one thread). */
Console *g_parsing = nullptr;

int other_parse(cmdline_parse_token_hdr_t *, const char *buf, void *res, unsigned ressize)
{
	if (g_parsing == nullptr || *buf == '\0' || *buf == '\n')
		return -1;
	if (cmdline_parse_check(g_parsing->checker, buf) >= 0)   /* a command (its length) */
		return -1;
	/* The line up to its end (cmdline then sees nothing left after this token). */
	size_t n = strcspn(buf, "\r\n");
	if (res && ressize >= sizeof(cmdline_fixed_string_t))
		snprintf(static_cast<char *>(res), sizeof(cmdline_fixed_string_t), "%.*s", static_cast<int>(n), buf);
	return static_cast<int>(n);
}

int other_help(cmdline_parse_token_hdr_t *, char *dst, unsigned size)
{
	snprintf(dst, size, "anything else");
	return 0;
}

cmdline_token_ops g_other_ops = {other_parse, nullptr, nullptr, other_help};

void dispatch(void *parsed, cmdline *, void *data)
{
	auto *cmd = static_cast<Command *>(data);
	cmd->h(cmd->c, *static_cast<const CmdResult *>(parsed));
}

/* ---- building the context ------------------------------------------------------- */

cmdline_parse_token_hdr_t *word(Console *c, unsigned slot, const char *choices)
{
	auto t = std::make_unique<cmdline_parse_token_string_t>();
	t->hdr.ops = &cmdline_token_string_ops;
	t->hdr.offset = static_cast<unsigned>(offsetof(CmdResult, w) + slot * sizeof(cmdline_fixed_string_t));
	t->string_data.str = choices;   // nullptr: any word; "a#b": one of them; "": the rest of the line
	c->strings.push_back(std::move(t));
	return &c->strings.back()->hdr;
}

cmdline_parse_token_hdr_t *number(Console *c)
{
	auto t = std::make_unique<cmdline_parse_token_num_t>();
	t->hdr.ops = &cmdline_token_num_ops;
	t->hdr.offset = static_cast<unsigned>(offsetof(CmdResult, n));
	t->num_data.type = RTE_UINT32;
	c->nums.push_back(std::move(t));
	return &c->nums.back()->hdr;
}

void add(Console *c, Handler h, const char *help, std::initializer_list<cmdline_parse_token_hdr_t *> tokens)
{
	size_t bytes = sizeof(cmdline_parse_inst_t) + (tokens.size() + 1) * sizeof(cmdline_parse_token_hdr_t *);
	auto *inst = static_cast<cmdline_parse_inst_t *>(calloc(1, bytes));
	c->commands.push_back(std::make_unique<Command>(Command{c, h}));
	inst->f = dispatch;
	inst->data = c->commands.back().get();
	inst->help_str = help;
	size_t i = 0;
	for (cmdline_parse_token_hdr_t *t : tokens)
		inst->tokens[i++] = t;
	inst->tokens[i] = nullptr;
	c->insts.push_back(inst);
	c->ctx.push_back(inst);
}

void build(Console *c)
{
	add(c, show_stats, "show stats: every flow's rate since the last show stats, outstanding, errors, progress",
	    {word(c, 0, "show"), word(c, 1, "stats")});
	add(c, show_stats, "show stats all: the flows, then every lcore's polls", {word(c, 0, "show"), word(c, 1, "stats"), word(c, 2, "all")});
	add(c, show_stats, "show stats flow NAME: one flow, with its totals, batch and rate limit",
	    {word(c, 0, "show"), word(c, 1, "stats"), word(c, 2, "flow"), word(c, 3, nullptr)});
	add(c, show_stats, "show stats lcore N: one lcore's busy and idle polls",
	    {word(c, 0, "show"), word(c, 1, "stats"), word(c, 2, "lcore"), number(c)});
	add(c, show_what, "show flows|lcores|qps|pools|rings|stages|config: what the run is made of (stages: calls, objects, cycles)",
	    {word(c, 0, "show"), word(c, 1, "flows#lcores#qps#pools#rings#stages#config")});
	add(c, clear_stats, "clear stats: totals start again from now", {word(c, 0, "clear"), word(c, 1, "stats")});
	add(c, start_cmd, "start: resume the senders", {word(c, 0, "start")});
	add(c, stop_cmd, "stop: pause the senders (what is in flight completes)", {word(c, 0, "stop")});
	add(c, quit_cmd, "quit: end the run, then the summary", {word(c, 0, "quit")});
	add(c, set_rate, "set rate FLOW VALUE: 20000, 20000pps, 1.5Mpps, 2Gbps, 500Mbps; 0 lifts the limit",
	    {word(c, 0, "set"), word(c, 1, "rate"), word(c, 2, nullptr), word(c, 3, nullptr)});
	add(c, set_batch, "set batch FLOW N: WRs per chain, 1 .. the set-up batch",
	    {word(c, 0, "set"), word(c, 1, "batch"), word(c, 2, nullptr), number(c)});
	add(c, help_cmd, "help: the commands", {word(c, 0, "help")});
	c->known_ctx = c->ctx;
	c->known_ctx.push_back(nullptr);
	/* Last: whatever no command above takes gets a hint instead of cmdline's terse
	 * "Command not found" or "Bad arguments". */
	auto t = std::make_unique<cmdline_parse_token_string_t>();
	t->hdr.ops = &g_other_ops;
	t->hdr.offset = static_cast<unsigned>(offsetof(CmdResult, w));
	c->strings.push_back(std::move(t));
	add(c, unknown_cmd, "", {&c->strings.back()->hdr});
	c->ctx.push_back(nullptr);
}

} // namespace

Console *console_new(RunView *view, int in_fd, int out_fd, bool tty, std::string *err)
{
	auto c = std::make_unique<Console>();
	c->view = view;
	c->tty = tty;
	c->in_fd = in_fd;
	build(c.get());
	c->null_fd = open("/dev/null", O_RDWR);
	c->checker = cmdline_new(c->known_ctx.data(), "", c->null_fd, c->null_fd);
	if (c->checker == nullptr) {
		*err = "console: cmdline_new failed";
		return nullptr;
	}
	c->cl = tty ? cmdline_stdin_new(c->ctx.data(), "rdmapipe> ")
		    : cmdline_new(c->ctx.data(), "rdmapipe> ", in_fd, out_fd);
	if (c->cl == nullptr) {
		*err = "console: cmdline_new failed";
		for (void *p : c->insts)
			free(p);
		return nullptr;
	}
	c->base = c->last = now_sample(c.get());
	out(c.get(), "\rrdmapipe console: help lists the commands, TAB completes, quit ends the run\n");
	rdline_redisplay(cmdline_get_rdline(c->cl));   // the prompt again, after the greeting
	return c.release();
}

namespace {

/* C-u, unix-line-discard: DPDK 22.11's rdline has no key for it and hides its line
 * (struct rdline is opaque), so it is made of rdline's own keys. C-k kills what
 * is right of the caret, which tells us where the caret was; C-a C-k kills the left
 * part (C-y pastes it back, as in bash); the right part is typed again, C-a. */
constexpr char key_ctrl_a = '\001', key_ctrl_k = '\013', key_ctrl_u = '\025';

void kill_to_start(cmdline *cl)
{
	rdline *rdl = cmdline_get_rdline(cl);
	std::string line = rdline_get_buffer(rdl);   // left, right, then '\n'
	rdline_char_in(rdl, key_ctrl_k);
	size_t left = strlen(rdline_get_buffer(rdl)) - 1;
	std::string right = line.substr(left, line.size() - 1 - left);
	rdline_char_in(rdl, key_ctrl_a);
	rdline_char_in(rdl, key_ctrl_k);
	for (char ch : right)
		rdline_char_in(rdl, ch);
	rdline_char_in(rdl, key_ctrl_a);
}

/* Reads what was typed a byte at a time (C-u taken here, the rest to cmdline);
 * true when the console is done: quit, end of input, or the input failed. */
bool poll_input(Console *c)
{
	g_parsing = c;
	for (;;) {
		pollfd p{c->in_fd, POLLIN, 0};
		if (poll(&p, 1, 0) <= 0)
			return false;
		if (!(p.revents & POLLIN))
			return true;                     // hung up with nothing left to read
		char ch;
		ssize_t n = read(c->in_fd, &ch, 1);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			return false;
		if (n <= 0)
			return true;
		if (ch == key_ctrl_u)
			kill_to_start(c->cl);
		else if (cmdline_in(c->cl, &ch, 1) < 0)  // quit, or C-d on an empty line
			return true;
	}
}

} // namespace

bool console_poll(Console *c)
{
	if (!poll_input(c))
		return false;
	/* quit, or the input closed: the run ends (a closed input cannot type quit later). */
	c->view->ctl->end();
	return true;
}

void console_run_ended(Console *c, const char *how)
{
	if (c->ended_told)
		return;
	c->ended_told = true;
	out(c, std::string("\nthe run has ended (") + how + "): show commands still work; quit for the summary\n");
	rdline_redisplay(cmdline_get_rdline(c->cl));
}

void console_free(Console *c)
{
	if (c == nullptr)
		return;
	if (c->tty)
		cmdline_stdin_exit(c->cl);
	else
		cmdline_free(c->cl);
	cmdline_free(c->checker);
	if (c->null_fd >= 0)
		close(c->null_fd);
	if (g_parsing == c)
		g_parsing = nullptr;
	for (void *p : c->insts)
		free(p);
	delete c;
}

} // namespace rp
