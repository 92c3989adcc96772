#!/usr/bin/env python3
# hostile_tar.py: builds hostile or broken copies of an airlock pack (its first volume rewritten) for the unpack tests.
"""Make a hostile or broken copy of an airlock pack.

usage: hostile_tar.py CASE PACKDIR OUTDIR

PACKDIR holds one pack (airlock-<id>.json and its volumes). OUTDIR receives
the manifest (and .sig) and every volume, with volume 1 changed as CASE says:

  traversal     an extra entry "../../evil-traversal"
  absolute      an extra entry "/tmp/airlock-evil-absolute"
  symlink       the first blob replaced by a symlink to /etc/passwd
  hardlink      the first blob replaced by a hard link to the volume label
  device        the first blob replaced by a character device (1,3)
  unlisted      an extra blob entry that the manifest does not list
  duplicate     the first blob twice
  oversized     the first blob one byte longer than the manifest says
  truncated     volume 1 cut in the middle of its first large blob
  flipped       one bit of the first blob's data flipped
  otherpack     volume 1's label names another pack
  othermanifest the manifest saved under another pack's name

Prints "VOLUME ENTRY" (the volume file name and the entry an error must
name) on stdout.

usage: hostile_tar.py forge PACKDIR OUTDIR ID
       hostile_tar.py sequence PACKDIR OUTDIR N|none

forge copies the pack under the pack id ID (manifest, volume names and
labels rewritten; ID must have the length of the pack's id), without its
signature: a forged pack that claims another pack's id. sequence copies the
pack with the manifest's "sequence" set to N (or removed, as an older
airlock wrote it), without its signature. Both print the new manifest's
file name. Python 3 standard library only.
"""

import io
import json
import os
import shutil
import sys
import tarfile

OTHER_ID = "20000101T000000Z-00000000"


def find_pack(d):
    mans = [n for n in os.listdir(d) if n.startswith("airlock-") and n.endswith(".json")]
    if len(mans) != 1:
        sys.exit("hostile_tar.py: expected one manifest in %s" % d)
    return mans[0][len("airlock-"):-len(".json")]


def members(path):
    with tarfile.open(path, "r:") as t:
        for m in t.getmembers():
            data = t.extractfile(m).read() if m.isfile() else b""
            yield m, data


def add(out, m, data):
    out.addfile(m, io.BytesIO(data) if m.isfile() else None)


def regular(name, data):
    m = tarfile.TarInfo(name)
    m.size = len(data)
    m.mode = 0o644
    return m


def copy_as(src, pid, dst, new_id, edit=None):
    os.makedirs(dst, exist_ok=True)
    for n in os.listdir(src):
        if not n.startswith("airlock-" + pid) or n.endswith(".sig"):
            continue
        with open(os.path.join(src, n), "rb") as f:
            data = f.read()
        data = data.replace(pid.encode(), new_id.encode())
        if edit is not None and n.endswith(".json"):
            data = edit(data)
        with open(os.path.join(dst, n.replace(pid, new_id)), "wb") as f:
            f.write(data)
    print("airlock-%s.json" % new_id)


def set_sequence(value):
    def edit(data):
        m = json.loads(data)
        out = {}
        for k, v in m.items():
            if k == "sequence" and value == "none":
                continue
            out[k] = int(value) if k == "sequence" else v
        return json.dumps(out, indent=1).encode()
    return edit


def main():
    if len(sys.argv) == 5 and sys.argv[1] in ("forge", "sequence"):
        case, src, dst, arg = sys.argv[1:]
        pid = find_pack(src)
        if case == "forge":
            if len(arg) != len(pid):
                sys.exit("hostile_tar.py: forge: the id must have %d characters" % len(pid))
            copy_as(src, pid, dst, arg)
        else:
            copy_as(src, pid, dst, pid, set_sequence(arg))
        return
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    case, src, dst = sys.argv[1:]
    pid = find_pack(src)
    os.makedirs(dst, exist_ok=True)
    for n in os.listdir(src):
        if n.startswith("airlock-" + pid):
            shutil.copyfile(os.path.join(src, n), os.path.join(dst, n))
    vol = "airlock-%s-0001.tar" % pid
    vpath = os.path.join(dst, vol)
    entry = None

    if case == "othermanifest":
        os.rename(os.path.join(dst, "airlock-%s.json" % pid), os.path.join(dst, "airlock-%s.json" % OTHER_ID))
        for n in os.listdir(dst):
            if n.endswith(".tar") or n.endswith(".sig"):
                os.unlink(os.path.join(dst, n))
        print("airlock-%s.json %s" % (OTHER_ID, pid))
        return

    if case == "truncated":
        off = None
        with tarfile.open(vpath, "r:") as t:
            for m in t.getmembers():
                if m.name.startswith("blobs/") and m.size > 2048:
                    off, entry = m.offset_data + m.size // 2, m.name
                    break
        if off is None:
            sys.exit("hostile_tar.py: no blob over 2 KiB in volume 1")
        with open(vpath, "r+b") as f:
            f.truncate(off)
        print(vol, entry)
        return

    items = list(members(vpath))
    out = tarfile.open(vpath + ".new", "w:", format=tarfile.PAX_FORMAT)
    done = False
    for m, data in items:
        if case == "otherpack" and m.name == "airlock-volume.json":
            data = json.dumps({"pack": OTHER_ID, "volume": 1}).encode() + b"\n"
            m.size = len(data)
            entry = "belongs to pack '%s'" % OTHER_ID
        if done or not m.name.startswith("blobs/") or case == "otherpack":
            add(out, m, data)
            continue
        done = True
        entry = m.name
        if case == "traversal":
            add(out, m, data)
            entry = "../../evil-traversal"
            add(out, regular(entry, b"evil\n"), b"evil\n")
        elif case == "absolute":
            add(out, m, data)
            entry = "/tmp/airlock-evil-absolute"
            add(out, regular(entry, b"evil\n"), b"evil\n")
        elif case == "symlink":
            s = tarfile.TarInfo(m.name)
            s.type = tarfile.SYMTYPE
            s.linkname = "/etc/passwd"
            add(out, s, b"")
        elif case == "hardlink":
            s = tarfile.TarInfo(m.name)
            s.type = tarfile.LNKTYPE
            s.linkname = "airlock-volume.json"
            add(out, s, b"")
        elif case == "device":
            s = tarfile.TarInfo(m.name)
            s.type = tarfile.CHRTYPE
            s.devmajor, s.devminor = 1, 3
            add(out, s, b"")
        elif case == "unlisted":
            add(out, m, data)
            entry = "blobs/sha256/" + "0" * 64
            add(out, regular(entry, b"x"), b"x")
        elif case == "duplicate":
            add(out, m, data)
            add(out, m, data)
        elif case == "oversized":
            data = data + b"x"
            m.size = len(data)
            add(out, m, data)
        elif case == "flipped":
            b = bytearray(data)
            b[len(b) // 2] ^= 0x01
            add(out, m, bytes(b))
        else:
            sys.exit("hostile_tar.py: unknown case '%s'" % case)
    out.close()
    os.replace(vpath + ".new", vpath)
    print(vol, entry)


if __name__ == "__main__":
    main()
