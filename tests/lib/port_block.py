#!/usr/bin/env python3
"""Reserves a block of TCP ports for one shell test that starts processes on fixed
ports (deploy/local-cluster.sh uses BASE..BASE+42, a test's extras up to BASE+59).

Shell tests run beside each other under `ctest -j`; two that drew overlapping bases at
random started etcd, proxies or servers on each other's ports (a proxy that cannot
bind, or a health check answered by the other test's etcd). A block is reserved by
creating a directory (atomic) named after its base under RPMP_PORT_BLOCK_DIR (default
/tmp/rpmp-test-port-blocks), holding the owner's pid; a block whose owner is dead is
taken over. Blocks lie in 20000-32699: above the C++ tests' ports (tests/test_util.cc,
10000-19999) and below Linux's ephemeral range (32768+), where a client socket of any
test could take a port before it is bound. Every port of the block is bind-checked.

Callers: tests/lib/port_block.sh (shell tests, the Spark cluster ITs' library).
  port_block.py reserve OWNER_PID   prints the base of a reserved block
  port_block.py release BASE        gives the block back
"""
import os
import random
import shutil
import socket
import sys

LOW, HIGH, SPAN = 20000, 32700, 60
ROOT = os.environ.get("RPMP_PORT_BLOCK_DIR", "/tmp/rpmp-test-port-blocks")


def bindable(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def owner_of(block):
    try:
        with open(os.path.join(block, "owner")) as f:
            return int(f.read().strip() or "0")
    except (OSError, ValueError):
        return 0


def try_claim(base, owner):
    block = os.path.join(ROOT, str(base))
    try:
        os.mkdir(block)
    except FileExistsError:
        pid = owner_of(block)
        if pid and alive(pid):
            return False
        # Stale (owner dead, or killed between mkdir and writing its pid): move it
        # aside (rename is atomic: one of several reclaimers wins), then claim anew.
        aside = "%s.stale.%d" % (block, os.getpid())
        try:
            os.rename(block, aside)
        except OSError:
            return False
        shutil.rmtree(aside, ignore_errors=True)
        try:
            os.mkdir(block)
        except FileExistsError:
            return False
    with open(os.path.join(block, "owner"), "w") as f:
        f.write(str(owner))
    if all(bindable(base + o) for o in range(SPAN)):
        return True
    shutil.rmtree(block, ignore_errors=True)
    return False


def reserve(owner):
    os.makedirs(ROOT, exist_ok=True)
    blocks = list(range(LOW, HIGH - SPAN + 1, SPAN))
    random.shuffle(blocks)
    for base in blocks:
        if try_claim(base, owner):
            print(base)
            return 0
    print("port_block: no free block of %d ports in %d-%d (reservations in %s)"
          % (SPAN, LOW, HIGH - 1, ROOT), file=sys.stderr)
    return 1


def release(base):
    shutil.rmtree(os.path.join(ROOT, str(base)), ignore_errors=True)
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "reserve" and argv[2].isdigit():
        return reserve(int(argv[2]))
    if len(argv) == 3 and argv[1] == "release" and argv[2].isdigit():
        return release(int(argv[2]))
    print("usage: port_block.py reserve OWNER_PID | release BASE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
