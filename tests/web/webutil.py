"""What every browser test of the page shares: where the page, the `cce` binary and the outputs
are, the CLI's JSON, opening the page, screenshots and the bench figures (written once, at the
end of the session, by conftest.py). Timings go to `BENCH`, never into an assert."""
import json
import os
import pathlib
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = pathlib.Path(os.environ.get("CCE_PAGE", ROOT / "target" / "web" / "cce.html"))
CCE = os.environ.get("CCE_BIN", str(ROOT / "target" / "debug" / "cce"))
OUT = PAGE.parent
BENCH = {}
# How long a script inside the page, or the page's start, may take before the test calls it a
# hang: generous, so a busy machine is never mistaken for a broken page.
HANG_S = 600


def cli(*args):
    """`cce ARGS --json` as an object, or the refusal's message (without `cce: `)."""
    p = subprocess.run([CCE, *args, "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stderr.strip().removeprefix("cce: ")}
    return json.loads(p.stdout)


def open_page(d, fragment=""):
    """Opens the page (with `fragment`, reloaded so the fragment is read at start) and waits until
    it says it is ready; returns the seconds that took."""
    start = time.perf_counter()
    d.get(PAGE.as_uri() + fragment)
    d.refresh() if fragment else None
    while not d.execute_script("return document.body.dataset.ready === 'true'"):
        if time.perf_counter() - start > HANG_S:
            raise AssertionError(f"the page was not ready after {HANG_S} s")
        time.sleep(0.01)
    return time.perf_counter() - start


def console_errors(d):
    """The browser log's errors since the last read (uncaught exceptions included)."""
    return [e for e in d.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def shot(d, name):
    (OUT / "screenshots").mkdir(parents=True, exist_ok=True)
    d.save_screenshot(str(OUT / "screenshots" / f"{name}.png"))


def wait_until(condition, what):
    """Polls `condition()` until it holds; fails only after HANG_S (a hang, not a slow machine)."""
    start = time.perf_counter()
    while not condition():
        if time.perf_counter() - start > HANG_S:
            raise AssertionError(f"{what}: not after {HANG_S} s")
        time.sleep(0.01)
