"""`python -m cce.examples.drift`: the one command makes the table and the plot; the same
seed gives the same numbers (stochastic rounding's seeds are the steps); the bf16 runs move away
from the fp32 run and the three runs start from one point."""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET


def run(tmp_path, *args):
    p = subprocess.run([sys.executable, "-m", "cce.examples.drift", "--steps", "30", "--every", "10",
                        "--out", str(tmp_path / "d.svg"), *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_table_plot_and_replay(tmp_path):
    text = run(tmp_path)
    assert "| step | loss fp32 | loss bf16 RNE | loss bf16 SR | dist bf16 RNE | dist bf16 SR |" in text
    assert [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ") and
            line[2].isdigit()] == ["0", "10", "20", "30"]
    svg = ET.parse(tmp_path / "d.svg").getroot()
    assert len(svg.findall("{http://www.w3.org/2000/svg}polyline")) == 5  # 3 loss curves, 2 distances
    a = json.loads(run(tmp_path, "--json"))
    b = json.loads(run(tmp_path, "--json"))
    assert a == b
    rows = a["rows"]
    assert rows[0]["distance bf16 RNE"] == rows[0]["distance bf16 SR"] == 0.0
    assert rows[0]["loss fp32"] == rows[0]["loss bf16 RNE"] == rows[0]["loss bf16 SR"]
    assert 0 < rows[-1]["distance bf16 RNE"] < 0.05 and 0 < rows[-1]["distance bf16 SR"] < 0.05
    assert rows[-1]["loss fp32"] < rows[0]["loss fp32"]
    assert a["data"].startswith("scikit-learn digits") and a["ranks"] == 8


def test_bad_arguments_exit_2(tmp_path):
    p = subprocess.run([sys.executable, "-m", "cce.examples.drift", "--ranks", "1", "--out", str(tmp_path / "x.svg")],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "--ranks must be at least 2" in p.stderr
