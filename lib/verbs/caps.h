/* Capabilities probed once at setup by trying them: the fast-path variants are chosen
 * from this, never re-checked per completion. What a device lacks degrades with one
 * log line (rxe has no CQ moderation and no completion timestamps). */
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rp {

struct Device;

struct DeviceCaps {
	bool cq_ex = false;           // ibv_create_cq_ex
	/* rxe's ibv_next_poll stores the consumer index and unlocks when it returns ENOENT,
	 * where other providers leave that to ibv_end_poll: polling must not call both. */
	bool next_poll_ends_batch = false;
	bool cq_timestamps = false;   // IBV_WC_EX_WITH_COMPLETION_TIMESTAMP
	bool cq_moderation = false;   // ibv_modify_cq (completion coalescing)
	bool qp_ex = false;           // ibv_qp_ex send ops: ibv_wr_start ... ibv_wr_complete
	bool uc = false;              // unreliable connected QPs
	uint32_t max_inline = 0;      // largest inline payload an RC QP accepted
	int max_sge = 0;
	ibv_atomic_cap atomics = IBV_ATOMIC_NONE;
};

/* Tries each feature on throw-away objects. Returns 0 or -errno when even the basic
 * objects (a CQ, an RC QP) cannot be created; *notes gets one line per missing feature. */
int probe_caps(Device &dev, DeviceCaps *caps, std::vector<std::string> *notes, std::string *err);

/* "cq_ex yes, timestamps no, ..." for the summary. */
std::string caps_str(const DeviceCaps &c);

} // namespace rp
