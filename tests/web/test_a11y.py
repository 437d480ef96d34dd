"""The page with a keyboard and a screen reader's eyes, in headless Chromium: an axe-core audit of
every view at desktop and phone widths (no serious or critical finding: contrast, names, roles),
the tabs as an ARIA tablist, one tab stop per bit diagram, and the core tasks done with key
presses only (decode, flip a bit and flip it back, encode, switch views).

axe-core comes from npm (.ci/run: `npm install --prefix target/npm axe-core@4`); CCE_AXE names
another axe.min.js. Without it the audit is skipped and says why; the keyboard tests still run.
"""
import os
import pathlib

import pytest

pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

from webutil import PAGE, ROOT, cli, open_page, wait_until  # noqa: E402

AXE_PLACES = [ROOT / "target" / "npm", PAGE.parent.parent / "npm"]


def axe_script():
    named = os.environ.get("CCE_AXE")
    paths = [pathlib.Path(named)] if named else [p / "node_modules" / "axe-core" / "axe.min.js" for p in AXE_PLACES]
    for p in paths:
        if p.exists():
            return p.read_text()
    pytest.skip(f"axe-core is not installed (looked for {', '.join(map(str, paths))}): "
                "`npm install --prefix target/npm axe-core@4`, as .ci/run does, or set CCE_AXE to an axe.min.js")


STATES = {
    "decode": "#decode/fma-descriptor/0000800001001002000000090000003f",
    "decode-meta-ctrl": "#decode/meta-ctrl/0x02000000",
    "decode-refused": "#decode/fma-descriptor/abc",
    "encode": "#encode/fma-descriptor/sub=1&a-sel=input&b-sel=scale&c-sel=stored&scale=0.5",
    "rings": "#rings",
    "dtypes": "#dtypes/bf16/1.3",
    "dtypes-u64": "#dtypes/u64/0xfedcba9876543210",
    "element": "#element/ranks=4&algo=ring&compare=rdh",
}

RUN_AXE = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']}).then(
  (r) => done(r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ') + ': ' + n.failureSummary)}))),
  (e) => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));
"""


@pytest.mark.parametrize("width", [1280, 390])
def test_axe_finds_nothing_serious(page, width):
    script = axe_script()
    page.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 800})
    try:
        findings = {}
        for name, fragment in STATES.items():
            open_page(page, fragment)
            page.execute_script(script)
            bad = [v for v in page.execute_async_script(RUN_AXE) if v["impact"] in ("serious", "critical")]
            if bad:
                findings[name] = bad
        assert not findings, f"axe at {width} px: {findings}"
    finally:
        page.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_the_tabs_are_an_aria_tablist(page):
    tabs = page.execute_script("""
      return Array.from(document.querySelectorAll('#tabs [role=tab]')).map((t) => {
        const panel = document.getElementById(t.getAttribute('aria-controls'));
        return {view: t.dataset.view, selected: t.getAttribute('aria-selected'), tabindex: t.tabIndex,
                panel: panel && panel.getAttribute('role'), labelledby: panel && panel.getAttribute('aria-labelledby') === t.id,
                shown: panel && !panel.hidden};
      });""")
    assert page.execute_script("return document.querySelector('#tabs').getAttribute('role')") == "tablist"
    assert [t["view"] for t in tabs] == ["decode", "encode", "rings", "dtypes", "element"]
    for t in tabs:
        assert t["panel"] == "tabpanel" and t["labelledby"], t
        selected = t["view"] == "decode"
        assert (t["selected"], t["tabindex"], t["shown"]) == (str(selected).lower(), 0 if selected else -1, selected), t


# ---- the keyboard only ------------------------------------------------------------------------

def keys(d, *k):
    ActionChains(d).send_keys(*k).perform()


def chord(d, modifier, key):
    """`key` pressed while `modifier` is held (Shift+Tab, Ctrl+A)."""
    ActionChains(d).key_down(modifier).send_keys(key).key_up(modifier).perform()


def shift_tab(d):
    chord(d, Keys.SHIFT, Keys.TAB)


def focused(d):
    """What has the focus: its id, role, view, class, name, and for a bit its word and number."""
    return d.execute_script("""
      const a = document.activeElement;
      const row = a.closest && a.closest('.bitrow');
      return {id: a.id, role: a.getAttribute('role'), view: a.dataset.view || null, name: a.getAttribute('name'),
              bit: a.classList.contains('bit') ? Number(a.dataset.bit) : null, word: row ? Number(row.dataset.word) : null,
              map: a.closest ? (a.closest('.bitmap') || {dataset: {}}).dataset.key || null : null};""")


def press_until(d, press, want, what, limit=60):
    """Calls `press(d)` until `want(focused)` holds; returns how many presses that took."""
    for n in range(1, limit + 1):
        press(d)
        if want(focused(d)):
            return n
    raise AssertionError(f"{what}: not after {limit} presses; the focus is on {focused(d)}")


def tab(d):
    keys(d, Keys.TAB)


def field_value(d, name):
    return d.execute_script(
        "const tr = document.querySelector(`#decode-output table.fields tr[data-field='${arguments[0]}']`); return tr && tr.querySelector('td.value').textContent;", name)


def test_decode_flip_encode_and_switch_views_with_the_keyboard_only(page):
    # From the top: the selected tab, "copy link", then the decoder menu.
    page.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    assert press_until(page, tab, lambda f: f["view"] == "decode", "the Decode tab", 5) == 1
    press_until(page, tab, lambda f: f["id"] == "decode-encoder", "the decoder menu", 5)
    # The arrow keys choose the decoder in the menu (not type-ahead: its pause limit is a clock);
    # then the box, its text replaced by typing.
    options, at = page.execute_script("const s = document.querySelector('#decode-encoder'); return [Array.from(s.options).map((o) => o.value), s.selectedIndex]")
    steps = options.index("fma-descriptor") - at
    keys(page, *[Keys.ARROW_DOWN if steps > 0 else Keys.ARROW_UP] * abs(steps))
    wait_until(lambda: page.execute_script("return document.querySelector('#decode-encoder').value") == "fma-descriptor", "fma-descriptor chosen")
    keys(page, Keys.TAB)
    assert focused(page)["id"] == "decode-input"
    good = "0000800001001002000000090000003f"
    chord(page, Keys.CONTROL, "a")
    keys(page, good)
    wait_until(lambda: field_value(page, "a-sel") == "1", "the typed descriptor decoded")

    # One tab stop for the whole diagram: the first Tab lands on its top bit, the next leaves it.
    keys(page, Keys.TAB)
    f = focused(page)
    assert (f["map"], f["word"], f["bit"]) == ("decode:0", 0, 31), f
    assert page.execute_script("return document.querySelectorAll('#decode-output .bit[tabindex=\"0\"]').length") == 1
    keys(page, Keys.TAB)
    assert focused(page)["map"] is None, "a second Tab stayed in the diagram"
    shift_tab(page)
    assert focused(page)["bit"] == 31

    # Arrows to W2 bit 24 (a-sel's low bit); Space flips it and the focus stays; again flips it back.
    keys(page, Keys.ARROW_DOWN, Keys.ARROW_DOWN, *[Keys.ARROW_RIGHT] * 7)
    f = focused(page)
    assert (f["word"], f["bit"]) == (2, 24), f
    keys(page, Keys.SPACE)
    wait_until(lambda: field_value(page, "a-sel") == "0", "a-sel flipped to 0")
    f = focused(page)
    assert (f["map"], f["word"], f["bit"]) == ("decode:0", 2, 24), f"the focus left the flipped bit: {f}"
    flipped = page.find_element("id", "decode-input").get_attribute("value")
    assert flipped != good
    keys(page, Keys.SPACE)
    wait_until(lambda: field_value(page, "a-sel") == "1", "a-sel flipped back to 1")
    assert (focused(page)["word"], focused(page)["bit"]) == (2, 24)
    assert page.find_element("id", "decode-input").get_attribute("value") == good
    # Home, End and the arrows stay in the diagram; up from W0 goes nowhere.
    keys(page, Keys.HOME)
    assert focused(page)["bit"] == 31
    keys(page, Keys.END, Keys.ARROW_UP, Keys.ARROW_UP, Keys.ARROW_UP)
    assert (focused(page)["word"], focused(page)["bit"]) == (0, 0)

    # Back to the tabs; the arrow opens Encode (the focus on its tab).
    press_until(page, shift_tab, lambda f: f["role"] == "tab", "back to the tabs")
    assert focused(page)["view"] == "decode"
    keys(page, Keys.ARROW_RIGHT)
    assert focused(page)["view"] == "encode"
    assert page.execute_script("return !document.querySelector('#view-encode').hidden && document.querySelector('#view-decode').hidden")
    # Encode: Tab to the scale field, type it; the bytes are the CLI's.
    press_until(page, tab, lambda f: f["name"] == "scale", "the scale field")
    keys(page, "0.5")
    want = cli("encode", "fma-descriptor", "--scale", "0.5")["bytes_hex"]
    wait_until(lambda: page.execute_script("const e = document.querySelector('#encode-output [data-key=bytes_hex]'); return e && e.textContent") == want,
               "the encoded bytes")

    # Switching views: End, Home, and the arrows wrap around.
    press_until(page, shift_tab, lambda f: f["role"] == "tab", "back to the tabs")
    for key, view in [(Keys.END, "element"), (Keys.HOME, "decode"), (Keys.ARROW_LEFT, "element"), (Keys.ARROW_RIGHT, "decode"),
                      (Keys.ARROW_RIGHT, "encode"), (Keys.ARROW_RIGHT, "rings"), (Keys.ARROW_RIGHT, "dtypes")]:
        keys(page, key)
        assert focused(page)["view"] == view, (key, focused(page))
        shown = page.execute_script("return Array.from(document.querySelectorAll('section.view')).filter((s) => !s.hidden).map((s) => s.id)")
        assert shown == [f"view-{view}"], (view, shown)
        assert page.execute_script("return document.querySelector('#tabs [aria-selected=true]').dataset.view") == view
    # The Dtypes diagram is one tab stop too, and Space flips its bit in place.
    press_until(page, tab, lambda f: f["map"] == "dtype", "the dtype diagram")
    before = page.find_element("id", "dtypes-value").get_attribute("value")
    keys(page, Keys.END, Keys.SPACE)
    wait_until(lambda: page.find_element("id", "dtypes-value").get_attribute("value") != before, "the dtype's bit flipped")
    assert (focused(page)["map"], focused(page)["bit"]) == ("dtype", 0)


def test_every_diagram_is_one_tab_stop(page):
    open_page(page, "#decode/fma-descriptor/0000800001001002000000090000003f,00000000000000000000000000000000")
    stops = page.execute_script("""
      return Array.from(document.querySelectorAll('#decode-output .bitmap')).map((m) =>
        [m.querySelectorAll('.bit').length, m.querySelectorAll('.bit[tabindex="0"]').length, m.getAttribute('role'), m.getAttribute('aria-label')]);""")
    assert len(stops) == 2
    for bits, tab_stops, role, label in stops:
        assert (bits, tab_stops, role) == (128, 1, "group"), stops
        assert "arrow keys" in label
    # The output's tab stops: one per diagram, not 256 bits.
    n = page.execute_script("return Array.from(document.querySelectorAll('#decode-output *')).filter((e) => e.tabIndex >= 0).length")
    assert n == 2, f"{n} tab stops in the decoded items"
