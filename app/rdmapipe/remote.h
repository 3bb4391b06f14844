/* Two-process runs over rdma_cm: `--listen [ADDR:]PORT` runs the responder (the
 * server), `--peer ADDR:PORT` the requester (the client), each on its main lcore, one
 * RC QP per connection on the side's SharedIOContext. The client announces the run
 * (verb, size, window, messages) in each connection's private data and the server
 * refuses, with the reason, a client that disagrees; the server answers with where
 * each QP's window (or atomic word) is. A control thread watches the connections: the
 * client's disconnect ends the server's run, a server that goes away stops the
 * client's. */
#pragma once

#include "conf/options.h"

namespace rp {

/* Called after rte_eal_init. Returns an ExitCode; prints its own errors. */
int run_remote(const RunOptions &opts);

} // namespace rp
