/* Async events (QP fatal, SRQ limit reached, port state, ...) are read off the data
 * path by a DPDK control thread that sleeps in poll() on the device's async fd (and an
 * eventfd that stops it at once, after taking what the device has raised); the
 * lcores never see them. Counts and the first few events are kept for the summary,
 * and the two that end what runs on the device (its port down, the device failed)
 * are handed to the run's hook at once, so that it need not wait for completions that
 * may never come. */
#pragma once

#include <infiniband/verbs.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace rp {

inline constexpr unsigned kAsyncEventTypes = IBV_EVENT_WQ_FATAL + 1;
inline constexpr unsigned kAsyncEventsKept = 8;

/* Called on the watcher thread with why (a static string) and the port that went down
 * (0: the whole device failed). It may only store atomics. */
struct AsyncEventHook {
	void (*fn)(void *arg, const char *why, uint8_t port) = nullptr;
	void *arg = nullptr;
};

struct AsyncEventWatch {
	ibv_context *ctx = nullptr;
	pthread_t thread{};
	bool running = false;
	int wake_fd = -1;                                  // main writes it to stop the watcher
	std::atomic<uint64_t> counts[kAsyncEventTypes]{};  // watcher: wo, main: ro
	std::atomic<uint32_t> kept{0};
	char lines[kAsyncEventsKept][96] = {};             // watcher writes line i before kept = i + 1
	std::atomic<const AsyncEventHook *> hook{nullptr}; // main: wo while the run is on (it outlives it)
};

/* The hook's reason for an event, or nullptr when the event ends nothing. */
const char *async_event_ends_run(ibv_event_type t);

/* Starts the watcher thread. Returns 0 or -errno with *err. */
int async_watch_start(AsyncEventWatch *w, ibv_context *ctx, std::string *err);
/* Stops and joins it (idempotent), once it has taken the events already raised. */
void async_watch_stop(AsyncEventWatch *w);

} // namespace rp
