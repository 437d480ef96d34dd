"""A small line-chart writer for the examples' plots: panels of polylines, linear or log-10 y,
as one standalone SVG file. No plotting library needed."""
import math
from xml.sax.saxutils import escape

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")


def _ticks(lo, hi, log):
    if log:
        return [10.0 ** e for e in range(math.floor(lo), math.ceil(hi) + 1)]
    span = hi - lo or 1.0
    step = 10 ** math.floor(math.log10(span / 4))
    step *= next(m for m in (1, 2, 5, 10) if span / (step * m) <= 6)
    start = math.ceil(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step) + 1)]


def _label(v):
    return f"{v:.0e}" if v != 0 and (abs(v) < 1e-2 or abs(v) >= 1e4) else f"{v:g}"


def panel(title, xs, series, *, ylabel, log=False):
    """One panel: ``series`` is a list of (name, ys); ``log`` plots log10(y) (non-positive y
    are left out)."""
    return {"title": title, "xs": list(xs), "series": series, "ylabel": ylabel, "log": log}


def write(path, title, panels, *, xlabel, width=900, height=360):
    """Writes the panels side by side, with a legend, to ``path``."""
    pw = width // len(panels)
    names = list(dict.fromkeys(name for p in panels for name, _ in p["series"]))
    colour = {name: COLOURS[k % len(COLOURS)] for k, name in enumerate(names)}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="14">{escape(title)}</text>']
    for i, p in enumerate(panels):
        x0, y0, w, h = i * pw + 60, 50, pw - 80, height - 110
        f = (lambda v: math.log10(v)) if p["log"] else (lambda v: v)
        pts = [(x, f(y)) for _, ys in p["series"] for x, y in zip(p["xs"], ys) if not p["log"] or y > 0]
        xlo, xhi = min(x for x, _ in pts), max(x for x, _ in pts)
        ylo, yhi = min(y for _, y in pts), max(y for _, y in pts)
        if yhi == ylo:
            yhi = ylo + 1
        pad = (yhi - ylo) * 0.05
        ylo, yhi = ylo - pad, yhi + pad
        sx = lambda x: x0 + (x - xlo) / ((xhi - xlo) or 1) * w  # noqa: E731
        sy = lambda y: y0 + h - (y - ylo) / (yhi - ylo) * h  # noqa: E731
        out.append(f'<text x="{x0 + w / 2}" y="{y0 - 10}" text-anchor="middle">{escape(p["title"])}</text>')
        out.append(f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#888"/>')
        for t in _ticks(ylo, yhi, p["log"]):
            v = math.log10(t) if p["log"] else t
            if ylo <= v <= yhi:
                out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{sy(v):.1f}" y2="{sy(v):.1f}" stroke="#eee"/>')
                out.append(f'<text x="{x0 - 4}" y="{sy(v) + 4:.1f}" text-anchor="end">{_label(t)}</text>')
        for t in _ticks(xlo, xhi, False):
            out.append(f'<text x="{sx(t):.1f}" y="{y0 + h + 16}" text-anchor="middle">{_label(t)}</text>')
        out.append(f'<text x="{x0 + w / 2}" y="{y0 + h + 34}" text-anchor="middle">{escape(xlabel)}</text>')
        out.append(f'<text transform="translate({x0 - 46},{y0 + h / 2}) rotate(-90)" text-anchor="middle">'
                   f'{escape(p["ylabel"])}</text>')
        for name, ys in p["series"]:
            line = " ".join(f"{sx(x):.1f},{sy(f(y)):.1f}" for x, y in zip(p["xs"], ys) if not p["log"] or y > 0)
            if line:
                out.append(f'<polyline points="{line}" fill="none" stroke="{colour[name]}" '
                           f'stroke-width="1.5"/>')
    for k, name in enumerate(names):
        x = 60 + k * 220
        out.append(f'<line x1="{x}" x2="{x + 24}" y1="{height - 18}" y2="{height - 18}" '
                   f'stroke="{colour[name]}" stroke-width="2"/>')
        out.append(f'<text x="{x + 30}" y="{height - 14}">{escape(name)}</text>')
    out.append("</svg>")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")
