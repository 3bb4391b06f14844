/* The interactive console (-i): DPDK's cmdline library on the main lcore, with tab
 * completion, history and help per command, acting on a running run's RunView through
 * the control path only (FlowControl and RunControl atomics; never a lock the lcores
 * could wait on). Commands:
 *   show stats [all | flow NAME | lcore N]    show flows | lcores | qps | pools | rings | config
 *   clear stats      start      stop      quit      help
 *   set rate FLOW VALUE[pps|Kpps|Mpps|Mbps|Gbps]   (0: no limit)
 *   set batch FLOW N                                (1 .. the flow's set-up batch)
 * A bad command or value gets an error with a hint and changes nothing. */
#pragma once

#include "control/stats.h"

#include <string>

namespace rp {

struct Console;

/* in_fd/out_fd: a terminal (stdin/stdout: raw mode while it runs, restored by
 * console_free) or, with `tty` false, any pair of descriptors (tests feed a pipe).
 * Returns nullptr with *err on failure. */
Console *console_new(RunView *view, int in_fd, int out_fd, bool tty, std::string *err);

/* Non-blocking: handles what input is there. Returns true once the console is done
 * (quit typed, or the input closed). */
bool console_poll(Console *c);

/* Tells the user, once, that the run has ended (the summary follows quit). */
void console_run_ended(Console *c, const char *how);

void console_free(Console *c);

} // namespace rp
