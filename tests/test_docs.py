"""The README and the documentation pages stay true to the code: the README is short, names every
command that exists (and only those), the extras that pyproject.toml defines and the test command
CI runs; the ROS 2 bag recipe of docs/input-formats.md writes a bag that physid reads back as the
CSV it came from; the config shown is one physid accepts; the statuses and exit codes are those of
physid.status; every page is in the site's nav; no page points at a folder a user does not have."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import click
import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from physid.cli import main
from physid.files.config import parse_config
from physid.recordings.logs import read_log
from physid.status import STATUSES

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
# the pages this test guards; the estimator pages and the generated findings.md have their owners
OWN_PAGES = (
    "index.md",
    "getting-started.md",
    "reading-the-report.md",
    "your-robot.md",
    "input-formats.md",
    "status-and-findings.md",
    "estimators.md",
    "api-reference.md",
    "benchmarks.md",
    "architecture.md",
    "api.md",
    "export.md",
    "sweep.md",
    "identify.md",
)
MAX_README_LINES = 250


def _section(text: str, heading: str) -> str:
    """The body of the markdown section whose heading line is ``heading``, up to the next
    heading of the same or a higher level."""
    level = len(heading.split(" ")[0])
    lines = text[text.index(heading + "\n") + len(heading) + 1 :].splitlines(keepends=True)
    body, fenced = [], False
    for line in lines:
        fenced ^= line.startswith("```")
        hashes = len(line) - len(line.lstrip("#"))
        if not fenced and 0 < hashes <= level and line[hashes : hashes + 1] == " ":
            break
        body.append(line)
    return "".join(body)


def _first_cells(table_text: str) -> list[str]:
    """The first cell of every body row of the markdown tables in ``table_text``."""
    rows = [line for line in table_text.splitlines() if line.startswith("|")]
    cells = [row.split("|")[1].strip() for row in rows]
    return [cell for cell in cells if cell and not set(cell) <= {"-", ":"}][1:]


def _cli_commands() -> set[str]:
    """Every leaf command of the CLI, as typed: ``physid impacts simulate``."""
    found: set[str] = set()

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, (*path, name))
        else:
            found.add(" ".join(path))

    walk(main, ("physid",))
    return found


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"


def test_readme_keeps_the_two_commands_ci_and_users_run():
    text = README.read_text(encoding="utf-8")
    assert "python -m pip install -e . && physid demo --out demo-output\n" in text
    assert 'python -m pip install -e ".[test]" && python -m pytest -n 2\n' in text
    assert 'python -m pip install -e ".[test]" && python -m pytest -n 2' in (
        REPO / ".ci" / "run"
    ).read_text(encoding="utf-8")


def test_readme_command_table_names_every_command_and_each_one_runs():
    table = _section(README.read_text(encoding="utf-8"), "## Commands")
    named = [cell.strip("`") for cell in _first_cells(table)]
    assert named and all(cell.startswith("physid ") for cell in named)
    assert set(named) == _cli_commands()
    runner = CliRunner()
    for command in named:
        result = runner.invoke(main, [*command.split()[1:], "--help"])
        assert result.exit_code == 0, (command, result.output)
        assert "Usage:" in result.output


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_extras_tables_name_the_extras_pyproject_defines(page):
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    text = (REPO / page).read_text(encoding="utf-8")
    table = text[text.index("| extra |") :].split("\n\n")[0]
    assert sorted(cell.strip("`") for cell in _first_cells(table)) == sorted(extras)


def test_exit_codes_and_statuses_are_those_of_physid_status():
    table = _section((DOCS / "status-and-findings.md").read_text(encoding="utf-8"), "## The status")
    documented: dict[str, int] = {}
    for row in (line for line in table.splitlines() if line.startswith("| `")):
        cells = [cell.strip() for cell in row.split("|")[1:-1]]
        for name in re.findall(r"`([a-z_]+)`", cells[0]):
            documented[name] = int(cells[2])
    assert documented == {str(status): info.exit_code for status, info in STATUSES.items()}
    readme_codes = _first_cells(
        _section(README.read_text(encoding="utf-8"), "## Status, findings and exit codes")
    )
    assert {int(code) for code in readme_codes} == {0, 2} | {
        info.exit_code for info in STATUSES.values()
    }


def _bag_recipe() -> str:
    text = (DOCS / "input-formats.md").read_text(encoding="utf-8")
    recipe = _section(text, "### Recipe: write a bag with `rosbags`")
    blocks = re.findall(r"```python\n(.*?)```", recipe, flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


def _contract_csv(path: Path, with_velocity: bool) -> dict[str, np.ndarray]:
    """A small recording in the contract, as `physid demo` writes it (3 joints, 1 kHz)."""
    rng = np.random.default_rng(7)
    t = np.arange(300) * 1e-3
    columns: dict[str, np.ndarray] = {"t": t}
    joints = ("joint_1", "joint_2", "joint_3")
    for k, joint in enumerate(joints):
        columns[f"q_{joint}"] = 0.5 * np.sin((k + 1) * t) + rng.normal(0, 1e-4, t.size)
    if with_velocity:
        for k, joint in enumerate(joints):
            columns[f"dq_{joint}"] = 0.5 * (k + 1) * np.cos((k + 1) * t)
    for joint in joints:
        columns[f"tau_{joint}"] = rng.normal(0, 2.0, t.size)
    path.parent.mkdir(parents=True)
    np.savetxt(
        path,
        np.column_stack(list(columns.values())),
        delimiter=",",
        header=",".join(columns),
        comments="",
        fmt="%.10g",
    )
    return {
        name: np.loadtxt(path, delimiter=",", skiprows=1)[:, k] for k, name in enumerate(columns)
    }


@pytest.mark.parametrize("with_velocity", [False, True])
def test_the_bag_recipe_writes_a_bag_physid_reads_as_the_csv(tmp_path, monkeypatch, with_velocity):
    csv = _contract_csv(tmp_path / "demo-output" / "data" / "train.csv", with_velocity)
    monkeypatch.chdir(tmp_path)
    exec(compile(_bag_recipe(), "docs/input-formats.md", "exec"), {"__name__": "recipe"})
    for log in (tmp_path / "train_bag", next((tmp_path / "train_bag").glob("*.mcap"))):
        (table,) = read_log(log)
        read = {name: np.asarray(values) for name, values in table.columns.items()}
        assert set(read) == set(csv)
        for name, values in csv.items():
            if name == "t":  # nanosecond stamps, counted from a whole second near the start
                np.testing.assert_allclose(read["t"] - read["t"][0], values - values[0], atol=1e-9)
            else:
                np.testing.assert_array_equal(read[name], values, err_msg=name)


def test_the_config_shown_for_your_robot_is_one_physid_accepts():
    text = (DOCS / "your-robot.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    config = parse_config(yaml.safe_load(block), "docs/your-robot.md")
    assert config.friction == {"joint_2": "stribeck"}


def test_every_page_is_in_the_site_nav_and_every_nav_entry_exists():
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]

    def pages(entries: list) -> list[str]:
        found: list[str] = []
        for entry in entries:
            for value in entry.values():
                found += pages(value) if isinstance(value, list) else [value]
        return found

    listed = pages(nav)
    assert len(listed) == len(set(listed))
    assert set(listed) == {path.name for path in DOCS.glob("*.md")}


def test_readme_links_resolve():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [target for target in targets if "://" not in target]
    assert local
    for target in local:
        assert (REPO / target).exists(), target


@pytest.mark.parametrize(
    "page",
    ["README.md", "data/README.md", "data/kuka_lwr4/README.md", *(f"docs/{n}" for n in OWN_PAGES)],
)
def test_no_page_points_at_a_folder_users_do_not_have(page):
    assert "../shared" not in (REPO / page).read_text(encoding="utf-8")
