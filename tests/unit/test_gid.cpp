/* GID selection: never index 0 by assumption; RoCE v2 IPv4-mapped first. */
#include "verbs/gid.h"

#include "cmocka_cpp.h"

namespace {

ibv_gid_entry entry(uint32_t idx, uint32_t port, uint32_t type, bool v4)
{
	ibv_gid_entry e{};
	e.gid_index = idx;
	e.port_num = port;
	e.gid_type = type;
	e.gid.raw[0] = 0xfe;   // link-local unless overwritten
	e.gid.raw[1] = 0x80;
	if (v4) {
		for (int i = 0; i < 10; i++)
			e.gid.raw[i] = 0;
		e.gid.raw[10] = e.gid.raw[11] = 0xff;
		e.gid.raw[12] = 10;
		e.gid.raw[15] = 1;
	}
	return e;
}

void rxe_table_picks_index_1(void **)
{
	/* What rxe shows: 0 = RoCE v2 link-local IPv6, 1 = RoCE v2 IPv4-mapped. */
	ibv_gid_entry t[] = {entry(0, 1, IBV_GID_TYPE_ROCE_V2, false), entry(1, 1, IBV_GID_TYPE_ROCE_V2, true)};
	assert_int_equal(rp::select_gid_index(t, 2, 1), 1);
}

void v2_beats_v1(void **)
{
	ibv_gid_entry t[] = {entry(0, 1, IBV_GID_TYPE_ROCE_V1, true), entry(1, 1, IBV_GID_TYPE_ROCE_V1, false),
			     entry(2, 1, IBV_GID_TYPE_ROCE_V2, false), entry(3, 1, IBV_GID_TYPE_ROCE_V2, true)};
	assert_int_equal(rp::select_gid_index(t, 4, 1), 3);
	assert_int_equal(rp::select_gid_index(t, 3, 1), 2);
	assert_int_equal(rp::select_gid_index(t, 2, 1), 0);   // v1 only: lowest index
}

void other_port_and_empty(void **)
{
	ibv_gid_entry t[] = {entry(0, 2, IBV_GID_TYPE_ROCE_V2, true), entry(0, 1, IBV_GID_TYPE_IB, false)};
	assert_int_equal(rp::select_gid_index(t, 2, 1), 0);
	assert_int_equal(rp::select_gid_index(t, 1, 1), -1);
	assert_int_equal(rp::select_gid_index(t, 0, 1), -1);
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(rxe_table_picks_index_1),
		cmocka_unit_test(v2_beats_v1),
		cmocka_unit_test(other_port_and_empty),
	};
	return cmocka_run_group_tests_name("gid", tests, nullptr, nullptr);
}
