#!/usr/bin/env python3
"""mkchart.py: write a chart archive (.tgz) for the helm tests.

usage: mkchart.py SPEC.json
SPEC: {"out": "x.tgz", "mtime": 1700000000,
       "files": [["name/Chart.yaml", "text"], ["name/charts/sub.tgz", "@path"]]}
A content starting with "@" is read from that file (binary). Names are
written as given, so a test can put "../x" or "/abs" into an archive.
"""
import io
import json
import sys
import tarfile


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    mtime = spec.get("mtime", 1700000000)
    with tarfile.open(spec["out"], "w:gz", format=tarfile.GNU_FORMAT) as t:
        for name, content in spec["files"]:
            if content.startswith("@"):
                with open(content[1:], "rb") as g:
                    data = g.read()
            else:
                data = content.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = mtime
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main()
