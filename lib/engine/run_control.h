/* What the two roles of a flow share, and what the control plane sets for them: a few
 * atomics, each with one writer. */
#pragma once

#include "engine/bell.h"

#include <atomic>
#include <cstdint>

namespace rp {

struct alignas(64) RunControl {
	std::atomic<bool> requester_done{false};   // requester: wo (release), responder/main: ro
	const uint64_t *qp_sent = nullptr;         // per QP; requester writes before requester_done
	const bool *qp_failed = nullptr;           // per QP, likewise: its state is unknowable
	/* Per QP, likewise: the WRs the requester saw complete; those after them (a stall,
	 * an abort) may or may not have executed. nullptr: all that were sent did. */
	const uint64_t *qp_completed = nullptr;
	std::atomic<bool> abort{false};            // any lcore: wo on a fatal error, all: ro
	std::atomic<const char *> abort_why{nullptr};   // a static reason, stored before abort (async events' hook)
	std::atomic<int> stop_signal{0};           // the signal that stopped the run (main's handler: wo)
	std::atomic<int> end_signal{0};            // ... that ended a run that went on until stopped
	/* The control plane's (the console's start, stop and quit), read by the roles: */
	std::atomic<bool> paused{false};           // post nothing new; no stall is counted meanwhile
	std::atomic<bool> end_now{false};          // end as a duration run ends: a last message per QP
	/* Two-process runs: the responder's process sets qp_sent to the per-QP counts the
	 * peer announced before launch, and requester_done when the peer disconnects. */
	bool counts_known = false;
	/* The run's control when flows have their own (a pipeline of several flows): its
	 * abort, paused and end_now apply to this flow too. Setup: set once, before launch. */
	RunControl *run = this;
	/* The run's (run->bell): rung on every change above that an lcore with nothing to do
	 * sleeps until (LcoreLoop::bell). Set them through the methods below, which ring. */
	Bell bell;

	bool aborted() const
	{
		return abort.load(std::memory_order_relaxed) || run->abort.load(std::memory_order_relaxed);
	}
	/* What the roles name when they stop for an abort: the reason stored with it, or
	 * "aborted" (another role's failure, named by that role). */
	const char *abort_reason() const
	{
		const char *why = abort_why.load(std::memory_order_acquire);
		if (why == nullptr && run != this)
			why = run->abort_why.load(std::memory_order_acquire);
		return why ? why : "aborted";
	}
	/* Aborts with a reason (the first one stored wins). */
	void abort_with(const char *why)
	{
		const char *none = nullptr;
		abort_why.compare_exchange_strong(none, why, std::memory_order_release);
		abort_now();
	}
	/* Any thread, a signal handler too. Each rings once, the first time. */
	void abort_now()
	{
		if (!abort.exchange(true, std::memory_order_acq_rel))
			run->bell.ring();
	}
	void finish_requesting()
	{
		if (!requester_done.exchange(true, std::memory_order_acq_rel))
			run->bell.ring();
	}
	/* The console's: end as a duration run ends. */
	void end()
	{
		end_now.store(true, std::memory_order_release);
		paused.store(false, std::memory_order_release);
		run->bell.ring();
	}

	bool is_paused() const { return paused.load(std::memory_order_relaxed) || run->paused.load(std::memory_order_relaxed); }
	bool ending() const { return end_now.load(std::memory_order_relaxed) || run->end_now.load(std::memory_order_relaxed); }
};

} // namespace rp
