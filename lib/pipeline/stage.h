/* Stages: the units of work an lcore runs in turn, run to completion, joined across
 * lcores by rte_rings of message buffers (pointers to rte_mempool elements). Each
 * stage has the burst function of its kind, chosen at setup; a burst moves at most
 * kStageBurst messages and returns how many it handled. A message buffer starts with
 * its 8-byte sequence number, the rest is the payload pattern of that sequence, so a
 * verify stage can check order and content without any other header.
 *
 * Stage kinds register themselves (stage_kind.h): each kind's file has its burst.
 *
 * Ownership: a Stage belongs to the lcore that runs it; `done` is its only field
 * another lcore reads (the stage downstream, and main). */
#pragma once

#include "engine/counters.h"
#include "engine/run_control.h"

#include <rte_mempool.h>
#include <rte_ring.h>

#include <atomic>
#include <cstdint>

namespace rp {

inline constexpr uint32_t kStageBurst = 32;
inline constexpr uint32_t kMaxUpstreams = 16;   // producers of a stage's input ring

struct Stage;

/* What a kind keeps for a stage beyond the Stage itself (a capture's file), made at
 * setup, owned by the builder's stage, reached through Stage::ctx. */
struct StageState {
	virtual ~StageState() = default;
};

struct StageOps {
	const char *kind;
	uint32_t (*burst)(Stage *s);   // messages handled (0: nothing to do now)
	bool role = false;             // an RDMA role: it ends by itself when the run is aborted
	/* Nothing to do per message (a one-sided flow's responder), decided by setup: an lcore
	 * whose stages are all passive sleeps until the run's bell rings (nullptr: never). */
	bool (*passive)(const Stage *s) = nullptr;
	/* A source whose messages leave in sequence order (a gen, timed or not): a verify
	 * fed by it alone checks their order. A property of the kind, not of one variant. */
	bool in_order = false;
};

/* The kinds' StageOps are in their files of lib/stages/ (stages/stages.h). */

struct alignas(64) StageStats {
	uint64_t calls = 0;          // bursts called (by the lcore loop)
	uint64_t cycles = 0;         // TSC cycles in the calls that handled any (a loop that counts them)
	uint64_t msgs = 0;           // messages handled
	uint64_t bursts = 0;         // bursts that handled at least one
	uint64_t out_full = 0;       // bursts the output ring could not take whole (back-pressure)
	uint64_t pool_empty = 0;     // source: bursts the pool could not fill
	uint64_t seq_errors = 0;     // verify: out of order
	uint64_t payload_errors = 0; // verify: pattern mismatch
};

struct alignas(64) Stage {
	const StageOps *ops = nullptr;
	char name[32] = {};
	rte_ring *in = nullptr;
	rte_ring *out = nullptr;
	rte_mempool *pool = nullptr;
	uint32_t msg_bytes = 8;        // >= 8: the sequence number
	uint64_t limit = 0;            // source: messages to make
	uint64_t seq = 0;              // source: next to make; verify: next expected
	uint64_t tsc_per_msg = 0;      // source rate (0: as fast as it goes)
	const RunControl *ctl = nullptr;   // source: the run ended early (the console's quit): make no more
	uint64_t next_tsc = 0;
	/* Source: makes messages this long from its first burst (kTimedGenStage; 0: until
	 * its limit); when its first burst and its end were (what it made over that is its
	 * rate) and, timed, when it stops making. */
	uint64_t duration_tsc = 0;
	uint64_t start_tsc = 0, end_tsc = 0, deadline_tsc = 0;
	const Stage *upstream[kMaxUpstreams] = {};   // the input's producers: all done, `in` drained, ends this stage
	uint32_t nupstream = 0;
	bool ordered = true;           // verify: sequence numbers must come in order (one source)
	void *ctx = nullptr;           // an RDMA stage's role (Responder, Requester)
	void *held[kStageBurst];       // messages the output ring refused, offered again first
	uint32_t nheld = 0;
	int rc = 0;                    // an RDMA stage: its role's finish() result, once done
	bool joined = false;           // an RDMA stage others depend on (a lane): its failure stops the run
	std::atomic<bool> done{false}; // owner lcore: wo (release); downstream and main: ro
	StageStats st;
	StageLive live;                // st's calls, messages and cycles for the control plane
};

/* Setup: a stage of `ops` kind; the rest is filled in by the caller. */
void stage_init(Stage *s, const StageOps *ops, const char *name);

/* Setup: `from` is one of the producers of s's input ring. Returns false when s has
 * kMaxUpstreams already. */
bool stage_feed(Stage *s, const Stage *from);

/* Setup, for tests and the builder: every producer of s's input is done. */
bool stage_upstream_done(const Stage *s);

} // namespace rp
