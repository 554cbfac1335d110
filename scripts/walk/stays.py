"""Reads a walk (gdb_walk.py's "addr<TAB>name" lines) of binary BIN and
prints how it moves between source files: the functions entered, the stays
(runs of entries in one file), the files, and the returns (stays in a file
the walk had already left), then the files entered most often.

    python3 stays.py BIN WALK [--list]
"""
import collections
import subprocess
import sys


def files_of(binary, rows):
    """Each entry's source file, from the binary's line tables."""
    addrs = ["0x" + a for a, _ in rows]
    out = subprocess.run(["addr2line", "-e", binary] + addrs,
                         capture_output=True, text=True, check=True).stdout
    files = []
    for loc in out.splitlines():
        path = loc.rsplit(":", 1)[0]
        for root in ("/main/", "/fresh/"):
            path = path.split(root)[-1]
        files.append(path)
    return files


def stays_of(rows, files):
    """Runs of entries in one of mcperr's own files (std and crates.io code left out)."""
    stays = []
    for (_, name), path in zip(rows, files):
        if path.startswith("?") or "/rustc/" in path or "/.cargo/" in path:
            continue
        if stays and stays[-1][0] == path:
            stays[-1][1].append(name)
        else:
            stays.append((path, [name]))
    return stays


def main():
    binary, walk = sys.argv[1], sys.argv[2]
    rows = [line.rstrip("\n").split("\t", 1) for line in open(walk)]
    if not rows:
        sys.exit("stays.py: the walk is empty: no case ran (is the case id right?)")
    stays = stays_of(rows, files_of(binary, rows))
    seen, returns, entered = set(), 0, collections.Counter()
    for path, _ in stays:
        entered[path] += 1
        returns += path in seen
        seen.add(path)
    print(f"functions {len(rows)}  stays {len(stays)}  files {len(seen)}  returns {returns}")
    for path, n in entered.most_common(8):
        print(f"  {n:3} {path}")
    if "--list" in sys.argv:
        seen = set()
        for i, (path, names) in enumerate(stays, 1):
            mark = "R" if path in seen else " "
            seen.add(path)
            print(f"{i:4}{mark} {path}: {' '.join(names)}")


if __name__ == "__main__":
    main()
