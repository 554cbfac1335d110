#!/usr/bin/env bash
# The run step of the GitHub Action (action.yml): judges one MCP server with
# `mcperr run`, writes the reports, the job summary and the step outputs, and
# exits with mcperr's own exit code (0 pass, 1 failures, 2 usage or setup
# error), so the step fails exactly when mcperr does.
#
# Inputs come from the environment, as action.yml passes them (a composite
# action does not export INPUT_* by itself):
#   INPUT_COMMAND   the server as a command line, run over stdio  } exactly
#   INPUT_URL       a Streamable HTTP endpoint                    } one of them
#   INPUT_PROFILE   --profile; the default `spec` is not passed   } mcperr's own
#   INPUT_ERA       --era; the default `auto` is not passed       } defaults, so
#                                                  `args` may set them instead
#   INPUT_BASELINE  --baseline FILE (optional)
#   INPUT_PARTS     --parts FILE (optional)
#   INPUT_MIN_COVERAGE  --min-coverage PERCENT (optional)
#   INPUT_SNAPSHOTS --snapshots DIR (optional); INSTA_UPDATE=new unless set
#   INPUT_ARGS      extra arguments, split like a shell (needs python3)
#   MCPERR          the mcperr binary (default: mcperr on PATH)
# and the runner's RUNNER_TEMP, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY (each
# optional, so the script also runs outside a runner).
#
# Reports: $RUNNER_TEMP/mcperr/{report.json,report.xml,report.sarif,summary.md}.
# Outputs: pass, fail, warn, skip, error, baselined (counts from the JSON
# report, read with python3 or else jq; all empty when no report was
# written, i.e. the run could not start), report-json, report-junit, report-sarif, report-markdown (paths;
# empty for a file that was not written, and then no such file is left) and
# exit-code, snapshots-pending (with INPUT_SNAPSHOTS: how many snapshots
# are new or changed after the run; listed in the job summary).
#
# Written for bash 3.2 too (macOS runners): no mapfile, no `wait` on a
# process substitution, no expansion of a possibly empty array under set -u.
set -euo pipefail

outdir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/mcperr"
json="$outdir/report.json"
junit="$outdir/report.xml"
sarif="$outdir/report.sarif"
markdown="$outdir/summary.md"
stderr_log="$outdir/.stderr.log"
args_file="$outdir/.args"
pending_file="$outdir/.pending"
output_file="${GITHUB_OUTPUT:-/dev/null}"
summary_file="${GITHUB_STEP_SUMMARY:-/dev/null}"
counts=""   # name=count lines, once the JSON report is read
pending_count=""   # pending snapshots, with INPUT_SNAPSHOTS

# Blank: unset, empty or only whitespace.
blank() { [ -z "${1//[[:space:]]/}" ]; }

# A workflow command's message: %, CR and LF escaped, so it stays one line.
escape_data() {
    local s="$1"
    s="${s//%/%25}"
    s="${s//$'\r'/%0D}"
    s="${s//$'\n'/%0A}"
    printf '%s' "$s"
}

# `name=count` lines from the JSON report's top-level summary (a single run
# and the {"runs": [...]} document of several both carry one), plus how
# many failures a baseline accepted (cases marked "baselined"; they are
# counted in `fail` too).
read_counts() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c '
import json, sys
report = json.load(open(sys.argv[1], encoding="utf-8"))
for name in ("pass", "fail", "warn", "skip", "error"):
    print("%s=%s" % (name, report.get("summary", {}).get(name, "")))
runs = report.get("runs", [report])
print("baselined=%d" % sum(1 for r in runs for c in r.get("cases", []) if c.get("baselined")))
' "$json"
    elif command -v jq >/dev/null 2>&1; then
        jq -r '(.summary | "pass=\(.pass)\nfail=\(.fail)\nwarn=\(.warn)\nskip=\(.skip)\nerror=\(.error)"),
               "baselined=\([(.runs // [.])[] | .cases[]? | select(.baselined == true)] | length)"' "$json"
    else
        return 1
    fi
}

# One count; empty when there is no report.
count() { printf '%s\n' "$counts" | sed -n "s/^$1=//p"; }

# The step outputs.
write_outputs() {
    local rc="$1" name path
    {
        for name in pass fail warn skip error baselined; do
            printf '%s=%s\n' "$name" "$(count "$name")"
        done
        for name in json:"$json" junit:"$junit" sarif:"$sarif" markdown:"$markdown"; do
            path="${name#*:}"
            [ -s "$path" ] || path=""
            printf 'report-%s=%s\n' "${name%%:*}" "$path"
        done
        printf 'exit-code=%s\n' "$rc"
        printf 'snapshots-pending=%s\n' "$pending_count"
    } >>"$output_file"
}

# A run that never got as far as a report: one annotation, a summary saying
# so, the outputs (exit-code set, counts empty), then exit with that code.
could_not_start() {
    local rc="$1" message="$2"
    echo "::error title=mcperr could not start::$(escape_data "$message")"
    printf '## mcperr\n\nThe run could not start (exit code %s): %s\n\n' "$rc" "$message" >>"$summary_file"
    write_outputs "$rc"
    exit "$rc"
}

# mcperr's own error line from its stderr, for the summary and annotation.
error_line() {
    grep -E '^(mcperr: )?error: ' "$stderr_log" | tail -n 1 || true
}

# With INPUT_SNAPSHOTS: what the run did with its snapshots, from the JSON
# report (each run's `snapshots`): the new and changed ones listed in the
# job summary, those left unaccepted counted and annotated.
snapshot_lines() {   # "new<TAB>PATH", "changed<TAB>PATH", "accepted<TAB>N", "written<TAB>TEXT"
    if command -v python3 >/dev/null 2>&1; then
        python3 -c '
import json, sys
report = json.load(open(sys.argv[1], encoding="utf-8"))
for run in report.get("runs", [report]):
    s = run.get("snapshots") or {}
    for kind in ("new", "changed"):
        for path in s.get(kind, []):
            print("%s\t%s" % (kind, path))
    print("accepted\t%d" % s.get("accepted", 0))
    if s.get("written"):
        print("written\t%s" % s["written"])
' "$json"
    elif command -v jq >/dev/null 2>&1; then
        jq -r '(.runs // [.])[] | .snapshots // {} |
               (.new[]? | "new\t\(.)"), (.changed[]? | "changed\t\(.)"),
               "accepted\t\(.accepted // 0)", (.written // empty | "written\t\(.)")' "$json"
    else
        return 1
    fi
}
snapshots_summary() {
    local dir="${INPUT_SNAPSHOTS:-}" listed accepted written
    if blank "$dir" || [ ! -s "$json" ]; then return 0; fi
    if ! snapshot_lines >"$pending_file" 2>/dev/null; then
        echo "::warning title=mcperr snapshots::the JSON report could not be read for the snapshots (python3 or jq needed)"
        return 0
    fi
    listed="$(awk -F '\t' '$1 == "new" || $1 == "changed" { n++ } END { print n + 0 }' "$pending_file")"
    accepted="$(awk -F '\t' '$1 == "accepted" { n += $2 } END { print n + 0 }' "$pending_file")"
    written="$(awk -F '\t' '$1 == "written" { print $2; exit }' "$pending_file")"
    pending_count=$((listed - accepted))
    if [ "$listed" = 0 ]; then
        printf '\n### Snapshots\n\nEvery transcript matches its accepted snapshot in `%s`.\n' "$dir" >>"$summary_file"
        return 0
    fi
    if [ "$pending_count" -gt 0 ]; then
        echo "::error title=mcperr snapshots::$(escape_data "$pending_count snapshots in $dir are new or changed ($written): accept them with \`mcperr review $dir\` (or cargo insta review) and commit the .snap files")"
    fi
    {
        printf '\n### Snapshots: %s new or changed in `%s`\n\n%s.\n\n| | case |\n|---|---|\n' "$listed" "$dir" "$written"
        awk -F '\t' '$1 == "new" || $1 == "changed" { p = $2; sub(/\.snap$/, "", p); printf "| %s | `%s` |\n", $1, p }' "$pending_file"
        if [ "$pending_count" -gt 0 ]; then
            printf '\nAccept them with `mcperr review %s` (or `cargo insta review`), then commit the `.snap` files.\n' "$dir"
        fi
    } >>"$summary_file"
}

mkdir -p "$outdir"
# A second use of the action in the same job writes the same paths: remove
# the last reports first, so that nothing stale is read or published. The
# scratch files go at exit, leaving only the reports in $outdir.
rm -f "$json" "$junit" "$sarif" "$markdown"
trap 'rm -f "$stderr_log" "$args_file" "$pending_file"' EXIT

# Exactly one server, given as a command or as a URL.
if ! blank "${INPUT_COMMAND:-}" && ! blank "${INPUT_URL:-}"; then
    could_not_start 2 "give either the command input or the url input, not both"
elif blank "${INPUT_COMMAND:-}" && blank "${INPUT_URL:-}"; then
    could_not_start 2 "give the server to judge: the command input (a command line, run over stdio) or the url input (a Streamable HTTP endpoint)"
fi

mcperr="${MCPERR:-mcperr}"
if ! command -v "$mcperr" >/dev/null 2>&1; then
    could_not_start 2 "the mcperr binary was not found (MCPERR=$mcperr)"
fi

cmd=("$mcperr" run)
if ! blank "${INPUT_COMMAND:-}"; then
    cmd+=(--stdio "$INPUT_COMMAND")   # mcperr splits it like a shell itself
else
    cmd+=(--http "$INPUT_URL")
fi
# The defaults are mcperr's own: leaving them out lets `args` set them
# instead (clap refuses an option given twice).
if ! blank "${INPUT_PROFILE:-}" && [ "$INPUT_PROFILE" != "spec" ]; then
    cmd+=(--profile "$INPUT_PROFILE")
fi
if ! blank "${INPUT_ERA:-}" && [ "$INPUT_ERA" != "auto" ]; then
    cmd+=(--era "$INPUT_ERA")
fi
if ! blank "${INPUT_BASELINE:-}"; then
    cmd+=(--baseline "$INPUT_BASELINE")
fi
if ! blank "${INPUT_PARTS:-}"; then
    cmd+=(--parts "$INPUT_PARTS")
fi
if ! blank "${INPUT_MIN_COVERAGE:-}"; then
    cmd+=(--min-coverage "$INPUT_MIN_COVERAGE")
fi
if ! blank "${INPUT_SNAPSHOTS:-}"; then
    cmd+=(--snapshots "$INPUT_SNAPSHOTS")
    # On CI insta's own default (auto) writes nothing: the action leaves the
    # new and changed transcripts as .snap.new files, for an artifact or a
    # review, unless the job chose a mode.
    export INSTA_UPDATE="${INSTA_UPDATE:-new}"
fi
cmd+=(--json "$json" --junit "$junit" --sarif "$sarif" --markdown "$markdown")
# GitHub code scanning takes only results located in a file of the
# repository: locate them in the workflow file that ran this step
# (GITHUB_WORKFLOW_REF is owner/repo/PATH@ref), unless `args` names one.
case " ${INPUT_ARGS:-} " in
*" --sarif-location"*) ;;
*)
    workflow="${GITHUB_WORKFLOW_REF:-}"
    workflow="${workflow#*/*/}"
    workflow="${workflow%@*}"
    if [ -n "$workflow" ]; then
        cmd+=(--sarif-location "$workflow")
    fi
    ;;
esac

# Extra arguments, split like a shell but never evaluated by one (no globbing,
# no expansion, no command substitution): shlex.split, NUL-separated, through
# a file so that a split error (an unbalanced quote) is caught.
if ! blank "${INPUT_ARGS:-}"; then
    if ! command -v python3 >/dev/null 2>&1; then
        could_not_start 2 "the args input needs python3 on PATH to be split like a shell"
    fi
    if ! python3 -c 'import shlex, sys; sys.stdout.write("".join(a + "\0" for a in shlex.split(sys.argv[1])))' \
        "$INPUT_ARGS" >"$args_file" 2>"$stderr_log"; then
        could_not_start 2 "the args input could not be split like a shell: $(tail -n 1 "$stderr_log")"
    fi
    while IFS= read -r -d '' arg; do
        cmd+=("$arg")
    done <"$args_file"
fi

printf 'mcperr:'
printf ' %q' "${cmd[@]}"
printf '\n'

# Run it with annotations on. Its stdout goes to the log (through fd 3); its
# stderr goes to the log as it comes and to a file, for the one-line reason
# of an exit 2 (the pipeline waits for tee, so the file is complete when
# read). PIPESTATUS[0] is mcperr's own exit code.
exec 3>&1
set +e
GITHUB_ACTIONS=true "${cmd[@]}" 2>&1 1>&3 3>&- | tee "$stderr_log" >&2
rc="${PIPESTATUS[0]}"
set -e
exec 3>&-

# mcperr creates its report files before it runs anything: after a usage
# error they are left empty. Remove those, so that no step publishes them.
for report in "$json" "$junit" "$sarif" "$markdown"; do
    if [ -f "$report" ] && [ ! -s "$report" ]; then rm -f "$report"; fi
done

if [ ! -s "$json" ]; then
    if [ "$rc" -ne 0 ]; then
        # No report: a usage error (or a crash). Name mcperr's own error line.
        reason="$(error_line)"
        [ -n "$reason" ] || reason="$(grep -v '^[[:space:]]*$' "$stderr_log" | tail -n 1 || true)"
        could_not_start "$rc" "${reason:-mcperr exited with code $rc and wrote no report}"
    fi
    # Exit 0 without a report (e.g. `--help` in args): nothing was judged.
    echo "::warning title=mcperr judged nothing::mcperr exited 0 without writing a report"
    printf '## mcperr\n\nmcperr exited 0 without writing a report: nothing was judged.\n\n' >>"$summary_file"
    write_outputs "$rc"
    exit "$rc"
fi

if command -v python3 >/dev/null 2>&1 || command -v jq >/dev/null 2>&1; then
    counts="$(read_counts)" || counts=""
else
    echo "::warning title=mcperr::neither python3 nor jq is on PATH: the count outputs are left empty"
fi

if [ "$rc" -eq 2 ]; then
    # A setup error after which mcperr still wrote its reports (the server
    # would not start or answer): mcperr prints no annotation for it.
    reason="$(error_line)"
    echo "::error title=mcperr could not judge the server::$(escape_data "${reason:-mcperr exited with code 2}")"
fi

# The job summary: mcperr's Markdown (counts per era and transport, then each
# failure and warning), unless it would pass GitHub's 1 MiB limit per step;
# then only its counts table (what precedes the first `### `) and where the
# whole file is. Then the totals, which the table gives per run only.
if [ -s "$markdown" ]; then
    if [ "$(wc -c <"$markdown")" -lt 1000000 ]; then
        cat "$markdown" >>"$summary_file"
    else
        sed '/^### /,$d' "$markdown" >>"$summary_file"
        echo "The full summary is too large for a job summary: see the report-markdown output ($markdown)." >>"$summary_file"
    fi
fi
snapshots_summary
if [ -n "$(count pass)" ]; then
    total="$(count pass) passed, $(count fail) failed, $(count warn) warned, $(count skip) skipped, $(count error) errors"
    if [ -n "$(count baselined)" ] && [ "$(count baselined)" != "0" ]; then
        total="$total ($(count baselined) failures baselined)"
    fi
    printf '\nTotal: %s; exit code %s.\n' "$total" "$rc" >>"$summary_file"
else
    total="counts unknown"
fi
write_outputs "$rc"

echo "mcperr: $total; exit code $rc; reports in $outdir"
exit "$rc"
