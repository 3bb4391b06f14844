#include "verbs/async_events.h"

#include <rte_lcore.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rp {

namespace {

void keep_line(AsyncEventWatch *w, const ibv_async_event &ev)
{
	uint32_t k = w->kept.load(std::memory_order_relaxed);
	if (k >= kAsyncEventsKept)
		return;
	char *line = w->lines[k];
	switch (ev.event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		snprintf(line, sizeof(w->lines[0]), "%s on QP %u", ibv_event_type_str(ev.event_type),
			 ev.element.qp->qp_num);
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_GID_CHANGE:
		snprintf(line, sizeof(w->lines[0]), "%s on port %d", ibv_event_type_str(ev.event_type),
			 ev.element.port_num);
		break;
	default:
		snprintf(line, sizeof(w->lines[0]), "%s", ibv_event_type_str(ev.event_type));
		break;
	}
	w->kept.store(k + 1, std::memory_order_release);
}

void take(AsyncEventWatch *w)
{
	ibv_async_event ev;
	if (ibv_get_async_event(w->ctx, &ev) != 0)
		return;
	unsigned t = ev.event_type < kAsyncEventTypes ? ev.event_type : 0;
	w->counts[t].fetch_add(1, std::memory_order_relaxed);
	keep_line(w, ev);
	const AsyncEventHook *h = w->hook.load(std::memory_order_acquire);
	if (const char *why = async_event_ends_run(ev.event_type); why && h && h->fn)
		h->fn(h->arg, why, ev.event_type == IBV_EVENT_PORT_ERR ? ev.element.port_num : 0);
	ibv_ack_async_event(&ev);
}

/* Sleeps until an event or the stop request (the wake eventfd); on the stop, takes
 * what the device has already raised (the run's last moments) and ends. */
void *watch(void *arg)
{
	auto *w = static_cast<AsyncEventWatch *>(arg);
	pollfd p[2] = {{w->ctx->async_fd, POLLIN, 0}, {w->wake_fd, POLLIN, 0}};
	for (;;) {
		if (::poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;   // it cannot wait: it ends, or the stop's join would never return
		}
		if (p[1].revents)
			break;
		if (p[0].revents & POLLIN)
			take(w);
		else if (p[0].revents)   // the device is gone: nothing more will come from it
			p[0].fd = -1;
	}
	pollfd a{w->ctx->async_fd, POLLIN, 0};
	for (int i = 0; i < 256 && ::poll(&a, 1, 0) > 0 && (a.revents & POLLIN); i++)
		take(w);
	return nullptr;
}

} // namespace

const char *async_event_ends_run(ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_PORT_ERR:
		return "its port went down (async event: port error)";
	case IBV_EVENT_DEVICE_FATAL:
		return "its device failed (async event: local catastrophic error)";
	default:
		return nullptr;
	}
}

int async_watch_start(AsyncEventWatch *w, ibv_context *ctx, std::string *err)
{
	w->ctx = ctx;
	int flags = fcntl(ctx->async_fd, F_GETFL);
	if (flags < 0 || fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		*err = std::string("async event fd: fcntl: ") + strerror(errno);
		return -errno;
	}
	w->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (w->wake_fd < 0) {
		*err = std::string("async event watcher: eventfd: ") + strerror(errno);
		return -errno;
	}
	int ret = rte_ctrl_thread_create(&w->thread, "rp-async", nullptr, watch, w);
	if (ret != 0) {
		*err = std::string("async event thread: ") + strerror(-ret);
		close(w->wake_fd);
		w->wake_fd = -1;
		return ret;
	}
	w->running = true;
	return 0;
}

void async_watch_stop(AsyncEventWatch *w)
{
	if (!w->running)
		return;
	const uint64_t one = 1;
	[[maybe_unused]] ssize_t n = write(w->wake_fd, &one, sizeof(one));   // cannot fail: ours, once
	pthread_join(w->thread, nullptr);
	close(w->wake_fd);
	w->wake_fd = -1;
	w->running = false;
}

} // namespace rp
