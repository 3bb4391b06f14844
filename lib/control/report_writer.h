/* The one way lib/ prints: a Report writes a run's summary to a stream (stdout by
 * default), or collects it into a string so tests can read what it would print. */
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace rp {

class Report {
public:
	/* To f as it goes; nullptr: into text() instead. */
	explicit Report(FILE *f = stdout) : f_(f) {}

	void put(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	void line(const char *fmt, ...) __attribute__((format(printf, 2, 3)));   // put, then "\n"
	void flush();

	const std::string &text() const { return text_; }   // what was collected (nothing for a stream)

private:
	void vput(const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

	FILE *f_;
	std::string text_;
};

} // namespace rp
