/* What a peer's data and control QPs deliver, through the receiver's and the sender's
 * bookkeeping (lib/engine/reliability.h): immediates placed in a QP's window, resent
 * writes' headers, ACKs. The input sets up a window (message size, chunk, slots) and
 * then plays arrivals. Asserted: cum only moves forward and by at most the window; a
 * sequence is placed only inside [cum, cum + window); a header is taken only if its
 * chunk lies inside the QP's window memory, at its own place; an ACK taken is whole
 * and consistent; the timeout stays within its bounds. */
#include "engine/reliability.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void check(bool ok)
{
	if (!ok)
		abort();
}

void play_ack(FuzzedDataProvider &in)
{
	const std::vector<uint8_t> b = in.ConsumeBytes<uint8_t>(in.ConsumeIntegralInRange<size_t>(0, 2 * sizeof(rp::AckMsg)));
	rp::AckMsg a;
	if (!rp::ack_valid(b.data(), static_cast<uint32_t>(b.size()), &a))
		return;
	check(b.size() == sizeof(a) && a.magic == rp::kAckMagic && a.version == rp::kAckVersion && a.credit <= a.cum);
	const uint64_t s = in.ConsumeIntegral<uint64_t>();
	if (s < a.cum)
		check(rp::ack_has(a, s));
	if (a.cum > 0 && rp::ack_highest(a) != a.cum - 1)
		check(rp::ack_has(a, rp::ack_highest(a)));
}

void play_rto(FuzzedDataProvider &in)
{
	rp::Rto r;
	r.min = in.ConsumeIntegralInRange<uint64_t>(1, 1ull << 40);
	r.max = in.ConsumeIntegralInRange<uint64_t>(r.min, 1ull << 42);
	r.initial = in.ConsumeIntegralInRange<uint64_t>(1, 1ull << 40);
	for (int i = in.ConsumeIntegralInRange<int>(0, 64); i-- > 0;) {
		switch (in.ConsumeIntegralInRange<int>(0, 2)) {
		case 0: r.sample(in.ConsumeIntegralInRange<uint64_t>(0, 1ull << 40)); break;
		case 1: r.timed_out(); break;
		default: r.progressed(); break;
		}
		check(r.current() >= std::min(r.min, r.max) && r.current() <= r.max);
	}
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzedDataProvider in(data, size);
	const uint32_t msg_bytes = in.ConsumeIntegralInRange<uint32_t>(1, 1u << 20);
	const uint32_t chunk = in.ConsumeIntegralInRange<uint32_t>(0, 4095);
	const rp::Chunking ck = rp::Chunking::of(msg_bytes, chunk);
	const uint32_t slots = in.ConsumeIntegralInRange<uint32_t>(1, 1024);
	const uint64_t window = static_cast<uint64_t>(slots) * ck.count;
	if (ck.count == 0 || window > (1u << 20))
		return 0;
	rp::RxWindow w;
	w.window = static_cast<uint32_t>(window);
	w.mask = rp::rx_window_mask(w.window);
	std::vector<uint64_t> bits((w.mask + 1) / 64, 0);
	w.bits = bits.data();
	w.cum = in.ConsumeIntegralInRange<uint64_t>(0, 1ull << 50);
	const uint64_t memory = static_cast<uint64_t>(slots) * msg_bytes;   // the QP's window, in bytes

	while (in.remaining_bytes() > 0) {
		switch (in.ConsumeIntegralInRange<int>(0, 3)) {
		case 0: {   // a write or send arrives, its immediate from the wire
			const uint32_t imm = in.ConsumeIntegral<uint32_t>();
			uint64_t seq = 0;
			const uint64_t before = w.cum;
			const rp::SeqClass k = rp::seq_from_imm(w.cum, imm & rp::kImmSeqMask, w.window, &seq);
			if (k == rp::SeqClass::in_window) {
				check(seq >= w.cum && seq - w.cum < w.window && (seq & rp::kImmSeqMask) == (imm & rp::kImmSeqMask));
				if (!w.has(seq))
					check(w.mark(seq) <= w.window && w.cum >= before);
			} else if (k == rp::SeqClass::old) {
				check(seq < w.cum && w.cum - seq <= w.window);
			}
			break;
		}
		case 1: {   // a resent write: its header says where it goes
			rp::RetxHeader h;
			h.target_offset = in.ConsumeBool() ? in.ConsumeIntegral<uint64_t>()
							   : in.ConsumeIntegralInRange<uint64_t>(0, memory);
			h.imm = in.ConsumeIntegral<uint32_t>();
			uint64_t seq = 0;
			if (rp::retx_header_ok(h, w.cum, w.window, slots, ck, &seq)) {
				check(h.target_offset < memory && ck.len(seq) <= memory - h.target_offset);
				check(h.target_offset == ck.offset(seq, slots));
			}
			break;
		}
		case 2: {   // what an ACK of this window would say
			uint64_t sack[rp::kSackWords];
			w.sack(sack);
			for (uint32_t i = 0; i < rp::kSackBits; i++)
				check(((sack[i >> 6] >> (i & 63)) & 1) == (i + 1 < w.window && w.has(w.cum + 1 + i)));
			play_ack(in);
			break;
		}
		default: play_rto(in); break;
		}
	}
	return 0;
}
