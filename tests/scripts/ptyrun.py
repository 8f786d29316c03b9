#!/usr/bin/env python3
"""Run a command with its stderr on a pseudo-terminal and keep every byte written there.

    ptyrun.py COLS OUT ERR CMD [ARG...]

stdin is /dev/null, stdout goes to the file OUT (not a terminal), stderr to the slave side of
a new pty with COLS columns in raw mode (no "\\n" -> "\\r\\n" translation: the bytes are the
program's own). ERR receives them. Exits with the command's exit status (128 + N when a
signal N ended it)."""
import fcntl
import os
import pty
import select
import struct
import sys
import termios
import tty


def main():
    cols, out, err, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
    master, slave = pty.openpty()
    tty.setraw(slave)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    pid = os.fork()
    if pid == 0:
        os.close(master)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
        os.dup2(slave, 2)
        os.close(slave)
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    os.close(slave)
    data = bytearray()
    while True:
        r, _, _ = select.select([master], [], [], 1.0)
        if not r:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every slave descriptor is closed
            break
        if not chunk:
            break
        data += chunk
    os.close(master)
    _, status = os.waitpid(pid, 0)
    with open(err, "wb") as f:
        f.write(data)
    if os.WIFSIGNALED(status):
        sys.exit(128 + os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))


main()
