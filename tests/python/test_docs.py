"""docs/python.md's worked example, run block by block, in order: ```sh blocks with bash (the
built kernlens first on PATH), ```python blocks in one namespace, in a scratch directory that
sees the repository's examples/."""
import os
import re
import subprocess

from conftest import CLI, SOURCE_DIR

BLOCK = re.compile(r"^```(python|sh)\n(.*?)^```", re.M | re.S)


def test_python_md_runs(tmp_path, monkeypatch, capsys):
    text = open(os.path.join(SOURCE_DIR, "docs", "python.md")).read()
    blocks = BLOCK.findall(text)
    assert sum(1 for kind, _ in blocks if kind == "python") >= 5
    os.symlink(os.path.join(SOURCE_DIR, "examples"), tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(CLI)) + os.pathsep + os.environ["PATH"])
    namespace = {}
    for kind, code in blocks:
        if kind == "sh":
            subprocess.run(["bash", "-euo", "pipefail", "-c", code], check=True, env=env)
        else:
            exec(compile(code, "docs/python.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "top kernel" in out and "not a profile: examples/data/README.md" in out
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "roofline.png").stat().st_size > 10000
