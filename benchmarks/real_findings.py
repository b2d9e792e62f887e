"""What ``physid identify`` (no config, as a user runs it) says on every real recording we have:
its status and its findings (code and severity), one line per case of :mod:`real_cases`.

``--params-only`` reads a folder of params.json written by an earlier physid (``--keep`` of a
run of this script), whose warnings had no codes: it prints their number and first words, to
compare the findings before and after.

Run: python benchmarks/real_findings.py [--datasets PATH] [--only kuka_23_1,...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real_cases import corpus  # noqa: E402

DEFAULT_DATASETS = HERE.parent.parent / "shared" / "datasets"


def identify(case, out: Path) -> dict | None:  # noqa: ANN001 - real_cases.RealCase
    """params.json of ``physid identify`` on the case (its config only: the robot's description)."""
    command = [sys.executable, "-c", "from physid.cli import main; main()", "identify", "--urdf",
               str(case.urdf), "--out", str(out), "--quiet", "--overwrite"]  # fmt: skip
    for path in case.physid_train:
        command += ["--data", str(path)]
    for path in case.physid_validate:
        command += ["--validate", str(path)]
    if case.config is not None:
        command += ["--config", str(case.config)]
    subprocess.run(command, capture_output=True, text=True)
    params = out / "params.json"
    return json.loads(params.read_text()) if params.is_file() else None


def summary(document: dict | None) -> str:
    """One line: the status, then each finding of severity caution or worse as CODE(severity),
    and the number of info ones; for a params.json without findings, its warnings' count and
    their first words."""
    if document is None:
        return "failed (nothing written)"
    status = document.get("status", "?")
    if "findings" in document:
        shown = [f"{f['code']}({f['severity'][0]})" for f in document["findings"]
                 if f["severity"] != "info"]  # fmt: skip
        info = sum(f["severity"] == "info" for f in document["findings"])
        return f"{status}: {' '.join(shown) or '-'} (+{info} info)"
    warnings = list(document.get("fit", {}).get("warnings", []))
    warnings += list(document.get("provenance", {}).get("warnings_from_data", []))
    suspect = list(document.get("suspect_reasons", []))
    heads = "; ".join(" ".join(w.split()[:5]) for w in suspect + warnings)
    return f"{status}: {len(suspect)} suspect, {len(warnings)} warnings [{heads}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    parser.add_argument("--only", default="", help="comma-separated case labels")
    parser.add_argument("--keep", type=Path, default=None, help="keep each case's outputs here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        keep = args.keep or Path(tmp) / "out"
        for label, build in corpus(args.datasets, Path(tmp)):
            if args.only and label not in args.only.split(","):
                continue
            document = identify(build(), keep / label)
            print(f"{label:14s} {summary(document)}", flush=True)


if __name__ == "__main__":
    main()
