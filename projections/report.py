"""The evidence bundle's reports for people (issue 17 point 4): ``report.md`` and
``report.html``, from the bundle's own events and the engine's replay (pure, no I/O).

Both open with the round in plain language: table, time, game, each player's bets, the
result ("Banker 8 beats Player 3"), what each player was paid and why (commission), any
ruling beside what it changed, and the dispute as support recorded it; then the cards
drawn, the timeline and the video references. ``report.html`` is one self-contained
file (inline CSS and JavaScript, a Content-Security-Policy that forbids every network
load) that re-checks the embedded bundle in the browser (``projections/report.js``:
canonical JSON and SHA-256, Ed25519 by WebCrypto, chains, the key ring, inclusion
proofs, the checkpoint's signature and witness cosignatures) and says what it cannot
check there (the game's rules: ``pitboss verify-bundle`` re-derives them).
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

from ledger.events import SignedEvent
from ledger.games.cards import show_card
from ledger.kinds import KEYRING_STREAM
from projections.money import show, table_currency
from projections.replay import event_summary

_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
"""Nothing loads from anywhere: the page is its own evidence (no network request is even possible)."""
SUIT_COLOUR = {"h": "red", "d": "red", "c": "black", "s": "black"}


def report_model(stream: str, events: list[SignedEvent], outcome: dict[str, Any], size: int,
                 dispute: str | None = None) -> dict[str, Any]:
    """What the reports say, computed once: the plain-language summary and the details."""
    mine = [ev for ev in events if ev.stream == stream]
    opening = mine[0]
    table = opening.payload["table"]
    currency = table_currency(events, table)

    def money(amount: int) -> str:
        return show(amount, currency)

    bets: dict[str, list[str]] = {}
    for ev in mine:
        p = ev.payload
        if ev.kind.endswith(".bet.v1") and isinstance(p.get("player"), str):
            what = p.get("spot") or p.get("bet") or p.get("wager") or (f"seat {p['seat']}" if "seat" in p else "")
            target = p.get("pockets") or p.get("target")
            detail = f" {'-'.join(str(t) for t in target)}" if target else ""
            bets.setdefault(p["player"], []).append(f"{money(p['amount'])} on {str(what).replace('_', ' ')}{detail}")
    derived = outcome.get("derived") or {}
    for seat in derived.get("seats", []):  # poker: what each put in the pot
        if seat.get("put_in"):
            bets.setdefault(seat["player"], []).append(f"{money(seat['put_in'])} into the pot")
    settlements = [{**row, "text": {"win": "won", "lose": "lost", "push": "push"}.get(row["outcome"], row["outcome"])}
                   for row in derived.get("settlements", [])]
    cards = [(ev.seq, ev.payload.get("hand") or (f"seat {ev.payload['seat']}" if "seat" in ev.payload else ""),
              [ev.payload["card"]] if "card" in ev.payload else list(ev.payload.get("cards") or []))
             for ev in mine if "card" in ev.payload or ev.payload.get("cards")]
    rulings = [{**r, "changed": f"the round closed {outcome.get('status')}; no stake was won or lost"}
               for r in outcome.get("rulings", [])]
    videos = [{"what": f"{ev.kind} ({ev.stream} seq {ev.seq})", **ev.payload["video"]}
              for ev in events if isinstance(ev.payload.get("video"), dict)]
    ring = [ev for ev in events if ev.stream == KEYRING_STREAM]
    return {
        "round": stream, "table": table, "game": opening.payload["game"], "currency": currency,
        "opened": opening.at, "closed": mine[-1].at if mine[-1].kind == "round.close.v1" else None,
        "status": outcome.get("status"), "result": outcome.get("result"), "dispute": dispute,
        "bets": bets, "settlements": settlements, "money": money, "cards": cards, "rulings": rulings,
        "videos": videos, "size": size, "events": events, "keyring": len(ring),
        "anchor": ring[0].payload["public_key"] if ring else None,
        "differences": outcome.get("differences", []),
    }


def _summary_lines(m: dict[str, Any]) -> list[tuple[str, str]]:
    money = m["money"]
    rows = [("Round", f"{m['round'].split(':', 1)[1]} ({m['game']} at table {m['table']})"),
            ("When (UTC)", f"opened {m['opened']}" + (f", closed {m['closed']}" if m["closed"] else ", not closed"))]
    if m["dispute"]:
        rows.append(("Disputed", m["dispute"]))
    for player, items in sorted(m["bets"].items()):
        rows.append((f"{player} bet", "; ".join(items)))
    rows.append(("Result", m["result"] or (f"the round closed {m['status']}" if m["status"] else "no result yet")))
    for s in m["settlements"]:
        fee = f", after {money(s['commission'])} commission" if s.get("commission") else ""
        rows.append((f"{s['player']} paid", f"{money(s['paid'])} ({s['text']}; staked {money(s['staked'])}{fee})"))
    for r in m["rulings"]:
        acting = f", acting on {', '.join(r['acts_on'])}" if r.get("acts_on") else ""
        redeal = f" Re-dealt as round:{r['redeal']}." if r.get("redeal") else ""
        rows.append(("Ruling", f"{r['effect']} under {r['rule']} by {r['signer']} at {r['at']}{acting}: {r['reason']}."
                               f" What it changed: {r['changed']}.{redeal}"))
    return rows


def report_markdown(m: dict[str, Any]) -> str:
    lines = [f"# Evidence: {m['round']}", ""]
    lines += [f"- **{k}**: {v}" for k, v in _summary_lines(m)]
    lines += ["", f"{len(m['events'])} signed events ({m['keyring']} of them the key ring), each with an inclusion"
              f" proof against the signed checkpoint of size {m['size']}. Check it offline: `pitboss verify-bundle"
              " --anchor <the operator's house key> <this directory>`, with the house key obtained from the operator"
              " or the regulator, never from this bundle; or open `report.html` in a browser.", ""]
    if m["cards"]:
        lines += ["## Cards", ""] + [f"- seq {seq}, {to}: {' '.join(show_card(c) for c in cs)}" for seq, to, cs in m["cards"]]
        lines.append("")
    lines += ["## Timeline", "", "| # | time (UTC) | stream | seq | signer | event |", "| --- | --- | --- | --- | --- | --- |"]
    for n, ev in enumerate(m["events"], start=1):
        if ev.stream == KEYRING_STREAM:
            continue
        lines.append(f"| {n} | {ev.at} | {ev.stream} | {ev.seq} | {ev.actor} |"
                     f" {event_summary(ev.kind, ev.payload, m['currency']).replace('|', '/')} |")
    lines += ["", "## Video references", ""]
    lines += [f"- {v['what']}: camera {v['camera']}, {v['start']} to {v['end']}, footage SHA-256 `{v['sha256']}`"
              for v in m["videos"]] or ["(none: no live equipment events)"]
    lines += ["", "## Differences between the record and the rules", "",
              "; ".join(m["differences"]) if m["differences"] else "None: the engine derives what was recorded.", ""]
    return "\n".join(lines)


_CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1rem 1.5rem;color:#1b1b1b}
h1{font-size:1.5rem;margin:.2rem 0 .8rem}h2{font-size:1.15rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%}td,th{padding:.25rem .5rem;border-bottom:1px solid #eee;text-align:left;
vertical-align:top;overflow-wrap:anywhere}th{background:#f6f6f6}.summary th{width:11rem}.status{padding:.8rem 1rem;border-radius:6px;
margin:1rem 0}.pending{background:#eef}.pass{background:#e6f4ea;border:2px solid #1e8e3e}.fail{background:#fce8e6;
border:2px solid #d93025}.problem{color:#b00020;font-weight:600}.card{display:inline-block;min-width:2.2em;
padding:.35em .3em;margin:.1em;border:1px solid #999;border-radius:5px;background:#fff;text-align:center;
font-weight:700;box-shadow:1px 1px 2px #ccc}.red{color:#c00}.black{color:#111}code,.mono{font:12px ui-monospace,
monospace;word-break:break-all}.small{color:#555;font-size:.85rem}
"""


def _card_html(card: str) -> str:
    return f'<span class="card {SUIT_COLOUR.get(card[1:], "black")}">{html.escape(show_card(card))}</span>'


def report_html(m: dict[str, Any], bundle: dict[str, Any]) -> str:
    """The page; ``bundle`` is the data it re-checks (events.jsonl lines, proofs in line
    order, checkpoint note, log key, witness keys and quorum)."""
    e = html.escape
    rows = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in _summary_lines(m))
    hands: dict[str, list[str]] = {}
    for _, to, cs in m["cards"]:  # each hand (player, banker, a seat, the board) with its cards in order
        hands.setdefault(str(to) or "dealt", []).extend(cs)
    cards = "".join(f"<tr><th>{e(to)}</th><td>{''.join(_card_html(c) for c in cs)}</td></tr>" for to, cs in hands.items())
    timeline = "".join(
        f"<tr><td>{n}</td><td class=mono>{e(ev.at[:10])}<br>{e(ev.at[11:])}</td><td>{e(ev.stream)} #{ev.seq}</td>"
        f"<td>{e(ev.actor)}</td>"
        f"<td>{e(event_summary(ev.kind, ev.payload, m['currency']))}</td></tr>"
        for n, ev in enumerate(m["events"], start=1) if ev.stream != KEYRING_STREAM)
    videos = "".join(f"<tr><td>{e(v['what'])}</td><td>{e(v['camera'])}</td><td class=mono>{e(v['start'])} to"
                     f" {e(v['end'])}</td><td class=mono>{e(v['sha256'])}</td></tr>" for v in m["videos"])
    data = json.dumps(bundle, sort_keys=True, ensure_ascii=True).replace("<", "\\u003c")
    script = resources.files("projections").joinpath("report.js").read_text(encoding="utf-8")
    video_table = ("<table><tr><th>procedure</th><th>camera</th><th>time range (UTC)</th><th>footage SHA-256</th></tr>"
                   + videos + "</table>") if videos else "<p>None: no live equipment events.</p>"
    witnesses = "".join(f"<li class=mono>{e(w)}</li>" for w in bundle["witnesses"]) or \
        "<li>none given: the checkpoint's cosignatures are not checked on this page</li>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Evidence: {e(m['round'])}</title><style>{_CSS}</style></head>
<body data-verdict="PENDING">
<h1>Evidence for round {e(m['round'].split(':', 1)[1])}</h1>
<table class="summary">{rows}</table>
<div id="status" class="status pending"><strong>Checking in this browser...</strong> (this needs JavaScript;
nothing is sent anywhere: the page makes no network request)</div>
<p class="small">Checked here: every event's hash (RFC 8785 canonical JSON, SHA-256), signature (Ed25519),
chain and key (the key ring from the house key below, each key valid at the event's time), every inclusion
proof, and the checkpoint's signature by the log key below. <strong>Not checked here</strong>: the game's rules
(that the result follows from the cards and bets) and the table's configuration: run
<code>pitboss verify-bundle --anchor HOUSE_KEY DIRECTORY</code> for the full check.</p>
<h2>Keys to compare with the operator's published ones</h2>
<p>House key (the key ring's first key): <span class="mono" id="anchor">{e(m['anchor'] or '?')}</span></p>
<p>Log key: <span class="mono">{e(bundle['vkey'].strip())}</span></p>
<p>Witness keys{f" (cosignatures required: {bundle['quorum']})" if bundle['witnesses'] else ""}:</p><ul>{witnesses}</ul>
<h2>Cards drawn</h2>{'<table class="summary">' + cards + '</table>' if cards else '<p>No cards in this round.</p>'}
<h2>Timeline</h2><p class="small">{len(m['events'])} signed events, {m['keyring']} of them the key ring (not listed);
checkpoint of {m['size']} events.</p>
<table><tr><th>#</th><th>time (UTC)</th><th>stream</th><th>signer</th><th>event</th></tr>{timeline}</table>
<h2>Video references</h2>{video_table}
<script type="application/json" id="bundle">{data}</script>
<script>{script}</script>
</body></html>
"""
