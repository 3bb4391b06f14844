#include "verbs/cm.h"

#include "verbs/device.h"
#include "verbs/gid.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

namespace rp {

namespace {

/* ---- wire helpers: big-endian, byte by byte ---- */
void put16(uint8_t *p, uint16_t v)
{
	p[0] = static_cast<uint8_t>(v >> 8);
	p[1] = static_cast<uint8_t>(v);
}
void put32(uint8_t *p, uint32_t v)
{
	put16(p, static_cast<uint16_t>(v >> 16));
	put16(p + 2, static_cast<uint16_t>(v));
}
void put64(uint8_t *p, uint64_t v)
{
	put32(p, static_cast<uint32_t>(v >> 32));
	put32(p + 4, static_cast<uint32_t>(v));
}
uint16_t get16(const uint8_t *p)
{
	return static_cast<uint16_t>(p[0] << 8 | p[1]);
}
uint32_t get32(const uint8_t *p)
{
	return static_cast<uint32_t>(get16(p)) << 16 | get16(p + 2);
}
uint64_t get64(const uint8_t *p)
{
	return static_cast<uint64_t>(get32(p)) << 32 | get32(p + 4);
}

/* Header: magic(4) version(1) kind(1) length(2). */
constexpr uint8_t kKindParams = 1;
constexpr uint8_t kKindReject = 2;

void put_header(uint8_t *p, uint8_t kind, size_t len)
{
	put32(p, kCmMagic);
	p[4] = kCmVersion;
	p[5] = kind;
	put16(p + 6, static_cast<uint16_t>(len));
}

std::string hex(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
	return b;
}

std::string ms_str(int ms)
{
	if (ms % 1000 == 0)
		return std::to_string(ms / 1000) + " s";
	if (ms > 1000)
		return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
	return std::to_string(ms) + " ms";
}

int64_t now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/* Kernel calls take an int timeout: what is left of the deadline, at least 1 ms. */
int left_ms(int64_t deadline_ns)
{
	int64_t left = (deadline_ns - now_ns() + 999999) / 1000000;
	return left < 1 ? 1 : (left > 3600000 ? 3600000 : static_cast<int>(left));
}

const char *dev_name(const ibv_context *c)
{
	return c && c->device ? ibv_get_device_name(c->device) : "?";
}

std::string sockaddr_str(const sockaddr *sa)
{
	if (sa == nullptr || sa->sa_family != AF_INET)
		return "?";
	auto *sin = reinterpret_cast<const sockaddr_in *>(sa);
	char ip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
	return std::string(ip) + ":" + std::to_string(ntohs(sin->sin_port));
}

/* IB CM reject reasons (IBTA 12.6.7.2) rdma_cm passes through as the event status. */
const char *ib_rej_str(int reason)
{
	switch (reason) {
	case 1: return "no QP available";
	case 2: return "no EEC";
	case 3: return "no resources";
	case 4: return "timeout";
	case 5: return "unsupported request";
	case 6: return "invalid communication ID";
	case 8: return "invalid service ID";
	case 9: return "invalid transport type";
	case 10: return "stale connection";
	case 26: return "invalid MTU";
	case 27: return "insufficient responder resources";
	case 28: return "consumer-defined";
	case 29: return "invalid RNR retry";
	}
	return "reason not listed here";
}

bool is_printable(char c)
{
	return c >= 0x20 && c < 0x7f;
}

} // namespace

/* ---- private data ---- */

void cm_private_encode(const CmPrivate &p, uint8_t out[kCmParamsBytes])
{
	memset(out, 0, kCmParamsBytes);
	put_header(out, kKindParams, kCmParamsBytes);
	out[8] = static_cast<uint8_t>(p.flow);
	out[9] = p.verb;
	put16(out + 10, p.qp_index);
	put32(out + 12, (p.chunk & 0xfff) << 20 | (p.slots & kCmMaxSlots));
	put32(out + 16, p.slot_bytes);
	const bool fw = (p.flags & kCmFlowWindow) != 0;   // a request: no window of its own to describe
	put32(out + 20, fw ? p.flow_window : p.rkey);
	put64(out + 24, fw ? p.flow_credit_addr : p.addr);
	put64(out + 32, p.credit_addr);
	put32(out + 40, p.credit_rkey);
	put32(out + 44, static_cast<uint32_t>(p.flags) << 24 | (p.uc_qpn & kCmQpnMask));
	put64(out + 48, static_cast<uint64_t>(p.ctrl_qpn & kCmQpnMask) << 40 | (p.messages & kCmMaxMessages));
}

static int check_header(const uint8_t *b, size_t len, uint8_t kind, size_t want, std::string *why)
{
	if (len < 8) {
		*why = std::to_string(len) + " bytes of private data, need " + std::to_string(want);
		return -EPROTO;
	}
	uint32_t magic = get32(b);
	if (magic != kCmMagic) {
		*why = "wrong magic " + hex(magic) + " (want " + hex(kCmMagic) + ": not an rdmapipe peer)";
		return -EPROTO;
	}
	if (b[4] != kCmVersion) {
		*why = "private data version " + std::to_string(b[4]) + " (this build speaks " +
		       std::to_string(kCmVersion) + ")";
		return -EPROTO;
	}
	if (b[5] != kind) {
		*why = "private data of kind " + std::to_string(b[5]) + ", want " + std::to_string(kind);
		return -EPROTO;
	}
	size_t stated = get16(b + 6);
	if (stated != want) {
		*why = "private data length field " + std::to_string(stated) + ", want " + std::to_string(want);
		return -EPROTO;
	}
	if (len < want) {
		*why = std::to_string(len) + " bytes of private data, need " + std::to_string(want);
		return -EPROTO;
	}
	return 0;
}

int cm_private_decode(const void *data, size_t len, CmPrivate *p, std::string *why)
{
	auto *b = static_cast<const uint8_t *>(data);
	if (b == nullptr)
		len = 0;
	int ret = check_header(b, len, kKindParams, kCmParamsBytes, why);
	if (ret)
		return ret;
	CmPrivate q;
	q.flow = b[8];
	q.verb = b[9];
	q.qp_index = get16(b + 10);
	const uint32_t slots = get32(b + 12);
	q.slots = slots & kCmMaxSlots;
	q.chunk = slots >> 20;
	q.slot_bytes = get32(b + 16);
	q.rkey = get32(b + 20);
	q.addr = get64(b + 24);
	q.credit_addr = get64(b + 32);
	q.credit_rkey = get32(b + 40);
	const uint32_t shape = get32(b + 44);
	q.flags = static_cast<uint8_t>(shape >> 24);
	if (q.flags & ~(kCmSelfDescribing | kCmReliable | kCmFlowWindow)) {
		*why = "unknown flags " + hex(q.flags);
		return -EPROTO;
	}
	if (q.flags & kCmFlowWindow) {
		q.flow_window = q.rkey;
		q.flow_credit_addr = q.addr;
		q.rkey = 0;
		q.addr = 0;
		if (q.flow_window == 0 || q.flow_window > kCmMaxSlots || q.flow_credit_addr == 0 || q.flow_credit_addr % 8 != 0) {
			*why = "flow window of " + std::to_string(q.flow_window) + " messages with its credit word at " + hex(q.flow_credit_addr) +
			       " (want 1.." + std::to_string(kCmMaxSlots) + ", an 8-byte aligned word)";
			return -EPROTO;
		}
	}
	q.uc_qpn = shape & kCmQpnMask;
	const uint64_t tail = get64(b + 48);
	q.ctrl_qpn = static_cast<uint32_t>(tail >> 40);
	q.messages = tail & kCmMaxMessages;
	/* The memory fields are addresses the peer will RDMA into: make sure they describe
	 * one window that does not wrap, before anyone uses them. */
	/* A window without an address is a request's shape (what the client expects the
	 * server's window to be), not memory anyone may touch. */
	if ((q.slots == 0) != (q.slot_bytes == 0)) {
		*why = "inconsistent window: " + std::to_string(q.slots) + " slots of " + std::to_string(q.slot_bytes) +
		       " B at " + hex(q.addr);
		return -EPROTO;
	}
	uint64_t window = static_cast<uint64_t>(q.slots) * q.slot_bytes;
	if (window > UINT64_MAX - q.addr) {
		*why = "window of " + std::to_string(q.slots) + " x " + std::to_string(q.slot_bytes) + " B at " +
		       hex(q.addr) + " wraps around the address space";
		return -EPROTO;
	}
	if (q.credit_addr % 8 != 0) {
		*why = "credit word address " + hex(q.credit_addr) + " is not 8-byte aligned";
		return -EPROTO;
	}
	*p = q;
	return 0;
}

void cm_reject_encode(const std::string &reason, uint8_t out[kCmRejectBytes])
{
	memset(out, 0, kCmRejectBytes);
	put_header(out, kKindReject, kCmRejectBytes);
	size_t n = reason.size() < kCmRejectTextBytes - 1 ? reason.size() : kCmRejectTextBytes - 1;
	for (size_t i = 0; i < n; i++)
		out[8 + i] = is_printable(reason[i]) ? static_cast<uint8_t>(reason[i]) : '?';
}

bool cm_reject_decode(const void *data, size_t len, std::string *reason)
{
	auto *b = static_cast<const uint8_t *>(data);
	std::string why;
	if (b == nullptr || check_header(b, len, kKindReject, kCmRejectBytes, &why) != 0)
		return false;
	reason->clear();
	for (size_t i = 0; i < kCmRejectTextBytes && b[8 + i] != 0; i++)
		*reason += is_printable(static_cast<char>(b[8 + i])) ? static_cast<char>(b[8 + i]) : '?';
	return true;
}

/* ---- addresses ---- */

int cm_addr_parse(const std::string &ip, const std::string &port, CmAddr *a, std::string *err)
{
	*a = CmAddr{};
	a->sin.sin_family = AF_INET;
	if (!ip.empty() && inet_pton(AF_INET, ip.c_str(), &a->sin.sin_addr) != 1) {
		*err = "rdma_cm: '" + ip + "' is not an IPv4 address";
		return -EINVAL;
	}
	char *end = nullptr;
	errno = 0;
	unsigned long p = strtoul(port.c_str(), &end, 10);
	if (port.empty() || *end != '\0' || errno != 0 || p > 65535) {
		*err = "rdma_cm: '" + port + "' is not a port number (0..65535)";
		return -EINVAL;
	}
	a->sin.sin_port = htons(static_cast<uint16_t>(p));
	a->str = (ip.empty() ? "0.0.0.0" : ip) + ":" + std::to_string(p);
	return 0;
}

/* ---- the device, on librdmacm's context ---- */

int cm_device_open(Device *dev, ibv_context *verbs, uint8_t port, std::string *err, int gid_index)
{
	int ret;
	*dev = Device{};
	if (verbs == nullptr) {
		*err = "rdma_cm: no device context yet (resolve the route or bind to a device's address first)";
		return -EINVAL;
	}
	dev->name = dev_name(verbs);
	dev->ctx = verbs;
	dev->owns_ctx = false;
	dev->port = port;
	if ((ret = ibv_query_device(verbs, &dev->dev_attr)) != 0) {
		*err = dev->name + ": ibv_query_device: " + strerror(ret);
		goto fail;
	}
	if (port < 1 || port > dev->dev_attr.phys_port_cnt) {
		*err = dev->name + ": port " + std::to_string(port) + " does not exist (ports 1.." +
		       std::to_string(dev->dev_attr.phys_port_cnt) + ")";
		ret = EINVAL;
		goto fail;
	}
	if ((ret = ibv_query_port(verbs, port, &dev->port_attr)) != 0) {
		*err = dev->name + ": ibv_query_port " + std::to_string(port) + ": " + strerror(ret);
		goto fail;
	}
	if (dev->port_attr.state != IBV_PORT_ACTIVE) {
		*err = dev->name + " port " + std::to_string(port) + " is " + ibv_port_state_str(dev->port_attr.state) +
		       ", not ACTIVE (is its netdev up?)";
		ret = ENETDOWN;
		goto fail;
	}
	/* rdma_cm picks each connection's GID from its address; Device's GID is for the
	 * code that reads it (and a loopback run's address), chosen as device_open would. */
	if ((ret = -device_pick_gid(dev, gid_index, err)) != 0)
		goto fail;
	dev->pd = ibv_alloc_pd(verbs);
	if (dev->pd == nullptr) {
		ret = errno;
		*err = dev->name + ": ibv_alloc_pd: " + strerror(ret);
		goto fail;
	}
	return 0;

fail:
	dev->ctx = nullptr;   // librdmacm's: never closed here
	return -ret;
}

void cm_device_close(Device *dev)
{
	if (dev->pd)
		ibv_dealloc_pd(dev->pd);
	dev->pd = nullptr;
	dev->ctx = nullptr;
}

int cm_device_context(const std::string &name, ibv_context **verbs, std::string *err)
{
	int n = 0;
	ibv_context **list = rdma_get_devices(&n);
	if (list == nullptr || n == 0) {
		*err = "librdmacm: no RDMA device (is rdma_ucm loaded, is there an RDMA link?)";
		if (list)
			rdma_free_devices(list);
		return -ENODEV;
	}
	std::string all;
	*verbs = nullptr;
	for (int i = 0; i < n; i++) {
		all += (i ? ", " : "") + std::string(dev_name(list[i]));
		if (*verbs == nullptr && (name.empty() || name == dev_name(list[i])))
			*verbs = list[i];
	}
	/* librdmacm keeps its contexts open after the list is freed (until the device goes). */
	rdma_free_devices(list);
	if (*verbs == nullptr) {
		*err = "device '" + name + "' not found (present: " + all + ")";
		return -ENODEV;
	}
	return 0;
}

/* ---- connection sets ---- */

const char *cm_state_str(CmState s)
{
	switch (s) {
	case CmState::kIdle: return "idle";
	case CmState::kResolving: return "resolving";
	case CmState::kRouted: return "routed";
	case CmState::kConnecting: return "connecting";
	case CmState::kEstablished: return "established";
	case CmState::kDown: return "down";
	}
	return "?";
}

/* An event copied out of librdmacm's, which is acked at once: rdma_destroy_id waits
 * for every event of its id to be acked, so none is ever held. */
struct CmConnSet::Event {
	rdma_cm_event_type type;
	int status;
	rdma_cm_id *id;
	rdma_cm_id *listen_id;
	uint8_t priv[256];   // private_data_len is a uint8_t
	size_t priv_len;
};

namespace {

/* "RDMA_CM_EVENT_X" plus what its status means. */
std::string event_str(const rdma_cm_event_type type, int status)
{
	std::string s = rdma_event_str(type);
	if (status == 0)
		return s;
	if (type == RDMA_CM_EVENT_REJECTED && status > 0)
		return s + ": IB CM reason " + std::to_string(status) + ", " + ib_rej_str(status);
	if (status < 0 && status > -4096 && status != -1)
		return s + ": " + strerror(-status);
	return s + ": status " + std::to_string(status);
}

} // namespace

int CmConnSet::open_channel(std::string *err)
{
	channel_ = rdma_create_event_channel();
	if (channel_ == nullptr) {
		int e = errno ? errno : ENODEV;
		*err = what_ + ": rdma_create_event_channel: " + strerror(e) +
		       (e == ENOENT || e == ENODEV ? " (is the rdma_ucm module loaded?)" : "");
		return -e;
	}
	/* Non-blocking: a wait is poll() against a deadline, never a blocking read. */
	int fl = fcntl(channel_->fd, F_GETFL);
	if (fl < 0 || fcntl(channel_->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int e = errno;
		*err = what_ + ": event channel: fcntl O_NONBLOCK: " + strerror(e);
		rdma_destroy_event_channel(channel_);
		channel_ = nullptr;
		return -e;
	}
	return 0;
}

namespace {
std::atomic<bool> g_cm_cancelled{false};
constexpr int kCancelCheckMs = 100;   // how late a cancel is noticed (the signal may hit another thread)
} // namespace

void cm_cancel_waits()
{
	g_cm_cancelled.store(true);
}

int CmConnSet::next_event(int64_t deadline_ns, Event *ev, std::string *err)
{
	for (;;) {
		if (g_cm_cancelled.load()) {
			*err = what_ + ": interrupted while waiting (a signal asked the process to stop)";
			return -EINTR;
		}
		rdma_cm_event *e = nullptr;
		if (rdma_get_cm_event(channel_, &e) == 0) {
			ev->type = e->event;
			ev->status = e->status;
			ev->id = e->id;
			ev->listen_id = e->listen_id;
			ev->priv_len = 0;
			/* The private data lives in the event: copy it before the ack frees it. */
			if (e->event != RDMA_CM_EVENT_MULTICAST_JOIN && e->event != RDMA_CM_EVENT_MULTICAST_ERROR &&
			    e->param.conn.private_data != nullptr) {
				ev->priv_len = e->param.conn.private_data_len;
				if (ev->priv_len > sizeof(ev->priv))
					ev->priv_len = sizeof(ev->priv);
				memcpy(ev->priv, e->param.conn.private_data, ev->priv_len);
			}
			rdma_ack_cm_event(e);
			return 1;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			int ret = errno;
			*err = what_ + ": rdma_get_cm_event: " + strerror(ret);
			return -ret;
		}
		int64_t left = deadline_ns - now_ns();
		if (left <= 0)
			return 0;
		pollfd p{channel_->fd, POLLIN, 0};
		if (poll(&p, 1, std::min(left_ms(deadline_ns), kCancelCheckMs)) < 0 && errno != EINTR) {
			int ret = errno;
			*err = what_ + ": poll on the event channel: " + strerror(ret);
			return -ret;
		}
	}
}

CmConn *CmConnSet::conn_of(const rdma_cm_id *id)
{
	if (id == nullptr)
		return nullptr;
	auto i = reinterpret_cast<uintptr_t>(id->context);
	if (i == 0 || i > conns_.size() || conns_[i - 1].id != id)
		return nullptr;
	return &conns_[i - 1];
}

template <typename Waiting>
int CmConnSet::await_event(int64_t deadline_ns, int timeout_ms, Event *ev, Waiting waiting, std::string *err)
{
	int r = next_event(deadline_ns, ev, err);
	if (r == 0) {
		*err = what_ + ": timed out after " + ms_str(timeout_ms) + " " + waiting();
		return -ETIMEDOUT;
	}
	return r;
}

int CmConnSet::create_qp(CmConn &c, const CmQpSpec &s, std::string *err)
{
	ibv_context *v = c.id->verbs;
	if (s.pd == nullptr || s.send_cq == nullptr || s.recv_cq == nullptr) {
		*err = conn_what(c) + ": the QP needs a PD, a send CQ and a receive CQ";
		return -EINVAL;
	}
	/* rdma_create_qp needs the PD on the id's context (else a bare EINVAL), and CQs and
	 * SRQ of another context would fail in the kernel: say which device is which. */
	struct {
		const char *what;
		ibv_context *ctx;
	} objs[] = {{"PD", s.pd->context}, {"send CQ", s.send_cq->context}, {"receive CQ", s.recv_cq->context},
		    {"SRQ", s.srq ? s.srq->context : v}};
	for (auto &o : objs) {
		if (o.ctx == v)
			continue;
		if (strcmp(dev_name(o.ctx), dev_name(v)) == 0)
			*err = conn_what(c) + ": its " + o.what + " is on another context of " + dev_name(v) +
			       " (opened with ibv_open_device?): open the device with cm_device_open on the "
			       "connection's context";
		else
			*err = conn_what(c) + ": rdma_cm put the connection on " + dev_name(v) + ", but its " + o.what +
			       " is on " + dev_name(o.ctx);
		return -EXDEV;
	}
	ibv_qp_init_attr_ex qa{};
	qa.send_cq = s.send_cq;
	qa.recv_cq = s.recv_cq;
	qa.srq = s.srq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 0;   // selective signalling, as rc_qp_create
	qa.cap.max_send_wr = s.qp.sq_depth;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_wr = s.srq ? 0 : s.rq_depth;
	qa.cap.max_recv_sge = s.srq ? 0 : 1;
	qa.cap.max_inline_data = s.qp.max_inline;
	qa.pd = s.pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (s.qp.qp_ex) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
				    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
				    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	}
	if (rdma_create_qp_ex(c.id, &qa) != 0) {
		int ret = errno;
		*err = conn_what(c) + ": rdma_create_qp (RC on " + dev_name(v) + ", send queue " +
		       std::to_string(s.qp.sq_depth) + ", inline " + std::to_string(s.qp.max_inline) +
		       (s.srq ? ", SRQ" : ", receive queue " + std::to_string(s.rq_depth)) +
		       (s.qp.qp_ex ? ", qp_ex" : "") + "): " + strerror(ret);
		return -ret;
	}
	c.qp = c.id->qp;
	c.min_rnr_timer = s.qp.min_rnr_timer;
	c.access = s.access;
	if (s.ack_timeout) {
		/* Used by rdma_cm when it moves the QP to RTS; the default follows the path's
		 * packet lifetime, seconds on RoCE: a dead peer would take long to notice. */
		uint8_t t = s.ack_timeout;
		if (rdma_set_option(c.id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t)) != 0) {
			int ret = errno;
			*err = conn_what(c) + ": rdma_set_option ACK_TIMEOUT " + std::to_string(t) + ": " + strerror(ret);
			return -ret;
		}
	}
	return 0;
}

/* rdma_cm's RTR has no say on the min RNR timer (0: 655 ms, the longest) and grants
 * remote read and atomic whenever responder resources were negotiated; both may change
 * RTS -> RTS, so set the caller's once the QP is there. */
int CmConnSet::apply_qp_attrs(CmConn &c, std::string *err)
{
	ibv_qp_attr a{};
	a.min_rnr_timer = c.min_rnr_timer;
	a.qp_access_flags = c.access;
	int ret = ibv_modify_qp(c.qp, &a, IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS);
	if (ret) {
		*err = conn_what(c) + ": QP " + std::to_string(c.qp->qp_num) + ": min RNR timer " +
		       std::to_string(c.min_rnr_timer) + " and access " + hex(static_cast<unsigned>(c.access)) +
		       " (RTS -> RTS): " + strerror(ret);
		return -ret;
	}
	return 0;
}

unsigned CmConnSet::down() const
{
	unsigned n = 0;
	for (const CmConn &c : conns_)
		n += c.state == CmState::kDown;
	return n;
}

int CmConnSet::peer_gid(unsigned i, ibv_gid *gid, std::string *err) const
{
	const CmConn &c = conns_[i];
	ibv_qp_attr a{};
	int mask = 0;
	a.qp_state = IBV_QPS_RTR;   // the state whose attributes hold the path
	if (c.id == nullptr || rdma_init_qp_attr(c.id, &a, &mask) != 0) {
		const int e = c.id ? errno : ENOTCONN;
		*err = conn_what(c) + ": rdma_init_qp_attr (the peer's path): " + strerror(e);
		return -e;
	}
	*gid = a.ah_attr.grh.dgid;
	return 0;
}

void CmConnSet::close()
{
	for (CmConn &c : conns_) {
		if (c.id == nullptr)
			continue;
		/* QP to ERR and a DREQ, so the peer sees DISCONNECTED instead of timing out. */
		if (c.state == CmState::kEstablished || c.state == CmState::kConnecting)
			rdma_disconnect(c.id);
		if (c.id->qp)
			rdma_destroy_qp(c.id);
		rdma_destroy_id(c.id);
		c.id = nullptr;
		c.qp = nullptr;
	}
	conns_.clear();
	if (listen_id_)
		rdma_destroy_id(listen_id_);
	listen_id_ = nullptr;
	if (channel_)
		rdma_destroy_event_channel(channel_);
	channel_ = nullptr;
	verbs_ = nullptr;
	port_num_ = 0;
}

bool CmConnSet::note_down(const Event &ev, std::string *why)
{
	CmConn *c = conn_of(ev.id);
	if (c == nullptr || c->state == CmState::kDown)
		return false;
	switch (ev.type) {
	case RDMA_CM_EVENT_DISCONNECTED:
		c->cause = "disconnected by the peer (" + event_str(ev.type, ev.status) + ")";
		/* Our side of the disconnect: the QP goes to ERR, so what is posted flushes. */
		rdma_disconnect(c->id);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		c->cause = "device removed (" + event_str(ev.type, ev.status) + ")";
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		c->cause = "the local address moved (" + event_str(ev.type, ev.status) + ")";
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		c->cause = "connection failed (" + event_str(ev.type, ev.status) + ")";
		break;
	default:
		return false;
	}
	c->state = CmState::kDown;
	if (why->empty())
		*why = conn_what(*c) + ": " + c->cause;
	return true;
}

int CmConnSet::poll_disconnects(std::string *why)
{
	why->clear();
	if (channel_ == nullptr)
		return 0;
	int n = 0;
	Event ev;
	std::string err;
	for (;;) {
		int r = next_event(0, &ev, &err);   // a deadline in the past: never waits
		if (r < 0) {
			*why = err;
			return r;
		}
		if (r == 0) {
			if (n > 1)   // the first names the cause; the others are in conn(i).cause
				*why += " (and " + std::to_string(n - 1) + " more connection" + (n > 2 ? "s" : "") + ")";
			return n;
		}
		if (note_down(ev, why)) {
			n++;
			continue;
		}
		if (ev.type == RDMA_CM_EVENT_CONNECT_REQUEST && ev.listen_id == listen_id_ && ev.id != nullptr) {
			/* accept() has not run or is over: nobody will take it. */
			uint8_t rej[kCmRejectBytes];
			cm_reject_encode("not accepting connections now", rej);
			rdma_reject(ev.id, rej, sizeof(rej));
			rdma_destroy_id(ev.id);
		}
		/* TIMEWAIT_EXIT and events of connections already down: nothing to do. */
	}
}

/* ---- client ---- */

int CmClient::resolve(const CmAddr &local, const CmAddr &server, unsigned n, int timeout_ms, std::string *err)
{
	close();
	server_ = server;
	what_ = "rdma_cm: connect to " + server.str;
	if (n == 0 || n > 65536 || timeout_ms <= 0) {
		*err = what_ + ": " + std::to_string(n) + " connections within " + std::to_string(timeout_ms) +
		       " ms: want 1..65536 connections and a positive timeout";
		return -EINVAL;
	}
	int ret = open_channel(err);
	if (ret)
		return ret;
	const int64_t deadline = now_ns() + static_cast<int64_t>(timeout_ms) * 1000000;
	const bool bind_local = local.sin.sin_addr.s_addr != htonl(INADDR_ANY);
	conns_.resize(n);
	unsigned routed = 0;
	Event ev;
	for (unsigned i = 0; i < n; i++) {
		CmConn &c = conns_[i];
		c.name = "connection " + std::to_string(i);
		/* context = index + 1: events find their connection without a lookup table. */
		if (rdma_create_id(channel_, &c.id, reinterpret_cast<void *>(static_cast<uintptr_t>(i) + 1),
				   RDMA_PS_TCP) != 0) {
			ret = errno;
			c.id = nullptr;
			*err = what_ + ": rdma_create_id: " + strerror(ret);
			goto fail;
		}
		c.state = CmState::kResolving;
		sockaddr_in src = local.sin;
		sockaddr_in dst = server.sin;
		if (rdma_resolve_addr(c.id, bind_local ? reinterpret_cast<sockaddr *>(&src) : nullptr,
				      reinterpret_cast<sockaddr *>(&dst), left_ms(deadline)) != 0) {
			ret = errno;
			if (bind_local && (ret == EADDRNOTAVAIL || ret == ENODEV))
				*err = what_ + ": local address " + local.str + " is not on an RDMA device (rdma_resolve_addr: " +
				       strerror(ret) + ")";
			else
				*err = what_ + ": rdma_resolve_addr from " + (bind_local ? local.str : "any address") + ": " +
				       strerror(ret);
			goto fail;
		}
	}
	while (routed < n) {
		int r = await_event(deadline, timeout_ms, &ev, [&] {
			return "resolving the address and route (" + std::to_string(routed) + " of " + std::to_string(n) + " routed)";
		}, err);
		if (r < 0) {
			ret = -r;
			goto fail;
		}
		CmConn *c = conn_of(ev.id);
		if (c == nullptr)
			continue;
		switch (ev.type) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (rdma_resolve_route(c->id, left_ms(deadline)) != 0) {
				ret = errno;
				*err = what_ + ": rdma_resolve_route: " + strerror(ret);
				goto fail;
			}
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			c->state = CmState::kRouted;
			routed++;
			break;
		case RDMA_CM_EVENT_ADDR_ERROR:
			ret = ev.status < 0 ? -ev.status : EHOSTUNREACH;
			if (ret == ENETUNREACH || ret == EHOSTUNREACH)
				*err = what_ + ": no route (" + event_str(ev.type, ev.status) + ")";
			else
				*err = what_ + ": address not resolved (" + event_str(ev.type, ev.status) + ")";
			goto fail;
		case RDMA_CM_EVENT_ROUTE_ERROR:
			ret = ev.status < 0 ? -ev.status : EHOSTUNREACH;
			*err = what_ + ": route not resolved (" + event_str(ev.type, ev.status) + ")";
			goto fail;
		default:
			ret = EPROTO;
			*err = what_ + ", " + c->name + ": unexpected " + event_str(ev.type, ev.status) +
			       " while resolving";
			goto fail;
		}
	}
	verbs_ = conns_[0].id->verbs;
	port_num_ = conns_[0].id->port_num;
	for (const CmConn &c : conns_) {
		if (c.id->verbs != verbs_) {
			*err = what_ + ": the connections resolved to different devices (" + dev_name(verbs_) + " and " +
			       dev_name(c.id->verbs) + ")";
			ret = EXDEV;
			goto fail;
		}
	}
	return 0;

fail:
	close();
	return -ret;
}

namespace {

std::string reject_cause(const uint8_t *priv, size_t len, int status, uint16_t port)
{
	std::string reason;
	if (status == 8)   // the CM at the address has no listener on the port
		return "no server listening on port " + std::to_string(port) + " (" +
		       event_str(RDMA_CM_EVENT_REJECTED, status) + ")";
	if (cm_reject_decode(priv, len, &reason))
		return "rejected by the peer: " + reason + " (" + event_str(RDMA_CM_EVENT_REJECTED, status) + ")";
	/* No reason of ours: a peer that is not rdmapipe, or a server process that went
	 * away (the kernel refuses what it left pending). */
	return "rejected by the peer without a reason (" + event_str(RDMA_CM_EVENT_REJECTED, status) + ")";
}

} // namespace

int CmClient::connect(std::span<const CmQpSpec> specs, std::span<const CmPrivate> locals, int timeout_ms,
		      std::string *err)
{
	const unsigned n = size();
	int ret = 0;
	unsigned established = 0;
	Event ev;
	if (n == 0 || conns_[0].state != CmState::kRouted) {
		*err = (what_.empty() ? std::string("rdma_cm: connect") : what_) + ": resolve() first";
		return -EINVAL;
	}
	if (specs.size() != n || locals.size() != n || timeout_ms <= 0) {
		*err = what_ + ": " + std::to_string(specs.size()) + " QP specs and " + std::to_string(locals.size()) +
		       " private data for " + std::to_string(n) + " connections, timeout " + std::to_string(timeout_ms) +
		       " ms";
		ret = EINVAL;
		goto fail;
	}
	{
		const int64_t deadline = now_ns() + static_cast<int64_t>(timeout_ms) * 1000000;
		for (unsigned i = 0; i < n; i++) {
			CmConn &c = conns_[i];
			c.local = locals[i];
			c.name = "connection " + std::to_string(i) + " (flow " + std::to_string(c.local.flow) + " QP " +
				 std::to_string(c.local.qp_index) + ")";
			if ((ret = -create_qp(c, specs[i], err)) != 0)
				goto fail;
			uint8_t priv[kCmParamsBytes];
			cm_private_encode(c.local, priv);
			rdma_conn_param p{};
			p.private_data = priv;
			p.private_data_len = sizeof(priv);
			/* RDMA_MAX_*: librdmacm takes the device's limits. */
			p.responder_resources =
				(c.access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)) ? RDMA_MAX_RESP_RES : 0;
			p.initiator_depth = RDMA_MAX_INIT_DEPTH;
			p.retry_count = specs[i].qp.retry_cnt > 7 ? 7 : specs[i].qp.retry_cnt;
			p.rnr_retry_count = specs[i].qp.rnr_retry > 7 ? 7 : specs[i].qp.rnr_retry;
			if (rdma_connect(c.id, &p) != 0) {
				ret = errno;
				*err = conn_what(c) + ": rdma_connect: " + strerror(ret);
				goto fail;
			}
			c.state = CmState::kConnecting;
		}
		while (established < n) {
			int r = await_event(deadline, timeout_ms, &ev, [&] {
				return "waiting for ESTABLISHED (" + std::to_string(established) + " of " + std::to_string(n) +
				       " established)";
			}, err);
			if (r < 0) {
				ret = -r;
				goto fail;
			}
			CmConn *c = conn_of(ev.id);
			if (c == nullptr || ev.type == RDMA_CM_EVENT_TIMEWAIT_EXIT)
				continue;
			switch (ev.type) {
			case RDMA_CM_EVENT_ESTABLISHED: {
				std::string why;
				/* The QP is already in RTS: a bad reply is dropped by disconnecting. */
				if (cm_private_decode(ev.priv, ev.priv_len, &c->peer, &why) != 0) {
					*err = conn_what(*c) + ": the server's reply is invalid: " + why;
					ret = EPROTO;
					goto fail;
				}
				if ((ret = -apply_qp_attrs(*c, err)) != 0)
					goto fail;
				c->state = CmState::kEstablished;
				established++;
				break;
			}
			case RDMA_CM_EVENT_REJECTED:
				*err = conn_what(*c) + ": " + reject_cause(ev.priv, ev.priv_len, ev.status, ntohs(server_.sin.sin_port));
				c->state = CmState::kDown;
				ret = ECONNREFUSED;
				goto fail;
			case RDMA_CM_EVENT_UNREACHABLE:
				*err = conn_what(*c) + ": no answer from the server (" + event_str(ev.type, ev.status) + ")";
				c->state = CmState::kDown;
				ret = EHOSTUNREACH;
				goto fail;
			case RDMA_CM_EVENT_CONNECT_ERROR:
				/* Status -1: librdmacm got the reply but could not take the QP to
				 * RTR/RTS or send the RTU, typically because the server went away. */
				*err = conn_what(*c) + ": the handshake failed" +
				       (ev.status == -1 ? " after the server's reply (did the server go away?)" : "") + " (" +
				       event_str(ev.type, ev.status) + ")";
				c->state = CmState::kDown;
				ret = ECONNABORTED;
				goto fail;
			case RDMA_CM_EVENT_DISCONNECTED:
				*err = conn_what(*c) + ": disconnected by the peer before all " + std::to_string(n) +
				       " connections were established (" + event_str(ev.type, ev.status) + ")";
				ret = ECONNRESET;
				goto fail;
			default:
				*err = conn_what(*c) + ": " + event_str(ev.type, ev.status) + " while connecting";
				c->state = CmState::kDown;
				ret = ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL ? ENODEV : EPROTO;
				goto fail;
			}
		}
	}
	return 0;

fail:
	close();
	return -ret;
}

/* ---- server ---- */

int CmServer::listen(const CmAddr &addr, int backlog, std::string *err)
{
	close();
	addr_ = addr;
	rejected_ = 0;
	last_reject_.clear();
	what_ = "rdma_cm: listen on " + addr.str;
	int ret = open_channel(err);
	if (ret)
		return ret;
	sockaddr_in sin = addr.sin;
	if (rdma_create_id(channel_, &listen_id_, nullptr, RDMA_PS_TCP) != 0) {
		ret = errno;
		listen_id_ = nullptr;
		*err = what_ + ": rdma_create_id: " + strerror(ret);
		goto fail;
	}
	if (rdma_bind_addr(listen_id_, reinterpret_cast<sockaddr *>(&sin)) != 0) {
		ret = errno;
		if (ret == EADDRINUSE)
			*err = what_ + ": the port is in use (rdma_bind_addr: " + strerror(ret) + ")";
		else if (ret == EADDRNOTAVAIL || ret == ENODEV)
			*err = what_ + ": the address is not on an RDMA device (rdma_bind_addr: " + strerror(ret) + ")";
		else
			*err = what_ + ": rdma_bind_addr: " + strerror(ret);
		goto fail;
	}
	if (rdma_listen(listen_id_, backlog) != 0) {
		ret = errno;
		*err = what_ + ": rdma_listen: " + strerror(ret);
		goto fail;
	}
	verbs_ = listen_id_->verbs;
	port_num_ = listen_id_->port_num;
	bound_port_ = ntohs(rdma_get_src_port(listen_id_));
	return 0;

fail:
	close();
	return -ret;
}

int CmServer::reject_request(rdma_cm_id *id, const std::string &who, const std::string &reason)
{
	uint8_t rej[kCmRejectBytes];
	cm_reject_encode(reason, rej);
	int ret = rdma_reject(id, rej, sizeof(rej)) ? -errno : 0;
	rdma_destroy_id(id);
	rejected_++;
	last_reject_ = who + ": " + reason;
	return ret;
}

void CmServer::drop(size_t i, const std::string &why)
{
	CmConn &c = conns_[i];
	if (c.id->qp)
		rdma_destroy_qp(c.id);
	rdma_destroy_id(c.id);
	rejected_++;
	last_reject_ = c.name + ": " + why;
	conns_.erase(conns_.begin() + static_cast<std::ptrdiff_t>(i));
	for (size_t k = i; k < conns_.size(); k++)   // conn_of finds a connection by its place
		conns_[k].id->context = reinterpret_cast<void *>(static_cast<uintptr_t>(k + 1));
}

int CmServer::accept(unsigned n, int timeout_ms, const CmChooseFn &choose, std::string *err)
{
	int ret = 0;
	unsigned established = 0;
	Event ev;
	if (listen_id_ == nullptr) {
		*err = (what_.empty() ? std::string("rdma_cm: accept") : what_) + ": listen() first";
		return -EINVAL;
	}
	if (n == 0 || n > 65536 || timeout_ms <= 0) {
		*err = what_ + ": accept " + std::to_string(n) + " connections within " + std::to_string(timeout_ms) +
		       " ms: want 1..65536 connections and a positive timeout";
		ret = EINVAL;
		goto fail;
	}
	conns_.reserve(n);
	{
		const int64_t deadline = now_ns() + static_cast<int64_t>(timeout_ms) * 1000000;
		while (established < n) {
			int r = await_event(deadline, timeout_ms, &ev, [&] {
				std::string w = "waiting for " + std::to_string(n) + (n > 1 ? " connections (" : " connection (") +
						std::to_string(conns_.size()) + " accepted, " + std::to_string(established) +
						" established";
				if (rejected_)
					w += "; rejected " + std::to_string(rejected_) + " request" + (rejected_ > 1 ? "s" : "") +
					     ", the last: " + last_reject_;
				return w + ")";
			}, err);
			if (r < 0) {
				ret = -r;
				goto fail;
			}
			if (ev.type == RDMA_CM_EVENT_CONNECT_REQUEST && ev.listen_id == listen_id_) {
				/* A new id, ours from now on: accepted into conns_ or rejected and destroyed. */
				rdma_cm_id *id = ev.id;
				std::string who = "connection from " + sockaddr_str(rdma_get_peer_addr(id));
				CmPrivate peer;
				std::string why;
				if (cm_private_decode(ev.priv, ev.priv_len, &peer, &why) != 0) {
					reject_request(id, who, "bad private data: " + why);
					continue;
				}
				who += " (flow " + std::to_string(peer.flow) + " QP " + std::to_string(peer.qp_index) + ")";
				/* The same QP again: refused if connected; if still in its handshake,
				 * the client gave up on it and asked again (it does while no server
				 * listens): the new request replaces it. */
				size_t same = conns_.size();
				for (size_t k = 0; k < conns_.size(); k++)
					if (conns_[k].peer.flow == peer.flow && conns_[k].peer.qp_index == peer.qp_index)
						same = k;
				if (same < conns_.size() && conns_[same].state == CmState::kEstablished) {
					reject_request(id, who, "flow " + std::to_string(peer.flow) + " QP " +
								  std::to_string(peer.qp_index) + " is already connected");
					continue;
				}
				if (same < conns_.size())
					drop(same, "replaced by the client's new request");
				if (conns_.size() >= n) {
					reject_request(id, who, "server full (" + std::to_string(n) + " connections)");
					continue;
				}
				CmQpSpec spec;
				CmPrivate reply;
				CmRequest req{peer, who, id->verbs, static_cast<unsigned>(conns_.size())};
				int verdict = choose(req, &spec, &reply, &why);
				if (verdict == kCmReject) {
					reject_request(id, who, why);
					continue;
				}
				if (verdict != kCmAccept) {
					reject_request(id, who, "server setup failed");
					*err = what_ + ", " + who + ": " + why;
					ret = verdict < 0 ? -verdict : EINVAL;
					goto fail;
				}
				conns_.emplace_back();
				CmConn &c = conns_.back();
				c.id = id;
				c.id->context = reinterpret_cast<void *>(static_cast<uintptr_t>(conns_.size()));
				c.name = who;
				c.peer = peer;
				c.local = reply;
				c.state = CmState::kConnecting;   // from here close() disconnects it
				/* A request whose QP rdma_cm refuses (EINVAL) is refused, not the
				 * server: seen for a stale request of a client that had already given
				 * up on it and asked again. Other failures are the server's. */
				if ((ret = -create_qp(c, spec, &why)) == EINVAL) {
					if (id->qp)
						rdma_destroy_qp(id);
					conns_.pop_back();
					reject_request(id, who, why);
					ret = 0;
					continue;
				}
				if (ret != 0) {
					*err = why;
					goto fail;
				}
				uint8_t priv[kCmParamsBytes];
				cm_private_encode(reply, priv);
				rdma_conn_param p{};
				p.private_data = priv;
				p.private_data_len = sizeof(priv);
				/* RDMA_MAX_*: the lesser of the client's request and our device's limits. */
				p.responder_resources =
					(c.access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)) ? RDMA_MAX_RESP_RES : 0;
				p.initiator_depth = RDMA_MAX_INIT_DEPTH;
				p.rnr_retry_count = spec.qp.rnr_retry > 7 ? 7 : spec.qp.rnr_retry;
				if (rdma_accept(c.id, &p) != 0) {
					ret = errno;
					*err = conn_what(c) + ": rdma_accept: " + strerror(ret);
					goto fail;
				}
				/* rdma_accept left the QP in RTS; the client can send only after our REP
				 * reaches it, so this lands before its first message in practice. */
				if ((ret = -apply_qp_attrs(c, err)) != 0)
					goto fail;
				continue;
			}
			CmConn *c = conn_of(ev.id);
			if (ev.type == RDMA_CM_EVENT_TIMEWAIT_EXIT)
				continue;
			if (c == nullptr) {
				if (ev.id == listen_id_ && ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
					*err = what_ + ": device removed (" + event_str(ev.type, ev.status) + ")";
					ret = ENODEV;
					goto fail;
				}
				continue;
			}
			switch (ev.type) {
			case RDMA_CM_EVENT_ESTABLISHED:
				if (c->state == CmState::kConnecting) {
					c->state = CmState::kEstablished;
					established++;
				}
				break;
			case RDMA_CM_EVENT_DISCONNECTED:
				*err = conn_what(*c) + ": disconnected by the peer during setup (" + event_str(ev.type, ev.status) +
				       ")";
				ret = ECONNRESET;
				goto fail;
			default:
				/* REJECTED / CONNECT_ERROR / UNREACHABLE: the client went away mid-handshake.
				 * Before it was established, that client may ask again (it had asked
				 * before this server listened): wait on, until the deadline. */
				if (c->state == CmState::kConnecting && ev.type != RDMA_CM_EVENT_DEVICE_REMOVAL) {
					drop(static_cast<size_t>(c - conns_.data()), "the handshake failed (" + event_str(ev.type, ev.status) + ")");
					break;
				}
				*err = conn_what(*c) + ": the handshake failed (" + event_str(ev.type, ev.status) + ")";
				c->state = CmState::kDown;
				ret = ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL ? ENODEV : ECONNABORTED;
				goto fail;
			}
		}
	}
	/* One-shot: later clients get the CM's "no listener" reject, not a silent wait. */
	rdma_destroy_id(listen_id_);
	listen_id_ = nullptr;
	return 0;

fail:
	close();
	return -ret;
}

} // namespace rp
