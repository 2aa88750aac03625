#!/usr/bin/env python3
"""How much of each process's CPU went to file I/O, socket I/O and page faults.

Reads a system-wide `perf record -a -g` recording (kernel call chains are enough) and,
for the processes with the most samples, prints the share of their samples whose
kernel stack passes through a file read/write (vfs_read, vfs_write, sendfile,
copy_file_range, splice: what Spark's own shuffle does to write and read its files),
a socket send/receive (tcp_sendmsg, tcp_recvmsg: loopback transport), or a page fault.
The shares bound what any shuffle could save on that machine: a shuffle whose I/O cost
nothing would still pay for everything outside these buckets.

    perf record -a -g -F 499 -o run.data -- sleep 40   # while the job runs
    bench/tools/perf-io-share.py run.data [--top 4]

Used for docs/benchmarks.md, "What a shuffle can save on one machine".
"""
import argparse
import collections
import re
import subprocess
import sys

BUCKETS = [
    ("file io", re.compile(r"\b(vfs_read|vfs_write|vfs_writev|vfs_readv|do_sendfile|"
                           r"vfs_copy_file_range|do_splice|filemap_read|generic_perform_write)\b")),
    ("socket io", re.compile(r"\b(tcp_sendmsg|tcp_recvmsg|sock_sendmsg|sock_recvmsg)\b")),
    ("page fault", re.compile(r"\b(asm_exc_page_fault|handle_mm_fault)\b")),
]


def samples(path):
    """Yields (comm, pid, [symbols]) per sample of `perf script`."""
    out = subprocess.run(["perf", "script", "-i", path, "-F", "comm,pid,tid,ip,sym"],
                         check=True, capture_output=True, text=True, errors="replace").stdout
    head = None
    frames = []
    for line in out.splitlines():
        if not line.strip():
            if head:
                yield head[0], head[1], frames
            head, frames = None, []
        elif not line[0].isspace():
            m = re.match(r"\s*(.+?)\s+(\d+)/\d+\s*$", line)
            head = (m.group(1), int(m.group(2))) if m else None
            frames = []
        elif head:
            parts = line.split(None, 1)
            frames.append(parts[1].strip() if len(parts) > 1 else "")
    if head:
        yield head[0], head[1], frames


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--top", type=int, default=4, help="processes to report (most samples first)")
    args = ap.parse_args()
    total = collections.Counter()
    names = collections.defaultdict(collections.Counter)
    hits = collections.defaultdict(collections.Counter)
    n = 0
    for comm, pid, frames in samples(args.data):
        n += 1
        total[pid] += 1
        names[pid][comm] += 1
        for label, rx in BUCKETS:
            if any(rx.search(f) for f in frames):
                hits[pid][label] += 1
                break
    if n == 0:
        sys.exit("perf-io-share: no samples in " + args.data)
    print(f"samples={n}")
    for pid, count in total.most_common(args.top):
        threads = ", ".join(f"{c} {k}" for c, k in names[pid].most_common(3))
        shares = " ".join(f"{label.replace(' ', '_')}_pct={100.0 * hits[pid][label] / count:.1f}"
                          for label, _ in BUCKETS)
        print(f"pid={pid} samples={count} share_of_all_pct={100.0 * count / n:.1f} {shares} "
              f"threads: {threads}")


if __name__ == "__main__":
    main()
