/* Adaptive polling (seed 001's poll vs. notify): after a run of empty loop iterations
 * the lcore arms its CQs (ibv_req_notify_cq) and sleeps on the completion channel for
 * at most kIdleSleepMs, then goes back to busy polling. Busy polling (no channel) costs
 * nothing here: idle() returns at once. The sleep is bounded because progress can also
 * come without a completion event (a credit word written by the peer). */
#pragma once

#include <infiniband/verbs.h>
#include <poll.h>

#include <cstdint>

namespace rp {

inline constexpr uint32_t kIdleLoopsBeforeSleep = 256;
inline constexpr int kIdleSleepMs = 1;

struct Idler {
	ibv_comp_channel *channel = nullptr;   // nullptr: busy polling
	ibv_cq *cqs[2] = {nullptr, nullptr};
	uint32_t empty_loops = 0;
	uint64_t sleeps = 0;        // times the lcore blocked on the channel
	uint64_t wakeups = 0;       // ... and was woken by a completion event (not the timeout)

	/* Call once per loop iteration. */
	void idle(bool progress)
	{
		if (channel == nullptr)
			return;
		if (progress) {
			empty_loops = 0;
			return;
		}
		if (++empty_loops < kIdleLoopsBeforeSleep)
			return;
		empty_loops = 0;
		for (ibv_cq *cq : cqs)
			if (cq)
				ibv_req_notify_cq(cq, 0);
		/* A completion that landed before arming raises no event: the timeout bounds
		 * that wait, and the next poll finds it. */
		pollfd p{channel->fd, POLLIN, 0};
		sleeps++;
		if (::poll(&p, 1, kIdleSleepMs) > 0) {
			ibv_cq *cq = nullptr;
			void *ctx = nullptr;
			if (ibv_get_cq_event(channel, &cq, &ctx) == 0) {
				ibv_ack_cq_events(cq, 1);
				wakeups++;
			}
		}
	}
};

} // namespace rp
