package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// canary marks every planted secret; no output may contain it.
const canary = "cnry"

// canaryProject plants secrets in every place a definition can hold one:
// credential-shaped variables (in the command and cwd, which refuses the
// server by name, and in args, URL, env and headers), plain variables in env and header values, literal env and
// header values, URL userinfo and query, a credential-shaped flag, an
// OAuth client secret and a shell-line headers helper.
const canaryProject = `{"mcpServers": {
  "api": {
    "type": "http",
    "url": "https://bob:cnry-userinfo-4e2a@api.example.com/mcp/${SERVICE_TOKEN}?token=cnry-query-8b5c&api_key=cnry-query-2&region=eu",
    "headers": {
      "Authorization": "Bearer cnry-header-literal-0d3f",
      "X-Custom": "cnry-header-plain-77e0",
      "X-Trace": "${PLAIN_VALUE}",
      "X-Token": "${SERVICE_TOKEN}"
    }
  },
  "tool": {
    "command": "${SERVICE_TOKEN}-runner",
    "args": ["--api-key=cnry-arg-flag-1b", "--auth", "${SERVICE_TOKEN}", "--password=${PLAIN_VALUE}"],
    "cwd": "/srv/${SERVICE_TOKEN}",
    "env": {"API_KEY": "cnry-env-literal-91b2", "OTHER": "cnry-env-plain-3c", "NODE_OPTIONS": "${PLAIN_VALUE}", "GH": "${SERVICE_TOKEN}"}
  },
  "tool2": {
    "command": "runner",
    "args": ["--api-key=cnry-arg-flag-1b", "--auth", "${SERVICE_TOKEN}", "--password=${PLAIN_VALUE}"],
    "env": {"API_KEY": "cnry-env-literal-91b2", "OTHER": "cnry-env-plain-3c", "NODE_OPTIONS": "${PLAIN_VALUE}", "GH": "${SERVICE_TOKEN}"}
  },
  "secret-oauth": {"type": "http", "url": "https://o.example.com/mcp", "oauth": {"clientId": "app", "clientSecret": "cnry-client-secret-5d"}},
  "helper": {"type": "http", "url": "https://h.example.com/mcp", "headersHelper": "print-token cnry-helper-line-6e"},
  "missing": {"type": "http", "url": "https://m.example.com/mcp", "headers": {"Authorization": "Bearer ${UNSET_TOKEN:-cnry-default-7f}", "X-K": "${NEVER_SET_SECRET}"}},
  "defaulted": {"command": "d", "args": ["--key", "${DEFAULT_TOKEN:-cnry-default-8a}"]}
}}`

func TestNoCanaryInAnyOutput(t *testing.T) {
	w := newWorld(t, map[string]string{
		"managed.json": `{"mcpServers": {"corp": {"type": "http", "url": "https://corp.example.com/mcp", "headers": {"Authorization": "Bearer ${CORP_TOKEN}"}}}}`,
		"ws/.mcp.json": canaryProject,
		// The repository identity comes from a remote holding credentials.
		"ws/.git/config": "[remote \"origin\"]\n\turl = https://x:cnry-git-pass-1a@github.com/acme/w.git?auth=cnry-git-query#cnry-frag\n",
	},
		"SERVICE_TOKEN=cnry-var-token-7c1e",
		"PLAIN_VALUE=cnry-var-plain-55aa",
		"CORP_TOKEN=cnry-corp-token-2b",
	)
	m := []string{"--managed", "$ROOT/managed.json"}
	servers := []string{"api", "tool", "tool2", "secret-oauth", "helper", "missing", "defaulted", "corp", "absent"}
	var runs [][]string
	add := func(args ...string) { runs = append(runs, append(append([]string{}, m...), args...)) }
	for _, j := range []string{"", "--json"} {
		add("list", j)
		add("doctor", j)
		for _, s := range servers {
			add("show", s, j)
			add("approve", s, j)
			add("show", s, j)
			add("--trust-workspace", "list", j)
			add("revoke", s, j)
		}
	}
	// Secrets typed into the wrong place are not echoed either.
	runs = append(runs,
		[]string{"cnry-command-typo"},
		[]string{"--profile", "cnry-profile-typo", "list"},
		[]string{"--json=cnry-bool-typo", "list"},
		[]string{"show", "cnry-name-1", "cnry-name-2"},
		[]string{"--project", "$ROOT/cnry-missing-file-dir/none.json", "list"},
	)

	// The approval review (show, approve) shows what the project wrote,
	// env and header values included (issue 22): the literals under keys
	// that are not credential-shaped are shown there, exactly there, and
	// nowhere else. Everything secret stays masked in it too.
	reviewShown := []string{
		"OTHER=cnry-env-plain-3c", "X-Custom: cnry-header-plain-77e0", // text rows
		`"value": "cnry-env-plain-3c"`, `"value": "cnry-header-plain-77e0"`, // --json review
	}
	var all, reviewed strings.Builder
	for _, args := range runs {
		args = slicesWithout(args, "")
		r := w.run(t, args...)
		out := r.stdout + r.stderr
		all.WriteString(out)
		// A path of the test's own choosing may hold the marker; nothing else.
		out = strings.ReplaceAll(out, filepath.Join(w.root, "cnry-missing-file-dir"), "<path>")
		if slices.Contains(args, "show") || slices.Contains(args, "approve") {
			reviewed.WriteString(out)
			for _, shown := range reviewShown {
				out = strings.ReplaceAll(out, shown, "<reviewed>")
			}
		}
		assert.NotContains(t, out, canary, "mcpward %s", strings.Join(args, " "))
	}
	for _, shown := range reviewShown {
		assert.Contains(t, reviewed.String(), shown, "the review shows what the project wrote")
	}

	// The check looks at real output: the secrets' places are shown masked.
	got := all.String()
	for _, want := range []string{
		"${SERVICE_TOKEN}-runner", // refused by name: the review shows the template
		"secret_in_command",
		"https://bob:<redacted>@api.example.com/mcp/<redacted:SERVICE_TOKEN>?token=<redacted>&api_key=<redacted>&region=eu",
		"--api-key=<redacted>",
		`"API_KEY"`, `"NODE_OPTIONS"`, `"X-Custom"`,
		"oauth_client_secret_in_definition",
		"headers_helper_not_argv",
		"NEVER_SET_SECRET",
		"https://github.com/acme/w.git",
		// api's URL carries userinfo, so evaluation already refuses it
		// by name (the URL admission is pure); tool's command is a
		// credential-shaped variable, refused by name too; tool2 is
		// approved instead.
		"userinfo_refused",
		"approved tool2",
	} {
		assert.Contains(t, got, want)
	}

	// Nor is anything secret kept in the state directory.
	err := filepath.WalkDir(filepath.Join(w.root, "state"), func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.NotContains(t, string(data), canary, p)
		return nil
	})
	require.NoError(t, err)
	audit, err := os.ReadFile(filepath.Join(w.root, "state", "mcpward", "store", "audit.jsonl"))
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`"grant"`), string(audit), "the audit trail was written and checked")
}

// slicesWithout returns s without the elements equal to v.
func slicesWithout(s []string, v string) []string {
	out := s[:0:0]
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// TestNoCanaryInLoginOutput: the secrets the sign-ins without a browser
// read from files — a workload's JWT, an ID token, the IdP client's secret,
// a private key — appear in no output and nowhere in the state directory,
// whichever way the sign-in is refused (each before anything is sent).
func TestNoCanaryInLoginOutput(t *testing.T) {
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"notes": {"type": "http", "url": "https://notes.example.com/mcp", "oauth": {"clientId": "app"}}}}`,
		"wl-token":                "cnry-workload-jwt-3e1a.not-a-jwt",
		"wl-bad-jwt":              "eyJhbGciOiJub25lIn0.eyJpc3MiOiJjbnJ5LWlzcyJ9.c2ln", // alg none
		"id-token":                "cnry-id-token-77b0",
		"idp-secret":              "cnry-idp-secret-91",
		"key.pem":                 "-----BEGIN PRIVATE KEY-----\ncnry-key-material-5c\n-----END PRIVATE KEY-----\n",
	})
	for _, tt := range []struct {
		args   []string
		reason string
	}{
		{[]string{"login", "--workload-identity-token-file", "$ROOT/wl-token", "notes"}, "workload_token_invalid"},
		{[]string{"login", "--workload-identity-token-file", "$ROOT/wl-bad-jwt", "--workload-issuer", "cnry-iss", "notes"}, "workload_token_invalid"},
		{[]string{"login", "--workload-identity-token-file", "$ROOT/cnry-missing", "notes"}, "workload_token_unavailable"},
		{[]string{"login", "--enterprise-managed", "--id-token-file", "$ROOT/id-token", "--idp-client-secret-file", "$ROOT/idp-secret",
			"--idp-token-endpoint", "http://cnry-idp.example/token", "--private-key-file", "$ROOT/key.pem", "notes"}, "cross_app_invalid"},
		{[]string{"--json", "login", "--workload-identity-token-file", "$ROOT/wl-token", "notes"}, "workload_token_invalid"},
	} {
		r := w.run(t, tt.args...)
		assert.Equal(t, 1, r.code, "%v\n%s%s", tt.args, r.stdout, r.stderr)
		out := strings.ReplaceAll(r.stdout+r.stderr, filepath.Join(w.root, "cnry-missing"), "<path>")
		assert.Contains(t, out, tt.reason)
		assert.NotContains(t, out, canary, "mcpward %s", strings.Join(tt.args, " "))
	}
	err := filepath.WalkDir(filepath.Join(w.root, "state"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.NotContains(t, string(data), canary, p)
		return nil
	})
	require.NoError(t, err)
}
