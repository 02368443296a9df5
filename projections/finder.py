"""Finding rounds (issue 17 point 2): the closed rounds of the views (``rounds`` and
``round_index``, ``projections.views``) by gaming day, table, player, game and status,
a page at a time, in the order they closed."""

from __future__ import annotations

from typing import Any

from projections.runner import ViewStore

COLUMNS = ("round", "table_id", "game", "status", "opened_at", "closed_at", "staked", "paid", "commission", "rake",
           "currency")


def find_rounds(vs: ViewStore, *, day: str | None = None, table: str | None = None, player: str | None = None,
                game: str | None = None, status: str | None = None, limit: int = 50, offset: int = 0,
                ) -> tuple[list[dict[str, Any]], int]:
    """(one page of matching rounds, how many match in all). Each round: its ``rounds``
    row, its currency and its players (name and net result, in minor units)."""
    ph = "%s" if vs.postgres else "?"
    rounds, players, currency = (vs.table_name(n) for n in ("rounds", "round_players", "round_currency"))
    where, args = [], []
    for column, value in (("substr(r.closed_at, 1, 10)", day), ("r.table_id", table), ("r.game", game),
                          ("r.status", status)):
        if value is not None:
            where.append(f"{column} = {ph}")
            args.append(value)
    if player is not None:
        where.append(f"EXISTS (SELECT 1 FROM {players} p WHERE p.round = r.round AND p.player = {ph})")
        args.append(player)
    cond = f" WHERE {' AND '.join(where)}" if where else ""
    with vs.datastore.transaction(commit=False) as c:
        c.execute(f"SELECT COUNT(*) AS n FROM {rounds} r{cond}", tuple(args))
        first = c.fetchone()
        total = int(first["n"] if isinstance(first, dict) or hasattr(first, "keys") else first[0])
        c.execute(f"SELECT r.round, r.table_id, r.game, r.status, r.opened_at, r.closed_at, r.staked, r.paid,"
                  f" r.commission, r.rake, m.currency FROM {rounds} r LEFT JOIN {currency} m ON m.round = r.round"
                  f"{cond} ORDER BY r.closed_at, r.round LIMIT {ph} OFFSET {ph}", (*args, limit, offset))
        page = [dict(zip(COLUMNS, _row(r), strict=True)) for r in c.fetchall()]
        if page:
            marks = ", ".join([ph] * len(page))
            c.execute(f"SELECT round, player, net FROM {players} WHERE round IN ({marks}) ORDER BY round, player",
                      tuple(p["round"] for p in page))
            seated: dict[str, list[dict[str, Any]]] = {}
            for rid, name, net in (_row(r) for r in c.fetchall()):
                seated.setdefault(rid, []).append({"player": name, "net": int(net)})
    for p in page:
        p["players"] = seated.get(p["round"], [])
        for k in ("staked", "paid", "commission", "rake"):
            p[k] = int(p[k])
        p["day"] = p["closed_at"][:10]
    return page, total


def _row(r: Any) -> tuple[Any, ...]:
    return tuple(r.values()) if isinstance(r, dict) else tuple(r)
