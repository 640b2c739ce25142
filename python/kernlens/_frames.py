"""Tables as pandas DataFrames, or as plain lists of dicts where pandas is not installed.

pandas is imported on the first table, not with kernlens: importing it costs half a second and
50 MB, which a script that only reads and writes JSON or HTML should not pay."""

_NOT_LOADED = object()
_pandas = _NOT_LOADED


def pandas():
    """The pandas module, or None where it is not installed."""
    global _pandas
    if _pandas is _NOT_LOADED:
        try:
            import pandas as module
        except ImportError:
            module = None
        _pandas = module
    return _pandas


def from_records(records):
    """JSON records (nested dicts) as a DataFrame with dotted columns ("metrics.sm_pct")."""
    records = list(records)
    pd = pandas()
    if pd is None:
        return records
    if not records:
        return pd.DataFrame()
    return pd.json_normalize(records, sep=".")


def from_columns(columns):
    """A table by column ({name: [values]}, as the C extension returns it)."""
    pd = pandas()
    if pd is None:
        names = list(columns)
        rows = len(columns[names[0]]) if names else 0
        return [{name: columns[name][i] for name in names} for i in range(rows)]
    return pd.DataFrame(columns)
