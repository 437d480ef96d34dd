"""Assembles the page (scripts/web): web/cce.html with web/style.css, the script (web/js/*.js
joined in name order, a blank line between: one script, one scope, each file one part of the
page) and the WebAssembly module (base64) put in place of their markers. The page is written only when every
marker was found once, so a half-built page is never left behind."""
import base64
import pathlib
import sys


def main(web_dir, wasm_path, version, out_path):
    web = pathlib.Path(web_dir)
    page = (web / "cce.html").read_text()
    parts = sorted((web / "js").glob("*.js"))
    if not parts:
        sys.exit("scripts/web: no web/js/*.js")
    script = "\n".join(p.read_text() for p in parts)
    wasm = base64.b64encode(pathlib.Path(wasm_path).read_bytes()).decode("ascii")
    for marker, text in [("@WASM_BASE64@", wasm), ("@VERSION@", version)]:
        if script.count(marker) != 1:
            sys.exit(f"scripts/web: web/js/*.js must hold {marker} once")
        script = script.replace(marker, text)
    for marker, text in [("/*@STYLE@*/", (web / "style.css").read_text()), ("/*@SCRIPT@*/", script)]:
        if page.count(marker) != 1:
            sys.exit(f"scripts/web: web/cce.html must hold {marker} once")
        page = page.replace(marker, text)
    out = pathlib.Path(out_path)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(page)
    tmp.replace(out)
    print(f"{out} ({out.stat().st_size} bytes; the module {pathlib.Path(wasm_path).stat().st_size} bytes)")


if __name__ == "__main__":
    main(*sys.argv[1:])
