package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The official MCP conformance suite's CLI and the Node it runs on, both
// pinned in peers/ (package.json: @modelcontextprotocol/conformance, and
// the npm "node" package, whose binary is node_modules/.bin/node).
const (
	conformanceEntry = "../../../peers/node_modules/@modelcontextprotocol/conformance/dist/index.js"
	conformanceNode  = "../../../peers/node_modules/.bin/node"
	// conformanceScenarios is how many client scenarios the pinned suite
	// has; a new pin with another count must revisit the lists below.
	conformanceScenarios = 26

	// conformanceNextEntry is the suite of protocol 2026-07-28
	// (@modelcontextprotocol/conformance@0.2.0-alpha.12, the npm alias
	// conformance-next in peers/; move to 0.2.0 when it is published).
	conformanceNextEntry = "../../../peers/node_modules/conformance-next/dist/index.js"
	// conformanceRevision is the requirement set run: the client
	// scenarios that revision requires, frozen at its release.
	conformanceRevision = "2026-07-28"
	// conformanceRequired is how many client scenarios that set has.
	conformanceRequired = 32
)

// conformanceFailures is the one list of the client scenarios mcpward is
// expected to fail, each with the texts the run's output must show, which
// say why. Every other client scenario of the pinned suite must pass.
var conformanceFailures = map[string][]string{
	// The 2025-03-26 fallbacks: no protected-resource metadata, so the
	// client would have to guess the authorization server's metadata
	// (backcompat) or its endpoints (fallback) from the MCP server's
	// origin. mcpward never guesses: sign-in stops at discovery, and the
	// suite saw no request for the guessed metadata or endpoints.
	"auth/2025-03-26-oauth-metadata-backcompat": {"resource_metadata_unavailable",
		"Expected Check Missing: authorization-server-metadata"},
	"auth/2025-03-26-oauth-endpoint-fallback": {"resource_metadata_unavailable",
		"Expected Check Missing: client-registration"},
}

// conformanceNextFailures is the one list of the client scenarios of the
// 2026-07-28 requirement set mcpward is expected to fail, each with its
// reason. Every other scenario of the set must pass. One entry a line, so
// that the work that fixes one takes its line off.
var conformanceNextFailures = map[string]string{}

// conformanceNextAlso are scenarios the requirement-set run reports but
// does not score that mcpward passes all the same (json-schema-2020-12-
// preservation was added after the revision's release), and the suite's
// auth extensions, which it runs beside the set and reports, never scored:
// client credentials, enterprise-managed authorization, DPoP (with and
// without nonces) and workload identity federation.
var conformanceNextAlso = []string{"json-schema-2020-12-preservation",
	"auth/client-credentials-jwt", "auth/client-credentials-basic", "auth/enterprise-managed-authorization",
	"auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer"}

// peerPath returns the absolute path of a file of peers/, failing the test
// when it is missing and MCPWARD_REQUIRE_PEERS=1, skipping it otherwise.
func peerPath(t *testing.T, rel, what string) string {
	t.Helper()
	p, err := filepath.Abs(rel)
	require.NoError(t, err)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("MCPWARD_REQUIRE_PEERS") == "1" {
			t.Fatalf("MCPWARD_REQUIRE_PEERS=1 but %s is missing (run: cd peers && npm ci)", what)
		}
		t.Skipf("%s is missing (run: cd peers && npm ci; MCPWARD_REQUIRE_PEERS=1 makes this a failure)", what)
	}
	return p
}

// TestOfficialConformance runs the official MCP conformance suites pinned
// in peers/, on the Node pinned there, against the conformance client
// (mcpward-conformance, built on the Host API): every client scenario of
// the legacy suite (0.1.16), where the scenarios of conformanceFailures
// must fail, showing their reason, and every other one must pass with no
// failed check; and the 2026-07-28 client requirement set of the next
// suite, where the scenarios of conformanceNextFailures must fail and
// every other one must pass.
func TestOfficialConformance(t *testing.T) {
	node := peerPath(t, conformanceNode, "the Node of peers/ (node_modules/.bin/node)")
	entry := peerPath(t, conformanceEntry, "@modelcontextprotocol/conformance")
	next := peerPath(t, conformanceNextEntry, "@modelcontextprotocol/conformance@0.2.0-alpha.12 (conformance-next)")
	client := filepath.Join(t.TempDir(), "mcpward-conformance")
	out, err := exec.Command("go", "build", "-o", client, "./mcpward-conformance").CombinedOutput()
	require.NoError(t, err, "go build ./mcpward-conformance:\n%s", out)
	// The two suites, and the legacy suite's scenarios (each its own
	// servers on ports of their own), run side by side.
	t.Run("legacy", func(t *testing.T) { t.Parallel(); legacyConformance(t, node, entry, client) })
	t.Run(conformanceRevision, func(t *testing.T) { t.Parallel(); requiredConformance(t, node, next, client) })
}

// requiredConformance runs the client requirement set of
// conformanceRevision (each scenario at that revision's wire) and checks
// each scenario's line of the run's summary.
func requiredConformance(t *testing.T, node, entry, client string) {
	out, err := exec.Command(node, entry, "list", "--client", "--requirements", conformanceRevision).CombinedOutput()
	require.NoError(t, err, "conformance list --requirements:\n%s", out)
	listed := string(out)
	if i := strings.Index(listed, "Run and reported"); i >= 0 {
		listed = listed[:i]
	}
	if i := strings.Index(listed, "Client scenarios"); i >= 0 {
		listed = listed[i:]
	}
	var required []string
	for _, m := range regexp.MustCompile(`(?m)^  - (\S+)`).FindAllStringSubmatch(listed, -1) {
		required = append(required, m[1])
	}
	require.Len(t, required, conformanceRequired, "the %s client requirement set:\n%s", conformanceRevision, out)
	for name := range conformanceNextFailures {
		assert.Contains(t, required, name, "an expected failure names a required scenario")
	}

	cmd := exec.Command(node, entry, "client", "--command", client, "--requirements", conformanceRevision, "--timeout", "30000")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, _ = cmd.CombinedOutput() // exits 1 while any scenario fails
	text := string(out)
	i := strings.Index(text, "SUITE SUMMARY")
	require.GreaterOrEqual(t, i, 0, "no summary:\n%s", text)
	results := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([✓✗]) (\S+): \d+ passed, \d+ failed`).FindAllStringSubmatch(text[i:], -1) {
		results[m[2]] = m[1] == "✓"
	}
	for _, name := range append(required, conformanceNextAlso...) {
		t.Run(name, func(t *testing.T) {
			passed, ran := results[name]
			require.True(t, ran, "no result for the scenario:\n%s", text[i:])
			if why, fails := conformanceNextFailures[name]; fails {
				assert.False(t, passed, "expected to fail (%s); if it passes now, take it off conformanceNextFailures", why)
				return
			}
			assert.True(t, passed, "failed; run: node %s client --command bin/mcpward-conformance --scenario %s --spec-version %s", conformanceNextEntry, name, conformanceRevision)
		})
	}
}

// legacyConformance runs every client scenario of the legacy suite, one
// at a time.
func legacyConformance(t *testing.T, node, entry, client string) {

	out, err := exec.Command(node, entry, "list", "--client").CombinedOutput()
	require.NoError(t, err, "conformance list --client:\n%s", out)
	var scenarios []string
	for _, m := range regexp.MustCompile(`(?m)^  - (\S+)`).FindAllStringSubmatch(string(out), -1) {
		scenarios = append(scenarios, m[1])
	}
	require.Len(t, scenarios, conformanceScenarios, "the pinned suite's client scenarios:\n%s", out)
	for name := range conformanceFailures {
		assert.Contains(t, scenarios, name, "an expected failure names a scenario of the suite")
	}

	passed := regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed`)
	for _, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(node, entry, "client", "--command", client, "--scenario", scenario, "--timeout", "30000")
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			text := string(out)
			m := passed.FindStringSubmatch(text)
			require.NotNil(t, m, "no result line:\n%s", text)
			whys, fails := conformanceFailures[scenario]
			if !fails {
				assert.NoError(t, err, "scenario failed:\n%s", text)
				assert.Equal(t, "0", m[3], "failed checks:\n%s", text)
				assert.Equal(t, m[1], m[2], "every check passed:\n%s", text)
				assert.Contains(t, text, "OVERALL: PASSED")
				return
			}
			assert.Error(t, err, "expected to fail; if it passes now, take it off conformanceFailures:\n%s", text)
			assert.False(t, strings.Contains(text, "OVERALL: PASSED"), "expected to fail:\n%s", text)
			for _, why := range whys {
				assert.Contains(t, text, why, "fails for its known reason:\n%s", text)
			}
		})
	}
}
