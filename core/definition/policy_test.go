package definition_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

func policySrc(tier ports.Tier, data string) definition.Source {
	return definition.Source{Tier: tier, Origin: "/" + string(tier) + ".json", Data: []byte(data)}
}

func TestDecodePolicy(t *testing.T) {
	tests := []struct {
		name        string
		tier        ports.Tier
		data        string
		want        *definition.Policy
		wantProblem definition.ProblemKind
	}{
		{name: "no policy", tier: ports.TierManaged, data: `{"mcpServers":{}}`},
		{name: "full policy", tier: ports.TierManaged, data: `{
			"allowedMcpServers":[{"serverName":"github"},{"serverCommand":["npx","-y","pkg"]},{"serverUrl":"https://*.corp.example/*"}],
			"deniedMcpServers":[{"serverName":"evil"}],
			"deniedTools":["github/delete_*","mcp__fs__write_file","github/delete_*"]}`,
			want: &definition.Policy{
				Allowed:     []definition.ServerMatcher{{Name: "github"}, {Command: []string{"npx", "-y", "pkg"}}, {URL: "https://*.corp.example/*"}},
				Denied:      []definition.ServerMatcher{{Name: "evil"}},
				DeniedTools: []string{"github/delete_*", "mcp__fs__write_file"},
			}},
		{name: "empty allow list is kept", tier: ports.TierManaged, data: `{"allowedMcpServers":[]}`,
			want: &definition.Policy{Allowed: []definition.ServerMatcher{}}},
		{name: "ignored below managed", tier: ports.TierUser, data: `{"allowedMcpServers":[],"deniedTools":"x"}`},
		{name: "not an array", tier: ports.TierManaged, data: `{"deniedMcpServers":{"serverName":"x"}}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "two keys in one entry", tier: ports.TierManaged, data: `{"deniedMcpServers":[{"serverName":"x","serverUrl":"y"}]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "empty entry", tier: ports.TierManaged, data: `{"allowedMcpServers":[{}]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "unknown key", tier: ports.TierManaged, data: `{"allowedMcpServers":[{"serverHost":"x"}]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "command not argv", tier: ports.TierManaged, data: `{"allowedMcpServers":[{"serverCommand":"npx -y pkg"}]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "empty command", tier: ports.TierManaged, data: `{"allowedMcpServers":[{"serverCommand":[]}]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "invalid name", tier: ports.TierManaged, data: `{"allowedMcpServers":[{"serverName":"a b"}]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "empty url", tier: ports.TierManaged, data: `{"deniedMcpServers":[{"serverUrl":""}]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "null is not absence", tier: ports.TierManaged, data: `{"deniedMcpServers":null}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "denied tools not strings", tier: ports.TierManaged, data: `{"deniedTools":[1]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "repeated key", tier: ports.TierManaged, data: `{"deniedTools":[],"deniedTools":["x"]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "server env beside a command", tier: ports.TierManaged,
			data: `{"allowedMcpServers":[{"serverEnv":{"PYTHONPATH":"/opt/lib"},"serverCommand":["python3","-m","srv"]}]}`,
			want: &definition.Policy{Allowed: []definition.ServerMatcher{{Command: []string{"python3", "-m", "srv"}, Env: map[string]string{"PYTHONPATH": "/opt/lib"}}}}},
		{name: "server env alone", tier: ports.TierManaged, data: `{"allowedMcpServers":[{"serverEnv":{"A":"b"}}]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "server env beside a url", tier: ports.TierManaged, data: `{"allowedMcpServers":[{"serverUrl":"https://x/","serverEnv":{}}]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "server env not strings", tier: ports.TierManaged, data: `{"allowedMcpServers":[{"serverCommand":["x"],"serverEnv":{"A":1}}]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "server env bad key", tier: ports.TierManaged, data: `{"allowedMcpServers":[{"serverCommand":["x"],"serverEnv":{"A=B":"c"}}]}`, wantProblem: definition.ProblemMalformedPolicy},
		{name: "server env repeated key", tier: ports.TierManaged, data: `{"allowedMcpServers":[{"serverCommand":["x"],"serverEnv":{"A":"1","A":"2"}}]}`, wantProblem: definition.ProblemMalformedPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := definition.Decode(policySrc(tt.tier, tt.data))
			if tt.wantProblem != "" {
				require.NotNil(t, doc.Problem)
				assert.Equal(t, tt.wantProblem, doc.Problem.Kind)
				assert.Nil(t, doc.Policy)
				return
			}
			assert.Nil(t, doc.Problem)
			assert.Equal(t, tt.want, doc.Policy)
		})
	}
}

func TestURLPatternMatch(t *testing.T) {
	tests := []struct {
		pattern, url string
		want         bool
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/other", false},
		{"https://*.example.com/*", "https://a.example.com/mcp", true},
		{"https://*.example.com/*", "https://a.b.example.com/x/y?z=1", true},
		{"https://*.example.com/*", "https://evil.com/x.example.com/", false},
		{"https://*.example.com/*", "https://evil.com?.example.com/", false},
		{"https://*.example.com/*", "https://evil.com#.example.com/", false},
		{"https://*.example.com/*", "https://u@evil.com/.example.com/", false},
		{"https://*.example.com", "https://a.example.com", true},
		{"https://*.example.com", "https://a.example.com/", true},
		{"https://*.example.com", "https://a.example.com/mcp", false},
		{"*://localhost:*/*", "http://localhost:8080/mcp", true},
		{"https://example.com/*", "http://example.com/mcp", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, definition.URLPatternMatch(tt.pattern, tt.url), "%q ~ %q", tt.pattern, tt.url)
	}
}

// The managed policy across tiers: it refuses by name, command and URL
// pattern, whatever tier defines the server; no lower tier's policy keys
// count; a malformed managed policy blocks every lower tier.
func TestResolvePolicyAcrossTiers(t *testing.T) {
	user := policySrc(ports.TierUser, `{
		"mcpServers":{
			"github":{"command":"npx","args":["-y","@mcp/github"]},
			"fs":{"command":"npx","args":["-y","@mcp/fs"]},
			"remote":{"url":"https://mcp.corp.example/mcp"},
			"elsewhere":{"url":"https://mcp.other.example/mcp"},
			"evil":{"command":"evil"},
			"off":{"command":"off"}
		},
		"disabledMcpServers":["off"],
		"allowedMcpServers":[{"serverName":"evil"}],
		"deniedTools":["*"]}`)
	project := policySrc(ports.TierProject, `{"mcpServers":{"proj":{"command":"p"}}}`)
	states := func(res definition.Resolution) map[string]string {
		out := map[string]string{}
		for _, s := range res.Servers {
			out[s.Name] = string(s.State) + " " + s.Reason
		}
		return out
	}
	docs := func(managed string) []definition.Document {
		return []definition.Document{
			definition.Decode(policySrc(ports.TierManaged, managed)),
			definition.Decode(user),
			definition.Decode(project),
		}
	}

	t.Run("no policy", func(t *testing.T) {
		res := definition.Resolve(docs(`{}`))
		assert.Equal(t, "resolved ", states(res)["evil"])
		assert.Nil(t, res.DeniedTools, "a user-tier deniedTools is not a policy")
	})
	t.Run("deny list only", func(t *testing.T) {
		res := definition.Resolve(docs(`{"deniedMcpServers":[{"serverName":"evil"},{"serverCommand":["npx","-y","@mcp/fs"]},{"serverUrl":"https://*.other.example/*"}],
			"deniedTools":["github/delete_*"]}`))
		assert.Equal(t, map[string]string{
			"github": "resolved ", "fs": "refused policy_denied", "remote": "resolved ",
			"elsewhere": "refused policy_denied", "evil": "refused policy_denied", "off": "disabled disabled", "proj": "resolved ",
		}, states(res))
		assert.Equal(t, []string{"github/delete_*"}, res.DeniedTools)
	})
	t.Run("allow list refuses the rest, the user's own allow list widens nothing", func(t *testing.T) {
		res := definition.Resolve(docs(`{"mcpServers":{"corp":{"command":"corp"}},
			"allowedMcpServers":[{"serverName":"corp"},{"serverCommand":["npx","-y","@mcp/github"]},{"serverUrl":"https://*.corp.example/*"},{"serverName":"off"}],
			"deniedMcpServers":[{"serverName":"off"}]}`))
		assert.Equal(t, map[string]string{
			"corp": "resolved ", "github": "resolved ", "remote": "resolved ",
			"fs": "refused policy_not_allowed", "elsewhere": "refused policy_not_allowed", "evil": "refused policy_not_allowed",
			"off": "refused policy_denied", "proj": "refused policy_not_allowed",
		}, states(res))
	})
	t.Run("the policy binds managed servers too", func(t *testing.T) {
		res := definition.Resolve(docs(`{"mcpServers":{"corp":{"command":"corp"}},"allowedMcpServers":[]}`))
		assert.Equal(t, "refused policy_not_allowed", states(res)["corp"])
		assert.Equal(t, "refused policy_not_allowed", states(res)["github"])
	})
	t.Run("malformed policy blocks lower tiers", func(t *testing.T) {
		res := definition.Resolve(docs(`{"mcpServers":{"corp":{"command":"corp"}},"deniedMcpServers":[{"serverName":"evil","serverUrl":"x"}]}`))
		got := states(res)
		assert.Equal(t, "resolved ", got["corp"])
		for _, n := range []string{"github", "fs", "remote", "elsewhere", "evil", "off", "proj"} {
			assert.Equal(t, "blocked managed_unreadable", got[n], n)
		}
		require.Len(t, res.Problems, 1)
		assert.Equal(t, definition.ProblemMalformedPolicy, res.Problems[0].Kind)
	})
	t.Run("two managed sources each narrow", func(t *testing.T) {
		ds := append(docs(`{"allowedMcpServers":[{"serverName":"github"},{"serverName":"fs"}]}`),
			definition.Decode(definition.Source{Tier: ports.TierManaged, Origin: "/etc/second.json",
				Data: []byte(`{"allowedMcpServers":[{"serverName":"github"}],"deniedTools":["fs/*"]}`)}))
		res := definition.Resolve(ds)
		got := states(res)
		assert.Equal(t, "resolved ", got["github"])
		assert.Equal(t, "refused policy_not_allowed", got["fs"])
		assert.Equal(t, []string{"fs/*"}, res.DeniedTools)
	})
}

// FuzzURLPatternMatch: any pattern and URL, no panic; a URL always
// matches itself when it holds no "*"; a wildcard host never matches a
// URL whose authority differs outside the starred stretch.
func FuzzURLPatternMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"https://*.example.com/*", "https://a.example.com/x"},
		{"https://*.example.com/*", "https://evil.com/.example.com/"},
		{"*", "x"}, {"", ""}, {"*://*", "a://b"}, {"**", "/"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, url string) {
		got := definition.URLPatternMatch(pattern, url)
		if !strings.Contains(url, "*") {
			assert.True(t, definition.URLPatternMatch(url, url), "a URL matches itself")
		}
		if got && !strings.Contains(pattern, "*") {
			// Without a wildcard only the URL itself (or with a bare "/"
			// path) matches.
			assert.True(t, url == pattern || url == pattern+"/", "%q ~ %q", pattern, url)
		}
	})
}

// A malformed overlay does not drop a well-formed policy: the managed
// document's own servers stay bound by it.
func TestDecodePolicyBesideMalformedOverlay(t *testing.T) {
	doc := definition.Decode(policySrc(ports.TierManaged, `{"disabledMcpServers":"x","deniedMcpServers":[{"serverName":"a"}],"mcpServers":{"a":{"command":"x"}}}`))
	require.NotNil(t, doc.Problem)
	assert.Equal(t, definition.ProblemMalformedOverlay, doc.Problem.Kind)
	require.NotNil(t, doc.Policy)
	res := definition.Resolve([]definition.Document{doc})
	assert.Equal(t, definition.StateRefused, res.Servers[0].State)
	assert.Equal(t, definition.ReasonPolicyDenied, res.Servers[0].Reason)
}

// policyEval resolves a managed policy and one project server, then
// decides as a host must: Resolve for a definition without templates,
// PolicyVerdict on the materialization otherwise, PolicyVerdictUnexpanded
// when it does not materialize.
func policyEval(t *testing.T, managed, project string, vars map[string]string) string {
	t.Helper()
	res := definition.Resolve([]definition.Document{
		definition.Decode(policySrc(ports.TierManaged, managed)),
		definition.Decode(policySrc(ports.TierProject, project)),
	})
	s, ok := res.Server("s")
	require.True(t, ok)
	if s.State == definition.StateRefused {
		return s.Reason
	}
	m, err := definition.Materialize(s.Def, func(n string) (string, bool) { v, ok := vars[n]; return v, ok })
	if err != nil {
		require.True(t, s.PolicyPending)
		return res.PolicyVerdictUnexpanded(s.Def)
	}
	if !s.PolicyPending {
		require.Equal(t, "", res.PolicyVerdict(m), "Resolve and PolicyVerdict disagree")
	}
	return res.PolicyVerdict(m)
}

// TestPolicyMatchesWhatRuns: managed allow and deny lists match what runs
// (expanded), not templates (issue 22, attack 13).
func TestPolicyMatchesWhatRuns(t *testing.T) {
	const denyCmd = `{"deniedMcpServers":[{"serverCommand":["python3","-c","evil()"]}]}`
	const denyURL = `{"deniedMcpServers":[{"serverUrl":"https://evil.example/*"}]}`
	const allowCmd = `{"allowedMcpServers":[{"serverCommand":["python3","-m","srv"]}]}`
	const allowCmdEnv = `{"allowedMcpServers":[{"serverCommand":["python3","-m","srv"],"serverEnv":{"PYTHONPATH":"/opt/lib"}}]}`
	tests := []struct {
		name, managed, project string
		vars                   map[string]string
		want                   string
	}{
		{"denied command as written", denyCmd, `{"mcpServers":{"s":{"command":"python3","args":["-c","evil()"]}}}`, nil, definition.ReasonPolicyDenied},
		{"denied command behind a default", denyCmd, `{"mcpServers":{"s":{"command":"python3","args":["-c","${X:-evil()}"]}}}`, nil, definition.ReasonPolicyDenied},
		{"denied command behind a credential default", denyCmd, `{"mcpServers":{"s":{"command":"python3","args":["-c","${RUN_TOKEN:-evil()}"]}}}`, nil, definition.ReasonPolicyDenied},
		{"denied command through a variable", denyCmd, `{"mcpServers":{"s":{"command":"${PY:-python}","args":["-c","evil()"]}}}`, map[string]string{"PY": "python3"}, definition.ReasonPolicyDenied},
		{"the default is not what runs", denyCmd, `{"mcpServers":{"s":{"command":"python3","args":["-c","${X:-evil()}"]}}}`, map[string]string{"X": "ok()"}, ""},
		{"unknown expansion that could be denied", denyCmd, `{"mcpServers":{"s":{"command":"python3","args":["-c","${UNSET}"]}}}`, nil, definition.ReasonPolicyDenied},
		{"unknown expansion that cannot be denied", denyCmd, `{"mcpServers":{"s":{"command":"node","args":["-c","${UNSET}"]}}}`, nil, ""},
		{"denied url behind a default", denyURL, `{"mcpServers":{"s":{"type":"http","url":"https://${H:-evil.example}/mcp"}}}`, nil, definition.ReasonPolicyDenied},
		{"denied url through a variable", denyURL, `{"mcpServers":{"s":{"type":"http","url":"${BASE_URL}/mcp"}}}`, map[string]string{"BASE_URL": "https://evil.example"}, definition.ReasonPolicyDenied},
		{"unknown url that could be denied", denyURL, `{"mcpServers":{"s":{"type":"http","url":"https://${UNSET}/mcp"}}}`, nil, definition.ReasonPolicyDenied},
		{"unknown url that cannot be denied", denyURL, `{"mcpServers":{"s":{"type":"http","url":"https://good.example/${UNSET}"}}}`, nil, ""},
		{"allowed command", allowCmd, `{"mcpServers":{"s":{"command":"python3","args":["-m","srv"],"env":{"API_KEY":"${K}"}}}}`, map[string]string{"K": "k"}, ""},
		{"allowed command with a redirect of its code", allowCmd, `{"mcpServers":{"s":{"command":"python3","args":["-m","srv"],"env":{"PYTHONPATH":"."}}}}`, nil, definition.ReasonPolicyNotAllowed},
		{"allowed command through a default", allowCmd, `{"mcpServers":{"s":{"command":"python3","args":["-m","${M:-srv}"]}}}`, nil, ""},
		{"allowed command, another default", allowCmd, `{"mcpServers":{"s":{"command":"python3","args":["-m","${M:-srv}"]}}}`, map[string]string{"M": "evil"}, definition.ReasonPolicyNotAllowed},
		{"allowed env as stated", allowCmdEnv, `{"mcpServers":{"s":{"command":"python3","args":["-m","srv"],"env":{"PYTHONPATH":"/opt/lib"}}}}`, nil, ""},
		{"allowed env, another value", allowCmdEnv, `{"mcpServers":{"s":{"command":"python3","args":["-m","srv"],"env":{"PYTHONPATH":"/tmp"}}}}`, nil, definition.ReasonPolicyNotAllowed},
		{"allowed env missing", allowCmdEnv, `{"mcpServers":{"s":{"command":"python3","args":["-m","srv"]}}}`, nil, definition.ReasonPolicyNotAllowed},
		{"allowed env, NODE_OPTIONS added", allowCmdEnv, `{"mcpServers":{"s":{"command":"python3","args":["-m","srv"],"env":{"PYTHONPATH":"/opt/lib","LD_PRELOAD":"/x.so"}}}}`, nil, definition.ReasonPolicyNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, policyEval(t, tt.managed, tt.project, tt.vars))
		})
	}
}

func TestCodeLoadingEnv(t *testing.T) {
	for _, k := range []string{"PATH", "PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS", "NODE_PATH", "LD_PRELOAD", "LD_LIBRARY_PATH",
		"DYLD_INSERT_LIBRARIES", "npm_config_registry", "NPM_CONFIG_USERCONFIG", "RUBYOPT", "PERL5LIB", "JAVA_TOOL_OPTIONS",
		"BASH_ENV", "GIT_SSH_COMMAND", "HOME", "UV_INDEX_URL", "PIP_INDEX_URL", "GOFLAGS", "GCONV_PATH", "LUA_PATH", "LUA_INIT",
		"RUSTC_WRAPPER", "CARGO_HOME", "DENO_DIR", "BUN_INSTALL", "pnpm_config_registry", "R_LIBS_USER", "PHPRC", "ELECTRON_RUN_AS_NODE"} {
		assert.True(t, definition.CodeLoadingEnv(k), k)
	}
	for _, k := range []string{"API_KEY", "GITHUB_TOKEN", "DEBUG", "LOG_LEVEL", "NODE_ENV", "LANG", "GOOGLE_API_KEY", "TZ"} {
		assert.False(t, definition.CodeLoadingEnv(k), k)
	}
}
