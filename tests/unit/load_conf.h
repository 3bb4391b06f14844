/* A pipeline file's text loaded through the real loader (written to a temporary file),
 * for the unit tests that build confs in place. */
#pragma once

#include "conf/config.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cmocka_cpp.h"

/* Loads text into *c; returns config_load's result, its error in *err. */
inline int try_load(const std::string &text, rp::PipelineConf *c, std::string *err)
{
	char path[] = "/tmp/rp_conf_XXXXXX.conf";
	int fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
	close(fd);
	int loaded = rp::config_load(path, rp::LcoreSet{}, c, err);
	unlink(path);
	return loaded;
}

/* Loads a whole file's text into *c (the test fails if it does not load). */
inline void load(const std::string &text, rp::PipelineConf *c)
{
	std::string err;
	int loaded = try_load(text, c, &err);
	if (loaded != 0)
		fprintf(stderr, "config: %s\n", err.c_str());
	assert_int_equal(loaded, 0);
}
