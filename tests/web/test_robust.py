"""The page never breaks (issue 53), in headless Chromium: element sizes up to the library's
limits (4096 ranks, the largest element counts the model's slots hold) and past them are drawn
or refused with a message — never a trap — and the renderer's memory comes back under 300 MB;
200 mangled permalinks (cut, bad escapes, unknown views, names and keys, every dtype) each open
the page with a message in the view they name, or the view itself, and no uncaught exception; a
trap followed by a loop of calls makes exactly one new instance of the module; "copy link" says
when a link cannot hold the view.

Memory is the renderer's resident set (VmRSS of the Chromium renderer processes under this
test's driver, read from /proc on Linux): `performance.memory` counts the script's heap only,
not the WebAssembly module's memory, which is where a large answer lived. Timings and memory
figures go to the bench file (webutil.BENCH), never into an assert.
"""
import os
import pathlib
import random
import subprocess
import time

import pytest

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

from webutil import BENCH, CCE, PAGE, console_errors, open_page, shot, wait_until  # noqa: E402

VIEWS = ["decode", "encode", "rings", "dtypes", "element"]
RSS_LIMIT_MB = 300


# ---- the renderer's memory ----------------------------------------------------------------------

def _children():
    kids = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            stat = pathlib.Path(f"/proc/{p}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(p))
    return kids


def renderer_rss_mb(driver):
    """The largest VmRSS among the renderer processes under this driver (the page's), in MB;
    None where /proc cannot tell (not Linux)."""
    if not pathlib.Path("/proc/self/status").exists():
        return None
    kids, todo, best = _children(), [driver.service.process.pid], None
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            if b"--type=renderer" not in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    best = max(best or 0, int(line.split()[1]) // 1024)
        except OSError:
            continue
    return best


# ---- element sizes ------------------------------------------------------------------------------

# Sets the element form (defaults for the rest), fires `input` and reads what the view shows.
SET_ELEMENT = """
const [p] = arguments; document.querySelector('#tabs [data-view=element]').click();
const f = document.querySelector('#element-form');
const defaults = {ranks: '4', algo: 'ring', op: 'add', dtype: 'bf16', rounding: 'rne', seed: '1', elems: '1024',
  element: '5', accum: '', rank: '', inputs: 'generated', values: '', compare: ''};
for (const [k, v] of Object.entries({...defaults, ...p})) f.elements.namedItem(k).value = v;
const t0 = performance.now();
f.dispatchEvent(new Event('input'));
const err = document.querySelector('#element-error');
return {ms: performance.now() - t0, error: err.hidden ? null : err.textContent,
        stories: document.querySelectorAll('#element-output article.story').length,
        steps: document.querySelectorAll('#element-output .step').length};
"""

R = "4096"
# (form values, what the view shows: "story" or a piece of the refusal)
SIZES = [
    ({"ranks": "2", "elems": "1", "element": "0"}, "story"),
    ({"ranks": R}, "story"),
    ({"ranks": R, "algo": "ring-2r2w", "dtype": "fp32"}, "story"),
    ({"ranks": R, "algo": "kangaring", "op": "max"}, "story"),
    ({"ranks": R, "algo": "rdh", "rounding": "sr", "op": "avg"}, "story"),
    ({"ranks": R, "algo": "hier", "elems": "4096", "element": "4095"}, "story"),
    ({"ranks": R, "compare": "rdh", "element": "1023"}, "story"),
    ({"ranks": R, "elems": str(2 ** 36), "element": str(2 ** 36 - 1), "dtype": "fp32", "rank": "4095"}, "story"),
    ({"ranks": R, "elems": str(2 ** 39), "element": str(2 ** 38), "dtype": "bf16"}, "story"),
    ({"ranks": "256", "algo": "auto", "elems": "65536"}, "story"),
    ({"ranks": R, "inputs": "typed", "values": ",".join(["1.5", "-0.25", "3", "0x3f80"] * 1024), "elems": "64", "element": "7"}, "story"),
    # Past the limits: the library's refusals and the page's budget.
    ({"ranks": "4097"}, "4097 ranks: between 2 and 4096"),
    ({"ranks": "1"}, "1 ranks: between 2 and 4096"),
    ({"ranks": R, "elems": str(2 ** 40), "dtype": "fp32"}, "do not fit the model's buffer slots"),
    ({"ranks": R, "elems": str(2 ** 64)}, "`elems`"),
    ({"ranks": R, "elems": "1024", "element": "1024"}, "past the run's 1024 elements"),
    ({"ranks": R, "rank": "4096"}, "`rank` 4096"),
    ({"ranks": R, "algo": "mesh"}, "at most 32"),
    ({"ranks": R, "algo": "auto"}, "over its budget of 268435456 bytes (256.0 MiB): name an algorithm"),
    ({"ranks": "1024", "algo": "auto", "elems": "1"}, "over its budget"),
    ({"ranks": "2", "inputs": "typed", "values": "1,2", "elems": str(10 ** 9)}, "generated values take any size"),
]


def test_element_sizes_up_to_the_limits_and_past_them(page):
    rss = {"start": renderer_rss_mb(page)}
    times = {}
    for params, want in SIZES:
        got = page.execute_script(SET_ELEMENT, params)
        where = {k: (v if len(v) < 40 else v[:40] + "…") for k, v in params.items()}
        assert "internal error" not in (got["error"] or ""), (where, got)
        if want == "story":
            assert got["error"] is None and got["stories"] >= 1 and got["steps"] >= 1, (where, got)
        else:
            assert got["error"] and want in got["error"], (where, got, want)
        times[" ".join(f"{k}={v}" for k, v in where.items())] = round(got["ms"], 1)
        peak = renderer_rss_mb(page)
        rss["peak"] = max(rss.get("peak") or 0, peak or 0)
    shot(page, "element-4096")
    # window.cce.element: the CLI's object (every order whole) as far as the budget holds it.
    ring = {"algo": "ring", "op": "add", "dtype": "bf16", "elems": 1024, "element": 7}
    whole = page.execute_script("return window.cce.element(arguments[0])", {**ring, "ranks": 1024})
    orders = [o["expr"] for s in whole["element"]["steps"] for o in s["operands"]]
    assert len(whole["element"]["steps"]) > 2000 and max(o.count("+") for o in orders) == 1023
    for ranks in (2048, 4096):
        e = page.execute_script("return window.cce.element(arguments[0]).error", {**ring, "ranks": ranks})
        assert e.startswith(f"{ranks} ranks x 1024 bf16 elements: the story's answer (") and "ask for `orders` short" in e, e
    short = page.execute_script("return window.cce.element(arguments[0]).element.steps.length", {**ring, "ranks": 4096, "orders": "short"})
    assert short > 8000
    # Back under the limit once the view is cleared: the module's grown instances are dropped
    # (00-bridge.js) and the browser frees them; waited for, not timed.
    page.execute_script("document.querySelector('#element-form').elements.ranks.value = '4';"
                        "document.querySelector('#element-form').dispatchEvent(new Event('input'));")
    start = time.perf_counter()
    if rss["start"] is not None:
        wait_until(lambda: renderer_rss_mb(page) < RSS_LIMIT_MB, f"the renderer back under {RSS_LIMIT_MB} MB")
    rss["after"] = renderer_rss_mb(page)
    BENCH["robust_element_ms"] = times
    BENCH["robust_renderer_rss_mb"] = {**rss, "seconds_to_come_back": round(time.perf_counter() - start, 1)}
    BENCH["robust_module_instances"] = page.execute_script("return window.cce.instances()")


# ---- a trap -------------------------------------------------------------------------------------

def test_a_trap_makes_one_fresh_instance_and_one_error(page):
    got = page.execute_script("""
      const before = cce.instances();
      const t0 = performance.now();
      const trapped = cce.trap();
      const ms = performance.now() - t0;
      const answers = [];
      for (let i = 0; i < 300; i++) {
        answers.push(i % 3 === 0 ? cce.decode('fma-meta-ctrl', '0x021aa601') : i % 3 === 1 ? cce.convert('bf16', '1.3')
          : cce.element({ranks: 8, algo: 'ring', op: 'add', dtype: 'bf16', elems: 64, element: 3}));
      }
      const once = cce.instances();
      const traps = [];
      for (let i = 0; i < 5; i++) traps.push(cce.trap().error);
      return {before, once, after: cce.instances(), ms, trapped, refused: answers.filter((a) => a.error).map((a) => a.error),
              traps, decode: cce.decode('fma-meta-ctrl', '0x021aa601').error || null};
    """)
    assert got["trapped"]["error"].startswith("internal error in cce (please report it): ")
    assert "cce_trap: a trap on purpose" in got["trapped"]["error"]
    assert got["refused"] == []
    assert got["once"] == got["before"] + 1, got
    # Each trap its one instance, its one error; the page answers after them.
    assert got["after"] == got["once"] + 5 and all(t.startswith("internal error in cce") for t in got["traps"])
    assert got["decode"] is None
    assert console_errors(page) == []
    # The views work on the fresh instance.
    assert page.execute_script(SET_ELEMENT, {"ranks": "8"})["stories"] == 1
    BENCH["robust_trap_recovery_ms"] = round(got["ms"], 2)


# ---- mangled permalinks -------------------------------------------------------------------------

def small_dump_hex(tmp):
    dump = tmp / "ring.bin"
    subprocess.run([CCE, "build", "--op", "add", "--in", "bf16", "--accum", "fp32", "--out-dtype", "bf16", "--elems", "64",
                    "--src", "0x1000", "--src", "0x2000", "--dst", "0x9000", "-o", str(dump)], check=True, capture_output=True)
    return dump.read_bytes().hex()


def cut_inside(link, token, rng, n):
    """`n` cuts of `link` strictly inside `token` (its first occurrence after the view)."""
    at = link.index(token, link.index("/") if "/" in link else 1)
    return [link[:at + k] for k in rng.sample(range(1, len(token)), min(n, len(token) - 1))]


def mangled_links(dump_hex, value_dtypes, element_dtypes):
    """(link, the view it opens, whether it must say something): 200 or more."""
    rng = random.Random(53)
    bases = {
        "#decode/fma-descriptor/0000800001001002000000090000003f": ["fma-descriptor", "0000800001001002000000090000003f"],
        "#decode/fma-meta-ctrl/0x021aa601": ["fma-meta-ctrl"],
        "#encode/fma-descriptor/a-sel=input&scale=0.5": ["fma-descriptor", "a-sel", "input", "scale"],
        f"#rings/{dump_hex}": [dump_hex],
        "#dtypes/bf16/1.3/saturate": ["bf16", "saturate"],
        "#element/ranks=4&algo=ring&op=add&dtype=bf16&rounding=rne&seed=1&elems=1024&element=5":
            ["ranks", "algo", "ring", "add", "dtype", "bf16", "rounding", "rne", "seed", "elems"],
    }
    out = []

    def add(link, says=True):
        head = link[1:].split("/")[0]
        out.append((link, head if head in VIEWS else "decode", says))

    for base, tokens in bases.items():
        # Bad escapes anywhere after the '#', and a '%' at the end.
        for _ in range(10):
            at = rng.randrange(1, len(base) + 1)
            add(base[:at] + rng.choice(["%zz", "%G1", "%e2%82", "%x"]) + base[at:])
        add(base + "%")
        # Cut inside a name, a key, a menu's value or a descriptor's hex.
        for t in tokens:
            for cut in cut_inside(base, t, rng, 2):
                add(cut)
    for word in ["nope", "Decode", "decodes", "ring", "dtype", "elements", "%64ecodez", "", "x" * 300, "rings2"]:
        add(f"#{word}/whatever")
        # An empty fragment is no link: the page opens as it does without one.
        add(f"#{word}", says=word != "")
    for junk in ["fma-descriptorr", "FMA-DESCRIPTOR", "meta", "%2e%2e", "x" * 200]:
        add(f"#decode/{junk}/0x021aa601")
        add(f"#encode/{junk}/scale=1")
        add(f"#dtypes/{junk}/1")
        add(f"#element/algo={junk}")
        add(f"#element/{junk}=1")
        add(f"#encode/fma-descriptor/{junk}=1")
    # Every dtype the library takes: its links open with the value, or the story, and no note.
    for d in value_dtypes:
        add(f"#dtypes/{d}/1", says=False)
        add(f"#dtypes/{d}/0x01/saturate", says=False)
    for d in element_dtypes:
        add(f"#element/ranks=4&dtype={d}&elems=64&element=3", says=False)
    return out


# What a link opened: the view shown, its messages (the link's notes and the view's own), and
# whether the view drew its result.
READ_VIEW = """
const views = arguments[0];
const shown = views.filter((v) => !document.querySelector('#view-' + v).hidden);
const v = shown[0];
const messages = Array.from(document.querySelectorAll(`#view-${v} .error:not([hidden])`)).map((e) => e.textContent).filter((t) => t);
const drawn = document.querySelector(`#${v}-output`).children.length > 0;
return {shown, messages, drawn, ready: document.body.dataset.ready === 'true'};
"""


def open_link(d, fragment):
    """Loads the page anew at `fragment` (not a hash change: the start itself reads the link)."""
    d.get("about:blank")
    start = time.perf_counter()
    d.get(PAGE.as_uri() + fragment)
    wait_until(lambda: d.execute_script("return document.body.dataset.ready === 'true'"), f"the page ready at {fragment[:80]}")
    return time.perf_counter() - start


def test_mangled_permalinks_open_with_a_message_in_their_view(driver, tmp_path):
    open_page(driver)
    names = driver.execute_script("return window.cce.names()")
    value_dtypes = [d["name"] for d in names["value_dtypes"]]
    element_dtypes = [d["name"] for d in names["dtypes"] if d["bytes"] > 0]
    assert "fp8e4fn" in value_dtypes
    links = mangled_links(small_dump_hex(tmp_path), value_dtypes, element_dtypes)
    assert len(links) >= 200, len(links)
    console_errors(driver)
    times = []
    for link, view, says in links:
        times.append(open_link(driver, link))
        where = link if len(link) < 100 else link[:100] + "…"
        if says:
            # The decoder draws in slices: its message may come a turn later.
            wait_until(lambda: driver.execute_script(READ_VIEW, VIEWS)["messages"], f"a message at {where}")
        got = driver.execute_script(READ_VIEW, VIEWS)
        assert got["shown"] == [view], (where, got)
        if says:
            assert all("internal error" not in m for m in got["messages"]), (where, got)
        else:
            assert got["messages"] == [] and got["drawn"], (where, got)
        errors = console_errors(driver)
        assert not errors, (where, errors)
    times.sort()
    BENCH["robust_permalinks"] = {"links": len(links), "open_median_s": round(times[len(times) // 2], 3),
                                  "open_max_s": round(times[-1], 3)}


def test_a_hash_change_to_a_mangled_link_says_so_in_place(page):
    """The same reading when the page is open and only the fragment changes."""
    for link, view in [("#decode/fma-descriptor/%zz", "decode"), ("#nope", "decode"), ("#element/algo=zz", "element"),
                       ("#dtypes/bf16/%e2%82", "dtypes"), ("#encode/zz", "encode")]:
        page.execute_script("location.hash = arguments[0]", link)
        wait_until(lambda: page.execute_script(READ_VIEW, VIEWS)["messages"], f"a message at {link}")
        assert page.execute_script(READ_VIEW, VIEWS)["shown"] == [view]
    assert console_errors(page) == []


def test_a_word_link_keeps_its_word(page):
    """A word stays a word in the link (not its little-endian bytes), typed or opened."""
    open_link(page, "#decode/meta-ctrl/0x020a6080")
    assert page.find_element(By.ID, "decode-input").get_attribute("value") == "0x020a6080"
    wait_until(lambda: page.execute_script("return location.hash") == "#decode/meta-ctrl/0x020a6080", "the word's link")
    page.execute_script("""const b = document.querySelector('#decode-input'); b.value = '0x021aa601\\n0x00800000 0x02100000';
      document.querySelector('#decode-encoder').value = 'fma-meta-ctrl'; b.dispatchEvent(new Event('input'));""")
    wait_until(lambda: page.execute_script("return location.hash") == "#decode/fma-meta-ctrl/0x021aa601,0x00800000%200x02100000",
               "the typed words in the link")


def test_copy_link_says_when_the_link_cannot_hold_the_dump(page, tmp_path):
    big = tmp_path / "big.bin"
    subprocess.run([CCE, "build", "--op", "add", "--in", "bf16", "--accum", "fp32", "--out-dtype", "bf16", "--elems", "1000000",
                    "--src", "0x1000", "--src", "0x2000", "--dst", "0x90000000", "-o", str(big)], check=True, capture_output=True)
    assert big.stat().st_size > 4096
    page.find_element(By.CSS_SELECTOR, "#tabs [data-view=rings]").click()
    page.find_element(By.ID, "rings-file").send_keys(str(big))
    wait_until(lambda: page.execute_script("return document.querySelector('#rings-output').children.length > 0"), "the dump drawn")
    page.find_element(By.ID, "copy-link").click()
    wait_until(lambda: page.find_element(By.ID, "copy-state").text, "the copy's state")
    state = page.find_element(By.ID, "copy-state").text
    assert state.startswith("not copied: a link cannot hold this ring dump") and f"{big.stat().st_size:,} bytes" in state, state
    # A dump a link holds is copied (or, without a clipboard, its link shown).
    page.execute_script("const b = document.querySelector('#rings-input'); b.value = arguments[0]; b.dispatchEvent(new Event('input'));",
                        small_dump_hex(tmp_path))
    page.find_element(By.ID, "copy-link").click()
    wait_until(lambda: "not copied" not in page.find_element(By.ID, "copy-state").text, "the small dump's link")
    assert "#rings/" in page.execute_script("return location.hash")
    # A dump the view refuses is still the link's (it reopens the same refusal).
    copy_state(page, "rings", "0a0")
    assert page.execute_script("return location.hash") == "#rings/0a0"
    # The decoder's box: too many items for a link is said, not copied.
    descriptor = "0000800001001002000000090000003f"
    state = copy_state(page, "decode", "\n".join([descriptor] * 2100))
    assert state.startswith("not copied: a link cannot hold these 69,299 characters of hex"), state


def copy_state(page, view, text):
    """What "copy link" says after `text` is typed into `view`'s box."""
    page.find_element(By.CSS_SELECTOR, f"#tabs [data-view={view}]").click()
    page.execute_script("document.querySelector('#copy-state').textContent = '';"
                        "const b = document.querySelector(arguments[0]); b.value = arguments[1]; b.dispatchEvent(new Event('input'));",
                        f"#{view}-input", text)
    page.find_element(By.ID, "copy-link").click()
    wait_until(lambda: page.find_element(By.ID, "copy-state").text, "the copy's state")
    return page.find_element(By.ID, "copy-state").text
