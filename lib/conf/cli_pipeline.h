/* The command line as a pipeline: `rdmapipe -- -v read -Q 8` is a PipelineConf of one
 * device, a flow per -Q entry, each an rdma_tx stage on the requester's lcore and an
 * rdma_rx stage on the responder's, and the two lcores' io contexts, sized by the
 * builder. Both go through the same builder; --dump-conf prints the file. Plain data,
 * no DPDK or verbs. */
#pragma once

#include "conf/config.h"
#include "conf/options.h"

#include <string>

namespace rp {

/* The file name of a pipeline the command line made. */
inline constexpr const char *kCliPipeline = "(command line)";

/* The pipeline o means, its requesters on lcore tx and responders on lcore rx. A
 * two-process run (--listen, --peer) is one end per flow, all on lcore tx: flow i
 * listens on (or connects to) PORT + i. */
PipelineConf pipeline_from_options(const RunOptions &o, unsigned tx_lcore, unsigned rx_lcore);
/* The same, through the one validator as a file's pipeline: -1 with *err naming the
 * option that set the key, or the pipeline's object (--dump-conf prints it). What a
 * run and --dump-conf take. */
/* [ADDR:]PORT with i added to its port (i = 0: as it is). */
std::string addr_plus(const std::string &a, size_t i);

int validated_pipeline(const RunOptions &o, unsigned tx_lcore, unsigned rx_lcore, PipelineConf *c, std::string *err);

/* Where a command-line run's two ends go when EAL will have `lcores` (not known: every
 * CPU of this machine): the responder on the first worker (the main lcore when there is
 * one worker, or with the console none), the requester on the next; one_end (two
 * processes): this one's end on the first worker, or main when there is none and no
 * console. Returns false with *err when there are too few. */
bool cli_lcores(const LcoreSet &lcores, bool interactive, bool one_end, unsigned *tx_lcore, unsigned *rx_lcore,
		std::string *err);

/* What the command line sets of a pipeline it runs (-f FILE, or its own): the test
 * hooks, the stall timeout, quiet, and the results files, stats period, stage cycles
 * and connect timeout where given (they win over the file's). */
void apply_cli(const RunOptions &o, PipelineConf *c);

/* c as a libconfig file that `rdmapipe -f` runs and `--check` validates; settings with
 * no key in the file (post API, fence, RNR, test hooks) are named in a comment. */
std::string pipeline_to_text(const PipelineConf &c, const RunOptions &o);

} // namespace rp
