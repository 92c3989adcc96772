#!/usr/bin/env python3
"""check_source.py: the house habits CI enforces on src/, include/ and tools/.

1. clang-format --dry-run -Werror (the repository's .clang-format);
2. no banned string functions (STYLE.md: strcpy strcat strncpy sprintf
   vsprintf gets strtok atoi atol atoll);
3. every strto* call passes an end pointer and clears errno just before it,
   so "-5", "12abc" or an overflow can be told from a number.
Exit 0 when clean, 1 with one line per finding (FILE:LINE: what), 77 when
clang-format is missing (the other checks still run and still fail).
"""
import glob
import os
import re
import shutil
import subprocess
import sys

top = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
files = sorted(
    glob.glob(os.path.join(top, "src", "*", "*.[ch]"))
    + glob.glob(os.path.join(top, "include", "*.h"))
    + glob.glob(os.path.join(top, "include", "airlock", "*.h"))
    + glob.glob(os.path.join(top, "tools", "airlock", "*.[ch]"))
    + glob.glob(os.path.join(top, "tools", "airlock", "lazy", "*.[ch]"))
)
findings = []

BANNED = re.compile(
    r"\b(strcpy|strcat|strncpy|sprintf|vsprintf|gets|strtok|atoi|atol|atoll)\s*\("
)
STRTO = re.compile(r"\bstrto(?:l|ll|ul|ull|d|f|ld|imax|umax)\s*\(")


def strip_comments_and_strings(text):
    """Blank out comments and string/char literals, keeping line breaks."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def call_args(code, start):
    """The top-level comma-separated arguments of the call opening at start."""
    depth, args, cur = 0, [], []
    for ch in code[start:]:
        if ch == "(":
            depth += 1
            if depth == 1:
                continue
        elif ch == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args
        elif ch == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    return args


for path in files:
    rel = os.path.relpath(path, top)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    code = strip_comments_and_strings(text)
    lines = code.split("\n")
    for m in BANNED.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        findings.append(f"{rel}:{line}: banned function {m.group(1)}()")
    for m in STRTO.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        args = call_args(code, m.end() - 1)
        if len(args) < 2 or args[1] in ("NULL", "0", "(char **)NULL"):
            findings.append(f"{rel}:{line}: strto* without an end pointer")
            continue
        before = "\n".join(lines[max(0, line - 7) : line])
        if not re.search(r"\berrno\s*=\s*0\b", before):
            findings.append(
                f"{rel}:{line}: strto* without errno = 0 in the lines before it"
            )

rc = 0
if findings:
    print("\n".join(findings))
    rc = 1
cf = shutil.which("clang-format")
if cf is None:
    print("SKIP: clang-format is not installed: formatting not checked")
    sys.exit(rc or 77)
p = subprocess.run(
    [cf, "--dry-run", "-Werror", "--style=file"] + files,
    cwd=top,
    capture_output=True,
    text=True,
)
if p.returncode != 0:
    out = (p.stdout + p.stderr).splitlines()
    bad = sorted({l.split(":")[0] for l in out if ": error:" in l})
    for b in bad:
        print(f"{os.path.relpath(b, top)}: not formatted (clang-format -i {os.path.relpath(b, top)})")
    rc = 1
n = len(files)
print(f"{n} files checked, {len(findings)} habit findings, formatting {'ok' if p.returncode == 0 else 'not ok'}")
sys.exit(rc)
