/* kVerbs, the verb table: every row against verbs.h's own values and the contract
 * each verb has there (ibv_post_send(3)), and the rows consistent with each other. */
#include "engine/responder.h"
#include "engine/verbs_table.h"
#include "engine/wr_chain.h"

#include "cmocka_cpp.h"

#include <infiniband/verbs.h>

#include <cstring>
#include <set>
#include <string>

namespace {

using rp::Verb;

/* What verbs.h says of each verb, written out here rather than read from the table. */
struct Expect {
	Verb verb;
	const char *name;
	ibv_wr_opcode wr;
	ibv_wc_opcode wc;
	int recv_wc;   // -1: consumes no receive
	int local_access;
	int remote_access;
	int bth;       // IBA 9.2's RC opcode of a one-packet message
};
const Expect kExpect[] = {
	{Verb::send, "send", IBV_WR_SEND, IBV_WC_SEND, IBV_WC_RECV, 0, 0, 0x04},
	{Verb::send_imm, "send_imm", IBV_WR_SEND_WITH_IMM, IBV_WC_SEND, IBV_WC_RECV, 0, 0, 0x05},
	{Verb::write, "write", IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, -1, 0, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0x0a},
	{Verb::write_imm, "write_imm", IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WC_RDMA_WRITE, IBV_WC_RECV_RDMA_WITH_IMM, 0,
	 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0x0b},
	{Verb::read, "read", IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, -1, IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_READ, 0x0c},
	{Verb::fetch_add, "fetch_add", IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WC_FETCH_ADD, -1, IBV_ACCESS_LOCAL_WRITE,
	 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, 0x14},
	{Verb::cmp_swap, "cmp_swap", IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WC_COMP_SWAP, -1, IBV_ACCESS_LOCAL_WRITE,
	 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, 0x13},
};
static_assert(sizeof(kExpect) / sizeof(kExpect[0]) == rp::kNumVerbs, "one expectation per verb");

void rows_match_verbs_h(void **)
{
	for (const Expect &e : kExpect) {
		const rp::VerbInfo &v = rp::verb_info(e.verb);
		assert_true(v.verb == e.verb);
		assert_string_equal(v.name, e.name);
		assert_int_equal(rp::verb_wr_opcode(e.verb), e.wr);
		assert_int_equal(rp::verb_wc_opcode(e.verb), e.wc);
		assert_int_equal(v.bth_opcode, e.bth);
		if (e.recv_wc < 0) {
			assert_int_equal(v.recv_wc_opcode, rp::ibv::kWcNone);
			assert_false(v.consumes_receive);
		} else {
			assert_int_equal(rp::verb_recv_wc_opcode(e.verb), e.recv_wc);
			assert_true(v.consumes_receive);
		}
		assert_int_equal(v.local_access, e.local_access);
		assert_int_equal(v.remote_access, e.remote_access);
	}
}

void names_are_unique_and_round_trip(void **)
{
	std::set<std::string> names, opcodes;
	for (const rp::VerbInfo &v : rp::kVerbs) {
		assert_true(names.insert(v.name).second);
		assert_true(opcodes.insert(v.opcode_name).second);
		Verb back = v.verb == Verb::send ? Verb::cmp_swap : Verb::send;
		assert_true(rp::verb_from_name(v.name, &back));
		assert_true(back == v.verb);
		assert_string_equal(rp::verb_name(v.verb), v.name);
		assert_string_equal(rp::verb_opcode_name(v.verb), v.opcode_name);
	}
	Verb v = Verb::read;
	assert_false(rp::verb_from_name("SEND", &v));   // the options spell names, not opcodes
	assert_false(rp::verb_from_name("", &v));
	assert_true(v == Verb::read);
	assert_string_equal(rp::verb_name(static_cast<Verb>(rp::kNumVerbs)), "?");   // a peer's bad handshake
	assert_string_equal(rp::verb_opcode_name(static_cast<Verb>(200)), "?");
	/* --verb's error lists them so. */
	assert_string_equal(rp::verb_names_list().c_str(), "send, send_imm, write, write_imm, read, fetch_add, cmp_swap");
}

/* The columns that follow from others, and the contracts the engine relies on. */
void rows_are_consistent(void **)
{
	for (const rp::VerbInfo &v : rp::kVerbs) {
		const bool one_sided = !v.consumes_receive;
		assert_true(!v.inlinable || v.payload);                     // inline carries a payload
		assert_true(!v.fills_receive || v.consumes_receive);
		assert_true(v.fills_receive == (v.remote_access == 0));     // sends take no rkey, the rest do
		assert_true(!v.has_imm || v.consumes_receive);              // the immediate arrives in a receive completion
		assert_true(v.self_checked == ((v.local_access & IBV_ACCESS_LOCAL_WRITE) != 0));   // results come back
		assert_true(v.self_checked != v.payload);                   // data goes out or comes back
		assert_true(v.self_checked || v.responder_checks);          // someone checks every verb
		assert_true(!v.atomic || (v.fixed_bytes == 8 && v.self_checked && (v.remote_access & IBV_ACCESS_REMOTE_ATOMIC)));
		assert_true(v.atomic || v.fixed_bytes == 0);
		assert_true(v.uc == v.payload);                             // UC has no reads, no atomics
		assert_true(!v.chunkable || (v.has_imm && !v.fills_receive));   // chunks placed in the window
		/* Software reliability puts the sequence in the immediate of a verb UC has. */
		const rp::VerbInfo &w = rp::verb_info(v.reliable_as);
		assert_true(w.uc == v.uc && w.payload == v.payload && w.fills_receive == v.fills_receive);
		assert_true(!v.consumes_receive || w.has_imm);
		assert_true(one_sided ? v.reliable_as == v.verb : true);
		assert_non_null(v.verified_how);
	}
	assert_true(rp::reliable_wire_verb(Verb::send) == Verb::send_imm);
}

/* The responder's memory follows the row: a window, one word, or none. */
void responder_memory_follows_the_row(void **)
{
	for (const rp::VerbInfo &v : rp::kVerbs) {
		const uint64_t m = rp::responder_memory_per_qp(v.verb, 64, 10);
		if (v.remote_access == 0)
			assert_int_equal(m, 0);
		else if (v.atomic)
			assert_int_equal(m, 8);
		else
			assert_int_equal(m, 640);
	}
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(rows_match_verbs_h),
		cmocka_unit_test(names_are_unique_and_round_trip),
		cmocka_unit_test(rows_are_consistent),
		cmocka_unit_test(responder_memory_follows_the_row),
	};
	return cmocka_run_group_tests_name("verbs", tests, nullptr, nullptr);
}
