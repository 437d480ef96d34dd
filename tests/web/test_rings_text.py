"""The Rings view shows what `cce disasm FILE` prints (issue 53): the library's own listing, line
for line (hex words, named sub-fields such as `meta=0x…(out-dt=… accum-dt=…)`, the walk's fault),
its tags as the page's coloured badges and each descriptor's words a link into the decoder. The
dumps are the ones the CLI builds (several ops, dtypes, archs; replication, GCE, stochastic
rounding, a queue id and ring size, a dump with a fault) and the version-1 files the CLI still
reads (crates/cce-cli/tests/fixtures/v1). The page is compared with the `cce` binary's stdout.
"""
import re
import struct
import subprocess
import time

import pytest

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

from webutil import BENCH, CCE, ROOT, cli, shot, wait_until  # noqa: E402

V1 = ROOT / "crates" / "cce-cli" / "tests" / "fixtures" / "v1"

BUILDS = {
    "add-bf16": ["--op", "add", "--in", "bf16", "--accum", "fp32", "--out", "bf16", "--elems", "3000",
                 "--src", "0x1000", "0x2000", "0x3000", "--dst", "0x9000"],
    "fma-fp16": ["--op", "fma", "--in", "fp16", "--accum", "fp32", "--out", "fp16", "--elems", "5000",
                 "--src", "0x1000", "0x2000", "--dst", "0x9000", "--scale", "0.5", "-2"],
    "min-i16-clamp": ["--op", "min", "--in", "i16", "--accum", "i16", "--out", "i16", "--elems", "700",
                      "--src", "0x1000", "0x2000", "--dst", "0x9000", "--const", "5"],
    "max-bf16-sr": ["--op", "max", "--in", "bf16", "--accum", "bf16", "--out", "bf16", "--elems", "100000",
                    "--src", "0x1000", "0x2000", "--dst", "0x9000", "--rounding", "sr", "--seed", "7"],
    "gce-compress": ["--op", "gce-compress", "--in", "fp32", "--accum", "fp32", "--out", "bf16", "--elems", "2048",
                     "--src", "0x1000", "0x2000", "--dst", "0x9000", "--header", "0x20000"],
    "replicated-arch4": ["--op", "add", "--in", "fp32", "--accum", "fp32", "--out", "bf16", "--elems", "4096",
                         "--src", "0x1000", "--dst", "0x9000", "0xa000", "--arch", "4"],
    "fma-queue3": ["--op", "fma", "--in", "bf16", "--accum", "fp32", "--out", "bf16", "--elems", "300",
                   "--src", "0x1000", "0x2000", "0x3000", "--dst", "0x9000", "--selectors", "stored,scale,input",
                   "--queue", "3", "--ring-size", "64"],
    "add-ext-gce": ["--op", "add", "--in", "bf16", "--accum", "fp32", "--out", "bf16", "--elems", "3000",
                    "--src", "0x1000", "0x2000", "--dst", "0x9000", "--header", "0x40000"],
    "add-u8-capped": ["--op", "add", "--in", "u8", "--accum", "u32", "--out", "u8", "--elems", "300",
                      "--src", "0x1000", "0x2000", "--dst", "0x9000", "--prio", "2", "--cap", "4096"],
}

TAGS = re.compile(r"\[(HIGH|MED|LOW|MODEL)\]")

# What the view shows of a listing: its text, the tag badges in it, and each descriptor's line.
READ_LISTING = """
const pre = document.querySelector('#rings-output pre.listing');
if (!pre) return null;
return {
  text: pre.textContent,
  tags: Array.from(pre.querySelectorAll('span.tag')).map((t) => [t.className, t.textContent]),
  descs: Array.from(pre.querySelectorAll('[data-side]')).map((l) => {
    const a = l.querySelector('a.desc');
    return {side: l.dataset.side, index: Number(l.dataset.index), words: l.children[2].textContent,
            kind: l.children[3].textContent, href: a ? a.getAttribute('href') : null};
  }),
};
"""


def build(path, args):
    subprocess.run([CCE, "build", *args, "-o", str(path)], check=True, capture_output=True)
    return path


def disasm_text(path):
    return subprocess.run([CCE, "disasm", str(path)], check=True, capture_output=True, text=True).stdout


def open_rings(page):
    page.find_element(By.CSS_SELECTOR, "#tabs [data-view=rings]").click()


def listing_done(page):
    return page.execute_script(
        "const s = document.querySelector('#rings-output .rings-status'); return !!s && s.dataset.state === 'done'")


def choose(page, path):
    """Chooses `path` in the file input and returns the listing once it is all drawn (the output
    emptied first, so an earlier listing is never taken for this one)."""
    page.execute_script("document.querySelector('#rings-output').replaceChildren()")
    page.find_element(By.ID, "rings-file").send_keys(str(path))
    wait_until(lambda: listing_done(page), f"{path.name}: the listing")
    return page.execute_script(READ_LISTING)


def fault_dump(path, good):
    """`good` with one descriptor overwritten (its checksum dropped, so the file still loads): the
    walk faults at packet 1 and the rest is listed after the fault."""
    b = bytearray(good.read_bytes())
    (flags,) = struct.unpack_from("<I", b, 12)
    struct.pack_into("<I", b, 12, flags & ~1)
    b = b[:-8]
    struct.pack_into("<IIII", b, 64 + 16 * 4, *[0xFFFFFFFF] * 4)
    path.write_bytes(bytes(b))
    return path


def decoders(page):
    return page.execute_script("return window.cce.encoders().decoders")


def check_listing(page, got, path):
    want = disasm_text(path)
    assert got["text"] == want, f"{path.name}: the page's listing differs from cce disasm's"
    # Every tag of the text is a badge of its colour; nothing else is.
    assert [t for _, t in got["tags"]] == [m.group(0) for m in TAGS.finditer(want)], path.name
    assert all(c == f"tag tag-{t[1:-1]}" for c, t in got["tags"]), path.name
    # Every descriptor of the dump has its line, with its words and kind, a link when it decodes.
    js = cli("disasm", str(path))
    want_descs = sorted((side, d["index"], " ".join(f"{w:08x}" for w in d["words"]))
                        for q in js["queues"] for side in ("tx", "rx") for d in q[side])
    assert sorted((d["side"], d["index"], d["words"]) for d in got["descs"]) == want_descs, path.name
    names = decoders(page)
    for d in got["descs"]:
        kind = d["kind"].split("|")[0].rstrip("?")
        decoder = kind if kind in names else f"{kind}-descriptor"
        if decoder not in names:
            assert d["href"] is None, (path.name, d)
            continue
        words = [int(w, 16) for w in d["words"].split()]
        assert d["href"] == f"#decode/{decoder}/{struct.pack('<4I', *words).hex()}", (path.name, d)


def test_rings_text_equals_cce_disasm_for_the_dumps_the_cli_builds(page, tmp_path):
    open_rings(page)
    dumps = [build(tmp_path / f"{name}.ring", args) for name, args in BUILDS.items()]
    dumps.append(fault_dump(tmp_path / "fault.ring", dumps[1]))
    dumps += [V1 / n for n in ("add.ring", "fma.ring", "min.ring")]
    for path in dumps:
        check_listing(page, choose(page, path), path)
    assert "; fault at tx 4" in disasm_text(dumps[-4])
    # The CLI's named sub-fields, in hex (the issue: `meta-ctrl=34234368`, `buf-ptr-lo=4096`).
    text = disasm_text(dumps[0])
    assert "meta=0x" in text and "src=0x1000" in text and "meta-ctrl=" not in text
    choose(page, dumps[0])
    shot(page, "rings-text")


def test_the_same_file_chosen_again_shows_its_new_dump(page, tmp_path):
    open_rings(page)
    path = tmp_path / "again.ring"
    first = choose(page, build(path, BUILDS["add-bf16"]))
    check_listing(page, first, path)
    second = choose(page, build(path, BUILDS["fma-fp16"]))
    assert second["text"] != first["text"]
    check_listing(page, second, path)


def test_pasted_hex_and_a_descriptor_opened_in_the_decoder(page, tmp_path):
    path = build(tmp_path / "paste.ring", BUILDS["fma-queue3"])
    open_rings(page)
    page.execute_script("""
      const box = document.querySelector('#rings-input'); box.value = arguments[0]; box.dispatchEvent(new Event('input'));""",
                        path.read_bytes().hex())
    wait_until(lambda: listing_done(page), "the pasted dump's listing")
    got = page.execute_script(READ_LISTING)
    check_listing(page, got, path)
    # A descriptor's words open it in the decoder: the decoder shows the CLI's decode of its bytes.
    link = page.find_element(By.CSS_SELECTOR, "#rings-output [data-side=tx] a.desc")
    _, decoder, hexes = link.get_attribute("href").split("#")[1].split("/")
    link.click()
    wait_until(lambda: page.find_element(By.ID, "view-decode").is_displayed(), "the decoder")
    shown = page.find_element(By.CSS_SELECTOR, '#decode-output article.decoded [data-key="bytes_hex"]').text
    assert shown == cli("decode", decoder, hexes)["bytes_hex"]


def test_a_whole_ring_dump_is_listed(page, tmp_path):
    """31,740 descriptors (a 13M-element FMA): the listing is drawn in chunks and equals the CLI's."""
    path = build(tmp_path / "whole.ring", ["--op", "fma", "--in", "bf16", "--accum", "fp32", "--out", "bf16",
                                           "--elems", "13000000", "--src", "0x1000", "0x2000", "--dst", "0x9000",
                                           "--scale", "0.5"])
    open_rings(page)
    start = time.perf_counter()
    got = choose(page, path)
    BENCH["rings_whole_ring_listed_s"] = time.perf_counter() - start
    BENCH["rings_whole_ring_descriptors"] = len(got["descs"])
    assert len(got["descs"]) > 31000
    assert got["text"] == disasm_text(path)
