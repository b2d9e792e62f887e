"""Issue 25 item 4 leftover: the API faces refuse the out-of-range numbers the CLI refuses at
parse time, with the same one-line error (one table of bounds, physid.impacts.limits, checked by
physid.errors.in_range for both)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import physid
from physid.cli import main
from physid.errors import InputError

THROW = dict(q0=[0.0, 0.1, -0.785], v0=[3.0, -5.0, 0.0], restitution=0.2, duration=0.3, fps=240,
             noise=1e-3)  # fmt: skip


def test_impacts_simulate_refuses_a_negative_mu_like_the_cli(tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(InputError) as api:
        physid.impacts_simulate("ellipse:0.05,0.025", "line:0,0", mu=-0.5, **THROW)
    assert str(api.value) == "mu: -0.5 is not a number in [0, 10]"
    cli = CliRunner().invoke(main, ["impacts", "simulate", "--shape", "ellipse:0.05,0.025",
                                    "--surface", "line:0,0", "--q0", "0,0.1,-0.785",
                                    "--v0", "3,-5,0", "--mu", "-0.5", "--restitution", "0.2",
                                    "--duration", "0.3", "--fps", "240", "--noise", "1e-3",
                                    "--out", str(tmp_path / "t.csv")])  # fmt: skip
    assert cli.exit_code != 0
    assert "--mu: -0.5 is not a number in [0, 10]" in cli.output


def test_impacts_snapshots_refuses_a_zero_noise_velocity(tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(InputError) as api:
        physid.impacts_snapshots(tmp_path / "missing.csv", noise_velocity=0.0)
    assert str(api.value) == "noise_velocity: 0.0 is not a number in [1e-09, 100]"
    with pytest.raises(InputError, match=r"^mu_max: nan is not a number in \(0, 10\]$"):
        physid.impacts_snapshots(tmp_path / "missing.csv", mu_max=float("nan"))
