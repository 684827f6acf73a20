#!/usr/bin/env python3
"""Checks that no file the toolkit installs is a file of a Debian package: run by hand before a
release (it downloads Debian's Contents indexes, ~45 MB, from deb.debian.org; the test suite
never touches the network).

    debian_collisions.py BUILD_DIR [CONTENTS.gz...]

Installs the build tree into a temporary prefix /usr (cmake --install), then looks up every path in
Contents-amd64.gz and Contents-all.gz of Debian 12 (main). Exit status 1 and the colliding paths with their Debian
packages when there is any; directories are shared and not compared.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

MIRROR = "http://deb.debian.org/debian/dists/bookworm/main/"
INDEXES = ("Contents-amd64.gz", "Contents-all.gz")


def main() -> int:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "root"
        subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix / "usr")], check=True,
                       capture_output=True)
        ours = {str(p.relative_to(prefix)) for p in prefix.rglob("*") if not p.is_dir()}
        indexes = [Path(p) for p in sys.argv[2:]]
        if not indexes:
            for name in INDEXES:
                print("downloading", MIRROR + name, file=sys.stderr)
                indexes.append(Path(tmp) / name)
                urllib.request.urlretrieve(MIRROR + name, indexes[-1])
        clashes = []
        for index in indexes:
            with gzip.open(index, "rt", errors="replace") as f:
                for line in f:
                    path, _, owners = line.rstrip("\n").rpartition(" ")
                    path = path.strip()
                    if path in ours:
                        clashes.append((path, owners))
    for path, owners in sorted(clashes):
        print("/%s is also in %s" % (path, owners))
    print("%d installed files, %d collide with Debian 12 packages" % (len(ours), len(clashes)))
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main())
