#include "control/report_writer.h"

#include <cstdarg>

namespace rp {

void Report::vput(const char *fmt, va_list ap)
{
	if (f_) {
		vfprintf(f_, fmt, ap);
		return;
	}
	va_list again;
	va_copy(again, ap);
	const int n = vsnprintf(nullptr, 0, fmt, ap);
	if (n > 0) {
		const size_t at = text_.size();
		text_.resize(at + static_cast<size_t>(n) + 1);   // vsnprintf's NUL, cut below
		vsnprintf(&text_[at], static_cast<size_t>(n) + 1, fmt, again);
		text_.resize(at + static_cast<size_t>(n));
	}
	va_end(again);
}

void Report::put(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vput(fmt, ap);
	va_end(ap);
}

void Report::line(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vput(fmt, ap);
	va_end(ap);
	put("\n");
}

void Report::flush()
{
	if (f_)
		fflush(f_);
}

} // namespace rp
