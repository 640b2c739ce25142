"""kernlens from Python: GPU kernel profiles of LLM workloads as DataFrames.

    import kernlens
    run = kernlens.load("examples/data/runs/llama_prefill")   # a run directory, or export files
    run.kernels.head()          # one row per kernel, as `kernlens analyze --format json` lists them
    run.families, run.stages    # kernel families, NVTX stages
    run.launches                # one row per launch record as read
    db = kernlens.Database("runs.db")
    db.query("SELECT model, count(*) FROM runs GROUP BY model")
    kernlens.compare("runs/before", "runs/after")["verdict"]

Tables are pandas DataFrames (lists of dicts without pandas). Bad input raises kernlens.Error,
whose .file and .line say where. Reading runs with the GIL released.
"""

import html as _html
import json as _json

from . import _frames
from ._kernlens import Error, __version__
from . import _kernlens

__all__ = ["load", "Analysis", "Database", "compare", "Error", "__version__"]


def _rule_files(rules):
    return [rules] if isinstance(rules, str) else [str(r) for r in rules]


class Analysis:
    """One loaded and analyzed set of inputs (what `kernlens analyze` prints)."""

    def __init__(self, native):
        self._native = native
        self._document = None

    @property
    def document(self):
        """The whole analysis as `kernlens analyze --format json` writes it, as a dict."""
        if self._document is None:
            self._document = _json.loads(self._native.json(0))
        return self._document

    @property
    def kernels(self):
        return _frames.from_records(self.document["kernels"])

    @property
    def families(self):
        return _frames.from_records(self.document["families"])

    @property
    def stages(self):
        return _frames.from_records(self.document["stages"])

    @property
    def launches(self):
        return _frames.from_columns(self._native.launches())

    @property
    def totals(self):
        return dict(self.document["totals"])

    @property
    def warnings(self):
        """Problems that did not stop the read, "FILE:LINE: what"."""
        return self._native.warnings()

    def summary(self):
        """Where the time goes, the worst stage, the top kernel and why, the MFU."""
        return self._native.summary()

    def to_json(self, top=0):
        """`kernlens analyze --format json` (schema kernlens.analysis/1); top=0: every kernel."""
        return self._native.json(top)

    def report_html(self, top=25):
        """`kernlens report`: one self-contained HTML page."""
        return self._native.html(top)

    def _repr_html_(self):
        totals = self.totals
        head = "kernlens: {} launches of {} kernels, {:.3f} ms of kernel time".format(
            totals.get("launches"), totals.get("unique_kernels"), totals.get("kernel_time_ns", 0) / 1e6)
        return "<div><b>{}</b><pre>{}</pre></div>".format(_html.escape(head), _html.escape(self.summary()))

    def __repr__(self):
        return "<kernlens.Analysis: {} kernels>".format(len(self.document["kernels"]))


def load(*paths, rules=(), model_config=None, batch=None, prompt_tokens=None, decode_steps=None, runs=None):
    """Reads a run directory of `kernlens profile`, or export files (ncu CSV, nsys SQLite,
    PyTorch trace, .kltrace), and analyzes them as `kernlens analyze` does. The options are
    analyze's: rules (--rules: kernel rule files read before the built-in ones), and the
    analytic work, model_config (a Hugging Face config.json), batch, prompt_tokens,
    decode_steps, runs."""
    if not paths:
        raise TypeError("kernlens.load needs at least one path")
    options = _kernlens.LoadOptions()
    options.rule_files = _rule_files(rules)
    if model_config is not None:
        options.model_config = str(model_config)
    options.batch, options.prompt_tokens, options.decode_steps, options.runs = batch, prompt_tokens, decode_steps, runs
    return Analysis(_kernlens.load([str(p) for p in paths], options))


class Database:
    """A run database (`kernlens db ingest`, `sweep ingest`), read-only."""

    def __init__(self, path):
        self.path = str(path)
        self._native = _kernlens.open_database(self.path)

    def query(self, sql):
        """One read-only SQL statement; its rows as a DataFrame."""
        return _frames.from_columns(self._native.query(sql))

    def view(self, name):
        """A built-in view, by short name ("popularity") or full name."""
        return _frames.from_columns(self._native.view(name))

    @staticmethod
    def views():
        return _kernlens.Database.views()


def compare(base, candidate, rules=()):
    """`kernlens compare BASE CANDIDATE --format json` as a dict (schema kernlens.compare/1)."""
    return _json.loads(_kernlens.compare_json(str(base), str(candidate), _rule_files(rules)))
