#!/usr/bin/env python3
"""Fail when a Rust function is longer than the limit (120 lines unless given).

Usage: scripts/fn-lengths.py [LIMIT]   (from anywhere; paths are relative to the repository root)

Checks every `*.rs` file under crates/*/src, crates/*/tests, crates/*/benches, crates/*/examples
and fuzz/, except paths with a `simd` directory: the SIMD kernels may keep one body per ISA tier
side by side (each says why in a comment). A function's length counts from the line of its `fn` keyword to the line
of its closing brace, both included (its doc comment and attributes are not counted); a function
nested in another counts in both. Comments, strings (raw strings too) and char literals are
blanked before braces are counted, so a `{` inside them does not count.

Prints one line per function over the limit, longest first (`LINES path:line name`), and exits 1
if there is any; prints nothing and exits 0 otherwise.
"""

import pathlib
import re
import sys

DEFAULT_LIMIT = 120
ROOTS = ["crates/*/src", "crates/*/tests", "crates/*/benches", "crates/*/examples", "fuzz"]
SKIPPED_DIRS = {"simd", "target"}
FN_NAME = re.compile(r"\bfn\s+(\w+)")
RAW_STRING_START = re.compile(r'b?r(#*)"')
IDENT_CHAR = re.compile(r"\w")


def blank(text):
    """Returns `text` with comments, strings and char literals replaced by spaces (newlines kept)."""
    out = list(text)
    i, n = 0, len(text)

    def erase(start, end):
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            erase(i, end)
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            erase(i, j)
            i = j
        elif (c in "rb") and (i == 0 or not IDENT_CHAR.match(text[i - 1])) and RAW_STRING_START.match(text, i):
            m = RAW_STRING_START.match(text, i)
            close = '"' + m.group(1)
            end = text.find(close, m.end())
            end = n if end < 0 else end + len(close)
            erase(i, end)
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            erase(i, j + 1)
            i = j + 1
        elif c == "'":
            # A char literal ('x', '{', '\n', '\u{7f}') or a lifetime ('a, 'static).
            if text.startswith("\\", i + 1):
                end = text.find("'", i + 2)
                end = n if end < 0 else end + 1
                erase(i, end)
                i = end
            elif i + 2 < n and text[i + 2] == "'":
                erase(i, i + 3)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def long_functions(path, limit):
    """Yields (lines, first line, name) for each function of `path` longer than `limit` lines."""
    text = blank(path.read_text())
    line_starts = [0] + [k + 1 for k, ch in enumerate(text) if ch == "\n"]

    def line_of(offset):
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    for m in FN_NAME.finditer(text):
        # The body opens at the first `{` outside the signature's brackets; a `;` first means a
        # declaration without a body (a trait method, an extern function).
        nesting, j, body = 0, m.end(), None
        while j < len(text):
            ch = text[j]
            if ch in "([<":
                nesting += 1
            elif ch in ")]>" and not text.startswith("->", j - 1):
                nesting -= 1
            elif ch == ";" and nesting <= 0:
                break
            elif ch == "{" and nesting <= 0:
                body = j
                break
            j += 1
        if body is None:
            continue
        depth, j = 0, body
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        first, last = line_of(m.start()), line_of(j)
        if last - first + 1 > limit:
            yield last - first + 1, first, m.group(1)


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_LIMIT
    root = pathlib.Path(__file__).resolve().parent.parent
    files = sorted(
        {
            f
            for pattern in ROOTS
            for f in root.glob(pattern + "/**/*.rs")
            if not SKIPPED_DIRS.intersection(f.relative_to(root).parts)
        }
    )
    found = []
    for f in files:
        for lines, first, name in long_functions(f, limit):
            found.append((lines, f"{f.relative_to(root)}:{first}", name))
    for lines, where, name in sorted(found, key=lambda row: (-row[0], row[1])):
        print(f"{lines:5d} {where} {name}")
    if found:
        print(f"{len(found)} function(s) over {limit} lines (split them into named steps)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
