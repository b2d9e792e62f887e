"""Make docs/images/report.png: the top of the KUKA LWR4+ report and its held-out torque chart.

Runs ``physid identify`` on the shipped KUKA files 2 + 3 (held out on file 1), keeps the report's
status box, summary and the held-out recording's torque chart (the sections between them
removed), and has headless Chromium draw it (the charts are plotly.js: a browser draws them).

Run: python tools/report_screenshot.py [--chromium chromium]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[1]
KUKA = REPO / "examples" / "kuka_lwr4"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default="chromium", help="Chromium or Chrome executable")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "report.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        subprocess.run(
            [
                "physid",
                "identify",
                "--urdf",
                str(REPO / "data/kuka_lwr4/kuka_lwr4.urdf"),
                "--data",
                str(KUKA / "measurements_2.yaml"),
                "--data",
                str(KUKA / "measurements_3.yaml"),
                "--validate",
                str(KUKA / "measurements_1.yaml"),
                "--out",
                str(folder / "kuka"),
                "--quiet",
            ],
            check=False,
        )
        text = (folder / "kuka" / "report.html").read_text(encoding="utf-8")
        # the summary, then straight to the held-out recording's chart
        start = text.index("<h2>Preprocessing</h2>")
        chart = text.index('<figure id="fig-torque_validation_1">')
        page = text[:start] + text[chart:]
        trimmed = folder / "top.html"
        trimmed.write_text(page.replace("max-width:1200px", "max-width:960px"), encoding="utf-8")
        shot = folder / "shot.png"
        subprocess.run(
            [
                args.chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--virtual-time-budget=15000",
                "--window-size=1000,1000",
                f"--screenshot={shot}",
                trimmed.as_uri(),
            ],
            check=True,
            capture_output=True,
        )
        Image.open(shot).crop((0, 0, 1000, 960)).save(args.out, optimize=True)
    print(f"wrote {args.out}")
    assert re.search(r"Status: ok", page)


if __name__ == "__main__":
    main()
