"""The decoder's box with a whole ring in it, and what people paste (issue 53).

A box of 31,700 descriptors (the 1 MiB box holds 31,775 one per line) is drawn whole — every item
has its place in the list, the ones in view in full — while a character typed meanwhile is
answered; the times go to the bench file (webutil.BENCH), never into an assert. Every paste
format the box takes (bytes as `bytes_hex`, words with or without `0x` separated by spaces,
commas or lines, a descriptor as its four words as the page's heading prints them) decodes as
`cce decode` does the same bytes, and each refusal is shown on a line of its own.
"""
import random
import statistics
import struct
import time

import pytest

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

from webutil import BENCH, cli, open_page, shot, wait_until  # noqa: E402

RING = 31_700
# The pause between two keystrokes: a quick typist's (8 keys a second), so each key's latency is
# its own and not the wait behind the keys before it.
TYPING_PAUSE_S = 0.125

# Pastes `text` under `decoder` (the box's value set and its input event fired, as a paste does).
PASTE = """
const [decoder, text] = arguments;
const sel = document.querySelector('#decode-encoder'), box = document.querySelector('#decode-input');
document.querySelector('#tabs [data-view=decode]').click();
sel.value = decoder; box.value = text; box.dispatchEvent(new Event('input'));
"""

STATUS = "return Object.assign({}, document.querySelector('#decode-output .decode-status').dataset)"

# Every item of the list in order: its index and line; a refusal's text, or the article's encoder,
# heading words and (drawn in full) its bytes and field table.
READ_ITEMS = """
const [from, to] = arguments;
const nodes = Array.from(document.querySelectorAll('#decode-output .decode-chunk > [data-index]')).slice(from, to === null ? undefined : to);
return nodes.map((n) => {
  const item = {index: Number(n.dataset.index), line: Number(n.dataset.line)};
  if (n.tagName !== 'ARTICLE') return {...item, refused: n.textContent, hidden: n.hidden};
  const dd = n.querySelector(':scope > dl [data-key="bytes_hex"]');
  const fields = {};
  for (const tr of n.querySelectorAll(':scope > table.fields tr[data-field]')) {
    const td = (c) => tr.querySelector('td.' + c).textContent;
    fields[tr.dataset.field] = [td('bits'), td('value'), td('tag')];
  }
  return {...item, encoder: n.dataset.encoder, words: n.querySelector(':scope > h3 .mono').textContent,
          full: !n.classList.contains('folded'), bytes_hex: dd ? dd.textContent : null, fields,
          readings: Array.from(n.querySelectorAll(':scope > article.decoded')).map((a) => a.dataset.encoder)};
});
"""

# The interactions' latencies (Event Timing: from the key's event to the next frame painted after
# it was handled), one per keystroke: the longest of its events.
OBSERVE_KEYS = """
window.__keys = {};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (!e.interactionId) continue;
    window.__keys[e.interactionId] = Math.max(window.__keys[e.interactionId] || 0, e.duration);
  }
}).observe({type: 'event', durationThreshold: 16, buffered: true});
"""


def status(page):
    return page.execute_script(STATUS)


def drawn(page, n):
    s = status(page)
    return s.get("state") == "done" and s.get("items") == str(n)


def paste(page, decoder, text):
    page.execute_script(PASTE, decoder, text)


def read_items(page, start=0, stop=None):
    return page.execute_script(READ_ITEMS, start, stop)


def le_hex(words):
    return struct.pack(f"<{len(words)}I", *words).hex()


def descriptors(seed, n):
    rng = random.Random(seed)
    return [rng.getrandbits(128).to_bytes(16, "little").hex() for _ in range(n)]


def check_item(got, decoder, hexes, where):
    """One drawn item against `cce decode DECODER HEX --json`."""
    want = cli("decode", decoder, hexes)
    assert "refused" not in got, f"{where}: the page refused: {got['refused']}"
    assert "error" not in want, f"{where}: the CLI refused: {want['error']}"
    assert got["encoder"] == want["encoder"], where
    assert got["words"] == " ".join(want.get("words_hex") or [f"0x{w:08x}" for w in want["words"]]), where
    if not got["full"]:
        return
    if "readings" in want:
        assert got["readings"] == [r["encoder"] for r in want["readings"]], where
        return
    assert got["bytes_hex"] == want["bytes_hex"], where
    assert got["fields"] == {k: [f["bits"], str(f["value"]), f["tag"]] for k, f in want["fields"].items()}, where


def scroll_to_item(page, index):
    """Scrolls item `index` to the middle of the view, waits until it is drawn in full, and says
    where it is then: its top and the view's height (`where`)."""
    page.execute_script(
        "document.querySelector(`#decode-output .decode-chunk > [data-index='${arguments[0]}']`).scrollIntoView({block: 'center'})",
        index)
    wait_until(lambda: read_items(page, index, index + 1)[0]["full"], f"item {index} drawn in full once in view")
    where = page.execute_script(
        "const n = document.querySelector(`#decode-output .decode-chunk > [data-index='${arguments[0]}']`);"
        "return {top: n.getBoundingClientRect().top, height: innerHeight, bottom: innerHeight + scrollY >= document.documentElement.scrollHeight - 1};",
        index)
    return {**read_items(page, index, index + 1)[0], "where": where}


# ---- a whole ring ---------------------------------------------------------------------------------


def draw_time(page, decoder, text, items):
    """Seconds from the paste to the whole list drawn (and the frame after it), timed in the page."""
    return page.execute_async_script("""
      const [decoder, text, items, done] = arguments;
      const sel = document.querySelector('#decode-encoder'), box = document.querySelector('#decode-input');
      sel.value = decoder;
      const t0 = performance.now();
      box.value = text; box.dispatchEvent(new Event('input'));
      const poll = () => {
        const s = document.querySelector('#decode-output .decode-status').dataset;
        if (s.state === 'done' && s.items === String(items)) requestAnimationFrame(() => setTimeout(() => done((performance.now() - t0) / 1000)));
        else setTimeout(poll, 1);
      };
      poll();""", decoder, text, items)


def test_many_descriptors_are_drawn_whole(page):
    page.find_element(By.CSS_SELECTOR, "#tabs [data-view=decode]").click()
    for n in (100, 400, 2000, RING):
        descs = descriptors(n, n)
        BENCH[f"draw_{n}_descriptors_s"] = draw_time(page, "fma-descriptor", "\n".join(descs), n)
        assert drawn(page, n)
        assert page.execute_script("return document.querySelectorAll('#decode-output .decode-chunk > [data-index]').length") == n
    BENCH["draw_32k_s"] = BENCH[f"draw_{RING}_descriptors_s"]
    # Spot checks against the CLI: headings anywhere in the list, full articles once scrolled to.
    rng = random.Random(1)
    for i in sorted(rng.sample(range(RING), 40)):
        check_item(read_items(page, i, i + 1)[0], "fma-descriptor", descs[i], f"item {i}")
    for i in [0, RING - 1] + sorted(rng.sample(range(1, RING - 1), 10)):
        got = scroll_to_item(page, i)
        assert got["full"] and got["line"] == i + 1
        # The items around it drawn in full (each ten times its heading) did not push it out of
        # the view (at the list's end the view cannot hold it in the middle: not asked there).
        where = got.pop("where")
        assert where["bottom"] or 0 <= where["top"] < where["height"], f"item {i} pushed out of the view: {where}"
        check_item(got, "fma-descriptor", descs[i], f"item {i} in full")
    shot(page, "decode-whole-ring")


def test_typing_is_answered_while_a_whole_ring_draws(page):
    descs = descriptors(53, RING)
    extra = descriptors(54, 1)[0]
    page.execute_script(OBSERVE_KEYS)
    paste(page, "fma-descriptor", "\n".join(descs))
    page.execute_script("const b = document.querySelector('#decode-input'); b.focus(); b.setSelectionRange(b.value.length, b.value.length);")
    while_drawing = 0
    for ch in "\n" + extra:
        while_drawing += status(page).get("state") != "done"
        key = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"} if ch == "\n" else {"key": ch, "text": ch}
        page.execute_cdp_cmd("Input.dispatchKeyEvent", {"type": "keyDown", **key})
        page.execute_cdp_cmd("Input.dispatchKeyEvent", {"type": "keyUp", **{k: v for k, v in key.items() if k != "text"}})
        time.sleep(TYPING_PAUSE_S)
    wait_until(lambda: drawn(page, RING + 1), "the box with a typed descriptor drawn whole")
    # Each keystroke's latency from the page's own timing; the browser reports only those of 16 ms
    # or more (after the next frame), so a keystroke it does not report counts as 16 ms.
    page.execute_async_script("const done = arguments[0]; requestAnimationFrame(() => setTimeout(done, 50));")
    reported = page.execute_script("return Object.values(window.__keys)")
    latencies = sorted(reported + [16] * max(0, 1 + len(extra) - len(reported)))
    BENCH["type_latency_32k_ms"] = statistics.median(latencies)
    BENCH["type_latency_32k_p90_ms"] = latencies[int(0.9 * (len(latencies) - 1))]
    BENCH["type_latency_32k_max_ms"] = latencies[-1]
    BENCH["type_keys_while_drawing_32k"] = while_drawing
    assert while_drawing >= 1, "no key was typed while the list was drawn"
    # The typed descriptor is the last item, decoded as the CLI decodes it.
    assert page.find_element(By.ID, "decode-input").get_attribute("value").endswith("\n" + extra)
    last = read_items(page, RING, RING + 1)[0]
    assert last["line"] == RING + 1
    check_item(last, "fma-descriptor", extra, "the typed item")
    # The items typed past kept their nodes: the list was not drawn again from the start.
    check_item(read_items(page, 0, 1)[0], "fma-descriptor", descs[0], "item 0")


# ---- what people paste ----------------------------------------------------------------------------

D = [0x00800000, 0x02100001, 0x09000000, 0x3F000000]
E = [0x05000240, 0x021AA601, 0x00001000, 0x00000000]
W = [0x021AA601, 0x020A6000, 0x00000001]


def pastes():
    """(decoder, text, the bytes each item must decode as)."""
    d, e = le_hex(D), le_hex(E)
    hexed = lambda ws, p="0x": [f"{p}{w:08x}" for w in ws]  # noqa: E731
    return [
        ("fma-descriptor", d, [d]),
        ("fma-descriptor", " ".join(hexed(D)), [d]),
        ("fma-descriptor", " ".join(hexed(D, "")), [d]),
        ("fma-descriptor", ", ".join(hexed(D)), [d]),
        ("fma-descriptor", ",".join(hexed(D, "")), [d]),
        ("fma-descriptor", "\n".join(hexed(D)), [d]),
        ("fma-descriptor", "\n".join(hexed(D, "")), [d]),
        ("fma-descriptor", "0x800000 0x2100001\n0X09000000\t0x3F000000", [d]),
        ("fma-descriptor", " ".join(hexed(D)) + "\n" + " ".join(hexed(E, "")), [d, e]),
        ("fma-descriptor", d + e + d, [d, e, d]),
        ("fma-descriptor", f"{d}, {e}\n\n{d} {e}", [d, e, d, e]),
        ("fma-descriptor", " ".join(d[i:i + 2] for i in range(0, 32, 2)), [d]),
        ("fma-descriptor", f"{d}\r\n{e}\r\n", [d, e]),
        ("fma-meta-ctrl", "0x021aa601", [le_hex(W[:1])]),
        ("fma-meta-ctrl", le_hex(W[:1]), [le_hex(W[:1])]),
        ("fma-meta-ctrl", " ".join(hexed(W, "")), [le_hex([w]) for w in W]),
        # Alone, an 8-digit group under a one-word decoder is its bytes, as the CLI reads it.
        ("fma-meta-ctrl", ",".join(hexed(W, "")), hexed(W, "")),
        ("fma-meta-ctrl", "0x021aa601, 0x20a6000\n0x1", [le_hex([w]) for w in W]),
        ("fma-meta-ctrl", le_hex(W), [le_hex([w]) for w in W]),
        ("meta-ctrl", " ".join(hexed(W[:2])), [le_hex([w]) for w in W[:2]]),
    ]


def test_every_paste_format_decodes_as_the_cli_does(page):
    for decoder, text, want in pastes():
        paste(page, decoder, text)
        wait_until(lambda: status(page).get("state") == "done", f"{text!r}: drawn")
        error = page.find_element(By.ID, "decode-error")
        assert not error.is_displayed(), f"{text!r}: {error.text}"
        got = read_items(page)
        assert len(got) == len(want), text
        for g, hexes in zip(got, want):
            check_item(g, decoder, hexes, f"{decoder} {text!r}")
        # Its link reopens the same items (on lines of their own: the link is set a task after
        # the paste).
        page.execute_async_script("const done = arguments[0]; setTimeout(done, 0);")
        open_page(page, "#" + page.current_url.split("#", 1)[1])
        unlined = lambda items: [{k: v for k, v in i.items() if k != "line"} for i in items]  # noqa: E731
        assert unlined(read_items(page)) == unlined(got), f"{decoder} {text!r}: its link"


def test_the_pages_own_heading_pasted_back(page):
    # The words a decoded descriptor's heading prints, pasted back, are that descriptor.
    for hexes in descriptors(9, 5):
        paste(page, "fma-descriptor", hexes)
        heading = read_items(page)[0]["words"]
        paste(page, "fma-descriptor", heading)
        check_item(read_items(page)[0], "fma-descriptor", hexes, heading)


def test_the_boxs_placeholder_is_taken(page):
    placeholder = page.find_element(By.ID, "decode-input").get_attribute("placeholder")
    examples = [x.strip() for x in placeholder.split(" or ")]
    assert len(examples) >= 2, placeholder
    for example in examples:
        decoder = "fma-meta-ctrl" if example.startswith("0x") and " " not in example else "fma-descriptor"
        paste(page, decoder, example)
        wait_until(lambda: status(page).get("state") == "done", example)
        error = page.find_element(By.ID, "decode-error")
        assert not error.is_displayed(), f"the placeholder's {example!r} is refused: {error.text}"
        words = [int(w, 16) for w in example.split()] if " " in example else None
        hexes = le_hex(words) if words else example
        check_item(read_items(page)[0], decoder, hexes, example)


def test_each_refusal_is_shown_on_its_own_line(page):
    d = le_hex(D)
    lines = [d, "zz", "0x00800000 0x02100001 0x09000000", d[:-2], d, "0x00800000 0x0210000g 1 2"]
    paste(page, "fma-descriptor", "\n".join(lines))
    wait_until(lambda: status(page).get("state") == "done", "the box drawn")
    want = {
        2: cli("decode", "fma-descriptor", "zz")["error"],
        3: "fma-descriptor takes 4 words, got 3",
        4: cli("decode", "fma-descriptor", d[:-2])["error"],
        6: cli("decode", "fma-descriptor", lines[5])["error"],
    }
    error = page.find_element(By.ID, "decode-error")
    assert error.text.split("\n") == [f"line {n}: {m}" for n, m in want.items()]
    got = read_items(page)
    refused = {g["line"]: g["refused"] for g in got if "refused" in g}
    assert refused == {n: f"line {n}: {m}" for n, m in want.items()}
    assert [g["line"] for g in got] == [1, 2, 3, 4, 5, 6], "each item at its own line's place"
    for g in got:
        if "refused" not in g:
            check_item(g, "fma-descriptor", d, f"line {g['line']}")
    shot(page, "decode-refusals")
    # Alone, a refusal is the CLI's message as it gives it.
    paste(page, "fma-descriptor", "zz")
    assert error.text == cli("decode", "fma-descriptor", "zz")["error"]


def test_a_flipped_bit_keeps_the_items_form(page):
    words = " ".join(f"0x{w:08x}" for w in D)
    paste(page, "fma-descriptor", f"{le_hex(E)}\n{words}\n{le_hex(E)}")
    wait_until(lambda: status(page).get("state") == "done", "three items")
    page.find_element(By.CSS_SELECTOR, '#decode-output [data-index="1"] button.bit[data-field="scale"][data-bit="24"]').click()
    flipped = D[:3] + [D[3] ^ (1 << 24)]
    box = page.find_element(By.ID, "decode-input").get_attribute("value")
    assert box == f"{le_hex(E)}\n{' '.join(f'0x{w:08x}' for w in flipped)}\n{le_hex(E)}"
    got = read_items(page)
    check_item(got[1], "fma-descriptor", le_hex(flipped), "the flipped item")
    for g in (got[0], got[2]):
        check_item(g, "fma-descriptor", le_hex(E), "an item beside it")
