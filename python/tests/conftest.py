"""Fixtures: the `egdb` command-line tool and a directory of complete 4-piece tables.

- The tool: $EGDB_BIN, else <repo>/target/release/egdb (built by `cargo build --release`).
- The tables: $EGDB_TEST_TABLES (complete tables of at least 4 pieces), else built here into a
  temporary directory with `egdb build --pieces 4 --dtc --dtw` (some seconds).
- The distance tables (`dist_tables`): the tables above when they hold `.dtc` and `.dtw` files,
  else 4-piece tables with them built here.
A missing tool is an error, never a skip: these tests compare the module with the tool.
"""

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def egdb() -> str:
    path = os.environ.get("EGDB_BIN") or str(REPO / "target" / "release" / "egdb")
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"egdb tool not found at {path}: run `cargo build --release` at the repository root "
            "or set EGDB_BIN"
        )
    return path


@pytest.fixture(scope="session")
def tables(egdb, tmp_path_factory) -> pathlib.Path:
    given = os.environ.get("EGDB_TEST_TABLES")
    if given:
        return pathlib.Path(given)
    d = tmp_path_factory.mktemp("egdb4")
    subprocess.run(
        [egdb, "build", "--pieces", "4", "--dtc", "--dtw", "--dir", str(d), "--quiet"],
        check=True,
    )
    return d


@pytest.fixture(scope="session")
def dist_tables(egdb, tables, tmp_path_factory) -> pathlib.Path:
    if any(tables.glob("*.dtc")) and any(tables.glob("*.dtw")):
        return tables
    d = tmp_path_factory.mktemp("egdb4dist")
    subprocess.run(
        [egdb, "build", "--pieces", "4", "--dtc", "--dtw", "--dir", str(d), "--quiet"],
        check=True,
    )
    return d


def run_egdb(egdb: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """Run the tool; returns the completed process (stdout/stderr as text)."""
    return subprocess.run(
        [egdb, *args], input=stdin, capture_output=True, text=True, check=False
    )
