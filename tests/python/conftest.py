"""The CLI and the source tree the tests compare the module against (set by CTest)."""
import json
import os
import subprocess

import pytest

SOURCE_DIR = os.path.abspath(os.environ.get("KERNLENS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
CLI = os.path.abspath(os.environ.get("KERNLENS_CLI", os.path.join(SOURCE_DIR, "build", "kernlens")))


def source_path(relative):
    return os.path.join(SOURCE_DIR, relative)


def cli(*args, check=True):
    """Runs kernlens ARGS; its stdout."""
    done = subprocess.run([CLI, *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError("kernlens {} exited {}: {}".format(" ".join(args), done.returncode, done.stderr))
    return done.stdout


def cli_json(*args):
    return json.loads(cli(*args))


@pytest.fixture(scope="session")
def run_db(tmp_path_factory):
    """A database of three bundled runs, ingested by the CLI."""
    path = str(tmp_path_factory.mktemp("db") / "runs.db")
    runs = ["llama_prefill", "llama_prefill_b4", "qwen_prefill"]
    cli("db", "ingest", "--db", path, *[source_path("examples/data/runs/" + r) for r in runs])
    return path
