"""Driving rdmapipe's console through a pseudo-terminal, for the integration tests:
start it, wait for what it prints, type commands. Used by watch.sh."""
import os
import pty
import re
import select
import sys
import time


class Console:
    def __init__(self, argv):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execv(argv[0], argv)
        self.buf = b''

    def read_until(self, pattern, timeout=20):
        """What came up to the first match of pattern; exits the test if none in time."""
        end = time.time() + timeout
        while time.time() < end:
            m = re.search(pattern.encode(), self.buf)
            if m:
                got = self.buf[:m.end()].decode(errors='replace')
                self.buf = self.buf[m.end():]
                return got
            r, _, _ = select.select([self.fd], [], [], 0.2)
            if r:
                try:
                    self.buf += os.read(self.fd, 65536)
                except OSError:
                    break
        sys.stdout.write(self.buf.decode(errors='replace'))
        raise SystemExit(f'console: no /{pattern}/ within {timeout} s')

    def type(self, line):
        os.write(self.fd, (line + '\r').encode())

    def cmd(self, line, expect):
        """Types line, waits for expect and the next prompt; returns what matched."""
        self.type(line)
        got = self.read_until(expect)
        print(f'>>> {line}\n{got}')
        self.read_until(r'rdmapipe> ')
        return got

    def poll(self, line, expect, check, timeout=30, every=0.2):
        """Types line (waiting for expect) again and again until check(what matched)
        holds; returns that. Exits the test if it does not within timeout."""
        end = time.time() + timeout
        while True:
            got = self.cmd(line, expect)
            if check(got):
                return got
            if time.time() >= end:
                raise SystemExit(f'console: {line!r} did not show what was awaited within {timeout} s')
            time.sleep(every)

    def held(self, line, expect, value, secs=1):
        """Once value(what line shows) stops changing (a burst under way has gone), it
        stays the same for secs more: what nothing should move (a stopped sender).
        Returns the last reading."""
        last = [None]
        def same(s):
            same, last[0] = value(s) == last[0], value(s)
            return same
        s1 = self.poll(line, expect, same)
        time.sleep(secs)   # absence has nothing to observe: it is held for this long
        s2 = self.cmd(line, expect)
        assert value(s1) == value(s2), (s1, s2)
        return s2

    def exit_status(self):
        _, status = os.waitpid(self.pid, 0)
        return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
