#include "engine/wr_chain.h"

#include <cerrno>

namespace rp {

int WriteImmChain::init(uint32_t batch, uint32_t signal_every, uint32_t msg_bytes,
			uint64_t remote_base, uint32_t rkey, uint32_t remote_slots)
{
	if (batch == 0 || signal_every == 0 || msg_bytes == 0 || remote_slots < batch)
		return -EINVAL;
	entries_.reset(new Entry[batch]());
	batch_ = batch;
	signal_every_ = signal_every;
	msg_bytes_ = msg_bytes;
	remote_base_ = remote_base;
	remote_slots_ = remote_slots;
	for (uint32_t i = 0; i < batch; i++) {
		Entry &e = entries_[i];
		e.sge.length = msg_bytes;
		e.wr.sg_list = &e.sge;
		e.wr.num_sge = 1;
		e.wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		e.wr.wr.rdma.rkey = rkey;
		e.wr.next = i + 1 < batch ? &entries_[i + 1].wr : nullptr;
	}
	return 0;
}

} // namespace rp
