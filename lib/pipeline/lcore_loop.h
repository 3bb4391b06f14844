/* The loop a worker lcore runs: its stages in turn, run to completion, each burst
 * returning a count. The control plane reaches it only through `stop` (an atomic it
 * looks at every kControlEvery iterations); it ends by itself once all its stages are
 * done. No allocation, lock, system call or exception inside. */
#pragma once

#include "engine/bell.h"
#include "engine/idle.h"
#include "pipeline/stage.h"

#include <atomic>
#include <cstdint>

namespace rp {

inline constexpr uint32_t kMaxStagesPerLcore = 16;
inline constexpr uint64_t kControlEvery = 1024;   // loop iterations between control checks
/* A passive lcore's sleep, between looks at what it waits for: every change it waits for
 * rings the bell, so this only bounds the cost of one that would not. */
inline constexpr int kPassiveSleepMs = 1000;
static_assert((kControlEvery & (kControlEvery - 1)) == 0, "checked with a mask");

struct alignas(64) LcoreLoop {
	Stage *stages[kMaxStagesPerLcore] = {};
	uint32_t nstages = 0;
	std::atomic<bool> stop{false};      // main: wo, this lcore: ro
	/* The run was aborted (nullptr: never): the loop ends once its RDMA roles are, which
	 * see the abort themselves; the other stages would wait on them for ever. */
	const std::atomic<bool> *abort = nullptr;
	/* The run's bell (nullptr: never sleeps): while all its stages are passive the lcore
	 * sleeps on it instead of polling. */
	const Bell *bell = nullptr;
	uint64_t passive_sleeps = 0;        // this lcore's; main reads them after it joined
	std::atomic<bool> finished{false};  // this lcore: wo, main: ro
	uint64_t iterations = 0;            // this lcore's; main reads them after it joined
	uint64_t busy_iterations = 0;
	/* Adaptive polling belongs to the lcore: it sleeps only after a run of iterations in
	 * which none of its stages had work (inert without a channel: busy polling). */
	Idler idler;
	bool count_cycles = false;          // TSC cycles per stage call (run.stage_cycles): setup only
};

/* rte_eal_remote_launch entry point: arg is a LcoreLoop. Returns 0, or -1 when stopped
 * before its stages were done. */
int lcore_loop_run(void *arg);

} // namespace rp
