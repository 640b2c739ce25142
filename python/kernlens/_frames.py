"""Tables as pandas DataFrames, or as plain lists of dicts where pandas is not installed."""

try:
    import pandas
except ImportError:  # pandas is optional: the same rows, as lists of dicts
    pandas = None


def from_records(records):
    """JSON records (nested dicts) as a DataFrame with dotted columns ("metrics.sm_pct")."""
    records = list(records)
    if pandas is None:
        return records
    if not records:
        return pandas.DataFrame()
    return pandas.json_normalize(records, sep=".")


def from_columns(columns):
    """A table by column ({name: [values]}, as the C extension returns it)."""
    if pandas is None:
        names = list(columns)
        rows = len(columns[names[0]]) if names else 0
        return [{name: columns[name][i] for name in names} for i in range(rows)]
    return pandas.DataFrame(columns)
