#!/usr/bin/env python3
"""Prints a run's learning curve (metrics.jsonl) as a Markdown table: per generation the
wall time, losses, self-play per-side rates, and the evaluation scores and Elo."""
import json
import sys

def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    opponents = []
    for r in rows:
        for e in r.get("eval", []):
            if e["opponent"] not in opponents:
                opponents.append(e["opponent"])
    head = ["gen", "minutes", "loss (p/v)", "self-play att/def/draw", "plies"]
    head += [f"vs {o}: score (Elo), A as att / def" for o in opponents]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        sp = r["selfplay"]
        cells = [
            str(r["generation"]),
            f"{r['wall_seconds'] / 60:.1f}",
            f"{r['loss']['policy']:.2f} / {r['loss']['value']:.2f}",
            f"{100 * sp['attackers_win']:.0f}% / {100 * sp['defenders_win']:.0f}% / {100 * sp['draws']:.0f}%",
            f"{sp['mean_plies']:.0f}",
        ]
        ev = {e["opponent"]: e for e in r.get("eval", [])}
        for o in opponents:
            e = ev.get(o)
            if e is None:
                cells.append("")
                continue
            a, d = e["as_attackers"], e["as_defenders"]
            cells.append(f"{100 * e['score']:.0f}% ({e['elo']:+.0f}), {a['win']}-{a['draw']}-{a['loss']} / {d['win']}-{d['draw']}-{d['loss']}")
        print("| " + " | ".join(cells) + " |")

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: learning_curve.py RUN_DIR/metrics.jsonl")
    main(sys.argv[1])
