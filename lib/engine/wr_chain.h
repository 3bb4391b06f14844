/* Chains of pre-initialised RDMA_WRITE_WITH_IMM work requests (UCCL's WrExBuffPool idea,
 * eRPC's "link once at init"): setup links `batch` WR+SGE entries once; a burst fills
 * only the fields that change and the whole chain goes out in one ibv_post_send. */
#pragma once

#include "verbs/memory.h"

#include <infiniband/verbs.h>
#include <arpa/inet.h>

#include <cstdint>
#include <memory>

namespace rp {

/* Immediate data: the low 31 bits carry the message sequence number (mod 2^31), the top
 * bit marks the last message of the run so the receiver knows when to stop. */
inline constexpr uint32_t kImmLast = 1u << 31;
inline constexpr uint32_t kImmSeqMask = kImmLast - 1;

/* Selective signalling: the WR with 0-based index i asks for a completion when
 * (i + 1) is a multiple of `every`. Its completion also retires every earlier WR of
 * the QP (completions are in order on an RC send queue). */
inline bool wr_signalled(uint64_t index, uint32_t every)
{
	return (index + 1) % every == 0;
}

class WriteImmChain {
public:
	struct Entry {
		ibv_send_wr wr;
		ibv_sge sge;
	};

	/* Setup: links the entries and fills the constant fields. Returns 0 or -EINVAL. */
	int init(uint32_t batch, uint32_t signal_every, uint32_t msg_bytes, uint64_t remote_base,
		 uint32_t rkey, uint32_t remote_slots);

	/* Fast path: fills n (1..batch) entries for messages first_seq.., buffer bufs[i] for
	 * message first_seq + i, and returns the head of an n-long chain. The last WR is
	 * signalled when `ends_run` so the sender can drain. Call relink(n) after posting. */
	ibv_send_wr *build(uint64_t first_seq, uint32_t n, void *const *bufs, const MrTable &mrs,
			   bool ends_run)
	{
		uint64_t slot = first_seq % remote_slots_;
		for (uint32_t i = 0; i < n; i++) {
			Entry &e = entries_[i];
			uint64_t seq = first_seq + i;
			e.sge.addr = reinterpret_cast<uintptr_t>(bufs[i]);
			e.sge.lkey = mrs.lkey_of(bufs[i]);
			e.wr.wr_id = seq;
			e.wr.imm_data = htonl(static_cast<uint32_t>(seq & kImmSeqMask) |
					      (ends_run && i == n - 1 ? kImmLast : 0));
			e.wr.wr.rdma.remote_addr = remote_base_ + slot * msg_bytes_;
			bool sig = wr_signalled(seq, signal_every_) || (ends_run && i == n - 1);
			e.wr.send_flags = sig ? IBV_SEND_SIGNALED : 0;
			if (++slot == remote_slots_)
				slot = 0;
		}
		entries_[n - 1].wr.next = nullptr;
		return &entries_[0].wr;
	}

	void relink(uint32_t n)
	{
		entries_[n - 1].wr.next = n < batch_ ? &entries_[n].wr : nullptr;
	}

	uint32_t batch() const { return batch_; }
	const Entry *entries() const { return entries_.get(); }

private:
	std::unique_ptr<Entry[]> entries_;
	uint32_t batch_ = 0;
	uint32_t signal_every_ = 1;
	uint32_t msg_bytes_ = 0;
	uint64_t remote_base_ = 0;
	uint64_t remote_slots_ = 1;
};

} // namespace rp
