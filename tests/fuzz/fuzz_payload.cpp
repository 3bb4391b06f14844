/* What a peer's messages carry that the receiver decodes: the completion's opcode,
 * flags, immediate and length (recv_header_ok), and payloads, as the pattern and the
 * self-describing format (word 0 the key: a relay's or verify stage's only source)
 * are checked. The input is a completion's fields, a message length and its bytes.
 * Asserted: a header passes only when opcode, immediate, sequence and length are
 * exactly what the verb and the message expect, and each failure is counted once in
 * its own counter; a payload check reads nothing outside the message (ASan: the bytes
 * are a heap copy of exactly len), reports an offset inside it or -1, and -1 only for
 * a byte-exact pattern; a filled message checks clean, and a byte flipped in it is
 * reported at exactly that offset. */
#include "engine/counters.h"
#include "engine/pattern.h"
#include "engine/recv_check.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <arpa/inet.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

void check(bool ok)
{
	if (!ok)
		abort();
}

constexpr rp::Verb kVerbs[] = {rp::Verb::send, rp::Verb::send_imm, rp::Verb::write_imm};

void play_header(FuzzedDataProvider &in)
{
	ibv_wc wc{};
	wc.opcode = static_cast<ibv_wc_opcode>(in.ConsumeIntegralInRange<int>(0, IBV_WC_RECV_RDMA_WITH_IMM + 1));
	wc.wc_flags = in.ConsumeIntegral<unsigned>();
	wc.imm_data = in.ConsumeIntegral<uint32_t>();
	wc.byte_len = in.ConsumeIntegral<uint32_t>();
	const rp::Verb v = kVerbs[in.ConsumeIntegralInRange<size_t>(0, 2)];
	const uint64_t seq = in.ConsumeIntegral<uint64_t>();
	const uint32_t msg = in.ConsumeIntegralInRange<uint32_t>(1, 1u << 30);
	rp::ResponderCounters c;
	bool last = true;
	const bool ok = rp::recv_header_ok(c, wc, v, seq, msg, &last);
	const ibv_wc_opcode want = v == rp::Verb::write_imm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	const bool imm = (wc.wc_flags & IBV_WC_WITH_IMM) != 0;
	const bool op_ok = wc.opcode == want && imm == rp::verb_has_imm(v);
	const bool seq_ok = !op_ok || !imm || (ntohl(wc.imm_data) & rp::kImmSeqMask) == (seq & rp::kImmSeqMask);
	check(ok == (op_ok && seq_ok && wc.byte_len == msg));
	check(c.unexpected_opcodes == !op_ok && c.sequence_errors == !seq_ok && c.length_errors == (wc.byte_len != msg));
	check(!last || (op_ok && imm && (ntohl(wc.imm_data) & rp::kImmLast)));
}

void play_payload(FuzzedDataProvider &in)
{
	const bool self = in.ConsumeBool();
	const uint64_t seq = in.ConsumeIntegral<uint64_t>();
	const size_t len = in.ConsumeIntegralInRange<size_t>(self ? 8 : 0, 4096);   // the plan keeps these >= 8
	const std::vector<uint8_t> wire = in.ConsumeBytes<uint8_t>(len);
	std::unique_ptr<uint8_t[]> buf(new uint8_t[len ? len : 1]);   // exactly len: ASan sees any overread
	memset(buf.get(), 0, len);
	if (!wire.empty())
		memcpy(buf.get(), wire.data(), wire.size());
	uint64_t key = 0;
	ptrdiff_t bad = self ? rp::self_describing_check(buf.get(), len, &key) : rp::pattern_check(buf.get(), len, seq);
	check(bad >= -1 && bad < static_cast<ptrdiff_t>(len));
	if (self)
		check(memcmp(&key, buf.get(), 8) == 0);
	/* Clean: a message made as the sender makes it checks whole. */
	const uint64_t k = self ? key : seq;
	if (self)
		rp::self_describing_fill(buf.get(), len, k);
	else
		rp::pattern_fill(buf.get(), len, k);
	bad = self ? rp::self_describing_check(buf.get(), len, &key) : rp::pattern_check(buf.get(), len, k);
	check(bad == -1 && (!self || key == k));
	/* One byte changed after the key: caught at that byte. */
	if (len > (self ? 8u : 0u) && in.remaining_bytes() > 0) {
		const size_t at = in.ConsumeIntegralInRange<size_t>(self ? 8 : 0, len - 1);
		buf[at] ^= static_cast<uint8_t>(in.ConsumeIntegralInRange<int>(1, 255));
		bad = self ? rp::self_describing_check(buf.get(), len, &key) : rp::pattern_check(buf.get(), len, k);
		check(bad == static_cast<ptrdiff_t>(at));
	}
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzedDataProvider in(data, size);
	while (in.remaining_bytes() > 0) {
		if (in.ConsumeBool())
			play_header(in);
		else
			play_payload(in);
	}
	return 0;
}
