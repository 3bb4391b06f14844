/* Software reliability's pieces (engine/reliability.h): the receiver's window and
 * bitmap, the sequence an immediate names, the retransmission header check (never a
 * write outside the message's slot), ACK decoding and the SACK view, and the RTO. */
#include "engine/reliability.h"

#include <arpa/inet.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "cmocka_cpp.h"

namespace {

using namespace rp;

struct Win {
	std::vector<uint64_t> bits;
	RxWindow w;
	explicit Win(uint32_t window)
	{
		uint32_t mask = rx_window_mask(window);
		bits.assign((mask + 1) / 64, 0);
		w = RxWindow{0, bits.data(), mask, window};
	}
};

void in_order_moves_cum(void **)
{
	Win x(128);
	for (uint64_t s = 0; s < 1000; s++) {
		assert_false(x.w.has(s));
		assert_int_equal(x.w.mark(s), 1);
		assert_int_equal(x.w.cum, s + 1);
	}
	for (uint64_t b : x.bits)
		assert_int_equal(b, 0);   // nothing left set below cum
}

void holes_fill_in_any_order(void **)
{
	Win x(256);
	std::mt19937_64 rng(3);
	uint64_t base = 0;
	for (int round = 0; round < 50; round++) {
		std::vector<uint64_t> seqs;
		for (uint64_t s = base; s < base + 200; s++)
			seqs.push_back(s);
		std::shuffle(seqs.begin(), seqs.end(), rng);
		for (uint64_t s : seqs) {
			assert_false(x.w.has(s));
			x.w.mark(s);
			assert_true(x.w.has(s) || s < x.w.cum);
		}
		base += 200;
		assert_int_equal(x.w.cum, base);
	}
}

void sack_names_what_arrived(void **)
{
	Win x(512);
	x.w.mark(0);
	x.w.mark(2);
	x.w.mark(3);
	x.w.mark(70);
	x.w.mark(300);   // beyond the bitmap an ACK carries: left out
	AckMsg a{kAckMagic, kAckVersion, 0, 9, x.w.cum, 0, {}};
	x.w.sack(a.sack);
	assert_int_equal(a.cum, 1);
	assert_false(ack_has(a, 1));
	assert_true(ack_has(a, 0) && ack_has(a, 2) && ack_has(a, 3) && ack_has(a, 70));
	assert_false(ack_has(a, 4));
	assert_false(ack_has(a, 300));
	assert_int_equal(ack_highest(a), 70);
	AckMsg none{kAckMagic, kAckVersion, 0, 9, 5, 0, {}};
	assert_int_equal(ack_highest(none), 4);
}

/* The word-at-a-time SACK says what a bit-by-bit reading of the window says, for
 * windows smaller and larger than the ACK's bitmap, at every offset of cum in the
 * circular bitmap. */
void sack_matches_every_bit(void **)
{
	std::mt19937_64 rng(11);
	for (uint32_t window : {1u, 2u, 63u, 64u, 65u, 100u, 128u, 129u, 256u, 1024u}) {
		Win x(window);
		for (int round = 0; round < 300; round++) {
			/* Random arrivals within the window; some complete the front. */
			for (int k = 0; k < 4; k++) {
				const uint64_t s = x.w.cum + rng() % window;
				if (!x.w.has(s))
					x.w.mark(s);
			}
			uint64_t got[kSackWords];
			x.w.sack(got);
			for (uint32_t i = 0; i < kSackBits; i++) {
				const uint64_t s = x.w.cum + 1 + i;
				const bool want = i + 1 < window && x.w.has(s);
				assert_int_equal(got[i >> 6] >> (i & 63) & 1, want);
			}
		}
	}
}

void immediates_unwrap_around_cum(void **)
{
	uint64_t s;
	assert_true(seq_from_imm(0, 0, 64, &s) == SeqClass::in_window && s == 0);
	assert_true(seq_from_imm(0, 63, 64, &s) == SeqClass::in_window && s == 63);
	assert_true(seq_from_imm(0, 64, 64, &s) == SeqClass::outside);
	assert_true(seq_from_imm(0, kImmSeqMask, 64, &s) == SeqClass::outside);   // nothing is below 0
	/* Across the 31-bit wrap. */
	const uint64_t cum = (1ull << 31) - 10;
	assert_true(seq_from_imm(cum, 5, 64, &s) == SeqClass::in_window && s == cum + 15);
	assert_true(seq_from_imm(cum + 20, static_cast<uint32_t>((cum + 10) & kImmSeqMask), 64, &s) == SeqClass::old &&
		    s == cum + 10);
	assert_true(seq_from_imm(cum, 1000, 64, &s) == SeqClass::outside);
}

void retx_header_only_into_its_slot(void **)
{
	const uint32_t window = 64, slots = 64, bytes = 1024;
	const Chunking whole = Chunking::of(bytes, 0);
	uint64_t s;
	auto hdr = [](uint64_t off, uint32_t seq) { return RetxHeader{off, htonl(seq)}; };
	assert_true(retx_header_ok(hdr(5 * bytes, 5), 0, window, slots, whole, &s) && s == 5);
	assert_true(retx_header_ok(hdr(5 * bytes, 69 | kImmLast), 10, window, slots, whole, &s) && s == 69);
	assert_false(retx_header_ok(hdr(6 * bytes, 5), 0, window, slots, whole, &s));            // another slot
	assert_false(retx_header_ok(hdr(5 * bytes + 1, 5), 0, window, slots, whole, &s));        // not slot-aligned
	assert_false(retx_header_ok(hdr(uint64_t(slots) * bytes, 64), 0, window, slots, whole, &s));   // past the window
	assert_false(retx_header_ok(hdr(UINT64_MAX, 5), 0, window, slots, whole, &s));
	assert_false(retx_header_ok(hdr(0, 1000), 0, window, slots, whole, &s));                 // a sequence outside
	/* Random headers: whatever passes targets the slot of a message of the window. */
	std::mt19937_64 rng(11);
	for (int i = 0; i < 100000; i++) {
		uint64_t cum = rng() % 5000;
		RetxHeader h{rng() % (2 * slots * bytes), htonl(static_cast<uint32_t>(rng()))};
		if (i % 2)
			h.target_offset -= h.target_offset % bytes;
		if (retx_header_ok(h, cum, window, slots, whole, &s)) {
			assert_true(s + window >= cum && s < cum + window);
			assert_true(h.target_offset + bytes <= uint64_t(slots) * bytes);
		}
	}
}

/* Chunks: a 2500-byte message in chunks of 1000 (1000, 1000, 500); chunk s is piece
 * s % 3 of message s / 3, and a header must name exactly its place. */
void chunks_map_to_their_place(void **)
{
	const Chunking ck = Chunking::of(2500, 1000);
	assert_int_equal(ck.count, 3);
	assert_int_equal(ck.len(0), 1000);
	assert_int_equal(ck.len(2), 500);
	assert_int_equal(ck.len(4), 1000);
	assert_int_equal(ck.offset(4, 8), 2500 + 1000);     // message 1, chunk 1
	assert_int_equal(ck.offset(3 * 9 + 2, 8), 2500 + 2000);   // message 9 is slot 1 again
	assert_int_equal(Chunking::of(2500, 2500).count, 1);
	assert_int_equal(Chunking::of(2500, 4096).bytes, 2500);
	const uint32_t slots = 8, window = slots * ck.count;
	uint64_t s;
	auto hdr = [](uint64_t off, uint32_t seq) { return RetxHeader{off, htonl(seq)}; };
	assert_true(retx_header_ok(hdr(2500 + 2000, 5), 0, window, slots, ck, &s) && s == 5);
	assert_false(retx_header_ok(hdr(2500 + 1000, 5), 0, window, slots, ck, &s));   // chunk 1's place
	assert_false(retx_header_ok(hdr(2500, 5), 0, window, slots, ck, &s));
	std::mt19937_64 rng(12);
	for (int i = 0; i < 100000; i++) {
		uint64_t cum = rng() % 5000;
		RetxHeader h{rng() % (2ull * slots * 2500), htonl(static_cast<uint32_t>(rng() % 6000))};
		if (retx_header_ok(h, cum, window, slots, ck, &s)) {
			assert_true(s + window >= cum && s < cum + window);
			assert_true(h.target_offset + ck.len(s) <= uint64_t(slots) * 2500);
		}
	}
}

void ack_decoding_is_strict(void **)
{
	AckMsg a{kAckMagic, kAckVersion, 0, 7, 100, 90, {1, 0, 0, 0}}, out;
	assert_true(ack_valid(&a, sizeof(a), &out));
	assert_int_equal(out.cum, 100);
	assert_false(ack_valid(&a, sizeof(a) - 1, &out));
	AckMsg bad = a;
	bad.magic ^= 1;
	assert_false(ack_valid(&bad, sizeof(bad), &out));
	bad = a;
	bad.version = kAckVersion + 1;
	assert_false(ack_valid(&bad, sizeof(bad), &out));
	bad = a;
	bad.credit = 101;   // more consumed than arrived
	assert_false(ack_valid(&bad, sizeof(bad), &out));
}

void rto_follows_rtt_backs_off_and_stays_bounded(void **)
{
	Rto r;
	r.min = 100;
	r.max = 10000;
	r.initial = 1000;
	assert_int_equal(r.current(), 1000);   // before any sample
	r.sample(400);
	assert_int_equal(r.srtt, 400);
	assert_int_equal(r.current(), 400 + 4 * 200);
	for (int i = 0; i < 100; i++)
		r.sample(400);
	assert_true(r.current() >= 400 && r.current() < 500);   // variation decays
	uint64_t before = r.current();
	r.timed_out();
	assert_int_equal(r.current(), 2 * before);
	for (int i = 0; i < 40; i++)
		r.timed_out();
	assert_int_equal(r.current(), 10000);   // bounded above
	r.progressed();
	assert_int_equal(r.current(), before);
	Rto fast;
	fast.min = 100;
	fast.max = 10000;
	fast.sample(1);
	assert_int_equal(fast.current(), 100);   // bounded below
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(in_order_moves_cum),
		cmocka_unit_test(holes_fill_in_any_order),
		cmocka_unit_test(sack_names_what_arrived),
		cmocka_unit_test(sack_matches_every_bit),
		cmocka_unit_test(immediates_unwrap_around_cum),
		cmocka_unit_test(retx_header_only_into_its_slot),
		cmocka_unit_test(chunks_map_to_their_place),
		cmocka_unit_test(ack_decoding_is_strict),
		cmocka_unit_test(rto_follows_rtt_backs_off_and_stays_bounded),
	};
	return cmocka_run_group_tests_name("reliability", tests, nullptr, nullptr);
}
