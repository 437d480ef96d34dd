"""The page (scripts/web → target/web/cce.html) in a real browser: headless Chromium driven by
Selenium, the file opened from disk. What the page shows is read from its DOM and compared with
the `cce` binary's `--json` (the same library through the CLI) and with ml_dtypes / numpy.

Every test ends by checking the browser's log: no console error and no uncaught exception.
Screenshots of each view are written to target/web/screenshots/; the measured load and decode
times to target/web/bench.json (docs/web.md). The fixtures and shared helpers are in
conftest.py and webutil.py.
"""
import random
import subprocess

import pytest

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

from webutil import BENCH, CCE, PAGE, cli, open_page, shot, wait_until  # noqa: E402


# ---- reading the DOM ----------------------------------------------------------------------------

# Sets the decoder and the hex box, fires `input`, and reads every decoded article's field table
# (name → bits, value, meaning, tag), bytes and exactness; or the error shown.
READ_DECODES = """
const [items] = arguments;
const out = [];
const sel = document.querySelector('#decode-encoder'), box = document.querySelector('#decode-input');
for (const [enc, hex] of items) {
  sel.value = enc; box.value = hex; box.dispatchEvent(new Event('input'));
  const err = document.querySelector('#decode-error');
  if (!err.hidden) { out.push({error: err.textContent}); continue; }
  const art = document.querySelector('#decode-output article.decoded');
  const fields = {};
  for (const tr of art.querySelectorAll(':scope > table.fields tr[data-field]')) {
    const td = (c) => tr.querySelector('td.' + c).textContent;
    fields[tr.dataset.field] = {bits: td('bits'), value: td('value'), meaning: td('meaning'), tag: td('tag')};
  }
  const dd = (k) => { const e = art.querySelector(`:scope > dl [data-key="${k}"]`); return e ? e.textContent : null; };
  const readings = Array.from(art.querySelectorAll(':scope > article.decoded')).map((a) => a.dataset.encoder);
  out.push({encoder: art.dataset.encoder, fields, bytes_hex: dd('bytes_hex'), exact: dd('exact'), readings});
}
return out;
"""


def same_number(text, want):
    if isinstance(want, str):
        return text == want
    if isinstance(want, bool):
        return text == str(want).lower()
    got = float(text)
    return got == want or (got != got and want != want)


def meaning_pairs(text):
    """`key value, key value` → [(key, value text)]."""
    return [tuple(p.split(" ", 1)) for p in text.split(", ")] if text else []


def check_decoded(got, want, where):
    assert "error" not in got, f"{where}: the page refused: {got}"
    if "readings" in want:
        assert got["readings"] == [r["encoder"] for r in want["readings"]], where
        return
    assert got["bytes_hex"] == want["bytes_hex"], where
    assert set(got["fields"]) == set(want["fields"]), where
    for name, f in want["fields"].items():
        g = got["fields"][name]
        assert (g["bits"], g["tag"]) == (f["bits"], f["tag"]), f"{where} {name}"
        assert g["value"] == str(f["value"]), f"{where} {name}: {g['value']} != {f['value']}"
        extra = [(k, v) for k, v in f.items() if k not in ("value", "bits", "tag", "note")]
        pairs = meaning_pairs(g["meaning"])
        assert [k for k, _ in pairs] == [k for k, _ in extra], f"{where} {name}"
        for (k, text), (_, v) in zip(pairs, extra):
            assert same_number(text, v), f"{where} {name}.{k}: {text} != {v}"
    assert got["exact"].startswith("yes" if want["exact"] else "no"), where


# ---- the tests ----------------------------------------------------------------------------------


def test_load_and_decode_times_are_recorded(driver):
    size = PAGE.stat().st_size
    BENCH["file_bytes"] = size
    times = [open_page(driver) for _ in range(5)]
    ready = [driver.execute_script("return performance.now()") for _ in range(1)]
    BENCH["open_to_ready_s"] = sorted(times)[2]
    BENCH["ready_performance_now_ms"] = ready[0]
    # Decoding: 2000 words through window.cce, timed inside the page.
    per, refused = driver.execute_script("""
      let refused = 0;
      const t0 = performance.now();
      for (let i = 0; i < 2000; i++) refused += 'error' in window.cce.decode('fma-meta-ctrl', '0x' + ((i * 2654435761) >>> 0).toString(16).padStart(8, '0'));
      return [(performance.now() - t0) / 2000, refused];""")
    assert refused == 0, f"{refused} of the 2000 timed words were refused"
    BENCH["decode_word_ms"] = per
    # The same through the view: a word typed, decoded and drawn (bit diagram and table), in five
    # rounds of 200 words. The first round is the page's first use of the view (its script not yet
    # compiled by the browser's optimiser): it is recorded apart from the median round.
    rounds = [driver.execute_script("""
      document.querySelector('#tabs [data-view=decode]').click();
      const sel = document.querySelector('#decode-encoder'), box = document.querySelector('#decode-input');
      sel.value = 'fma-meta-ctrl';
      const t0 = performance.now();
      let drawn = 0;
      for (let i = 0; i < 200; i++) {
        box.value = '0x' + ((i * 2654435761 + arguments[0]) >>> 0).toString(16).padStart(8, '0'); box.dispatchEvent(new Event('input'));
        drawn += document.querySelectorAll('#decode-output article.decoded .bit').length === 32;
      }
      return [(performance.now() - t0) / 200, drawn];""", r) for r in range(5)]
    BENCH["decode_word_shown_first_ms"] = rounds[0][0]
    BENCH["decode_word_shown_ms"] = sorted(ms for ms, _ in rounds)[2]
    drawn = min(n for _, n in rounds)
    assert drawn == 200, f"only {drawn} of the 200 timed words of a round were drawn"


def test_random_words_and_descriptors_equal_the_cli(page):
    rng = random.Random(45)
    decoders = page.execute_script("return window.cce.encoders().decoders")
    encoders = {e["name"]: e["words"] for e in page.execute_script("return window.cce.encoders().encoders")}
    items = []
    for i in range(600):
        name = rng.choice([d for d in decoders if d != "cce-info"])
        words = encoders.get(name, 1)
        if i % 3 == 0 and words == 1:
            hexes = f"0x{rng.getrandbits(32):08x}"  # a word as the runtime logs it
        else:
            hexes = rng.getrandbits(32 * words).to_bytes(4 * words, "little").hex()
        items.append((name, hexes))
    # In batches: each script stays short on a busy machine.
    got = [g for i in range(0, len(items), 100) for g in page.execute_script(READ_DECODES, items[i:i + 100])]
    for (name, hexes), g in zip(items, got):
        check_decoded(g, cli("decode", name, hexes), f"{name} {hexes}")
    assert len(got) >= 500
    shot(page, "decode")


def test_the_studys_examples_encode_through_the_forms(page):
    # Study §9.1 (add meta-ctrl, sources 0..1 and the last), §9.2 (the FMA descriptors), §9.3's
    # parts (seed_init, the EXT and gradient meta-ctrl words).
    examples = [
        ("add-meta-ctrl", {"out-dt": "bf16", "accum-dt": "fp32"}),
        ("add-meta-ctrl", {"last": "1", "out-dt": "bf16", "accum-dt": "fp32"}),
        ("fma-descriptor", {"sub": "1", "a-sel": "input", "b-sel": "scale", "c-sel": "stored", "scale": "0.5"}),
        ("fma-descriptor", {"meta-idx": "1", "sub": "1", "a-sel": "input", "b-sel": "scale", "c-sel": "stored", "scale": "0.5"}),
        ("seed-init-descriptor", {"seed-en": "1", "seed": "7", "more": "1"}),
        ("ext-meta-ctrl", {"mid-dt": "bf16", "accum-dt": "fp32"}),
        ("gradient-meta-ctrl", {"sub": "5", "last": "1", "in-dt": "bf16", "scale-dt": "u8", "accum-dt": "fp32"}),
    ]
    for encoder, fields in examples:
        page.execute_script("const s = document.querySelector('#encode-encoder'); s.value = arguments[0]; s.dispatchEvent(new Event('change')); document.querySelector('#tabs [data-view=encode]').click();", encoder)
        for name, value in fields.items():
            box = page.find_element(By.CSS_SELECTOR, f'#encode-form input[name="{name}"]')
            box.clear()
            box.send_keys(value)
        got = page.find_element(By.CSS_SELECTOR, '#encode-output [data-key="bytes_hex"]').text
        args = [a for k, v in fields.items() for a in (f"--{k}", v)]
        assert got == cli("encode", encoder, *args)["bytes_hex"], (encoder, fields)
    shot(page, "encode")


def test_a_refused_field_shows_the_clis_message(page):
    open_page(page, "#encode/fma-descriptor/scale=abc")
    err = page.find_element(By.ID, "encode-error")
    assert err.is_displayed() and "scale" in err.text


def test_a_flipped_bit_changes_exactly_its_field(page):
    hexes = "00800000021000010900000000003f"  # 15 bytes: refused, then a good one below
    assert "error" in page.execute_script(READ_DECODES, [["fma-descriptor", hexes]])[0]
    good = "0000800001001002000000090000003f"
    before = page.execute_script(READ_DECODES, [["fma-descriptor", good]])[0]
    rng = random.Random(7)
    for name in ["a-sel", "scale", "sema", "meta-idx", "sub"]:
        bits = page.find_elements(By.CSS_SELECTOR, f'#decode-output button.bit[data-field="{name}"]')
        bit = rng.choice(bits)
        bit.click()
        after = page.execute_script("""
          const art = document.querySelector('#decode-output article.decoded'); const f = {};
          for (const tr of art.querySelectorAll(':scope > table.fields tr[data-field]')) f[tr.dataset.field] = tr.querySelector('td.value').textContent;
          return f;""")
        changed = [k for k in after if after[k] != before["fields"][k]["value"]]
        assert changed == [name], (name, changed)
        before = page.execute_script(READ_DECODES, [["fma-descriptor", page.find_element(By.ID, "decode-input").get_attribute("value")]])[0]
    shot(page, "decode-flipped")


def test_permalinks_restore_their_view(page):
    want = cli("decode", "fma-descriptor", "0000800001001002000000090000003f")
    open_page(page, "#decode/fma-descriptor/0000800001001002000000090000003f")
    art = page.execute_script("return document.querySelector('#decode-output article.decoded').dataset.encoder")
    assert art == "fma-descriptor"
    assert page.find_element(By.CSS_SELECTOR, '#decode-output [data-key="bytes_hex"]').text == want["bytes_hex"]
    # Each view's state goes to the URL; opening that URL anew shows the same output.
    for view, act in [
        ("encode", "document.querySelector('#tabs [data-view=encode]').click(); const i = document.querySelector('#encode-form input[name=scale]'); i.value = '0.25'; i.dispatchEvent(new Event('input'));"),
        ("dtypes", "document.querySelector('#tabs [data-view=dtypes]').click(); const v = document.querySelector('#dtypes-value'); v.value = '3.14159'; v.dispatchEvent(new Event('input'));"),
        ("element", "document.querySelector('#tabs [data-view=element]').click(); const f = document.querySelector('#element-form'); f.elements.ranks.value = '5'; f.elements.algo.value = 'rdh'; f.dispatchEvent(new Event('input'));"),
    ]:
        page.execute_script(act)
        shown = page.find_element(By.ID, f"view-{view}").text
        # The URL follows a task after the input.
        wait_until(lambda: page.current_url.split("#")[1].startswith(view), f"the {view} link")
        url = page.current_url
        assert url.split("#")[1].startswith(view)
        open_page(page, "#" + url.split("#")[1])
        assert page.find_element(By.ID, f"view-{view}").is_displayed()
        assert page.find_element(By.ID, f"view-{view}").text == shown, view


def test_bad_pastes_show_their_message(page):
    cases = [("fma-meta-ctrl", "0xzz"), ("fma-descriptor", "abc"), ("fma-descriptor", "00" * 15)]
    for name, hexes in cases:
        got = page.execute_script(READ_DECODES, [[name, hexes]])[0]
        assert got["error"] == cli("decode", name, hexes)["error"], (name, hexes)
    huge = "ab" * (1 << 20)
    got = page.execute_script(READ_DECODES, [["fma-descriptor", huge]])[0]
    assert "at most 1 MiB" in got["error"]
    shot(page, "decode-error")


def test_rings_disassemble_as_the_cli_does(page, tmp_path):
    dump = tmp_path / "ring.bin"
    subprocess.run([CCE, "build", "--op", "fma", "--in", "bf16", "--accum", "fp32", "--out-dtype", "bf16", "--elems", "300",
                    "--src", "0x1000", "--src", "0x2000", "--src", "0x3000", "--dst", "0x9000",
                    "--scale", "0.5", "--scale", "0.25", "--scale", "-1", "-o", str(dump)], check=True, capture_output=True)
    want = cli("disasm", str(dump))
    page.find_element(By.CSS_SELECTOR, "#tabs [data-view=rings]").click()
    page.find_element(By.ID, "rings-file").send_keys(str(dump))
    rows = page.execute_script("""
      return Array.from(document.querySelectorAll('#rings-output [data-side]')).map((tr) => [tr.dataset.side, Number(tr.dataset.index), tr.children[2].textContent, tr.children[3].textContent]);""")
    expect = [[side, d["index"], " ".join(f"{w:08x}" for w in d["words"]), d["kind"]] for q in want["queues"] for side in ("tx", "rx") for d in q[side]]
    # The listing is cce disasm's text, in packet order: compared by side and index.
    assert sorted([[s, i, w, k.split(" ")[0]] for s, i, w, k in rows], key=lambda r: (r[0] != "tx", r[1])) == expect
    assert page.execute_script("return window.cce.disasm(arguments[0])", dump.read_bytes().hex()) == want
    shot(page, "rings")
    # A descriptor clicked opens in the decoder.
    page.find_element(By.CSS_SELECTOR, "#rings-output [data-side=tx] a.desc").click()
    assert page.find_element(By.ID, "view-decode").is_displayed()
    kind = want["queues"][0]["tx"][0]["kind"]
    decoders = page.execute_script("return window.cce.encoders().decoders")
    decoder = kind if kind in decoders else f"{kind}-descriptor"
    assert page.find_element(By.CSS_SELECTOR, "#decode-output article.decoded").get_attribute("data-encoder") == decoder


ELEMENT_CASES = [
    {"ranks": "4", "algo": "ring", "dtype": "bf16", "elems": "1024", "element": "5", "seed": "3"},
    {"ranks": "8", "algo": "rdh", "dtype": "bf16", "elems": "4096", "element": "1000", "seed": "9", "rounding": "sr", "accum": "bf16"},
    {"ranks": "5", "algo": "kangaring", "dtype": "fp16", "elems": "777", "element": "776", "seed": "2", "rank": "3"},
    {"ranks": "3", "algo": "mesh", "dtype": "fp32", "elems": "64", "element": "0", "seed": "1", "op": "max"},
]


def element_dom(page, params):
    return page.execute_script("""
      const [p] = arguments; document.querySelector('#tabs [data-view=element]').click();
      const f = document.querySelector('#element-form');
      const defaults = {op: 'add', rounding: 'rne', accum: '', rank: '', inputs: 'generated', values: '', compare: ''};
      for (const [k, v] of Object.entries({...defaults, ...p})) f.elements[k].value = v;
      f.dispatchEvent(new Event('input'));
      const err = document.querySelector('#element-error');
      if (!err.hidden) return {error: err.textContent};
      return Array.from(document.querySelectorAll('#element-output article.story')).map((a) => ({
        algo: a.dataset.algo,
        output: a.querySelector('[data-key=output]').textContent,
        expr: a.querySelector('[data-key=expr]').textContent,
        steps: Array.from(a.querySelectorAll('.step')).map((s) => [Number(s.dataset.rank), Number(s.dataset.step), s.classList.contains('rounded')]),
      }));""", params)


def test_the_element_view_equals_the_cli(page):
    for params in ELEMENT_CASES:
        got = element_dom(page, params)
        args = ["allreduce", "--op", params.get("op", "sum")]
        for k in ["ranks", "algo", "dtype", "elems", "element", "seed", "rounding", "accum", "rank"]:
            if k in params:
                args += [f"--{k}", params[k]]
        want = cli(*args)["element"]
        assert len(got) == 1, got
        g = got[0]
        assert g["output"] == f"{want['output']['bits']} = {fmt(want['output']['value'])}", params
        assert g["expr"] == want["expr"]
        assert g["steps"] == [[s["rank"], s["step"], s["rounding"]["mode"] != "exact"] for s in want["steps"]], params
        assert page.execute_script("return window.cce.element(arguments[0])", params) == cli(*args)
    # Two algorithms side by side; typed values.
    got = element_dom(page, {"ranks": "4", "algo": "ring", "compare": "rdh", "dtype": "bf16", "elems": "16", "element": "3",
                             "inputs": "typed", "values": "1.5, 0.0078125, -3, 0x3f81"})
    assert [g["algo"] for g in got] == ["ring", "rdh"]
    for g in got:
        assert g["output"].startswith("0x")
    shot(page, "element")


def fmt(v):
    """A number as JavaScript's String() writes it (for the values the stories hold)."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    return repr(v)


# ---- the dtype view against ml_dtypes ---------------------------------------------------------

ml_dtypes = pytest.importorskip("ml_dtypes")
import numpy as np  # noqa: E402
from decimal import Decimal  # noqa: E402
from fractions import Fraction  # noqa: E402

FLOATS = {
    "bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32, "fp8e3": ml_dtypes.float8_e3m4,
    "fp8e4": ml_dtypes.float8_e4m3, "fp8e5": ml_dtypes.float8_e5m2, "fp8e4fn": ml_dtypes.float8_e4m3fn,
}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}

READ_VALUES = """
const [items] = arguments; const out = [];
const sel = document.querySelector('#dtypes-dtype'), box = document.querySelector('#dtypes-value');
document.querySelector('#tabs [data-view=dtypes]').click();
for (const [dtype, value] of items) {
  sel.value = dtype; box.value = value; box.dispatchEvent(new Event('input'));
  const err = document.querySelector('#dtypes-error');
  if (!err.hidden) { out.push({error: err.textContent}); continue; }
  const dd = (k) => document.querySelector(`#dtypes-output [data-key="${k}"]`).textContent;
  const conv = {};
  for (const tr of document.querySelectorAll('#dtypes-output table.conversions tr[data-dtype]')) conv[tr.dataset.dtype] = tr.querySelector('td.bits').textContent;
  out.push({bits_hex: dd('bits_hex'), exact: dd('exact'), conversions: conv});
}
return out;
"""


def bits_of(x, dt):
    a = np.array([x], dtype=dt)
    return int(a.view(UINT[a.itemsize])[0])


def same_float_bits(got_hex, want_value, dt, where):
    """Bit for bit, except NaN: the target's canonical quiet NaN with the sign (docs/MODEL.md)."""
    want = np.array([want_value], dtype=dt)
    got = np.array([int(got_hex, 16)], dtype=UINT[want.itemsize]).view(dt)
    if np.isnan(want.astype(np.float32))[0]:
        assert np.isnan(got.astype(np.float32))[0], where
        assert np.signbit(got.astype(np.float32))[0] == np.signbit(want.astype(np.float32))[0], where
    else:
        assert int(got.view(UINT[want.itemsize])[0]) == int(want.view(UINT[want.itemsize])[0]), f"{where}: {got_hex}"


def value_inputs(name, dt, rng):
    """500 bit patterns and 500 decimals whose f64 is an f32 (so ml_dtypes' cast, which goes
    through f32, rounds them once): random values over the dtype's range and the midpoints of its
    grid (ties)."""
    size = np.dtype(dt).itemsize
    pats = [rng.getrandbits(8 * size) for _ in range(500)]
    grid = np.array([rng.getrandbits(8 * size) for _ in range(400)], dtype=UINT[size]).view(dt).astype(np.float64)
    grid = np.unique(grid[np.isfinite(grid)])
    decimals = [float(np.float32((a + b) / 2)) for a, b in zip(grid[:-1], grid[1:])][:250]
    fmax = float(ml_dtypes.finfo(dt).max)
    while len(decimals) < 496:
        decimals.append(float(np.float32(rng.uniform(-1, 1) * fmax * 2.0 ** -rng.randrange(0, 24))))
    texts = [repr(d) for d in decimals] + ["inf", "-inf", "nan", "-0.0"]
    return [f"0x{p:0{2 * size}x}" for p in pats], texts


@pytest.mark.parametrize("name", ["bf16", "fp16", "fp32", "fp8e3", "fp8e4", "fp8e5"])
def test_the_dtype_view_equals_ml_dtypes(page, name):
    dt = FLOATS[name]
    rng = random.Random(sum(map(ord, name)))
    pats, texts = value_inputs(name, dt, rng)
    items = [[name, v] for v in pats + texts]
    # In batches: each script stays short on a busy machine (one of 1,000 once outran the limit).
    got = [g for i in range(0, len(items), 100) for g in page.execute_script(READ_VALUES, items[i:i + 100])]
    assert len(got) >= 1000
    for text, g in zip(pats + texts, got):
        assert "error" not in g, (name, text, g)
        if text.startswith("0x"):
            assert g["bits_hex"] == text, (name, text)
            stored = np.array([int(text, 16)], dtype=UINT[np.dtype(dt).itemsize]).view(dt)[0]
        else:
            stored = np.array([float(text)], dtype=np.float32).astype(dt)[0]
            same_float_bits(g["bits_hex"], stored, dt, f"{name} {text}")
        v = float(stored)
        if np.isnan(v):
            assert g["exact"] in ("nan", "-nan"), (name, text, g["exact"])
        elif np.isinf(v):
            assert g["exact"] == ("inf" if v > 0 else "-inf"), (name, text)
        else:
            assert Fraction(Decimal(g["exact"])) == Fraction(v), (name, text, g["exact"])
        for target, hexes in g["conversions"].items():
            if target in FLOATS:
                same_float_bits(hexes, np.array([stored], dtype=dt).astype(FLOATS[target])[0], FLOATS[target], f"{name} {text} -> {target}")
    shot(page, f"dtypes-{name}")
