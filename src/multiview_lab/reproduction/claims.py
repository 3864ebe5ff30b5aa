"""Declarative claims of a paper, checked against the results of a run.

A claim is a mapping from conf (``conf/base/parameters_reproduction.yml``); its ``kind`` says
how it is checked on a results table (one row per unit, as the pipelines write them):

``value``
    A published number: the mean of ``metric`` over the repetitions of the rows ``where``
    selects, against ``paper`` with an absolute ``tolerance``.
``better``
    ``method`` beats each method of ``than`` on ``metric`` (``greater_is_better``, default
    true), paired over the repetitions; with ``test`` (``wilcoxon`` or ``ttest``, one-sided, at
    ``alpha``) every difference must also be significant.
``relation``
    Row by row, ``lhs op rhs`` (columns, expressions of columns such as ``"1 - accuracy"``, or
    numbers; ``op`` one of ``<= < >= > ==``, up to ``atol``) holds on at least
    ``min_fraction`` (default 1) of the selected rows.
``trend``
    The mean of ``metric`` for ``method`` moves in ``direction`` (``increasing`` /
    ``decreasing``) along the values of ``along``: every value is on that side of every
    earlier one, or within ``atol`` of it (so that small steps the wrong way cannot add up).
    With ``points_by`` (a column, e.g. a setting whose ``along`` value differs a little from
    split to split, such as the rank a trace rule gives) each value of that column is one
    point, placed at the mean of ``along`` over its rows, so that the repetitions of a setting
    are averaged together instead of each being a point of its own. With ``ends: true`` only
    the first and the last value are compared (a trajectory's start and end, e.g. a weight
    over the boosting iterations: "falls" as "ends below where it started"); the detail still
    gives the whole series' monotone steps and Spearman ρ.
``rank``
    ``method``'s mean ``metric`` ranks at most ``at_most`` (1: the best) among the methods of
    ``among`` (default: every method of the selected rows).
``reference``
    A published table already held by a pipeline's conf (its ``reporting.reference`` block:
    records of keys, ``<metric>``, ``<metric>_std`` and the paper's ``<metric>_worse`` marks),
    expanded by :func:`expand_reference` into one ``value`` claim per cell and, per column,
    one ``better`` claim: the column's best method against every method the paper marks as
    significantly worse (``test``, default the paper's Wilcoxon rank-sum, at ``alpha``).

Every claim gets one :class:`Verdict`: ``reproduced`` (the number within its tolerance, the
comparison significant, the relation or the trend exact), ``direction holds`` (a comparison or
trend that goes the paper's way without its strength: not significant, not monotone),
``does not hold``, or ``not run`` (the table, the rows or a method is missing: never a pass).

Repetitions: the selected rows are averaged over the columns of ``average_over`` (e.g. the ten
one-vs-all tasks of a draw) and grouped by ``repeat_key`` (e.g. ``draw``, or ``[repeat, fold]``);
any other key column of the table (``reproduction.tables``) that still varies among the
selected rows is an error that names it, so that a claim never averages over something it does
not say.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from multiview_lab import formatting as fmt

REPRODUCED = "reproduced"
DIRECTION = "direction holds"
FAILS = "does not hold"
NOT_RUN = "not run"
VERDICTS = (REPRODUCED, DIRECTION, FAILS, NOT_RUN)
PASSING = (REPRODUCED, DIRECTION)

KINDS = ("value", "better", "relation", "trend", "rank", "reference")
TESTS = ("none", "wilcoxon", "ranksum", "ttest")
COMMON = {"id", "kind", "claim", "source", "table", "where", "figure", "note", "group"}
FIELDS = {
    "value": {"metric", "paper", "tolerance", "paper_std", "repeat_key", "average_over"},
    "better": {
        "metric", "method", "than", "greater_is_better", "test", "alpha", "repeat_key",
        "average_over", "paper",
    },
    "relation": {"lhs", "op", "rhs", "min_fraction", "atol", "paper"},
    "reference": {"reference", "repeat_key", "average_over", "test", "alpha"},
    "rank": {
        "metric", "method", "among", "at_most", "greater_is_better", "repeat_key",
        "average_over", "paper",
    },
    "trend": {
        "metric", "method", "along", "points_by", "direction", "repeat_key", "average_over",
        "paper", "atol", "ends",
    },
}  # fmt: skip
REQUIRED = {
    "value": {"metric", "paper", "tolerance"},
    "better": {"metric", "method", "than"},
    "relation": {"lhs", "op", "rhs"},
    "trend": {"metric", "method", "along", "direction"},
    "reference": {"reference"},
    "rank": {"metric", "method", "at_most"},
}
_OPS = {
    "<=": np.less_equal,
    "<": np.less,
    ">=": np.greater_equal,
    ">": np.greater,
    "==": np.isclose,
}


class ClaimError(ValueError):
    """A claim in conf that cannot be checked as written (not a result that fails)."""


@dataclass
class Verdict:
    """The outcome of one claim: what the paper says, what we measured, and the verdict."""

    paper: str
    id: str
    claim: str
    source: str
    verdict: str
    paper_value: str = ""
    ours: str = ""
    n: int = 0
    detail: str = ""
    figure: str = ""
    group: str = ""
    note: str = ""  # how the claim is read (a threshold of ours, a test the paper does not name)
    values: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("values")
        return out


def check_claim_spec(claim: Mapping[str, Any]) -> None:
    """Raise :class:`ClaimError` naming what is wrong with a claim's conf entry."""
    cid = claim.get("id", "<no id>")
    kind = claim.get("kind")
    if kind not in KINDS:
        raise ClaimError(f"claim {cid!r}: kind {kind!r} is not one of {list(KINDS)}.")
    if "id" not in claim or "claim" not in claim or "table" not in claim:
        raise ClaimError(f"claim {cid!r}: every claim needs an id, a claim text and a table.")
    unknown = sorted(set(claim) - COMMON - FIELDS[kind])
    if unknown:
        raise ClaimError(f"claim {cid!r} ({kind}): unknown key(s) {unknown}.")
    missing = sorted(REQUIRED[kind] - set(claim))
    if missing:
        raise ClaimError(f"claim {cid!r} ({kind}): missing key(s) {missing}.")
    if kind == "relation" and claim["op"] not in _OPS:
        raise ClaimError(f"claim {cid!r}: op {claim['op']!r} is not one of {list(_OPS)}.")
    if kind == "trend" and claim["direction"] not in ("increasing", "decreasing"):
        raise ClaimError(f"claim {cid!r}: direction must be 'increasing' or 'decreasing'.")
    if claim.get("test", "none") not in TESTS:
        raise ClaimError(f"claim {cid!r}: test must be one of {list(TESTS)}.")


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def select(table: pd.DataFrame, where: Mapping[str, Any] | None) -> pd.DataFrame:
    """The rows whose columns take the values of ``where`` (a value or a list of values)."""
    mask = np.ones(len(table), dtype=bool)
    for column, allowed in (where or {}).items():
        if column not in table.columns:
            raise KeyError(column)
        mask &= table[column].isin(_as_list(allowed)).to_numpy()
    return table[mask]


def repetitions(
    rows: pd.DataFrame,
    metric: str,
    by: Sequence[str],
    repeat_key: str | Sequence[str] | None,
    average_over: Sequence[str] = (),
    keys: Sequence[str] = (),
    cid: str = "",
) -> pd.DataFrame:
    """``metric`` per repetition (rows) and ``by`` value (columns), averaged over
    ``average_over``; a key column of the table (``keys``) that varies otherwise raises
    :class:`ClaimError`. Without ``repeat_key`` each row of a ``by`` group is a repetition."""
    repeat = _as_list(repeat_key)
    varying = [
        c
        for c in keys
        if c in rows.columns
        and c not in (*by, *repeat, *average_over)
        and rows[c].nunique(dropna=False) > 1
    ]
    if varying:
        raise ClaimError(
            f"claim {cid!r}: the selected rows vary in {varying}: select one value with "
            "'where' or list the column in 'average_over' (or 'repeat_key')."
        )
    if metric not in rows.columns:
        raise KeyError(metric)
    index = repeat or None
    if index is None:  # one repetition per row of each group
        frame = rows.assign(_rep=rows.groupby(list(by)).cumcount())
        index = ["_rep"]
    else:
        frame = rows
    return frame.pivot_table(index=index, columns=list(by), values=metric, aggfunc="mean")


def _paper_text(value) -> str:
    """A published number as printed in a table (4 decimals below 10), text as is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return fmt.number(value) if abs(value) < 10 else f"{value:.4g}"


def _fmt(x: float, digits: int = 4) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"


def _decimals(*values: float) -> int:
    """Decimals shown for numbers on the scale of ``values``: the project's 4 below 10 (scores,
    losses), fewer above (CPU seconds, ranks), so that about 4 significant digits show."""
    scale = max((abs(float(v)) for v in values if np.isfinite(v)), default=0.0)
    return 4 if scale < 10 else 2 if scale < 100 else 1 if scale < 1000 else 0


def _mean_std(values: np.ndarray) -> str:
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return ""
    digits = _decimals(values.mean())
    if len(values) == 1:
        return fmt.mean_std(values[0], None, digits, n=1)
    return fmt.mean_std(values.mean(), values.std(ddof=1), digits, n=len(values))


def _one_sided_p(a: np.ndarray, b: np.ndarray, test: str) -> float:
    """p-value of 'a is larger than b' over the repetitions: paired (``wilcoxon`` signed-rank,
    ``ttest``) or not (``ranksum``, the Mann-Whitney / Wilcoxon rank-sum test); NaN with fewer
    than 2 repetitions or no difference at all."""
    if test == "ranksum":
        a, b = a[~np.isnan(a)], b[~np.isnan(b)]
        if len(a) < 2 or len(b) < 2 or (np.ptp(np.r_[a, b]) == 0):
            return float("nan")
        return float(stats.mannwhitneyu(a, b, alternative="greater").pvalue)
    diff = a - b
    diff = diff[~np.isnan(diff)]
    if len(diff) < 2 or np.allclose(diff, 0.0):
        return float("nan")
    if test == "wilcoxon":
        return float(stats.wilcoxon(diff, alternative="greater").pvalue)
    return float(stats.ttest_1samp(diff, 0.0, alternative="greater").pvalue)


def evaluate_claim(
    paper: str,
    claim: Mapping[str, Any],
    tables: Mapping[str, Any],
    keys: Mapping[str, Sequence[str]] | None = None,
) -> Verdict:
    """The verdict of one claim on the named results tables (a missing table: not run);
    ``keys``: table name -> the columns that identify a unit of that table."""
    check_claim_spec(claim)
    base = dict(
        paper=paper,
        id=str(claim["id"]),
        claim=str(claim["claim"]),
        source=str(claim.get("source", "")),
        figure=str(claim.get("figure", "")),
        paper_value=_paper_text(claim.get("paper", "")),
        group=str(claim.get("group", "")),
        note=" ".join(str(claim.get("note", "")).split()),
    )
    table = tables.get(claim["table"])
    if table is None or len(table) == 0:
        return Verdict(**base, verdict=NOT_RUN, detail=f"no results table {claim['table']!r}")
    try:
        rows = select(table, claim.get("where"))
    except KeyError as exc:
        return Verdict(**base, verdict=NOT_RUN, detail=f"the table has no column {exc}")
    if rows.empty:
        return Verdict(**base, verdict=NOT_RUN, detail="no row matches 'where' in this run")
    try:
        return _KIND[claim["kind"]](base, claim, rows, list((keys or {}).get(claim["table"], ())))
    except KeyError as exc:
        return Verdict(**base, verdict=NOT_RUN, detail=f"the table has no column {exc}")


def _value(base: dict, claim: Mapping[str, Any], rows: pd.DataFrame, keys: list) -> Verdict:
    reps = repetitions(
        rows.assign(_all=0), claim["metric"], ["_all"], claim.get("repeat_key"),
        claim.get("average_over", ()), keys, base["id"],
    )  # fmt: skip
    values = reps.to_numpy(dtype=float).ravel()
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return Verdict(**base, verdict=NOT_RUN, detail=f"{claim['metric']} is empty")
    mean = float(values.mean())
    paper = float(claim["paper"])
    tol = float(claim["tolerance"])
    diff = mean - paper
    paper_text = _paper_text(paper) + (
        f" ± {_paper_text(float(claim['paper_std']))}" if "paper_std" in claim else ""
    )
    verdict = REPRODUCED if abs(diff) <= tol + 1e-12 else FAILS
    base["paper_value"] = paper_text
    return Verdict(
        **base,
        verdict=verdict,
        ours=_mean_std(values),
        n=len(values),
        detail=f"ours − paper = {fmt.signed(diff, _decimals(mean, paper))} (tolerance ± {tol:g})",
        values={"mean": mean, "diff": diff},
    )


def _better(base: dict, claim: Mapping[str, Any], rows: pd.DataFrame, keys: list) -> Verdict:
    method, than = claim["method"], _as_list(claim["than"])
    sign = 1.0 if claim.get("greater_is_better", True) else -1.0
    test = claim.get("test", "none")
    alpha = float(claim.get("alpha", 0.05))
    reps = repetitions(
        rows, claim["metric"], ["method"], claim.get("repeat_key"),
        claim.get("average_over", ()), keys, base["id"],
    )  # fmt: skip
    missing = [m for m in [method, *than] if m not in reps.columns]
    if missing:
        return Verdict(**base, verdict=NOT_RUN, detail=f"method(s) {missing} not in this run")
    ours = reps[method].to_numpy(dtype=float)
    digits = _decimals(np.nanmean(ours))
    parts, strengths, directions = [], [], []
    for other in than:
        diff = sign * (ours - reps[other].to_numpy(dtype=float))
        mean = float(np.nanmean(diff))
        directions.append(mean > 0)
        if test == "none":
            strengths.append(mean > 0)
            parts.append(f"{other}: {fmt.signed(mean * sign, digits)}")
        else:
            p = _one_sided_p(sign * ours, sign * reps[other].to_numpy(dtype=float), test)
            strengths.append(bool(mean > 0 and p < alpha))
            parts.append(f"{other}: {fmt.signed(mean * sign, digits)} (p = {_fmt(p, 2)})")
    if all(strengths):
        verdict = REPRODUCED
    elif all(directions):
        verdict = DIRECTION
    else:
        verdict = FAILS
    what = f"{method} − baseline, {claim['metric']}"
    if test != "none":
        what += f"; one-sided {test}, α = {alpha:g}"
    return Verdict(
        **base,
        verdict=verdict,
        ours=_mean_std(ours),
        n=int(np.sum(~np.isnan(ours))),
        detail=f"{what}: " + "; ".join(parts),
        values={"directions": directions, "strengths": strengths},
    )


def _operand(rows: pd.DataFrame, value) -> np.ndarray:
    """A column, an arithmetic expression of columns (``"1 - accuracy"``, ``"2 * bound"``) or
    a number, row by row."""
    if isinstance(value, str):
        if value in rows.columns:
            return rows[value].to_numpy(dtype=float)
        try:
            return np.asarray(rows.eval(value, engine="python"), dtype=float)
        except pd.errors.UndefinedVariableError as exc:
            name = re.search(r"name '([^']+)'", str(exc))
            raise KeyError(name.group(1) if name else value) from exc
    return np.full(len(rows), float(value))


def _relation(base: dict, claim: Mapping[str, Any], rows: pd.DataFrame, keys: list) -> Verdict:
    lhs, rhs = _operand(rows, claim["lhs"]), _operand(rows, claim["rhs"])
    ok = ~(np.isnan(lhs) | np.isnan(rhs))
    if not ok.any():
        return Verdict(**base, verdict=NOT_RUN, detail=f"{claim['lhs']} / {claim['rhs']} empty")
    atol = float(claim.get("atol", 1e-9))  # rounding of the stored numbers
    op = claim["op"]
    shift = {"<=": atol, "<": 0.0, ">=": -atol, ">": 0.0, "==": 0.0}[op]
    holds = (
        np.isclose(lhs[ok], rhs[ok], atol=atol)
        if op == "=="
        else _OPS[op](lhs[ok], rhs[ok] + shift)
    )
    fraction = float(holds.mean())
    need = float(claim.get("min_fraction", 1.0))
    margin = lhs[ok] - rhs[ok]
    worst = float(margin.max() if claim["op"] in ("<=", "<") else margin.min())
    return Verdict(
        **base,
        verdict=REPRODUCED if fraction >= need - 1e-12 else FAILS,
        ours=f"{fraction:.1%} of rows",
        n=int(ok.sum()),
        detail=(
            f"{claim['lhs']} {claim['op']} {claim['rhs']} on {holds.sum()} of {ok.sum()} rows "
            f"(required {need:.0%}); worst {claim['lhs']} − {claim['rhs']} = {worst:+.3g}"
        ),
        values={"fraction": fraction, "worst": worst},
    )


SERIES_SHOWN = 8
"""A trend's ``ours`` lists up to this many values; a longer series (PB-MVBoost's C-bound over
100 iterations) shows its first three and last two (every value stays in ``values``)."""


def _along_text(value) -> str:
    """A value of ``along``: a whole float without its ``.0``, a mean (``points_by``) to 5
    significant digits, anything else as is."""
    if isinstance(value, float | np.floating):
        return str(int(value)) if float(value).is_integer() else f"{value:.5g}"
    return str(value)


def _series_text(means: pd.Series, along: str) -> str:
    """``100: .91, 200: .93, ...``, shortened past :data:`SERIES_SHOWN` values."""
    digits = _decimals(*means.to_numpy(dtype=float))
    items = [f"{_along_text(k)}: {fmt.number(v, digits)}" for k, v in means.items()]
    if len(items) <= SERIES_SHOWN:
        return ", ".join(items)
    return ", ".join([*items[:3], "…", *items[-2:]]) + f" ({len(items)} values of {along})"


def _trend(base: dict, claim: Mapping[str, Any], rows: pd.DataFrame, keys: list) -> Verdict:
    rows = rows[rows["method"] == claim["method"]] if "method" in rows.columns else rows
    if rows.empty:
        return Verdict(**base, verdict=NOT_RUN, detail=f"method {claim['method']!r} not run")
    along = claim["along"]
    average_over = _as_list(claim.get("average_over"))
    points_by = claim.get("points_by")
    if points_by is not None:
        missing = [c for c in (points_by, along) if c not in rows.columns]
        if missing:
            raise ClaimError(f"claim {base['id']!r}: no column {missing} for 'points_by'.")
        # One point per value of points_by, at the mean of `along` over its rows.
        rows = rows.assign(**{along: rows.groupby(points_by)[along].transform("mean")})
        average_over = [*average_over, points_by]
    reps = repetitions(
        rows, claim["metric"], [along], claim.get("repeat_key"), average_over, keys, base["id"]
    )
    if reps.shape[1] < 2:
        return Verdict(**base, verdict=NOT_RUN, detail=f"only one value of {along} in this run")
    means = reps.mean(axis=0).sort_index()
    sign = 1.0 if claim["direction"] == "increasing" else -1.0
    atol = float(claim.get("atol", 1e-12))  # flat within atol keeps the direction
    # Each value against the best earlier one (not only its predecessor), so that steps the
    # wrong way, each within atol, cannot add up to a drift larger than atol.
    signed = sign * means.to_numpy(dtype=float)
    held = (signed - np.maximum.accumulate(signed))[1:] >= -atol
    rho = stats.spearmanr(means.index.to_numpy(dtype=float), means.to_numpy()).statistic
    series = (
        f"{int(held.sum())} of {len(held)} steps {claim['direction']} (or within {atol:g} of "
        f"the best earlier value), Spearman ρ = {rho:+.2f}"
    )
    if claim.get("ends"):
        first, last = means.iloc[0], means.iloc[-1]
        verdict = REPRODUCED if sign * (last - first) > atol else FAILS
        digits = _decimals(first, last)
        detail = (
            f"{claim['metric']} from {fmt.number(first, digits)} at {along} "
            f"{_along_text(means.index[0])} to {fmt.number(last, digits)} at {along} "
            f"{_along_text(means.index[-1])}; over the whole series: {series}"
        )
    else:
        verdict = REPRODUCED if np.all(held) else DIRECTION if sign * rho > 0 else FAILS
        detail = f"{claim['metric']} along {along}: {series}"
    return Verdict(
        **base,
        verdict=verdict,
        ours=_series_text(means, along),
        n=int(reps.notna().sum().min()),
        detail=detail,
        values={"means": means.to_dict()},
    )


def _rank(base: dict, claim: Mapping[str, Any], rows: pd.DataFrame, keys: list) -> Verdict:
    among = _as_list(claim.get("among"))
    if among:
        rows = rows[rows["method"].isin(among)]
    reps = repetitions(
        rows, claim["metric"], ["method"], claim.get("repeat_key"),
        claim.get("average_over", ()), keys, base["id"],
    )  # fmt: skip
    missing = [m for m in [claim["method"], *among] if m not in reps.columns]
    if missing:
        return Verdict(**base, verdict=NOT_RUN, detail=f"method(s) {missing} not in this run")
    means = reps.mean(axis=0)
    higher = claim.get("greater_is_better", True)
    order = means.sort_values(ascending=not higher)
    rank = int(order.index.get_loc(claim["method"])) + 1
    at_most = int(claim["at_most"])
    digits = _decimals(*order.to_numpy(dtype=float))
    top = ", ".join(
        f"{m} {fmt.number(v, digits)}" for m, v in order.iloc[: max(at_most + 1, 3)].items()
    )
    return Verdict(
        **base,
        verdict=REPRODUCED if rank <= at_most else FAILS,
        ours=f"rank {rank} of {len(order)}",
        n=int(reps[claim["method"]].notna().sum()),
        detail=f"{claim['metric']} means, {'highest' if higher else 'lowest'} (rank 1) first: "
        f"{top}",
        values={"rank": rank},
    )


_KIND = {
    "value": _value,
    "better": _better,
    "relation": _relation,
    "trend": _trend,
    "rank": _rank,
}


def expand_reference(claim: Mapping[str, Any], reference: Mapping[str, Any]) -> list[dict]:
    """A ``reference`` claim as ``value`` claims (one per published cell with a tolerance) and
    ``better`` claims (per column with ``<metric>_worse`` marks: the column's best against the
    methods marked worse). The claim text may use ``{metric}`` and the records' keys."""
    check_claim_spec(claim)
    tolerance = dict(reference.get("tolerance") or {})
    records = list(reference.get("values") or [])
    if not records or not tolerance:
        raise ClaimError(
            f"claim {claim['id']!r}: reference {claim['reference']!r} needs 'values' and a "
            "'tolerance' per metric."
        )
    metrics = list(tolerance)
    common = {k: claim[k] for k in ("table", "repeat_key", "average_over", "note") if k in claim}
    source = str(reference.get("source", claim.get("source", "")))
    out: list[dict] = []
    for rec in records:
        keys = {
            k: v for k, v in rec.items()
            if k not in metrics and not k.endswith(("_std", "_worse"))
        }  # fmt: skip
        for m in metrics:
            if m not in rec:
                continue
            out.append(
                {
                    "id": "/".join([str(claim["id"]), *map(str, keys.values()), m]),
                    "kind": "value",
                    "group": str(claim["id"]),
                    "claim": str(claim["claim"]).format(metric=m, **keys),
                    "source": source,
                    "where": keys,
                    "metric": m,
                    "paper": float(rec[m]),
                    "tolerance": float(tolerance[m]),
                    **({"paper_std": float(rec[f"{m}_std"])} if f"{m}_std" in rec else {}),
                    **common,
                }
            )
    # the paper's significance marks, column by column (a column: the keys but the method)
    frame = pd.DataFrame.from_records(records)
    if "method" in frame.columns:
        column_keys = [
            c for c in frame.columns
            if c != "method" and c not in metrics and not c.endswith(("_std", "_worse"))
        ]  # fmt: skip
        for m in metrics:
            if f"{m}_worse" not in frame.columns:
                continue
            for values, col in (
                frame.groupby(column_keys, sort=False) if column_keys else [((), frame)]
            ):
                values = values if isinstance(values, tuple) else (values,)
                worse = col.loc[col[f"{m}_worse"].astype(bool), "method"].tolist()
                if not worse:
                    continue
                best = col.loc[col[m].idxmax(), "method"]
                where = dict(zip(column_keys, values, strict=True))
                out.append(
                    {
                        "id": "/".join([str(claim["id"]), *map(str, values), m, "significance"]),
                        "kind": "better",
                        "group": str(claim["id"]),
                        "claim": f"{best} significantly better than the {len(worse)} methods "
                        f"marked worse ({m}, " + ", ".join(map(str, values)) + ")",
                        "source": source,
                        "where": where,
                        "metric": m,
                        "method": best,
                        "than": worse,
                        "test": claim.get("test", "ranksum"),
                        "alpha": float(claim.get("alpha", 0.05)),
                        **common,
                    }
                )
    return out


def evaluate_claims(
    claims: Mapping[str, Sequence[Mapping[str, Any]]],
    tables: Mapping[str, pd.DataFrame],
    keys: Mapping[str, Sequence[str]] | None = None,
    references: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """Every claim of every paper (``paper -> [claim]``) checked: one row per claim
    (``reference`` claims expanded first, from ``references``: parameter key -> block)."""
    expanded: dict[str, list] = {}
    for paper, cs in claims.items():
        expanded[paper] = []
        for c in cs:
            if c.get("kind") == "reference":
                block = (references or {}).get(c.get("reference"))
                if block is None:
                    raise ClaimError(
                        f"claim {c.get('id')!r}: reference {c.get('reference')!r} is not a "
                        "parameter block given to the reproduction pipeline."
                    )
                expanded[paper].extend(expand_reference(c, block))
            else:
                expanded[paper].append(c)
    rows = [
        evaluate_claim(paper, c, tables, keys).row() for paper, cs in expanded.items() for c in cs
    ]
    columns = list(Verdict.__dataclass_fields__)
    columns.remove("values")
    return pd.DataFrame(rows, columns=columns)
