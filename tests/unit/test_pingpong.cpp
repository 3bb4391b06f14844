/* Ping-pong over UC made reliable (stop-and-wait) against the faked NIC: a ping whose
 * echo is late goes again with the same sequence, a repeated ping is echoed again, an
 * echo that was already in is dropped, and the next ping waits for its echo. And the
 * ping-pong of writes (ib_write_lat's): the faked NIC carries each write out at post
 * time into the other end's slot, where the other role polls its mark. */
#include "engine/pattern.h"
#include "engine/pingpong.h"
#include "eal_for_tests.h"
#include "fake_verbs.h"

#include <rte_cycles.h>
#include <rte_mempool.h>

#include <arpa/inet.h>

#include "cmocka_cpp.h"

#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kMsg = 32;

struct Rig {
	ibv_qp qp{};
	rte_mempool *rx_pool = nullptr, *tx_pool = nullptr;
	rp::MrTable mrs;
	rp::RecvRefill refill;
	rp::RunControl ctl;
	rp::Histogram hist;
	rp::PingPong s;

	explicit Rig(bool echo, uint64_t iterations = 4)
	{
		fake::reset();
		static int id;
		const std::string n = std::to_string(id++);
		rx_pool = rte_mempool_create(("ut_pp_rx" + n).c_str(), 64, kMsg, 0, 0, nullptr, nullptr, nullptr, nullptr, 0, 0);
		tx_pool = rte_mempool_create(("ut_pp_tx" + n).c_str(), 64, kMsg, 0, 0, nullptr, nullptr, nullptr, nullptr, 0, 0);
		assert_true(rx_pool && tx_pool);
		mrs.n = 1;
		mrs.chunks[0] = {0, UINTPTR_MAX, 0x33};
		assert_int_equal(refill.init(nullptr, 16, 4, 16, rx_pool, kMsg, &mrs), 0);
		assert_int_equal(refill.fill(fake::kOps), 16);
		const uint64_t hz = rte_get_tsc_hz();
		s.echo = echo;
		s.ops = &fake::kOps;
		s.send_cq = fake::nic().send_cq_handle;
		s.recv_cq = fake::nic().recv_cq_handle;
		s.refill = &refill;
		s.rx_pool = rx_pool;
		s.tx_pool = echo ? nullptr : tx_pool;
		s.tx_mrs = &mrs;
		s.ctl = &ctl;
		s.hist = &hist;
		s.p = rp::PingPongParams{rp::Verb::send_imm, kMsg, iterations, 8, 1, false, true, 100 * hz, hz, UINT64_MAX};
		s.p.reliable = true;
		/* Timeouts far above any scheduling delay: time is made to pass by ageing
		 * t_sent (age()), never by waiting, so a loaded CI machine cannot reorder it. */
		s.p.rto_min_tsc = s.p.rto_initial_tsc = hz / 50;   // 20 ms
		s.p.rto_max_tsc = hz;
		s.qps = std::make_unique<rp::PingPongQp[]>(1);
		s.nqps = 1;
		qp.qp_num = fake::kQpNumBase;
		s.qps[0].qp = &qp;
		std::string err;
		assert_int_equal(rp::pingpong_init(&s, &err), 0);
		/* A message's payload is the pattern of (QP 0, its true sequence in vendor_err). */
		fake::nic().deliver = [](const ibv_wc &wc) {
			rp::pattern_fill(reinterpret_cast<void *>(wc.wr_id), kMsg, rp::msg_key(0, wc.vendor_err));
		};
		rp::pingpong_start(&s);
	}
	~Rig() { rte_mempool_free(rx_pool); rte_mempool_free(tx_pool); }

	/* A message arrives on the QP whose immediate says seq. */
	void arrive(uint64_t seq)
	{
		ibv_wc wc{};
		wc.status = IBV_WC_SUCCESS;
		wc.qp_num = fake::kQpNumBase;
		wc.opcode = IBV_WC_RECV;
		wc.byte_len = kMsg;
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.imm_data = htonl(static_cast<uint32_t>(seq));
		wc.vendor_err = static_cast<uint32_t>(seq);
		wc.wr_id = fake::kFromSrq;
		fake::nic().recv_cq.push_back(wc);
	}

	/* The sequences (immediates) of everything posted, in order. */
	std::vector<uint32_t> posted() const
	{
		std::vector<uint32_t> v;
		for (auto &c : fake::nic().chains)
			for (auto &w : c)
				v.push_back(w.imm_host & rp::kImmSeqMask);
		return v;
	}

	/* The outstanding ping was sent `tsc` ago. */
	void age(uint64_t tsc) { s.qps[0].t_sent = rte_rdtsc() - tsc; }
	uint64_t rto0() const { return s.p.rto_initial_tsc; }
};

void a_late_echo_sends_the_ping_again(void **)
{
	Rig g(false);
	rp::pingpong_burst(&g.s);
	assert_true(g.posted() == std::vector<uint32_t>({0}));
	rp::pingpong_burst(&g.s);   // within the timeout: nothing more
	assert_int_equal(g.posted().size(), 1);
	g.age(g.rto0() + 1);
	rp::pingpong_burst(&g.s);
	assert_true(g.posted() == std::vector<uint32_t>({0, 0}));   // the same sequence again
	assert_int_equal(g.s.retx_timeout, 1);
	assert_int_equal(g.s.live.retx_timeout.load(), 1);
	/* Its echo comes: the next ping goes; the repeat's echo is then dropped. */
	g.arrive(0);
	rp::pingpong_burst(&g.s);
	assert_true(g.posted() == std::vector<uint32_t>({0, 0, 1}));
	g.arrive(0);
	rp::pingpong_burst(&g.s);
	assert_int_equal(g.s.duplicates, 1);
	assert_int_equal(g.s.c.received, 1);
	assert_int_equal(g.s.c.sequence_errors, 0);
	assert_true(g.posted() == std::vector<uint32_t>({0, 0, 1}));
	assert_false(g.s.finished);
}

void the_timeout_backs_off(void **)
{
	Rig g(false);
	rp::pingpong_burst(&g.s);
	g.age(g.rto0() + 1);
	rp::pingpong_burst(&g.s);                  // retry 1 after one timeout
	assert_int_equal(g.s.retx_timeout, 1);
	assert_int_equal(g.s.qps[0].rto.current(), 2 * g.rto0());
	g.age(g.rto0() + g.rto0() / 2);
	rp::pingpong_burst(&g.s);                  // 1.5 timeouts < 2: not yet
	assert_int_equal(g.s.retx_timeout, 1);
	g.age(2 * g.rto0() + 1);
	rp::pingpong_burst(&g.s);                  // past 2: retry 2
	assert_int_equal(g.s.retx_timeout, 2);
	assert_int_equal(g.s.qps[0].rto.current(), 4 * g.rto0());
	/* Its echo comes: no RTT sample from a resent ping (Karn), and the backoff ends. */
	g.arrive(0);
	rp::pingpong_burst(&g.s);
	assert_int_equal(g.s.qps[0].rto.srtt, 0);
	assert_int_equal(g.s.qps[0].rto.current(), g.rto0());
}

void a_repeated_ping_is_echoed_again(void **)
{
	Rig g(true);
	g.arrive(0);
	rp::pingpong_burst(&g.s);
	assert_true(g.posted() == std::vector<uint32_t>({0}));
	g.arrive(0);   // its echo was lost: the pinging side sent it again
	rp::pingpong_burst(&g.s);
	assert_true(g.posted() == std::vector<uint32_t>({0, 0}));
	assert_int_equal(g.s.duplicates, 1);
	assert_int_equal(g.s.c.received, 1);
	g.arrive(1);
	rp::pingpong_burst(&g.s);
	assert_true(g.posted() == std::vector<uint32_t>({0, 0, 1}));
	assert_int_equal(g.s.c.received, 2);
	assert_int_equal(g.s.c.verified, 2);
	/* Anything else is a sequence error, not a repeat. */
	g.arrive(7);
	rp::pingpong_burst(&g.s);
	assert_int_equal(g.s.c.sequence_errors, 1);
}

void the_echoing_side_stays_for_a_lost_last_echo(void **)
{
	Rig g(true, 2);
	g.arrive(0);
	g.arrive(1);
	rp::pingpong_burst(&g.s);
	assert_false(g.s.finished);   // every echo sent, but the last may be lost
	g.arrive(1);
	rp::pingpong_burst(&g.s);
	assert_true(g.posted() == std::vector<uint32_t>({0, 1, 1}));
	g.ctl.requester_done.store(true);
	rp::pingpong_burst(&g.s);
	assert_true(g.s.finished);
	assert_int_equal(rp::pingpong_finish(&g.s), 0);
}

std::vector<uint64_t> g_handed_at;
void note_handed(void *, const ibv_wc &, uint64_t now) { g_handed_at.push_back(now); }

/* A completion of another role's QP (a requester sharing the send CQ) polled in a burst
 * that brought no receive is handed on with the time it was polled, not 0: a requester
 * takes that time as its progress, and 0 made it declare a stall at once. */
void a_foreign_send_completion_is_handed_on_with_the_time(void **)
{
	Rig g(false);
	g_handed_at.clear();
	g.s.send_peer = rp::CqPeer{note_handed, nullptr};
	ibv_wc wc{};
	wc.status = IBV_WC_SUCCESS;
	wc.qp_num = fake::kQpNumBase + 7;   // not the ping-pong's QP
	wc.opcode = IBV_WC_SEND;
	fake::nic().send_cq.push_back(wc);
	const uint64_t before = rte_rdtsc();
	rp::pingpong_burst(&g.s);   // nothing on the receive CQ
	assert_int_equal(g_handed_at.size(), 1);
	assert_true(g_handed_at[0] >= before);
}

/* Receives of the ping-pong's QP that another role of the lcore polled (and counted)
 * are reposted by the ping-pong's next burst even when it polls nothing itself. */
void receives_another_role_polled_are_refilled(void **)
{
	Rig g(true);
	const size_t posts = fake::nic().srq_chains.size();
	ibv_wc wc[4]{};
	for (ibv_wc &w : wc)
		w.qp_num = fake::kQpNumBase;
	g.refill.consumed(wc, 4);   // another role's burst: 4 gone, the threshold
	fake::nic().srq_wr_ids.erase(fake::nic().srq_wr_ids.begin(), fake::nic().srq_wr_ids.begin() + 4);
	assert_int_equal(g.refill.missing(), 4);
	rp::pingpong_burst(&g.s);   // an empty receive CQ
	assert_int_equal(fake::nic().srq_chains.size(), posts + 1);
	assert_int_equal(g.refill.missing(), 0);
	assert_int_equal(fake::nic().srq_wr_ids.size(), 16);
}

/* A ping-pong of writes, both ends here on the faked NIC (it copies each write into
 * the slot its remote_addr names as it is posted): the pinging role's QPs are
 * kQpNumBase.., the echoing role's kQpNumBase + kWriteQps..; each hands the other's send
 * completions on. */
constexpr uint32_t kWriteQps = 2;

struct WriteEnd {
	std::vector<ibv_qp> qps = std::vector<ibv_qp>(kWriteQps);
	alignas(64) uint8_t slots[kWriteQps][64]{};
	rp::PingPong s;
};

struct WriteRig {
	rte_mempool *tx_pool = nullptr;
	rp::MrTable mrs;
	rp::RecvRefill refill;   // never filled: writes take no receives
	rp::RunControl ctl;
	rp::Histogram hist;
	WriteEnd ping, pong;
	uint32_t len;

	WriteRig(uint32_t msg_bytes, uint64_t iterations, uint64_t corrupt = UINT64_MAX, uint64_t settle_tsc = 0)
		: len(msg_bytes)
	{
		fake::reset();
		static int id;
		tx_pool = rte_mempool_create(("ut_wpp_tx" + std::to_string(id++)).c_str(), 64, 64, 0, 0, nullptr, nullptr, nullptr,
					     nullptr, 0, 0);
		assert_non_null(tx_pool);
		mrs.n = 1;
		mrs.chunks[0] = {0, UINTPTR_MAX, 0x33};
		const uint64_t hz = rte_get_tsc_hz();
		for (WriteEnd *e : {&ping, &pong}) {
			const bool echo = e == &pong;
			WriteEnd &far = echo ? ping : pong;
			rp::PingPong &s = e->s;
			s.echo = echo;
			s.ops = &fake::kOps;
			s.send_cq = fake::nic().send_cq_handle;
			s.recv_cq = fake::nic().recv_cq_handle;
			s.refill = &refill;
			s.tx_pool = echo ? nullptr : tx_pool;
			s.tx_mrs = &mrs;
			s.ctl = &ctl;
			s.hist = &hist;
			s.p = rp::PingPongParams{rp::Verb::write, len, iterations, 4, 1, false, true, 100 * hz, hz, echo ? UINT64_MAX : corrupt};
			s.p.settle_tsc = settle_tsc;
			s.slots = &e->slots[0][0];
			s.slot_stride = 64;
			s.slot_mrs.n = 1;
			s.slot_mrs.chunks[0] = {reinterpret_cast<uintptr_t>(s.slots), reinterpret_cast<uintptr_t>(s.slots) + sizeof e->slots, 0x44};
			s.qps = std::make_unique<rp::PingPongQp[]>(kWriteQps);
			s.nqps = kWriteQps;
			for (uint32_t i = 0; i < kWriteQps; i++) {
				e->qps[i].qp_num = fake::kQpNumBase + i + (echo ? kWriteQps : 0);
				s.qps[i].qp = &e->qps[i];
				s.qps[i].peer = rp::RemoteTarget{reinterpret_cast<uintptr_t>(far.slots[i]), 0x55, 1};
			}
			std::string err;
			assert_int_equal(rp::pingpong_init(&s, &err), 0);
		}
		ping.s.send_peer = rp::CqPeer{rp::pingpong_on_send_wc, &pong.s};
		pong.s.send_peer = rp::CqPeer{rp::pingpong_on_send_wc, &ping.s};
		rp::pingpong_start(&ping.s);
		rp::pingpong_start(&pong.s);
	}
	~WriteRig() { rte_mempool_free(tx_pool); }

	/* Bursts of both roles until both are finished (bounded: a burst each per round trip
	 * and a few to drain). */
	void run()
	{
		for (int i = 0; i < 10000 && !(ping.s.finished && pong.s.finished); i++) {
			rp::pingpong_burst(&ping.s);
			rp::pingpong_burst(&pong.s);
		}
		assert_true(ping.s.finished && pong.s.finished);
	}
};

/* 600 round trips over two QPs (the mark wraps at 255): each ping lands in the echoing
 * side's slot of its QP and goes back from there; every message on both sides checked,
 * every round trip timed, no receive ever posted. */
void a_write_pingpong_polls_its_slots(void **)
{
	WriteRig g(24, 600);
	g.run();
	assert_int_equal(rp::pingpong_finish(&g.ping.s), 0);
	assert_int_equal(rp::pingpong_finish(&g.pong.s), 0);
	for (WriteEnd *e : {&g.ping, &g.pong}) {
		assert_int_equal(e->s.c.received, 600);
		assert_int_equal(e->s.c.verified, 600);
		assert_int_equal(e->s.c.payload_errors, 0);
	}
	assert_int_equal(g.hist.count(), 600);
	assert_int_equal(fake::nic().srq_posted, 0);
	/* Every WR a write to its QP's slot at the far end; the echoes from the echoing
	 * side's own slots. */
	uint64_t pings = 0, echoes = 0;
	for (auto &c : fake::nic().chains)
		for (auto &w : c) {
			assert_int_equal(w.opcode, IBV_WR_RDMA_WRITE);
			assert_int_equal(w.sge_len, 24);
			const uint32_t qi = (w.qp_num - fake::kQpNumBase) % kWriteQps;
			const bool echo = w.qp_num - fake::kQpNumBase >= kWriteQps;
			assert_int_equal(w.remote_addr, reinterpret_cast<uintptr_t>(echo ? g.ping.slots[qi] : g.pong.slots[qi]));
			if (echo)
				assert_int_equal(w.sge_addr, reinterpret_cast<uintptr_t>(g.pong.slots[qi]));
			(echo ? echoes : pings)++;
		}
	assert_int_equal(pings, 600);
	assert_int_equal(echoes, 600);
}

/* A 1-byte ping-pong is its mark alone. */
void a_one_byte_write_pingpong(void **)
{
	WriteRig g(1, 300);
	g.run();
	assert_int_equal(rp::pingpong_finish(&g.ping.s), 0);
	assert_int_equal(g.pong.s.c.verified, 300);
}

/* A flipped byte in ping 7 of QP 0: the echoing side finds it, and the pinging side
 * again in the echo (the same bytes come back); where, on both. */
void a_corrupted_write_is_caught_at_both_ends(void **)
{
	WriteRig g(24, 20, 7, 1);
	g.run();
	assert_int_equal(rp::pingpong_finish(&g.ping.s), -1);
	assert_int_equal(rp::pingpong_finish(&g.pong.s), -1);
	for (WriteEnd *e : {&g.ping, &g.pong}) {
		assert_int_equal(e->s.c.payload_errors, 1);
		assert_int_equal(e->s.c.first_bad_qp, 0);
		assert_int_equal(e->s.c.first_bad_seq, 7);
		assert_int_equal(e->s.c.first_bad_offset, 12);
	}
}

/* The mark of the next message may show before the bytes ahead of it: the message
 * waits (settle_tsc) for them rather than counting as corrupted, and counts once they
 * are in; a mark that is neither the next message's nor the last one's is corrupted. */
void a_mark_waits_for_its_pattern(void **)
{
	WriteRig g(24, 4, UINT64_MAX, UINT64_MAX / 2);
	rp::PingPong &e = g.pong.s;
	uint8_t *slot = g.pong.slots[1];
	rp::pattern_fill(slot, 24, rp::msg_key(1, 0));
	slot[23] = rp::write_mark(0);
	slot[5] ^= 1;   // not yet placed
	rp::pingpong_burst(&e);
	assert_int_equal(e.c.received, 0);
	assert_int_equal(fake::nic().total_wrs(), 0);
	slot[5] ^= 1;
	rp::pingpong_burst(&e);
	assert_int_equal(e.c.received, 1);
	assert_int_equal(e.c.verified, 1);
	assert_int_equal(fake::nic().total_wrs(), 1);   // echoed, into the pinging side's slot 1
	assert_int_equal(memcmp(g.ping.slots[1], slot, 24), 0);
	/* Message 1 of QP 1 comes with a mark of neither 0 nor 1. */
	slot[23] = rp::write_mark(5);
	rp::pingpong_burst(&e);
	assert_int_equal(e.c.received, 2);
	assert_int_equal(e.c.payload_errors, 1);
	assert_int_equal(e.c.first_bad_seq, 1);
	assert_int_equal(e.c.first_bad_offset, 23);
}

/* A write ping-pong without its slots, or with a QP that has no far slot, is refused
 * at setup, naming what is missing. */
void a_write_pingpong_needs_its_slots(void **)
{
	rp::PingPong s;
	ibv_qp qp{};
	qp.qp_num = fake::kQpNumBase;
	const uint64_t hz = rte_get_tsc_hz();
	s.p = rp::PingPongParams{rp::Verb::write, 8, 10, 4, 1, false, true, hz, hz, UINT64_MAX};
	s.qps = std::make_unique<rp::PingPongQp[]>(1);
	s.qps[0].qp = &qp;
	s.nqps = 1;
	std::string err;
	assert_int_equal(rp::pingpong_init(&s, &err), -EINVAL);
	assert_string_equal(err.c_str(), "ping-pong of writes: each QP needs a slot of its message's size here (8 B), and no "
					 "software reliability (nothing completes at the receiving end)");
	uint8_t slots[64];
	s.slots = slots;
	s.slot_stride = 64;
	assert_int_equal(rp::pingpong_init(&s, &err), -EINVAL);
	assert_string_equal(err.c_str(), "ping-pong of writes: QP 0 has no slot at the far end to write to");
	s.p.verb = rp::Verb::read;
	assert_int_equal(rp::pingpong_init(&s, &err), -EINVAL);
	assert_string_equal(err.c_str(), "ping-pong: the verb must be send, send_imm or write, not read");
}

} // namespace

int main()
{
	if (!eal_for_tests("test_pingpong"))
		return 1;
	const CMUnitTest tests[] = {
		cmocka_unit_test(receives_another_role_polled_are_refilled),
		cmocka_unit_test(a_late_echo_sends_the_ping_again),
		cmocka_unit_test(a_foreign_send_completion_is_handed_on_with_the_time),
		cmocka_unit_test(the_timeout_backs_off),
		cmocka_unit_test(a_repeated_ping_is_echoed_again),
		cmocka_unit_test(the_echoing_side_stays_for_a_lost_last_echo),
		cmocka_unit_test(a_write_pingpong_polls_its_slots),
		cmocka_unit_test(a_one_byte_write_pingpong),
		cmocka_unit_test(a_corrupted_write_is_caught_at_both_ends),
		cmocka_unit_test(a_mark_waits_for_its_pattern),
		cmocka_unit_test(a_write_pingpong_needs_its_slots),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
