#!/usr/bin/env python3
"""md2man.py: generates the roff man pages docs/man/*.1 from docs/commands.md and docs/commands/*.md.

Usage (from anywhere; Python 3 standard library only):

    python3 docs/man/md2man.py            # regenerate every page
    python3 docs/man/md2man.py --check    # exit 1 if a committed page is stale

airlock.1 comes from docs/commands.md, airlock-CMD.1 from docs/commands/CMD.md.
The Markdown pages are the source: edit them, then rerun this script and
commit both. Only the subset those pages use is understood:

  # title              first line; the paragraph after it is the NAME summary
  ## Section           .SH SECTION
  paragraphs           joined lines, `code` and **bold** in bold, links
                       [text](x.md) to commands as airlock-x(1), other links
                       as their text (docs/NAME.md when the text is the path)
  ``` blocks           literal (.nf), indented
  | a | b | tables     one .TP entry per row (first cell is the tag)
  - lists              bullets; continuation lines indented by two spaces

The date in .TH is taken from SOURCE_DATE_EPOCH when it is set, else left
empty, so the output depends on the sources only and --check is stable.
"""

import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.dirname(HERE)
ROOT = os.path.dirname(DOCS)


def version():
    try:
        with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
            m = re.search(r"project\(airlock VERSION ([0-9.]+)", f.read())
            if m:
                return m.group(1)
    except OSError:
        pass
    return ""


def page_date():
    sde = os.environ.get("SOURCE_DATE_EPOCH")
    if sde and sde.isdigit():
        return time.strftime("%Y-%m-%d", time.gmtime(int(sde)))
    return ""


def esc(text):
    """Escape plain text for roff (no font changes yet)."""
    return text.replace("\\", "\\e")


def esc_code(text):
    return esc(text).replace("-", "\\-")


IN_COMMANDS = False  # is the page being converted in docs/commands/?


def link(m):
    """[text](target): a command page as airlock-x(1), a doc as docs/x.md."""
    text, target = m.group(1), m.group(2)
    if "://" in target:
        return None if text != target else esc(target)
    cmd = re.fullmatch(r"([a-z]+)\.md", target) if IN_COMMANDS else None
    if cmd is None:
        cmd = re.fullmatch(r"commands/([a-z]+)\.md", target)
    if cmd:
        return "\x01B" + "airlock\\-" + cmd.group(1) + "\x01R(1)"
    path = os.path.normpath(os.path.join("docs/commands" if IN_COMMANDS else "docs", target))
    if text == target or text.strip("`") == target:
        return esc(path)
    return inline_text(text) + " (" + esc(path) + ")"


def inline(text):
    """Markdown inline markup to roff; the result is escaped."""
    out = []
    pos = 0
    # code spans first: their content is literal
    for m in re.finditer(r"`([^`]+)`", text):
        out.append(("t", text[pos:m.start()]))
        out.append(("c", m.group(1)))
        pos = m.end()
    out.append(("t", text[pos:]))
    res = []
    for kind, s in out:
        if kind == "c":
            res.append("\x01B" + esc_code(s) + "\x01R")
            continue

        def repl(m):
            r = link(m)
            return r if r is not None else inline_text(m.group(1))

        s = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", lambda m: "\x02" + repl(m) + "\x03", s)
        # escape what is not already converted
        parts = re.split(r"(\x02.*?\x03)", s)
        for i, p in enumerate(parts):
            if p.startswith("\x02"):
                parts[i] = p[1:-1]
            else:
                parts[i] = inline_text(p)
        res.append("".join(parts))
    return "".join(res).replace("\x01B", "\\fB").replace("\x01R", "\\fR")


def inline_text(s):
    s = esc(s)
    s = re.sub(r"\*\*([^*]+)\*\*", "\x01B\\1\x01R", s)
    # options and negative numbers in running text: real minus signs
    s = re.sub(r"(?<![\w-])(--?[A-Za-z][\w=.-]*)", lambda m: m.group(1).replace("-", "\\-"), s)
    return s


def line_out(s):
    """A text line: protect a leading dot or quote."""
    if s.startswith(".") or s.startswith("'"):
        return "\\&" + s
    return s


def split_row(row):
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    cells = re.split(r"(?<!\\)\|", row)
    return [c.strip().replace("\\|", "|") for c in cells]


def convert(md, name, section="1"):
    lines = md.split("\n")
    if not lines or not lines[0].startswith("# "):
        raise ValueError("%s: the first line must be '# title'" % name)
    i = 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    summary = []
    while i < len(lines) and lines[i].strip():
        summary.append(lines[i].strip())
        i += 1
    out = []
    title = name.upper().replace("-", "\\-")
    out.append('.TH %s %s "%s" "airlock %s" "airlock manual"' %
               (title, section, DATE, version()))
    out.append(".nh")
    out.append(".ad l")
    out.append(".SH NAME")
    out.append(line_out("%s \\- %s" % (name.replace("-", "\\-"), inline(" ".join(summary)))))
    para = []
    lst = None

    def flush():
        nonlocal para, lst
        if para:
            out.append(".PP")
            out.append(line_out(inline(" ".join(para))))
            para = []
        if lst is not None:
            out.append(".IP \\(bu 2")
            out.append(line_out(inline(" ".join(lst))))
            lst = None

    while i < len(lines):
        ln = lines[i]
        s = ln.strip()
        if ln.startswith("## "):
            flush()
            out.append(".SH " + esc(ln[3:].strip().upper()))
            i += 1
            continue
        if s.startswith("```"):
            flush()
            i += 1
            out.append(".PP")
            out.append(".RS 4")
            out.append(".nf")
            while i < len(lines) and not lines[i].strip().startswith("```"):
                out.append(line_out(esc_code(lines[i])))
                i += 1
            out.append(".fi")
            out.append(".RE")
            i += 1
            continue
        if s.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(split_row(lines[i]))
                i += 1
            # drop the header and its separator
            if len(rows) >= 2 and all(re.fullmatch(r":?-+:?", c) for c in rows[1]):
                rows = rows[2:]
            for r in rows:
                out.append(".TP")
                out.append(line_out(inline(r[0]) if "`" in r[0] else "\\fB" + inline(r[0]) + "\\fR"))
                out.append(line_out(inline(" \u2014 ".join(c for c in r[1:] if c))))
            continue
        if s.startswith("- "):
            if para:
                flush()
            if lst is not None:
                flush()
            lst = [s[2:]]
            i += 1
            continue
        if not s:
            flush()
            i += 1
            continue
        if lst is not None and ln.startswith("  "):
            lst.append(s)
        else:
            if lst is not None:
                flush()
            para.append(s)
        i += 1
    flush()
    text = "\n".join(out) + "\n"
    return text.replace("\u2014", "\\(em")


def pages():
    res = [(os.path.join(DOCS, "commands.md"), "airlock")]
    cdir = os.path.join(DOCS, "commands")
    for f in sorted(os.listdir(cdir)):
        if f.endswith(".md"):
            res.append((os.path.join(cdir, f), "airlock-" + f[:-3]))
    return res


def main():
    global DATE, IN_COMMANDS
    check = "--check" in sys.argv[1:]
    todo = pages()
    DATE = page_date()
    stale = 0
    for src, name in todo:
        IN_COMMANDS = os.path.basename(os.path.dirname(src)) == "commands"
        with open(src, encoding="utf-8") as f:
            roff = convert(f.read(), name)
        dst = os.path.join(HERE, name + ".1")
        old = None
        if os.path.exists(dst):
            with open(dst, encoding="utf-8") as f:
                old = f.read()
        if check:
            if old != roff:
                print("stale: %s (from %s)" % (os.path.relpath(dst, ROOT), os.path.relpath(src, ROOT)))
                stale += 1
            continue
        if old != roff:
            tmp = dst + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(roff)
            os.replace(tmp, dst)
            print("wrote %s" % os.path.relpath(dst, ROOT))
    return 1 if stale else 0


DATE = ""

if __name__ == "__main__":
    sys.exit(main())
