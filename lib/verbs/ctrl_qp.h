/* An lcore's control QP (UCCL's ctrl QP): one UD QP with two small CQs of its own and
 * one registered block of message slots, carrying the ACKs of UC flows made reliable
 * in software. Setup here; ctrl_send/ctrl_recv run on the fast path (nothing
 * allocated, bursts that return counts). */
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>

namespace rp {

struct Device;

inline constexpr uint32_t kCtrlQkey = 0x11111111;
inline constexpr uint32_t kCtrlMsgMax = 256;   // bytes of one control message
inline constexpr uint32_t kCtrlGrh = 40;       // a UD receive begins with the GRH
inline constexpr uint32_t kCtrlRecvBurst = 32;

struct CtrlQp {
	ibv_qp *qp = nullptr;
	ibv_cq *send_cq = nullptr, *recv_cq = nullptr;
	ibv_mr *mr = nullptr;
	unsigned char *mem = nullptr;      // recv_slots x (kCtrlGrh + kCtrlMsgMax), then send_slots x kCtrlMsgMax
	uint32_t recv_slots = 0, send_slots = 0;
	uint32_t max_inline = 0;
	uint64_t send_posted = 0, send_done = 0;   // every send is signalled
	uint64_t send_errors = 0, recv_errors = 0; // completions with an error status
	uint64_t no_room = 0;                      // sends refused: every slot busy
	std::unique_ptr<ibv_recv_wr[]> rwr;        // one per receive slot, its SGE set once
	std::unique_ptr<ibv_sge[]> rsge;
	uint32_t taken[kCtrlRecvBurst] = {};       // slots ctrl_recv handed out, for ctrl_recv_done
	uint32_t ntaken = 0;
	uint32_t qpn() const { return qp ? qp->qp_num : 0; }
};

/* A destination: the peer control QP's number and an address handle to its GID. */
struct CtrlDest {
	ibv_ah *ah = nullptr;
	uint32_t qpn = 0;
};

/* The UD QP on dev's port, its CQs and slots, every receive posted, in RTS.
 * recv_slots and send_slots: 16..4096. Returns 0 or -errno with *err. */
int ctrl_qp_create(Device &dev, uint32_t recv_slots, uint32_t send_slots, CtrlQp *c, std::string *err);
void ctrl_qp_destroy(CtrlQp *c);   // also on a half-made one

/* An address handle on `from` to the GID `to`, for the control QP numbered qpn there. */
int ctrl_dest_create(Device &from, const ibv_gid &to, uint32_t qpn, CtrlDest *d, std::string *err);
void ctrl_dest_destroy(CtrlDest *d);

/* Copies len (1..kCtrlMsgMax) bytes into a free slot and posts one signalled UD SEND
 * to d. Returns 1 when posted, 0 when every slot is busy, -errno when the post failed. */
int ctrl_send(CtrlQp *c, const CtrlDest &d, const void *msg, uint32_t len);

/* Up to max (<= kCtrlRecvBurst) received messages: msgs[i] past the GRH, lens[i] its
 * length. Valid until ctrl_recv_done(), which reposts their receives as one chain.
 * Returns the count, or -1 when polling failed. */
int ctrl_recv(CtrlQp *c, const void **msgs, uint32_t *lens, uint32_t max);
int ctrl_recv_done(CtrlQp *c);   // 0 or -errno

} // namespace rp
