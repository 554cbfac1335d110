#!/usr/bin/env python3
"""Compares the official conformance suite's checks with mcperr's verdicts.

Usage: official_compare.py CHECKS_TOML RESULTS_DIR

RESULTS_DIR holds one directory per server, each with `official/` (the
suite's results/, one checks.json per scenario) and `mcperr.json` (an mcperr
run report). Prints a Markdown section per server: each check of
CHECKS_TOML, the suite's status, the verdict mcperr gave its cases, and
whether they agree; then the totals. Exit code 0 (the disagreements are the
output, not a failure).
"""
import glob
import json
import os
import sys
import tomllib

ORDER = {"skip": 0, "pass": 1, "warn": 2, "error": 3, "fail": 4}


def official_statuses(root):
    """check id -> (status, message) over every checks.json under root."""
    out = {}
    for path in sorted(glob.glob(os.path.join(root, "**", "checks.json"), recursive=True)):
        with open(path) as f:
            for c in json.load(f):
                if c.get("status") == "INFO":
                    continue
                out[c["id"]] = (c["status"], c.get("errorMessage") or "")
    return out


def mcperr_verdicts(path):
    """case id -> (verdict, message) of an mcperr --json report."""
    with open(path) as f:
        r = json.load(f)
    runs = r.get("runs") or [r]
    return {c["id"]: (c["verdict"], c.get("message", "")) for run in runs for c in run["cases"]}


def agree(status, verdict):
    if verdict is None or verdict == "skip":
        return False
    return (status == "SUCCESS") == (verdict == "pass")


def clip(text, n=140):
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def main():
    checks_toml, results = sys.argv[1], sys.argv[2]
    with open(checks_toml, "rb") as f:
        table = tomllib.load(f)
    total = disagreements = 0
    print(f"Official suite {table['suite']} (under {table['node']}) and mcperr, 2025-11-25 over Streamable HTTP.\n")
    for server in sorted(os.listdir(results)):
        sdir = os.path.join(results, server)
        if not os.path.isdir(sdir):
            continue
        official = official_statuses(os.path.join(sdir, "official"))
        verdicts = mcperr_verdicts(os.path.join(sdir, "mcperr.json"))
        print(f"### {server}\n")
        print("| official check | suite | mcperr cases | mcperr | agree |")
        print("|---|---|---|---|---|")
        for check in table["check"]:
            status, why = official.get(check["id"], ("not run", ""))
            cases = check.get("cases", [])
            got = [verdicts[c] for c in cases if c in verdicts]
            verdict = max((v for v, _ in got), key=ORDER.get) if got else None
            shown = verdict or ("not covered" if not cases else "not run")
            ok = "yes" if agree(status, verdict) else ("—" if not cases else "**no**")
            total += 1
            if ok == "**no**":
                disagreements += 1
            suite_cell = status if not why else f"{status}: {clip(why)}"
            mcperr_cell = shown
            if verdict not in (None, "pass"):
                mcperr_cell += ": " + clip(next(m for v, m in got if v == verdict))
            print(f"| `{check['id']}` | {suite_cell} | {', '.join(f'`{c}`' for c in cases) or '—'} | {mcperr_cell} | {ok} |")
        print()
    print(f"{disagreements} disagreements in {total} check runs.")


if __name__ == "__main__":
    main()
