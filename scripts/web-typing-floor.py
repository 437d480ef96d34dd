#!/usr/bin/env python3
"""How long a keystroke takes in the decoder's box holding a whole ring, against the browser's own
floor: the same 1 MiB of hex typed into (a) a bare page with only a textarea, (b) the page with the
ring's list drawn, (c) the page with the list drawn and then taken out of the document (the box's
handler still runs). Each in a fresh headless Chromium; 33 keys (Enter, then a descriptor) at 8 a
second, each key's latency from the page's Event Timing entries (reported from 16 ms up, in steps
of 8 ms; an unreported key counts 16 ms). Prints the median, p90 and max of each, ROUNDS times.

    scripts/web && CCE_CHROMEDRIVER=/usr/bin/chromedriver python3 scripts/web-typing-floor.py

A benchmark, not a test: it asserts nothing (docs/web.md, Measured, quotes its figures)."""
import os
import random
import statistics
import sys
import time
from pathlib import Path

from selenium import webdriver

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "target" / "web" / "cce.html"
ROUNDS = int(os.environ.get("ROUNDS", "3"))
RING = 31_700
OBSERVE = """
window.__keys = {};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.interactionId)
    window.__keys[e.interactionId] = Math.max(window.__keys[e.interactionId] || 0, e.duration);
}).observe({type: 'event', durationThreshold: 16, buffered: true});
"""
BARE = "data:text/html,<textarea id=decode-input rows=3 spellcheck=false style='width:100%'></textarea>"
FILL = """
const [text, inPage] = arguments, box = document.getElementById('decode-input');
if (inPage) {
  document.querySelector('#tabs [data-view=decode]').click();
  document.querySelector('#decode-encoder').value = 'fma-descriptor';
}
box.value = text; box.dispatchEvent(new Event('input'));
box.focus(); box.setSelectionRange(box.value.length, box.value.length);
"""


def browser():
    opts = webdriver.ChromeOptions()
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000"]:
        opts.add_argument(a)
    service = webdriver.ChromeService(executable_path=os.environ.get("CCE_CHROMEDRIVER", "chromedriver"))
    return webdriver.Chrome(options=opts, service=service)


def keystrokes(d, rng):
    typed = "\n" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
    for ch in typed:
        key = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"} if ch == "\n" else {"key": ch, "text": ch}
        d.execute_cdp_cmd("Input.dispatchKeyEvent", {"type": "keyDown", **key})
        d.execute_cdp_cmd("Input.dispatchKeyEvent", {"type": "keyUp", **{k: v for k, v in key.items() if k != "text"}})
        time.sleep(0.125)
    d.execute_async_script("const done = arguments[0]; requestAnimationFrame(() => setTimeout(done, 50));")
    got = d.execute_script("return Object.values(window.__keys)")
    return sorted(got + [16] * max(0, len(typed) - len(got)))


def one(case, text, rng):
    d = browser()
    try:
        d.get(BARE if case == "bare textarea" else PAGE.as_uri())
        if case != "bare textarea":
            while d.execute_script("return document.body.dataset.ready") != "true":
                time.sleep(0.05)
        d.execute_script(OBSERVE)
        d.execute_script(FILL, text, case != "bare textarea")
        if case != "bare textarea":
            state = "return document.querySelector('#decode-output .decode-status').dataset.state"
            while d.execute_script(state) != "done":
                time.sleep(0.2)
        if case == "page, list out of the document":
            d.execute_script("document.querySelector('#decode-output').replaceChildren()")
        time.sleep(1)
        lat = keystrokes(d, rng)
        return statistics.median(lat), lat[int(0.9 * (len(lat) - 1))], lat[-1]
    finally:
        d.quit()


def main():
    if not PAGE.exists():
        sys.exit(f"{PAGE} is missing: run scripts/web first")
    rng = random.Random(53)
    text = "\n".join(rng.getrandbits(128).to_bytes(16, "little").hex() for _ in range(RING))
    for r in range(ROUNDS):
        for case in ["bare textarea", "page, ring drawn", "page, list out of the document"]:
            med, p90, top = one(case, text, rng)
            print(f"round {r + 1}  {case:32}  median {med:4.0f} ms  p90 {p90:4.0f} ms  max {top:4.0f} ms", flush=True)


if __name__ == "__main__":
    main()
