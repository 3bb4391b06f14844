/* Completion polling through the extended CQ API (kIbvCqExOps), against a fake
 * ibv_cq_ex: entries come out in order with the fields the dispatch uses, an error
 * completion keeps its status and qp_num, and each provider's batch protocol is kept
 * (rxe's ibv_next_poll ends the batch itself on ENOENT; others leave it to
 * ibv_end_poll): never a batch left open, never one ended twice. */
#include "engine/verbs_ops.h"

#include <cerrno>
#include <vector>

#include "cmocka_cpp.h"

namespace {

struct FakeCq {
	ibv_cq_ex cq{};               // first: the callbacks get &cq back
	std::vector<ibv_wc> entries;
	size_t pos = 0;
	bool open = false;
	bool ends_on_empty = false;   // rxe's protocol
	int misuse = 0;               // end_poll on a closed batch, polls inside an open one

	static FakeCq *of(ibv_cq_ex *c) { return reinterpret_cast<FakeCq *>(c); }
	void load()
	{
		cq.wr_id = entries[pos].wr_id;
		cq.status = entries[pos].status;
	}
	const ibv_wc &cur() const { return entries[pos]; }

	explicit FakeCq(bool rxe) : ends_on_empty(rxe)
	{
		cq.start_poll = [](ibv_cq_ex *c, ibv_poll_cq_attr *) -> int {
			FakeCq *f = of(c);
			f->misuse += f->open;
			if (f->pos == f->entries.size())
				return ENOENT;
			f->open = true;
			f->load();
			return 0;
		};
		cq.next_poll = [](ibv_cq_ex *c) -> int {
			FakeCq *f = of(c);
			f->misuse += !f->open;
			if (++f->pos == f->entries.size()) {
				if (f->ends_on_empty)
					f->open = false;
				return ENOENT;
			}
			f->load();
			return 0;
		};
		cq.end_poll = [](ibv_cq_ex *c) {
			FakeCq *f = of(c);
			if (!f->open) {
				f->misuse++;
				return;
			}
			/* The entry last returned is consumed unless next_poll already moved past it. */
			if (f->pos < f->entries.size())
				f->pos++;
			f->open = false;
		};
		cq.read_opcode = [](ibv_cq_ex *c) { return of(c)->cur().opcode; };
		cq.read_vendor_err = [](ibv_cq_ex *c) { return of(c)->cur().vendor_err; };
		cq.read_byte_len = [](ibv_cq_ex *c) { return of(c)->cur().byte_len; };
		cq.read_imm_data = [](ibv_cq_ex *c) { return of(c)->cur().imm_data; };
		cq.read_qp_num = [](ibv_cq_ex *c) { return of(c)->cur().qp_num; };
		cq.read_wc_flags = [](ibv_cq_ex *c) { return static_cast<unsigned int>(of(c)->cur().wc_flags); };
	}
	ibv_cq *as_cq() { return reinterpret_cast<ibv_cq *>(&cq); }
};

ibv_wc entry(uint64_t wr_id, uint32_t qp, ibv_wc_status st = IBV_WC_SUCCESS)
{
	ibv_wc w{};
	w.wr_id = wr_id;
	w.status = st;
	w.qp_num = qp;
	w.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	w.byte_len = 64;
	w.wc_flags = IBV_WC_WITH_IMM;
	w.imm_data = 0x1000 + static_cast<uint32_t>(wr_id);
	w.vendor_err = st == IBV_WC_SUCCESS ? 0 : 0x77;
	return w;
}

void drains_in_bursts(const rp::VerbsOps &ops, bool rxe)
{
	FakeCq f(rxe);
	for (uint64_t i = 0; i < 6; i++)
		f.entries.push_back(entry(i, 0x100 + static_cast<uint32_t>(i % 2)));
	f.entries[4] = entry(4, 0x100, IBV_WC_REM_ACCESS_ERR);
	ibv_wc wc[4];
	/* A full burst: the batch ends through ibv_end_poll. */
	assert_int_equal(ops.poll_cq(f.as_cq(), 4, wc), 4);
	for (uint64_t i = 0; i < 4; i++) {
		assert_int_equal(wc[i].wr_id, i);
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].qp_num, 0x100 + i % 2);
		assert_int_equal(wc[i].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		assert_int_equal(wc[i].byte_len, 64);
		assert_true(wc[i].wc_flags & IBV_WC_WITH_IMM);
		assert_int_equal(wc[i].imm_data, 0x1000 + i);
	}
	/* The rest, ending on an empty CQ (the provider-specific path); the error entry
	 * keeps its status, qp_num and vendor error. */
	assert_int_equal(ops.poll_cq(f.as_cq(), 4, wc), 2);
	assert_int_equal(wc[0].wr_id, 4);
	assert_int_equal(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(wc[0].qp_num, 0x100);
	assert_int_equal(wc[0].vendor_err, 0x77);
	assert_int_equal(wc[1].wr_id, 5);
	assert_int_equal(wc[1].status, IBV_WC_SUCCESS);
	assert_int_equal(ops.poll_cq(f.as_cq(), 4, wc), 0);   // empty: no batch opened
	assert_false(f.open);
	assert_int_equal(f.misuse, 0);
	assert_int_equal(f.pos, 6);
}

void generic_provider(void **)
{
	drains_in_bursts(rp::kIbvCqExOps, false);
}

void rxe_provider(void **)
{
	drains_in_bursts(rp::kIbvCqExRxeOps, true);
}

void wrong_protocol_is_caught(void **)
{
	/* The fake catches the bug the rxe variant exists for: the generic ops on an rxe-like
	 * CQ end a batch that next_poll already ended. */
	FakeCq f(true);
	f.entries.push_back(entry(0, 0x100));
	ibv_wc wc[4];
	assert_int_equal(rp::kIbvCqExOps.poll_cq(f.as_cq(), 4, wc), 1);
	assert_int_equal(f.misuse, 1);
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(generic_provider),
		cmocka_unit_test(rxe_provider),
		cmocka_unit_test(wrong_protocol_is_caught),
	};
	return cmocka_run_group_tests_name("cq_ex", tests, nullptr, nullptr);
}
