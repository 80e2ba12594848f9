"""The inspector's charts (Altair): the budget bar, tokens in memory over time, importance now,
citations over time.

Every channel names its field and type outright (``alt.X(field=..., type=...)``), never as
shorthand (``"step:Q"``) or a bare name: Altair parses a shorthand against the data and wraps a
bare name through a schema lookup, each ~10-20 ms per channel on every draw, several times what
drawing the chart's few hundred points costs.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

Q, N, ORD = "quantitative", "nominal", "ordinal"


def tips(*fields: tuple[str, str]) -> list[alt.Tooltip]:
    return [alt.Tooltip(field=f, type=t) for f, t in fields]


def budget_bar(b: dict) -> alt.LayerChart:
    parts = [
        ("pinned", b["pinned"]),
        ("protected (lag)", b["protected"]),
        ("other turns", b["other"]),
        ("free", b["free"]),
    ]
    df = pd.DataFrame([{"part": p, "tokens": n, "order": i} for i, (p, n) in enumerate(parts)])
    colors = alt.Scale(domain=[p for p, _ in parts], range=["#7c3aed", "#f59e0b", "#3b82f6", "#e5e7eb"])
    bar = (
        alt.Chart(df)
        .mark_bar(height=26)
        .encode(
            x=alt.X(
                field="tokens",
                aggregate="sum",
                type=Q,
                title=None,
                scale=alt.Scale(domain=[0, max(b["budget"], b["used"])]),
            ),
            color=alt.Color(
                field="part", type=N, scale=colors, legend=alt.Legend(orient="top", direction="horizontal", title=None)
            ),
            order=alt.Order(field="order", type=Q),
            tooltip=tips(("part", N), ("tokens", Q)),
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"budget": [b["budget"]]}))
        .mark_rule(color="#dc2626", strokeWidth=2)
        .encode(x=alt.X(field="budget", type=Q))
    )
    return (bar + rule).properties(height=50)


def timeline_chart(points: pd.DataFrame, markers: pd.DataFrame, budget: int) -> alt.LayerChart:
    line = (
        alt.Chart(points)
        .mark_line(interpolate="step-after", point=True)
        .encode(
            x=alt.X(field="step", type=Q, title="step", axis=alt.Axis(tickMinStep=1, format="d")),
            y=alt.Y(field="tokens", type=Q, title="tokens in memory"),
            tooltip=tips(("step", Q), ("tokens", Q)),
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"budget": [budget]}))
        .mark_rule(color="#dc2626", strokeDash=[6, 4])
        .encode(y=alt.Y(field="budget", type=Q))
    )
    chart = line + rule
    if not markers.empty:
        chart += (
            alt.Chart(markers)
            .mark_point(shape="triangle-down", size=110, filled=True, color="#dc2626")
            .encode(
                x=alt.X(field="step", type=Q),
                y=alt.Y(field="peak", type=Q),
                tooltip=[
                    alt.Tooltip(field="step", type=Q),
                    alt.Tooltip(field="peak", type=Q, title="tokens before"),
                    alt.Tooltip(field="evicted", type=N),
                ],
            )
        )
    return chart.properties(height=260)


def importance_chart(df: pd.DataFrame) -> alt.Chart:
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X(field="turn", type=ORD, title="turn"),
            y=alt.Y(field="importance", type=Q),
            color=alt.Color(
                field="status",
                type=N,
                scale=alt.Scale(
                    domain=["pinned", "protected", "can be evicted"], range=["#7c3aed", "#f59e0b", "#3b82f6"]
                ),
                legend=alt.Legend(orient="bottom", title=None),
            ),
            tooltip=tips(("turn", ORD), ("importance", Q), ("status", N), ("tokens", Q)),
        )
        .properties(height=260)
    )


def citation_chart(df: pd.DataFrame) -> alt.Chart:
    return (
        alt.Chart(df)
        .mark_circle(color="#0d9488", opacity=0.75)
        .encode(
            x=alt.X(field="step", type=Q, title="step (when cited)"),
            y=alt.Y(field="turn", type=Q, title="cited turn"),
            size=alt.Size(field="weight", type=Q, legend=None, scale=alt.Scale(range=[30, 200])),
            tooltip=tips(("step", Q), ("turn", Q), ("weight", Q), ("source", N), ("answer", Q)),
        )
        .properties(height=260)
    )
