/* rdma_cm private data: it comes from the wire, so every field is checked before it is
 * used. Round trip, then each kind of damage refused with its reason; reject reasons
 * are sanitised. */
#include "verbs/cm.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "cmocka_cpp.h"

namespace {

rp::CmPrivate sample()
{
	rp::CmPrivate p;
	p.flow = 2;
	p.qp_index = 63;
	p.addr = 0x7f0012345000ull;
	p.rkey = 0xabcdef01;
	p.slots = 1024;
	p.slot_bytes = 4096;
	p.credit_addr = 0x7f0000001008ull;
	p.credit_rkey = 0x1234;
	p.verb = 4;
	p.messages = 1000000;
	p.uc_qpn = 0xabcdef;
	p.ctrl_qpn = 0x123456;
	return p;
}

void round_trip(void **)
{
	uint8_t b[rp::kCmParamsBytes];
	rp::cm_private_encode(sample(), b);
	/* Big-endian on the wire: the magic's first byte is 'R'. */
	assert_int_equal(b[0], 'R');
	rp::CmPrivate q;
	std::string why;
	/* The receiver gets the whole zero-padded area: longer is fine. */
	uint8_t padded[196] = {};
	memcpy(padded, b, sizeof(b));
	assert_int_equal(rp::cm_private_decode(padded, sizeof(padded), &q, &why), 0);
	rp::CmPrivate p = sample();
	assert_int_equal(q.flow, p.flow);
	assert_int_equal(q.qp_index, p.qp_index);
	assert_true(q.addr == p.addr && q.rkey == p.rkey && q.slots == p.slots && q.slot_bytes == p.slot_bytes);
	assert_true(q.credit_addr == p.credit_addr && q.credit_rkey == p.credit_rkey);
	assert_int_equal(q.verb, 4);
	assert_int_equal(q.messages, 1000000);
	assert_int_equal(q.uc_qpn, 0xabcdef);
	assert_int_equal(q.ctrl_qpn, 0x123456);
	p.messages = rp::kCmMaxMessages;   // the largest count and QP numbers keep their neighbours intact
	p.uc_qpn = p.ctrl_qpn = rp::kCmQpnMask;
	p.flags = rp::kCmSelfDescribing | rp::kCmReliable | rp::kCmReceiver;   // a receiving end's word
	rp::cm_private_encode(p, b);
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), 0);
	assert_true(q.messages == rp::kCmMaxMessages && q.uc_qpn == rp::kCmQpnMask && q.ctrl_qpn == rp::kCmQpnMask);
	assert_true(q.flags == (rp::kCmSelfDescribing | rp::kCmReliable | rp::kCmReceiver) && q.credit_rkey == p.credit_rkey);
}

void damage_is_refused(void **)
{
	uint8_t good[rp::kCmParamsBytes];
	rp::cm_private_encode(sample(), good);
	rp::CmPrivate q;
	std::string why;
	uint8_t b[rp::kCmParamsBytes];

	assert_int_equal(rp::cm_private_decode(good, 7, &q, &why), -EPROTO);   // shorter than a header
	assert_int_equal(rp::cm_private_decode(nullptr, 56, &q, &why), -EPROTO);
	memcpy(b, good, sizeof(b));
	b[0] ^= 0xff;
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), -EPROTO);
	assert_non_null(strstr(why.c_str(), "wrong magic"));
	memcpy(b, good, sizeof(b));
	b[4] = 9;
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), -EPROTO);
	assert_non_null(strstr(why.c_str(), "version 9"));
	memcpy(b, good, sizeof(b));
	b[7] = 20;
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), -EPROTO);
	assert_string_equal(why.c_str(), "private data length field 20, want 56");
	assert_int_equal(rp::cm_private_decode(good, 40, &q, &why), -EPROTO);   // cut short on the wire
	memcpy(b, good, sizeof(b));
	b[44] = 0x80;   // a flag this build does not know
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), -EPROTO);
	assert_non_null(strstr(why.c_str(), "unknown flags"));

	rp::CmPrivate w = sample();
	w.addr = UINT64_MAX - 100;   // a window that wraps the address space
	rp::cm_private_encode(w, b);
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), -EPROTO);
	assert_non_null(strstr(why.c_str(), "wraps around"));
	w = sample();
	w.slot_bytes = 0;   // slots without a size
	rp::cm_private_encode(w, b);
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), -EPROTO);
	w = sample();
	w.addr = 0;   // a request's shape: no address, allowed
	rp::cm_private_encode(w, b);
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), 0);
}

/* A request whose QPs share a flow window: its window and the flow's credit word take
 * the window's rkey and address fields (a request has no window of its own). */
rp::CmPrivate flow_request()
{
	rp::CmPrivate p = sample();
	p.addr = 0;
	p.rkey = 0;
	p.flags = rp::kCmFlowWindow | rp::kCmSelfDescribing;
	p.flow_window = 1024;
	p.flow_credit_addr = 0x7f0000001208ull;
	return p;
}

void flow_window_round_trip(void **)
{
	uint8_t b[rp::kCmParamsBytes];
	const rp::CmPrivate p = flow_request();
	rp::cm_private_encode(p, b);
	rp::CmPrivate q;
	std::string why;
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), 0);
	assert_int_equal(q.flags, rp::kCmFlowWindow | rp::kCmSelfDescribing);
	assert_int_equal(q.flow_window, 1024);
	assert_int_equal(q.flow_credit_addr, 0x7f0000001208ull);
	assert_int_equal(q.addr, 0);
	assert_int_equal(q.rkey, 0);
	/* The other fields keep their places. */
	assert_true(q.slots == p.slots && q.slot_bytes == p.slot_bytes && q.qp_index == p.qp_index && q.flow == p.flow);
	assert_true(q.credit_addr == p.credit_addr && q.credit_rkey == p.credit_rkey);
	assert_true(q.messages == p.messages && q.uc_qpn == p.uc_qpn && q.ctrl_qpn == p.ctrl_qpn && q.verb == p.verb);
	/* The largest window the slots field allows. */
	rp::CmPrivate m = p;
	m.flow_window = rp::kCmMaxSlots;
	rp::cm_private_encode(m, b);
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), 0);
	assert_int_equal(q.flow_window, rp::kCmMaxSlots);
	/* Without the flag the fields are the window's again, and no flow window is read. */
	rp::CmPrivate w = sample();
	w.flow_window = 1024;
	w.flow_credit_addr = 0x7f0000001208ull;
	rp::cm_private_encode(w, b);
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), 0);
	assert_int_equal(q.flow_window, 0);
	assert_int_equal(q.flow_credit_addr, 0);
	assert_true(q.addr == w.addr && q.rkey == w.rkey);
}

void flow_window_damage_is_refused(void **)
{
	uint8_t b[rp::kCmParamsBytes];
	rp::CmPrivate q;
	std::string why;
	rp::CmPrivate p = flow_request();
	p.flow_window = 0;
	rp::cm_private_encode(p, b);
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), -EPROTO);
	assert_string_equal(why.c_str(), "flow window of 0 messages with its credit word at 0x7f0000001208 (want 1..1048575, an "
					  "8-byte aligned word)");
	p = flow_request();
	p.flow_window = rp::kCmMaxSlots + 1;
	rp::cm_private_encode(p, b);
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), -EPROTO);
	assert_non_null(strstr(why.c_str(), "flow window of 1048576 messages"));
	p = flow_request();
	p.flow_credit_addr = 0x7f0000001204ull;   // not 8-byte aligned
	rp::cm_private_encode(p, b);
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), -EPROTO);
	assert_non_null(strstr(why.c_str(), "credit word at 0x7f0000001204"));
	p = flow_request();
	p.flow_credit_addr = 0;   // no word to write
	rp::cm_private_encode(p, b);
	assert_int_equal(rp::cm_private_decode(b, sizeof(b), &q, &why), -EPROTO);
	assert_non_null(strstr(why.c_str(), "flow window of 1024 messages"));
}

void reject_reasons(void **)
{
	uint8_t b[rp::kCmRejectBytes];
	rp::cm_reject_encode("the client runs send\n\x01", b);
	std::string reason;
	assert_true(rp::cm_reject_decode(b, sizeof(b), &reason));
	assert_null(strchr(reason.c_str(), '\n'));   // sanitised: printable only
	assert_non_null(strstr(reason.c_str(), "the client runs send"));
	uint8_t other[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	assert_false(rp::cm_reject_decode(other, sizeof(other), &reason));   // not ours
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(damage_is_refused),
		cmocka_unit_test(flow_window_round_trip),
		cmocka_unit_test(flow_window_damage_is_refused),
		cmocka_unit_test(reject_reasons),
	};
	return cmocka_run_group_tests_name("cm", tests, nullptr, nullptr);
}
