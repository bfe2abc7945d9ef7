#!/usr/bin/env bash
# Runs every client scenario of the official MCP conformance suite pinned in
# peers/ against bin/mcpward-conformance (make conformance-client), one at a
# time, and prints one line per scenario: pass or fail, the checks passed,
# and the first failed check. Exit 0 whatever the results: the expected set
# is asserted by TestOfficialConformance (composition/cmd/mcpward).
#
#   scripts/conformance.sh [SCENARIO...]   (default: every client scenario)
set -euo pipefail
cd "$(dirname "$0")/.."
node=peers/node_modules/.bin/node
suite=peers/node_modules/@modelcontextprotocol/conformance/dist/index.js
client=$PWD/bin/mcpward-conformance
[ -x "$node" ] && [ -f "$suite" ] || { echo "missing the peers: make peers"; exit 1; }
[ -x "$client" ] || { echo "missing $client: make conformance-client"; exit 1; }

if [ $# -gt 0 ]; then
	scenarios=("$@")
else
	mapfile -t scenarios < <("$node" "$suite" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-45s %-5s %-7s %s\n' scenario result checks "first failure"
pass=0
for s in "${scenarios[@]}"; do
	out=$work/out.txt
	rc=0
	(cd "$work" && NO_COLOR=1 "$OLDPWD/$node" "$OLDPWD/$suite" client --command "$client" --scenario "$s" --timeout 30000) >"$out" 2>&1 || rc=$?
	checks=$(sed -n 's/^Passed: \([0-9]*\/[0-9]*\).*/\1/p' "$out" | tail -1)
	first=$(sed -n '/^Failed Checks:/{n;s/^  - //p;q}' "$out" | cut -c1-90)
	if [ $rc -eq 0 ] && grep -q 'OVERALL: PASSED' "$out"; then
		result=pass
		pass=$((pass + 1))
	else
		result=FAIL
		[ -n "$first" ] || first=$(grep -m1 '^mcpward-conformance:' "$out" | cut -c1-90 || true)
	fi
	printf '%-45s %-5s %-7s %s\n' "$s" "$result" "${checks:-?}" "$first"
done
echo "passed $pass of ${#scenarios[@]}"
