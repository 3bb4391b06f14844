/* What both sides of rdma_cm share: addresses, the caller's device on librdmacm's
 * context, and a connection set's event channel, bounded waits, QP creation, teardown
 * and disconnect polling. The client's steps are in cm_client.cpp, the server's in
 * cm_server.cpp, the private data's wire format in cm_private.cpp. */
#include "verbs/cm_internal.h"

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

namespace rp {

namespace {

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

} // namespace

namespace cm_detail {

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

} // namespace cm_detail

using namespace cm_detail;

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

namespace {

const char *qp_state_str(ibv_qp_state s)
{
	switch (s) {
	case IBV_QPS_INIT: return "INIT";
	case IBV_QPS_RTR: return "RTR";
	case IBV_QPS_RTS: return "RTS";
	default: return "another state";
	}
}

} // namespace

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
	if (s.qp.qp_ex)
		qa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
				    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
				    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | (s.qp.qp_ex ? IBV_QP_INIT_ATTR_SEND_OPS_FLAGS : 0);
	/* Ours, not rdma_create_qp's: librdmacm then leaves its state to us, and RTR takes
	 * the flow's traffic class, SL, flow label and hop limit (ready_qp). */
	c.qp = ibv_create_qp_ex(v, &qa);
	if (c.qp == nullptr) {
		int ret = errno;
		*err = conn_what(c) + ": ibv_create_qp_ex (RC on " + dev_name(v) + ", send queue " +
		       std::to_string(s.qp.sq_depth) + ", inline " + std::to_string(s.qp.max_inline) +
		       (s.srq ? ", SRQ" : ", receive queue " + std::to_string(s.rq_depth)) +
		       (s.qp.qp_ex ? ", qp_ex" : "") + "): " + strerror(ret);
		return -ret;
	}
	c.min_rnr_timer = s.qp.min_rnr_timer;
	c.access = s.access;
	c.traffic = s.qp.traffic;
	c.qp_index = s.qp.qp_index;
	if (s.ack_timeout) {
		/* rdma_init_qp_attr's RTS timeout; the default follows the path's packet
		 * lifetime, seconds on RoCE: a dead peer would take long to notice. */
		uint8_t t = s.ack_timeout;
		if (rdma_set_option(c.id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t)) != 0) {
			int ret = errno;
			*err = conn_what(c) + ": rdma_set_option ACK_TIMEOUT " + std::to_string(t) + ": " + strerror(ret);
			return -ret;
		}
	}
	return modify_qp(c, IBV_QPS_INIT, err);
}

/* The QP to `state` with what rdma_cm resolved (the path, the peer's QP and PSN, the
 * negotiated depths), and ours on top: access at INIT; at RTR the min RNR timer
 * (rdma_cm's is 655 ms) and the flow's traffic parameters. */
int CmConnSet::modify_qp(CmConn &c, ibv_qp_state state, std::string *err)
{
	ibv_qp_attr a{};
	int mask = 0;
	a.qp_state = state;
	if (rdma_init_qp_attr(c.id, &a, &mask) != 0) {
		int ret = errno;
		*err = conn_what(c) + ": rdma_init_qp_attr (" + qp_state_str(state) + "): " + strerror(ret);
		return -ret;
	}
	if (state == IBV_QPS_INIT)
		a.qp_access_flags = c.access;
	if (state == IBV_QPS_RTR) {
		a.min_rnr_timer = c.min_rnr_timer;
		mask |= IBV_QP_MIN_RNR_TIMER;
		traffic_apply(c.traffic, c.qp_index, &a.ah_attr);
		/* As librdmacm: on InfiniBand the kernel's RoCE-only mask bits (21-24) go. */
		ibv_port_attr pa{};
		if (ibv_query_port(c.id->verbs, c.id->port_num, &pa) == 0 && pa.link_layer == IBV_LINK_LAYER_INFINIBAND)
			mask &= ~0x1e00000;
	}
	if (int ret = ibv_modify_qp(c.qp, &a, mask); ret != 0) {
		const std::string t = state == IBV_QPS_RTR ? c.traffic.describe(c.qp_index) : "";
		*err = conn_what(c) + ": QP " + std::to_string(c.qp->qp_num) + " to " + qp_state_str(state) +
		       (t.empty() ? "" : " (" + t + ")") + ": " + strerror(ret);
		return -ret;
	}
	if (state == IBV_QPS_RTR)
		if (int ret = traffic_verify(c.qp, c.traffic, c.qp_index, err); ret != 0) {
			*err = conn_what(c) + ": " + *err;
			return ret;
		}
	return 0;
}

int CmConnSet::ready_qp(CmConn &c, std::string *err)
{
	int ret = modify_qp(c, IBV_QPS_RTR, err);
	return ret ? ret : modify_qp(c, IBV_QPS_RTS, err);
}

/* Our QP in the error state, so what is posted on it flushes (librdmacm does this only
 * for QPs it made). */
void CmConnSet::qp_to_error(CmConn &c)
{
	if (c.qp == nullptr)
		return;
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_ERR;
	ibv_modify_qp(c.qp, &a, IBV_QP_STATE);
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
		if (c.state == CmState::kEstablished || c.state == CmState::kConnecting) {
			qp_to_error(c);
			rdma_disconnect(c.id);
		}
		if (c.qp)
			ibv_destroy_qp(c.qp);
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
		qp_to_error(*c);
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

} // namespace rp
