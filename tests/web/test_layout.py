"""The page's layout in headless Chromium: every view fits a phone (360, 390 and 430 px wide: no
sideways scroll, "copy link" and the tabs on screen; screenshots at 390 x 844 in
target/web/screenshots/phone-*.png), and the bit diagrams are drawn right at desktop and phone
widths: every decoder's diagram has its bits (meta-ctrl's readings too), bit b of every word in
one column, every ruler labelled where its bits are, a legend sample for every mark drawn, one
colour per meaning, the table rules unbroken, and Dtypes' fields as `cce value` prints them.
"""
import random
import re
import subprocess

import pytest

pytest.importorskip("selenium.webdriver")

from webutil import BENCH, CCE, cli, open_page, shot  # noqa: E402

PHONES = [360, 390, 430]
DESKTOP = 1280


@pytest.fixture
def viewport(driver):
    """Sets the page's viewport (a phone's: mobile, as Chromium's device mode does); the window's
    own size again after the test."""
    def resize(width, height=844):
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 800})
    yield resize
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.fixture(scope="module")
def ring_hex(tmp_path_factory):
    dump = tmp_path_factory.mktemp("ring") / "ring.bin"
    subprocess.run([CCE, "build", "--op", "fma", "--in", "bf16", "--accum", "fp32", "--out-dtype", "bf16", "--elems", "300",
                    "--src", "0x1000", "--src", "0x2000", "--dst", "0x9000", "--scale", "0.5", "--scale", "-1",
                    "-o", str(dump)], check=True, capture_output=True)
    return dump.read_bytes().hex()


def views(ring_hex):
    return {
        "decode": "#decode/fma-descriptor/0000800001001002000000090000003f",
        "decode-meta-ctrl": "#decode/meta-ctrl/0x02000000",
        "encode": "#encode/gradient-meta-ctrl/sub=5&last=1&in-dt=bf16&scale-dt=u8&accum-dt=fp32",
        "rings": f"#rings/{ring_hex}",
        "dtypes": "#dtypes/fp32/0.1",
        "dtypes-u64": "#dtypes/u64/0xfedcba9876543210",
        "element": "#element/ranks=4&algo=ring&compare=rdh&dtype=bf16&elems=16&element=3&inputs=typed&values=1.5,0.0078125,-3,0x3f81",
    }


# The document's width and, for each control that must be reachable, whether it is on screen and
# the topmost thing at its centre (nothing drawn over it).
READ_FIT = """
window.scrollTo(0, 0);
const vw = window.innerWidth, doc = document.documentElement;
const reach = (e) => { const r = e.getBoundingClientRect(); const x = (r.left + r.right) / 2, y = (r.top + r.bottom) / 2;
  return r.left >= 0 && r.right <= vw && document.elementFromPoint(x, y) === e; };
return {width: Math.max(doc.scrollWidth, document.body.scrollWidth), copy: reach(document.querySelector('#copy-link')),
        tabs: Array.from(document.querySelectorAll('#tabs [role=tab]')).map(reach)};
"""


@pytest.mark.parametrize("width", PHONES)
def test_every_view_fits_a_phone(page, viewport, ring_hex, width):
    viewport(width)
    widths = {}
    for name, fragment in views(ring_hex).items():
        open_page(page, fragment)
        view = fragment[1:].split("/")[0]
        assert page.execute_script(f"return !document.querySelector('#view-{view}').hidden"), name
        fit = page.execute_script(READ_FIT)
        widths[name] = fit["width"]
        assert fit["width"] <= width, f"{name} at {width} px: the document is {fit['width']} px wide"
        assert fit["copy"], f"{name} at {width} px: copy link is covered or off screen"
        assert all(fit["tabs"]), f"{name} at {width} px: a tab is covered or off screen: {fit['tabs']}"
        if width == 390:
            shot(page, f"phone-{name}")
    BENCH[f"document_width_at_{width}px"] = widths


def desktop_layout(page, viewport):
    viewport(DESKTOP, 1000)
    open_page(page)


# Decodes each [decoder, hex] and reads every diagram drawn: per word row its bit count and the
# x extent of its bits 0 and 31; the ruler's labels with their x centre and the centre of the
# first row's bit they name; the tab stops; the classes of the marks drawn.
READ_DIAGRAMS = """
const [items] = arguments;
const sel = document.querySelector('#decode-encoder'), box = document.querySelector('#decode-input');
const x = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.right]; };
const out = [];
for (const [enc, hex] of items) {
  sel.value = enc; box.value = hex; box.dispatchEvent(new Event('input'));
  const arts = Array.from(document.querySelectorAll('#decode-output article.decoded'));
  const maps = Array.from(document.querySelectorAll('#decode-output .bitmap')).map((m) => {
    const rows = Array.from(m.querySelectorAll('.bitrow'));
    const bit = (row, b) => row.querySelector(`.bit[data-bit="${b}"]`);
    const ruler = Array.from(m.querySelectorAll('.bitnums > span:not(.label)'))
      .filter((s) => s.textContent && getComputedStyle(s).visibility === 'visible')
      .map((s) => { const [l, r] = x(s), [bl, br] = x(bit(rows[0], Number(s.textContent))); return [s.textContent, (l + r) / 2, (bl + br) / 2]; });
    return {rows: rows.map((r) => r.querySelectorAll('.bit').length), bit0: rows.map((r) => x(bit(r, 0))),
            bit31: rows.map((r) => x(bit(r, 31))), ruler, stops: m.querySelectorAll('.bit[tabindex="0"]').length,
            fold: getComputedStyle(rows[0].querySelector('.bit[data-bit="15"]')).gridRowStart !== 'auto'};
  });
  const marks = new Set();
  for (const b of document.querySelectorAll('#decode-output .bit')) for (const c of b.classList) marks.add(c);
  out.push({encoder: arts.length ? arts[0].dataset.encoder : null, words: (window.cce.decode(enc, hex).words || []).length,
            readings: arts.slice(1).map((a) => a.dataset.encoder), maps, marks: Array.from(marks)});
}
return out;
"""


def decoder_items(page):
    """A few inputs per decoder (cce-info, a 140-byte struct with no bit fields, is drawn as its
    JSON): random words or descriptors, and meta-ctrl words with one, several and no readings."""
    rng = random.Random(53)
    decoders = page.execute_script("return window.cce.encoders().decoders")
    words = {e["name"]: e["words"] for e in page.execute_script("return window.cce.encoders().encoders")}
    items = []
    for name in decoders:
        if name == "cce-info":
            continue
        if name == "meta-ctrl":
            items += [[name, "0x021aa601"], [name, "0x02000000"], [name, "0xffffffff"]]
            continue
        for _ in range(3):
            items.append([name, rng.getrandbits(32 * words[name]).to_bytes(4 * words[name], "little").hex()])
    return items


def check_diagram(m, n_words, where):
    assert m["rows"] == [32] * n_words, f"{where}: bits per row {m['rows']}"
    for edge in ("bit0", "bit31"):
        lefts = {round(a, 1) for a, _ in m[edge]}
        rights = {round(b, 1) for _, b in m[edge]}
        assert len(lefts) == 1 and len(rights) == 1, f"{where}: {edge} of each word at {m[edge]}"
    labels = [t for t, _, _ in m["ruler"]]
    want = [str(b) for b in range(31, -1, -1) if b == 31 or b % 4 == 0 or (m["fold"] and b == 15)]
    assert labels == want, f"{where}: ruler labels {labels}"
    for text, centre, bit_centre in m["ruler"]:
        assert abs(centre - bit_centre) < 0.6, f"{where}: ruler label {text} at {centre}, its bit at {bit_centre}"
    assert m["stops"] == 1, f"{where}: {m['stops']} tab stops in one diagram"


@pytest.mark.parametrize("width", [DESKTOP, 390])
def test_every_decoder_draws_its_bits_in_aligned_columns(page, viewport, width):
    viewport(width, 1000)
    open_page(page)
    items = decoder_items(page)
    got = [g for i in range(0, len(items), 20) for g in page.execute_script(READ_DIAGRAMS, items[i:i + 20])]
    seen_readings = 0
    for (name, hexes), g in zip(items, got):
        where = f"{name} {hexes} at {width} px"
        assert g["encoder"] == name, where
        want = cli("decode", name, hexes)
        # meta-ctrl: one diagram per reading (the word itself when no encoder reads it).
        n_maps = max(1, len(want.get("readings", []))) if "readings" in want else 1
        assert g["readings"] == [r["encoder"] for r in want.get("readings", [])], where
        assert len(g["maps"]) == n_maps, f"{where}: {len(g['maps'])} diagrams"
        seen_readings += len(g["readings"])
        for m in g["maps"]:
            check_diagram(m, g["words"], where)
            assert m["fold"] == (width < 800), f"{where}: folded {m['fold']}"
    assert seen_readings >= 3, "meta-ctrl's readings were not drawn"


LEGEND = """
const marks = new Set();
for (const s of document.querySelectorAll('#view-decode .bit-legend .swatch')) for (const c of s.classList) marks.add(c);
const style = (html) => { const e = document.createElement('span'); e.innerHTML = html; document.body.append(e);
  const s = getComputedStyle(e.firstChild); const out = [s.backgroundColor, s.color, s.boxShadow, s.borderLeftColor]; e.remove(); return out; };
return {marks: Array.from(marks), colours: {
  HIGH: style('<span class="tag tag-HIGH">x</span>')[0], MED: style('<span class="tag tag-MED">x</span>')[0],
  LOW: style('<span class="tag tag-LOW">x</span>')[0], MODEL: style('<span class="tag tag-MODEL">x</span>')[0],
  reserved: style('<button class="bit reserved">0</button>')[0], rounded: style('<div class="rounding-mark">x</div>')[1],
  error: style('<p class="error">x</p>')[1]},
  unexplained: style('<button class="bit unexplained">1</button>')[2], roundedStep: style('<div class="step rounded">x</div>')[3]};
"""


def test_every_mark_has_a_legend_and_every_colour_one_meaning(page, viewport):
    desktop_layout(page, viewport)
    items = decoder_items(page)
    got = [g for i in range(0, len(items), 20) for g in page.execute_script(READ_DIAGRAMS, items[i:i + 20])]
    drawn = set().union(*(g["marks"] for g in got)) - {"bit", "hi", "lo"}
    legend = page.execute_script(LEGEND)
    assert {"unexplained", "fixed", "reserved", "field-start"} <= drawn, drawn
    assert drawn <= set(legend["marks"]), f"marks drawn without a legend: {drawn - set(legend['marks'])}"
    colours = legend["colours"]
    assert len(set(colours.values())) == len(colours), f"a colour with two meanings: {colours}"
    # A bit no field explains is framed in the error colour; a rounded step is the rounding colour.
    assert colours["error"] in legend["unexplained"], legend["unexplained"]
    assert legend["roundedStep"] == colours["rounded"]


def test_tag_badges_keep_the_tables_row_rules(page, viewport):
    desktop_layout(page, viewport)
    open_page(page, "#decode/fma-descriptor/0000800001001002000000090000003f")
    rows = page.execute_script("""
      return Array.from(document.querySelectorAll('#decode-output table.fields tr[data-field]')).map((tr) =>
        Array.from(tr.children).map((td) => [getComputedStyle(td).display, Math.round(td.getBoundingClientRect().bottom)]));""")
    assert rows
    for cells in rows:
        assert {d for d, _ in cells} == {"table-cell"}, cells
        assert len({b for _, b in cells}) == 1, f"a row's cells end at different heights: {cells}"


DTYPE_CASES = [("bf16", "1.5"), ("fp32", "0.1"), ("fp16", "0x8001"), ("fp8e4", "-3"), ("fp8e5", "-0.0"),
               ("fp8e3", "nan"), ("fp8e4fn", "0x7f"), ("u8", "7"), ("i16", "-1"), ("u32", "0xdeadbeef"),
               ("u64", "0xfedcba9876543210"), ("i64", "-2"), ("i64", "0x8fedcba987654321")]

READ_DTYPE = """
const [dtype, value] = arguments;
document.querySelector('#tabs [data-view=dtypes]').click();
const sel = document.querySelector('#dtypes-dtype'), box = document.querySelector('#dtypes-value');
sel.value = dtype; box.value = value; box.dispatchEvent(new Event('input'));
const m = document.querySelector('#dtypes-output .bitmap');
return {fields: document.querySelector('#dtypes-output [data-key=fields]').textContent,
        rows: Array.from(m.querySelectorAll('.bitrow')).map((r) => r.querySelectorAll('.bit').length),
        ruler: Array.from(m.querySelectorAll('.bitnums > span:not(.label)')).map((s) => s.textContent).filter(Boolean),
        names: Array.from(m.querySelectorAll('.bitnames > span:not(.label)')).filter((s) => getComputedStyle(s).display !== 'none').map((s) => s.textContent)};
"""


@pytest.mark.parametrize("width", [DESKTOP, 390])
def test_dtypes_shows_the_fields_as_the_cli_does(page, viewport, width):
    viewport(width, 1000)
    open_page(page)
    menu = page.execute_script("return Array.from(document.querySelectorAll('#dtypes-dtype option')).map((o) => o.value)")
    cases = [(dtype, value) for dtype, value in DTYPE_CASES if dtype in menu]
    assert len(cases) >= len(DTYPE_CASES) - 1, f"the dtype menu lacks {set(d for d, _ in DTYPE_CASES) - set(menu)}"
    for dtype, value in cases:
        got = page.execute_script(READ_DTYPE, dtype, value)
        text = subprocess.run([CCE, "value", "--dtype", dtype, value], capture_output=True, text=True, check=True).stdout
        want = re.search(r"^  fields +(.*)$", text, re.M).group(1)
        assert got["fields"] == want, (dtype, value)
        fields = cli("value", "--dtype", dtype, value)["fields"]
        bits = int(re.search(r"\[(\d+)", fields[0]["bits"]).group(1)) + 1
        assert got["rows"] == ([bits] if bits <= 32 else [32, 32]), (dtype, got["rows"])
        assert got["ruler"][0] == str(min(bits, 32) - 1) and got["ruler"][-1] == "0", (dtype, got["ruler"])
        if bits <= 32:
            # The fields named under their bits (a field across the fold named in both blocks).
            names = [f["name"] for f in fields]
            assert [n for i, n in enumerate(got["names"]) if i == 0 or n != got["names"][i - 1]] == names, (dtype, got["names"])
    if width == DESKTOP:
        shot(page, "dtypes-fields")
