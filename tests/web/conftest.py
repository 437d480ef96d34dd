"""The browser tests' fixtures: one headless Chromium per test module (`driver`), the page
opened fresh for each test that asks for `page` (its console checked for errors after the
test), and the bench figures written at the end of the session."""
import json
import os

import pytest

from webutil import BENCH, HANG_S, OUT, PAGE, console_errors, open_page


@pytest.fixture(scope="session", autouse=True)
def bench_file():
    yield
    if BENCH:
        path = OUT / "bench.json"
        old = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**old, **BENCH}, indent=1) + "\n")


@pytest.fixture(scope="module")
def driver():
    webdriver = pytest.importorskip("selenium.webdriver")
    assert PAGE.exists(), f"{PAGE} is missing: run scripts/web first"
    opts = webdriver.ChromeOptions()
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000"]:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    binary = os.environ.get("CCE_CHROMIUM")
    if binary:
        opts.binary_location = binary
    service = webdriver.ChromeService(executable_path=os.environ.get("CCE_CHROMEDRIVER", "chromedriver"))
    d = webdriver.Chrome(options=opts, service=service)
    # A script or a load that runs long on a busy machine is waited for, not failed.
    d.set_script_timeout(HANG_S)
    d.set_page_load_timeout(HANG_S)
    yield d
    d.quit()


@pytest.fixture
def page(driver):
    open_page(driver)
    yield driver
    errors = console_errors(driver)
    assert not errors, f"console errors: {errors}"
