#!/usr/bin/env bash
# Tests the GitHub Action (action.yml) without GitHub: checks that action.yml
# passes every input to the run step and maps every output, then runs the run
# step, scripts/action/run.sh, as a runner would (a clean environment with
# GITHUB_ACTIONS, RUNNER_TEMP, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY,
# GITHUB_WORKSPACE as the working directory, and every INPUT_* that
# action.yml's `env:` sets, empty when not given) against the reference
# server, with and without a fault, and checks exit codes, outputs, reports,
# the job summary and annotations. Runs only a prebuilt binary: a few seconds.
#
#   scripts/action/test.sh      (MCPERR_BIN: the binary; default
#                                target/release/mcperr, else target/debug/mcperr)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"

bin="${MCPERR_BIN:-}"
if [ -z "$bin" ]; then
    for candidate in target/release/mcperr target/debug/mcperr; do
        if [ -x "$candidate" ]; then bin="$candidate"; break; fi
    done
fi
case "$bin" in "" | /*) ;; *) bin="$repo/$bin" ;; esac
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    echo "action/test.sh: no mcperr binary; build one (cargo build --release) or set MCPERR_BIN" >&2
    exit 2
fi
echo "action/test.sh: mcperr is $bin"

tmp="$(mktemp -d)"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

failures=0
check() {   # check DESCRIPTION COMMAND...
    local what="$1"
    shift
    if "$@"; then
        echo "  ok    $what"
    else
        echo "  FAIL  $what"
        failures=$((failures + 1))
    fi
}
section() { printf '\n== %s\n' "$*"; }

# ---------------------------------------------------------------------------
section "action.yml: declares the inputs, passes each to the run step, maps each output"

# A Python with PyYAML parses action.yml for real; without one, a textual
# check of the same lines (action.yml keeps `name:` keys at two spaces).
yaml_python=""
for candidate in python3 target/py-venv/bin/python target/fastmcp-venv/bin/python; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import yaml' 2>/dev/null; then
        yaml_python="$candidate"
        break
    fi
done

if [ -n "$yaml_python" ]; then
    echo "  (parsing action.yml with PyYAML from $yaml_python)"
    if "$yaml_python" - action.yml scripts/action/run.sh >"$tmp/outputs.txt" 2>"$tmp/yaml.err" <<'EOF'
import re, sys, yaml

action = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
script = open(sys.argv[2], encoding="utf-8").read()
problems = []
assert action["runs"]["using"] == "composite", "runs.using is not composite"
inputs = action["inputs"]
steps = action["runs"]["steps"]
run = [s for s in steps if s.get("id") == "run"]
assert len(run) == 1, "no step with id: run"
run = run[0]
env = run.get("env", {})
for name in ("command", "url", "profile", "era", "baseline", "args"):
    if name not in inputs:
        problems.append(f"input {name} is not declared")
for name, spec in inputs.items():
    if spec.get("required"):
        problems.append(f"input {name} is required: command and url are each optional, one is checked by run.sh")
    expr = "${{ inputs.%s }}" % name
    if name == "working-directory":
        if run.get("working-directory") != expr:
            problems.append("the run step's working-directory is not the working-directory input")
        continue
    var = "INPUT_" + name.upper().replace("-", "_")
    if env.get(var) != expr:
        problems.append(f"input {name} does not reach the run step as {var}: {expr}")
    if not re.search(r"\b%s\b" % var, script):
        problems.append(f"run.sh does not read {var}")
if inputs.get("profile", {}).get("default") != "spec":
    problems.append("the profile input's default is not spec")
if inputs.get("era", {}).get("default") != "auto":
    problems.append("the era input's default is not auto")
if env.get("MCPERR") != "${{ steps.locate.outputs.bin }}":
    problems.append("the run step's MCPERR is not the located binary")
for name, spec in action["outputs"].items():
    if spec.get("value") != "${{ steps.run.outputs.%s }}" % name:
        problems.append(f"output {name} is not the run step's output of that name")
for step in steps:
    uses = step.get("uses", "")
    if uses and not uses.startswith("actions/cache/"):
        problems.append(f"unexpected action {uses}")
    if "run" in step and step.get("shell") != "bash":
        problems.append(f"step {step.get('name')} has no shell: bash (a composite run step needs one)")
print("\n".join(action["outputs"]))
if problems:
    sys.exit("\n".join(problems))
EOF
    then
        check "action.yml parses; every input reaches run.sh; every output maps a run-step output" true
    else
        sed 's/^/        /' "$tmp/yaml.err"
        check "action.yml parses; every input reaches run.sh; every output maps a run-step output" false
    fi
else
    echo "  (no Python with PyYAML here: checking action.yml textually)"
    # Keys at two spaces under the top-level `inputs:` / `outputs:` blocks.
    keys() { awk -v block="$1:" '/^[^ #]/ { on = ($0 == block) } on && /^  [a-z-]+:$/ { sub(/^  /, ""); sub(/:$/, ""); print }' action.yml; }
    keys outputs >"$tmp/outputs.txt"
    ok=true
    for name in $(keys inputs); do
        var="INPUT_$(printf '%s' "$name" | tr 'a-z-' 'A-Z_')"
        if [ "$name" = working-directory ]; then
            # shellcheck disable=SC2016 # ${{ }} is the text looked for, not an expansion
            grep -qF 'working-directory: ${{ inputs.working-directory }}' action.yml || ok=false
        elif ! grep -qF "$var: \${{ inputs.$name }}" action.yml || ! grep -q "\\b$var\\b" scripts/action/run.sh; then
            echo "        input $name does not reach run.sh as $var"
            ok=false
        fi
    done
    while IFS= read -r name; do
        grep -qF "value: \${{ steps.run.outputs.$name }}" action.yml || { echo "        output $name is not mapped"; ok=false; }
    done <"$tmp/outputs.txt"
    check "every input reaches run.sh; every output maps a run-step output (textual)" $ok
fi
check "action.yml declares outputs" test -s "$tmp/outputs.txt"

# ---------------------------------------------------------------------------
# run_action NAME [VAR=VALUE...]: run.sh in a clean, runner-like environment,
# in a fresh workspace; sets $dir (stdout, stderr, output, summary in it) and
# $rc. The INPUT_* defaults are action.yml's.
run_action() {
    dir="$tmp/$1"
    shift
    mkdir -p "$dir/runner-temp" "$dir/workspace"
    : >"$dir/output"
    : >"$dir/summary"
    set +e
    (
        cd "$dir/workspace" &&
            env -i PATH="$PATH" HOME="$HOME" LANG="${LANG:-C.UTF-8}" \
                CI=true GITHUB_ACTIONS=true RUNNER_OS=Linux \
                RUNNER_TEMP="$dir/runner-temp" GITHUB_WORKSPACE="$dir/workspace" \
                GITHUB_OUTPUT="$dir/output" GITHUB_STEP_SUMMARY="$dir/summary" \
                GITHUB_ACTION_PATH="$repo" MCPERR="$bin" \
                INPUT_COMMAND= INPUT_URL= INPUT_PROFILE=spec INPUT_ERA=auto \
                INPUT_BASELINE= INPUT_SNAPSHOTS= INPUT_ARGS= \
                "$@" bash "$repo/scripts/action/run.sh" >"$dir/stdout" 2>"$dir/stderr"
    )
    rc=$?
    set -e
}
out() { sed -n "s/^$1=//p" "$dir/output" | tail -n 1; }
is_positive() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ]; }
show_on_failure() {   # the run's log, when a check of it failed
    if [ "$failures" -gt "$1" ]; then
        echo "        --- stdout (last 15 lines) ---"; tail -n 15 "$dir/stdout" | cut -c1-200 | sed 's/^/        /'
        echo "        --- stderr ---"; cut -c1-200 "$dir/stderr" | sed 's/^/        /'
        echo "        --- GITHUB_OUTPUT ---"; sed 's/^/        /' "$dir/output"
    fi
}
lacks() { ! grep -q -- "$1" "$2"; }   # lacks PATTERN FILE
listing() { find "$1" -mindepth 1 -maxdepth 1 | sed 's|.*/||' | LC_ALL=C sort | tr '\n' ' '; }
one_error_line() {   # stdout and stderr together are one ::error line
    [ "$(cat "$dir/stdout" "$dir/stderr" | wc -l | tr -d ' ')" = 1 ] && grep -q '^::error' "$dir/stdout"
}

# ---------------------------------------------------------------------------
section "a passing server: command: \"mcperr reference\" (both eras)"
before=$failures
run_action pass INPUT_COMMAND="$bin reference"
check "exit code 0 (got $rc)" test "$rc" = 0
check "pass=$(out pass) is more than 0" is_positive "$(out pass)"
check "fail=0, error=0" test "$(out fail),$(out error)" = "0,0"
check "warn, skip and baselined are numbers" test -n "$(out warn)" -a -n "$(out skip)" -a "$(out baselined)" = 0
check "exit-code=0" test "$(out exit-code)" = 0
while IFS= read -r name; do
    check "output $name is written" grep -q "^$name=" "$dir/output"
done <"$tmp/outputs.txt"
for report in json junit sarif markdown; do
    check "report-$report is a non-empty file in RUNNER_TEMP/mcperr" \
        test -s "$(out report-$report)" -a "$(dirname "$(out report-$report)")" = "$dir/runner-temp/mcperr"
done
check "the JSON report's summary gives the same counts" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
sys.exit(0 if [str(s[k]) for k in ("pass", "fail", "warn")] == sys.argv[2:] else 1)' \
    "$(out report-json)" "$(out pass)" "$(out fail)" "$(out warn)"
check "the JUnit report is XML, the SARIF log JSON" python3 -c '
import json, sys, xml.etree.ElementTree as ET
ET.parse(sys.argv[1]); json.load(open(sys.argv[2]))' "$(out report-junit)" "$(out report-sarif)"
check "only the four reports are left in RUNNER_TEMP/mcperr" \
    test "$(listing "$dir/runner-temp/mcperr")" = "report.json report.sarif report.xml summary.md "
check "the job summary has mcperr's table" grep -q '^| era | transport | version | pass | fail' "$dir/summary"
check "the job summary has the totals: $(grep '^Total:' "$dir/summary" || true)" \
    grep -q "^Total: $(out pass) passed, 0 failed, $(out warn) warned, $(out skip) skipped, 0 errors; exit code 0\.$" "$dir/summary"
check "no ::error annotation" lacks '^::error' "$dir/stdout"
show_on_failure "$before"

# ---------------------------------------------------------------------------
section "a failing server: --fault no-input-validation, args: --cases 'tools/*' --era 2026-07-28"
before=$failures
run_action fail INPUT_COMMAND="$bin reference --fault no-input-validation" \
    INPUT_ARGS="--cases 'tools/*' --era 2026-07-28" \
    GITHUB_WORKFLOW_REF="octo/shop/.github/workflows/mcp.yml@refs/heads/main"
check "exit code 1 (got $rc)" test "$rc" = 1
check "each SARIF result is located in the workflow file (code scanning needs a file)" python3 -c '
import json, sys
results = [r for run in json.load(open(sys.argv[1]))["runs"] for r in run["results"]]
uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
sys.exit(0 if results and uris == {".github/workflows/mcp.yml"} else 1)' "$(out report-sarif)"
check "fail=$(out fail) is more than 0" is_positive "$(out fail)"
check "exit-code=1" test "$(out exit-code)" = 1
check "stdout has an ::error annotation" grep -q '^::error title=mcperr T4 ' "$dir/stdout"
check "the job summary lists the failures" grep -q '^### Failures' "$dir/summary"
check "the job summary has the totals" grep -q "^Total: .* $(out fail) failed, .*; exit code 1\.$" "$dir/summary"
show_on_failure "$before"

# ---------------------------------------------------------------------------
section "the same failures, listed in a baseline (baseline: known.toml, relative to the workspace)"
before=$failures
mkdir -p "$tmp/baselined/workspace"
cat >"$tmp/baselined/workspace/known.toml" <<'EOF'
expected = [
  "tools/invalid-args-boolean-for-integer:T4",
  "tools/invalid-args-missing:T4",
  "tools/invalid-args-out-of-range:T4",
  "tools/invalid-args-string-for-integer:T4",
  "tools/schema-2020-12-refuses:T4",
]
EOF
run_action baselined INPUT_COMMAND="$bin reference --fault no-input-validation" \
    INPUT_ARGS="--cases 'tools/*' --era 2026-07-28" INPUT_BASELINE=known.toml
check "exit code 0 (got $rc)" test "$rc" = 0
check "fail=5 and baselined=5 (got $(out fail), $(out baselined))" test "$(out fail),$(out baselined)" = "5,5"
check "the totals say so" grep -q '(5 failures baselined); exit code 0\.$' "$dir/summary"
show_on_failure "$before"

# ---------------------------------------------------------------------------
section "a server over Streamable HTTP: url: (mcperr reference --http 127.0.0.1:0)"
before=$failures
"$bin" reference --http 127.0.0.1:0 >"$tmp/http.url" 2>"$tmp/http.log" &
server_pid=$!
for _ in $(seq 50); do
    [ -s "$tmp/http.url" ] && break
    sleep 0.1
done
url="$(head -n 1 "$tmp/http.url")"
run_action http INPUT_URL="$url" INPUT_ERA=2026-07-28 INPUT_ARGS="--cases 'tools/*'"
kill "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
server_pid=""
check "exit code 0 against $url (got $rc)" test "$rc" = 0
check "pass=$(out pass) is more than 0" is_positive "$(out pass)"
check "fail=0" test "$(out fail)" = 0
check "the era input is passed as --era" grep -q -- '--era 2026-07-28' "$dir/stdout"
show_on_failure "$before"

# ---------------------------------------------------------------------------
section "no server: neither command nor url; then both"
before=$failures
run_action neither
check "exit code 2 (got $rc)" test "$rc" = 2
check "one line, an ::error annotation: $(head -c 100 "$dir/stdout")" one_error_line
check "exit-code=2 and empty counts" test "$(out exit-code),$(out pass),$(out fail)" = "2,,"
check "the job summary says the run could not start" grep -q 'could not start' "$dir/summary"
run_action both INPUT_COMMAND="$bin reference" INPUT_URL="http://127.0.0.1:9/mcp"
check "both: exit code 2 (got $rc)" test "$rc" = 2
check "both: one ::error line: $(head -c 100 "$dir/stdout")" one_error_line
run_action blank INPUT_COMMAND="   "
check "a blank command counts as none: exit code 2 (got $rc)" test "$rc" = 2
show_on_failure "$before"

# ---------------------------------------------------------------------------
section "args is split like a shell, never evaluated (a stub mcperr records its argv)"
before=$failures
stub="$tmp/stub-mcperr"
printf '#!/usr/bin/env bash\nprintf "%%s\\n" "$@" >"%s"\n' "$tmp/argv" >"$stub"
chmod +x "$stub"
# shellcheck disable=SC2016 # the $ signs are the test: they must reach mcperr as they are
run_action split MCPERR="$stub" INPUT_COMMAND="python server.py --name 'my server'" \
    INPUT_ARGS='--cases '\''tools/*'\'' --tools "a b"  --header '\''X-Home: $HOME'\'' $(touch pwned) `touch pwned2`'
cat >"$tmp/argv.expected" <<'EOF'
--cases
tools/*
--tools
a b
--header
X-Home: $HOME
$(touch
pwned)
`touch
pwned2`
EOF
argv() { sed -n "$1p" "$tmp/argv"; }
check "mcperr got: run --stdio CMD" test "$(argv 1)|$(argv 2)" = "run|--stdio"
check "the command is one argument: $(argv 3)" test "$(argv 3)" = "python server.py --name 'my server'"
check "the default profile and era are not passed (args may set them)" lacks '^--profile$\|^--era$' "$tmp/argv"
tail -n 10 "$tmp/argv" >"$tmp/argv.tail"
check "args arrive as ten arguments, quotes removed, nothing expanded" cmp -s "$tmp/argv.tail" "$tmp/argv.expected"
check "nothing was executed" test ! -e "$dir/workspace/pwned" -a ! -e "$dir/workspace/pwned2"
check "a run that exited 0 without a report: exit code 0 (got $rc)" test "$rc" = 0
check "... and a warning that nothing was judged" grep -q '^::warning title=mcperr judged nothing' "$dir/stdout"
show_on_failure "$before"

section "args with a quoted glob, run for real (the workspace holds a file the glob would match)"
before=$failures
mkdir -p "$tmp/glob/workspace/tools"
: >"$tmp/glob/workspace/tools/invalid-args-x"
run_action glob INPUT_COMMAND="$bin reference --fault no-input-validation" \
    INPUT_ARGS="--cases 'tools/invalid-args-*' --era 2026-07-28"
check "exit code 1 (got $rc), fail=4" test "$rc,$(out fail)" = "1,4"
check "every case run matches the glob" python3 -c '
import json, sys
ids = [c["id"] for c in json.load(open(sys.argv[1]))["cases"]]
sys.exit(0 if ids and all(i.startswith("tools/invalid-args-") for i in ids) else 1)' "$(out report-json)"
show_on_failure "$before"

section "args with an unbalanced quote"
before=$failures
run_action unbalanced INPUT_COMMAND="$bin reference" INPUT_ARGS="--cases 'tools/*"
check "exit code 2 (got $rc)" test "$rc" = 2
check "one ::error line: $(head -c 100 "$dir/stdout")" one_error_line
show_on_failure "$before"

# ---------------------------------------------------------------------------
section "mcperr exits 2 before writing a report (args: --cases 'no-such-case/*')"
before=$failures
run_action noreport INPUT_COMMAND="$bin reference" INPUT_ARGS="--cases 'no-such-case/*'"
check "exit code 2 (got $rc)" test "$rc" = 2
check "outputs still written: exit-code=2, empty counts and report paths" \
    test "$(out exit-code)|$(out pass)|$(out fail)|$(out report-json)" = "2|||"
check "an ::error annotation with mcperr's reason" grep -q '^::error title=mcperr could not start::.*matches no case' "$dir/stdout"
check "the job summary says the run could not start" grep -q 'The run could not start (exit code 2): .*matches no case' "$dir/summary"
check "no empty report files are left behind" test -z "$(ls -A "$dir/runner-temp/mcperr")"
show_on_failure "$before"

section "the server would not start (command: /nonexistent/server): mcperr writes reports, exits 2"
before=$failures
run_action nostart INPUT_COMMAND="/nonexistent/server"
check "exit code 2 (got $rc), error=$(out error)" test "$rc,$(out error)" = "2,1"
check "an ::error annotation says so" grep -q '^::error title=mcperr could not judge the server::.*could not start' "$dir/stdout"
show_on_failure "$before"

section "parts and min-coverage reach mcperr (parts: a file naming a player; min-coverage: 100)"
before=$failures
printf '[parts.crash]\ntool = "crash"\narguments = { secret = "{{canary}}" }\n' >"$tmp/parts.toml"
run_action mincov INPUT_COMMAND="$bin reference" INPUT_ERA=2026-07-28 INPUT_PARTS="$tmp/parts.toml" INPUT_MIN_COVERAGE=100
check "exit code 1 (got $rc): the stdio run judged less than 100 %" test "$rc" = 1
check "the run says which run fell short" grep -q '^COVERAGE 2026-07-28 over stdio judged' "$dir/stdout"
check "the JSON report names the part's player as named" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
runs = d.get("runs", [d])
sys.exit(0 if all(r["parts"]["crash"]["found"]["by"] == "named" for r in runs) else 1)' "$(out report-json)"
show_on_failure "$before"

# ---------------------------------------------------------------------------
section "snapshots: a first run leaves them pending and fails; accepted, the next run passes; a fault lists what it changed"
before=$failures
snap_args=(INPUT_ERA=2026-07-28 "INPUT_ARGS=--cases 'tools/*'" INPUT_SNAPSHOTS=snaps)
run_action snap INPUT_COMMAND="$bin reference" "${snap_args[@]}"
check "exit code 1 (got $rc): every snapshot is new" test "$rc" = 1
check "snapshots-pending=$(out snapshots-pending) is more than 0" is_positive "$(out snapshots-pending)"
check "the .snap.new files are left in the workspace, on CI too (INSTA_UPDATE=new)" \
    test "$(find "$dir/workspace/snaps" -name '*.snap.new' | wc -l | tr -d ' ')" = "$(out snapshots-pending)"
check "an ::error annotation says how to accept them" grep -q '^::error title=mcperr snapshots::.*mcperr review snaps' "$dir/stdout"
check "the job summary lists each new case" grep -q '^| new | `stdio-2026-07-28/tools/' "$dir/summary"
"$bin" review "$dir/workspace/snaps" --accept >/dev/null
run_action snap INPUT_COMMAND="$bin reference" "${snap_args[@]}"
check "accepted: exit code 0 (got $rc), snapshots-pending=0" test "$rc,$(out snapshots-pending)" = "0,0"
check "the job summary says every transcript matches" grep -q '^Every transcript matches its accepted snapshot' "$dir/summary"
run_action snap INPUT_COMMAND="$bin reference --fault no-input-validation" "${snap_args[@]}"
check "a fault: exit code 1 (got $rc)" test "$rc" = 1
check "the job summary lists the changed cases, and only changed ones" \
    sh -c 'grep -q "^| changed | \`stdio-2026-07-28/tools/invalid-args-" "$1" && ! grep -q "^| new |" "$1"' _ "$dir/summary"
run_action snapno INSTA_UPDATE=no INPUT_COMMAND="$bin reference --fault no-input-validation" "${snap_args[@]}"
check "INSTA_UPDATE=no: exit code 1 (got $rc), nothing written, still counted and listed" \
    sh -c 'test "$1" = 1 && test -z "$(find "$2/snaps" -type f)" && grep -q "^| new | \`stdio-2026-07-28/tools/" "$3" && grep -q "not written (INSTA_UPDATE=no)" "$3"' _ "$rc" "$dir/workspace" "$dir/summary"
check "INSTA_UPDATE=no: snapshots-pending=$(out snapshots-pending) is more than 0" is_positive "$(out snapshots-pending)"
show_on_failure "$before"

echo
if [ "$failures" -ne 0 ]; then
    echo "action/test.sh: $failures check(s) failed"
    exit 1
fi
echo "action/test.sh: all checks passed"
