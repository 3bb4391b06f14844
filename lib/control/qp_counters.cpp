/* Per-QP counters over RDMA netlink (qp_counters.h). No netlink library: two requests of
 * u32 attributes and one nested table to read, as iproute2's rdma/stat.c sends them. */
#include "control/qp_counters.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace rp {

namespace {

constexpr size_t kAlign = 4;

size_t align4(size_t n)
{
	return (n + kAlign - 1) & ~(kAlign - 1);
}

/* Calls fn(type, payload, payload_len) for each attribute in [p, p + len). */
template <typename Fn>
void each_attr(const uint8_t *p, size_t len, Fn fn)
{
	size_t off = 0;
	while (off + sizeof(nlattr) <= len) {
		nlattr a;
		memcpy(&a, p + off, sizeof(a));
		if (a.nla_len < sizeof(nlattr) || off + a.nla_len > len)
			return;   // malformed: stop, never read past the message
		fn(static_cast<uint16_t>(a.nla_type & NLA_TYPE_MASK), p + off + sizeof(nlattr), a.nla_len - sizeof(nlattr));
		off += align4(a.nla_len);
	}
}

/* The attributes of a reply: after its header (RDMA netlink has no family header). */
bool payload(const uint8_t *msg, size_t len, const uint8_t **p, size_t *n)
{
	nlmsghdr h;
	if (len < sizeof(h))
		return false;
	memcpy(&h, msg, sizeof(h));
	if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
		return false;
	*p = msg + NLMSG_HDRLEN;
	*n = h.nlmsg_len - NLMSG_HDRLEN;
	return true;
}

struct NlSocket {
	int fd = -1;
	~NlSocket()
	{
		if (fd >= 0)
			close(fd);
	}
};

/* Sends req and gathers the reply (nothing for a bare ACK) until the kernel's ACK.
 * Returns 0 or -errno (the kernel's, or the socket's). */
int transact(const std::vector<uint8_t> &req, uint32_t seq, std::vector<uint8_t> *reply)
{
	NlSocket s;
	s.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (s.fd < 0)
		return -errno;
	timeval tv{2, 0};   // the kernel answers at once; a bound on a wedged one
	setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	sockaddr_nl kernel{};
	kernel.nl_family = AF_NETLINK;
	if (sendto(s.fd, req.data(), req.size(), 0, reinterpret_cast<sockaddr *>(&kernel), sizeof(kernel)) < 0)
		return -errno;
	std::vector<uint8_t> buf(64 * 1024);
	for (;;) {
		const ssize_t got = recv(s.fd, buf.data(), buf.size(), 0);
		if (got < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		size_t off = 0;
		while (off + NLMSG_HDRLEN <= static_cast<size_t>(got)) {
			nlmsghdr h;
			memcpy(&h, buf.data() + off, sizeof(h));
			if (h.nlmsg_len < NLMSG_HDRLEN || off + h.nlmsg_len > static_cast<size_t>(got))
				return -EBADMSG;
			if (h.nlmsg_seq == seq && h.nlmsg_type == NLMSG_ERROR) {
				nlmsgerr e;
				if (h.nlmsg_len < NLMSG_HDRLEN + sizeof(e))
					return -EBADMSG;
				memcpy(&e, buf.data() + off + NLMSG_HDRLEN, sizeof(e));
				return e.error;   // 0: the ACK
			}
			if (h.nlmsg_seq == seq && h.nlmsg_type != NLMSG_DONE)
				reply->assign(buf.data() + off, buf.data() + off + h.nlmsg_len);
			off += NLMSG_ALIGN(h.nlmsg_len);
		}
	}
}

uint32_t next_seq()
{
	static std::atomic<uint32_t> seq{static_cast<uint32_t>(getpid()) << 8};
	return seq.fetch_add(1, std::memory_order_relaxed);
}

std::string why(int rc)
{
	std::string s = strerror(-rc);
	if (rc == -EPERM)
		s += ": binding a counter takes CAP_NET_ADMIN";
	else if (rc == -ENOMEM || rc == -EOPNOTSUPP)
		s += ": the driver has no per-QP counters (rxe answers ENOMEM)";
	return s;
}

} // namespace

std::vector<uint8_t> nldev_request(uint16_t cmd, uint32_t seq, const std::vector<std::pair<uint16_t, uint32_t>> &attrs)
{
	nlmsghdr h{};
	h.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + attrs.size() * (sizeof(nlattr) + sizeof(uint32_t)));
	h.nlmsg_type = static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd));
	h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h.nlmsg_seq = seq;
	std::vector<uint8_t> m(h.nlmsg_len);
	memcpy(m.data(), &h, sizeof(h));
	size_t off = NLMSG_HDRLEN;
	for (const auto &[type, value] : attrs) {
		const nlattr a{static_cast<uint16_t>(sizeof(nlattr) + sizeof(uint32_t)), type};
		memcpy(m.data() + off, &a, sizeof(a));
		memcpy(m.data() + off + sizeof(a), &value, sizeof(value));
		off += sizeof(a) + sizeof(value);
	}
	return m;
}

bool nldev_u32(const uint8_t *msg, size_t len, uint16_t type, uint32_t *out)
{
	const uint8_t *p;
	size_t n;
	bool found = false;
	if (!payload(msg, len, &p, &n))
		return false;
	each_attr(p, n, [&](uint16_t t, const uint8_t *v, size_t vn) {
		if (t == type && vn >= sizeof(uint32_t)) {
			memcpy(out, v, sizeof(uint32_t));
			found = true;
		}
	});
	return found;
}

bool nldev_hwcounters(const uint8_t *msg, size_t len, HwCounters *out)
{
	const uint8_t *p;
	size_t n;
	bool found = false;
	if (!payload(msg, len, &p, &n))
		return false;
	out->clear();
	each_attr(p, n, [&](uint16_t t, const uint8_t *table, size_t tn) {
		if (t != RDMA_NLDEV_ATTR_STAT_HWCOUNTERS)
			return;
		found = true;
		each_attr(table, tn, [&](uint16_t et, const uint8_t *entry, size_t en) {
			if (et != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
				return;
			std::string name;
			uint64_t value = 0;
			bool has_value = false;
			each_attr(entry, en, [&](uint16_t ft, const uint8_t *v, size_t vn) {
				if (ft == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME)
					name.assign(reinterpret_cast<const char *>(v), strnlen(reinterpret_cast<const char *>(v), vn));
				else if (ft == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE && vn >= sizeof(uint64_t)) {
					memcpy(&value, v, sizeof(value));
					has_value = true;
				}
			});
			if (!name.empty() && has_value)
				out->emplace_back(std::move(name), value);
		});
	});
	std::sort(out->begin(), out->end());
	return found;
}

int qp_counter_bind(ibv_qp *qp, QpCounter *out, std::string *err)
{
	const char *dev = ibv_get_device_name(qp->context->device);
	ibv_qp_attr a{};
	ibv_qp_init_attr init{};
	int rc = ibv_query_qp(qp, &a, IBV_QP_PORT, &init);
	const int index = ibv_get_device_index(qp->context->device);
	if (rc != 0 || index < 0) {
		*err = std::string(dev) + " QP " + std::to_string(qp->qp_num) + ": " +
		       (rc != 0 ? std::string("ibv_query_qp: ") + strerror(rc) : "no kernel device index (ibv_get_device_index)");
		return -1;
	}
	*out = {static_cast<uint32_t>(index), a.port_num, qp->qp_num, 0};
	const uint32_t seq = next_seq();
	std::vector<uint8_t> reply;
	rc = transact(nldev_request(RDMA_NLDEV_CMD_STAT_SET, seq,
				    {{RDMA_NLDEV_ATTR_DEV_INDEX, out->dev_index},
				     {RDMA_NLDEV_ATTR_PORT_INDEX, out->port},
				     {RDMA_NLDEV_ATTR_STAT_RES, RDMA_NLDEV_ATTR_RES_QP},
				     {RDMA_NLDEV_ATTR_STAT_MODE, RDMA_COUNTER_MODE_MANUAL},
				     {RDMA_NLDEV_ATTR_RES_LQPN, qp->qp_num}}),
		      seq, &reply);
	if (rc == 0 && !nldev_u32(reply.data(), reply.size(), RDMA_NLDEV_ATTR_STAT_COUNTER_ID, &out->id))
		rc = -EBADMSG;
	if (rc != 0) {
		*err = std::string(dev) + " port " + std::to_string(out->port) + " QP " + std::to_string(qp->qp_num) +
		       ": the kernel bound no counter to it (rdma statistic qp bind: " + why(rc) + ")";
		return -1;
	}
	return 0;
}

int qp_counter_read(const QpCounter &c, HwCounters *out, std::string *err)
{
	const uint32_t seq = next_seq();
	std::vector<uint8_t> reply;
	int rc = transact(nldev_request(RDMA_NLDEV_CMD_STAT_GET, seq,
					{{RDMA_NLDEV_ATTR_DEV_INDEX, c.dev_index},
					 {RDMA_NLDEV_ATTR_PORT_INDEX, c.port},
					 {RDMA_NLDEV_ATTR_STAT_RES, RDMA_NLDEV_ATTR_RES_QP},
					 {RDMA_NLDEV_ATTR_STAT_COUNTER_ID, c.id}}),
			  seq, &reply);
	if (rc == 0 && !nldev_hwcounters(reply.data(), reply.size(), out))
		rc = -EBADMSG;
	if (rc != 0) {
		*err = "QP " + std::to_string(c.qpn) + " counter " + std::to_string(c.id) + ": " + strerror(-rc);
		return -1;
	}
	return 0;
}

} // namespace rp
