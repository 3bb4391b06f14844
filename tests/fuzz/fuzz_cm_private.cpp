/* rdma_cm private data as a peer sends it: the request/reply decoder and a reject's
 * text. Asserted: a decoded message describes one window that does not wrap and an
 * aligned credit word, and encodes back to the same fields; a refusal says why; a
 * reject's text is printable and bounded. */
#include "verbs/cm.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

bool same(const rp::CmPrivate &a, const rp::CmPrivate &b)
{
	return a.flow == b.flow && a.qp_index == b.qp_index && a.addr == b.addr && a.rkey == b.rkey && a.slots == b.slots &&
	       a.chunk == b.chunk && a.slot_bytes == b.slot_bytes && a.credit_addr == b.credit_addr &&
	       a.credit_rkey == b.credit_rkey && a.verb == b.verb && a.messages == b.messages && a.flags == b.flags &&
	       a.uc_qpn == b.uc_qpn && a.ctrl_qpn == b.ctrl_qpn;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rp::CmPrivate p;
	std::string why;
	if (rp::cm_private_decode(data, size, &p, &why) == 0) {
		const unsigned __int128 end = static_cast<unsigned __int128>(p.addr) +
					      static_cast<unsigned __int128>(p.slots) * p.slot_bytes;
		if (end > UINT64_MAX || p.credit_addr % 8 != 0 || p.slots > rp::kCmMaxSlots || p.chunk >= 4096)
			abort();
		uint8_t again[rp::kCmParamsBytes];
		rp::cm_private_encode(p, again);
		rp::CmPrivate q;
		if (rp::cm_private_decode(again, sizeof(again), &q, &why) != 0 || !same(p, q))
			abort();
	} else if (why.empty()) {
		abort();
	}
	std::string reason;
	if (rp::cm_reject_decode(data, size, &reason)) {
		if (reason.size() > rp::kCmRejectBytes)
			abort();
		for (unsigned char c : reason)
			if (c < 0x20 || c > 0x7e)
				abort();
	}
	return 0;
}
