package definition

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/secret"
	"github.com/mcpward/mcpward/ports"
)

// projTJSON is the golden encoding of a projection: indented JSON without
// HTML escaping, so markers read as written.
func projTJSON(t *testing.T, p Projection) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(p))
	return b.Bytes()
}

func TestProjectGolden(t *testing.T) {
	for _, fx := range fpTFixtures() {
		t.Run(fx.name, func(t *testing.T) {
			m := fpTMat(t, &fx.def, fx.vars)
			fpTGolden(t, "project_"+fx.name+".golden", projTJSON(t, Project(m)))
			fpTGolden(t, "project_definition_"+fx.name+".golden", projTJSON(t, ProjectDefinition(&fx.def)))
		})
	}
}

func TestProject(t *testing.T) {
	const R = secret.Redacted
	rv := secret.RedactedVar
	tests := []struct {
		name     string
		def      Definition
		vars     map[string]string
		want     Projection
		wantJSON string // optional: exact JSON
	}{
		{
			name: "stdio readable with secret stretches",
			def: Definition{
				Name: "gh", Tier: ports.TierUser, Origin: "/u/.mcp.json", Kind: KindStdio,
				Command: "${HOME}/bin/gh-mcp",
				Args:    []string{"--token=${GITHUB_TOKEN}", "--org", "${ORG}", "ghp_LITERALLITERALLITERAL0001"},
				Env:     map[string]string{"Z": "1", "API_KEY": "k", "A": "${GITHUB_TOKEN}"},
				Cwd:     "${HOME}/work",
			},
			vars: map[string]string{"HOME": "/home/u", "GITHUB_TOKEN": "ghp_SECRETSECRETSECRETSECRET01", "ORG": "acme"},
			want: Projection{
				Name: "gh", Tier: ports.TierUser, Origin: "/u/.mcp.json", Transport: KindStdio,
				Command:  "/home/u/bin/gh-mcp",
				Args:     []string{"--token=" + rv("GITHUB_TOKEN"), "--org", "acme", R},
				Cwd:      "/home/u/work",
				Endpoint: "/home/u/bin/gh-mcp",
				EnvKeys:  []string{"A", "API_KEY", "Z"}, HeaderKeys: []string{},
			},
		},
		{
			name: "http url masked",
			def: Definition{
				Name: "r", Kind: KindHTTP,
				URL:     "https://${USERNAME}:${DB_PASSWORD}@${HOST}/mcp?api_key=${QVAL}&access_token=literal&x=${X}",
				Headers: map[string]string{"Authorization": "Bearer x", "X-Trace": "1"},
			},
			vars: map[string]string{"USERNAME": "bob", "DB_PASSWORD": "pw", "HOST": "h.example", "QVAL": "plainvalue", "X": "1"},
			want: Projection{
				Name: "r", Transport: KindHTTP,
				// QVAL is a plain name, but ?api_key= is where a credential
				// goes, so its stretch is secret and named.
				URL:      "https://bob:" + rv("DB_PASSWORD") + "@h.example/mcp?api_key=" + rv("QVAL") + "&access_token=" + R + "&x=1",
				Endpoint: "https://bob:" + rv("DB_PASSWORD") + "@h.example/mcp?api_key=" + rv("QVAL") + "&access_token=" + R + "&x=1",
				EnvKeys:  []string{}, HeaderKeys: []string{"Authorization", "X-Trace"},
			},
		},
		{
			name: "secret default masked by variable",
			def:  Definition{Name: "d", Kind: KindStdio, Command: "run", Args: []string{"--password=${DB_PASSWORD:-changeme}", "${LEVEL:-info}"}},
			want: Projection{
				Name: "d", Transport: KindStdio, Command: "run", Endpoint: "run",
				Args:    []string{"--password=" + rv("DB_PASSWORD"), "info"},
				EnvKeys: []string{}, HeaderKeys: []string{},
			},
		},
		{
			name: "helper and oauth",
			def: Definition{
				Name: "o", Kind: KindHTTP, URL: "https://o.example/mcp",
				HeadersHelper:            []string{"/bin/helper", "--api-key=abc", "plain"},
				OAuth:                    &OAuth{ClientID: "cid", Scopes: []string{"a", "b"}, CallbackPort: 9000, MetadataURL: "https://as.example/meta?token=zzz"},
				RequiresTrustedWorkspace: true,
				Refusal:                  "header_helper_not_allowed",
			},
			want: Projection{
				Name: "o", Transport: KindHTTP, URL: "https://o.example/mcp", Endpoint: "https://o.example/mcp",
				EnvKeys: []string{}, HeaderKeys: []string{},
				HeadersHelper:            []string{"/bin/helper", "--api-key=" + R, "plain"},
				OAuth:                    &ProjectionOAuth{ClientID: "cid", Scopes: []string{"a", "b"}, CallbackPort: 9000, MetadataURL: "https://as.example/meta?token=" + R},
				RequiresTrustedWorkspace: true,
				Refusal:                  "header_helper_not_allowed",
			},
		},
		{
			name: "minimal shape",
			def:  Definition{Name: "min", Kind: KindStdio, Command: "x"},
			want: Projection{Name: "min", Transport: KindStdio, Command: "x", Endpoint: "x", EnvKeys: []string{}, HeaderKeys: []string{}},
			wantJSON: `{"name":"min","tier":"","origin":"","transport":"stdio","command":"x","endpoint":"x",` +
				`"envKeys":[],"headerKeys":[],"requiresTrustedWorkspace":false}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := fpTMat(t, &tt.def, tt.vars)
			got := Project(m)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want.Endpoint, Endpoint(m))
			if tt.wantJSON != "" {
				js, err := json.Marshal(got)
				require.NoError(t, err)
				assert.JSONEq(t, tt.wantJSON, string(js))
			}
		})
	}
}

// TestProjectKeysDistinguishAbsence: a header configured but redacted is
// listed by key; a header never configured is not.
func TestProjectKeysDistinguishAbsence(t *testing.T) {
	with := Project(fpTMat(t, &Definition{Kind: KindHTTP, URL: "https://x", Headers: map[string]string{"Authorization": "Bearer s"}}, nil))
	without := Project(fpTMat(t, &Definition{Kind: KindHTTP, URL: "https://x"}, nil))
	assert.Equal(t, []string{"Authorization"}, with.HeaderKeys)
	assert.Equal(t, []string{}, without.HeaderKeys)
	js, err := json.Marshal(without)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"headerKeys":[]`)
	assert.NotContains(t, string(js), "Bearer")
}

func TestEndpoint(t *testing.T) {
	tests := []struct {
		name string
		def  Definition
		vars map[string]string
		want string
	}{
		{"stdio program only", Definition{Kind: KindStdio, Command: "npx", Args: []string{"-y", "pkg"}}, nil, "npx"},
		{"stdio variable in command", Definition{Kind: KindStdio, Command: "/opt/${TOOLS}/bin"}, map[string]string{"TOOLS": "t"}, "/opt/t/bin"},
		{"http url", Definition{Kind: KindHTTP, URL: "https://${HOST}/mcp"}, map[string]string{"HOST": "a.example"}, "https://a.example/mcp"},
		{"http userinfo literal", Definition{Kind: KindHTTP, URL: "https://u:hunter2@a.example/mcp"}, nil, "https://u:" + secret.Redacted + "@a.example/mcp"},
		{"sse uses url", Definition{Kind: KindSSE, URL: "https://s.example/sse", Command: "ignored"}, nil, "https://s.example/sse"},
		{"ws uses url", Definition{Kind: KindWS, URL: "wss://w.example/"}, nil, "wss://w.example/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Endpoint(fpTMat(t, &tt.def, tt.vars)))
		})
	}
	assert.Equal(t, "", Endpoint(nil))
}

func TestProjectDefinition(t *testing.T) {
	const R = secret.Redacted
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "npx", "npx"},
		{"template kept", "${HOME}/bin", "${HOME}/bin"},
		{"secret template kept", "--token=${GITHUB_TOKEN}", "--token=${GITHUB_TOKEN}"},
		{"non-secret default kept", "${LEVEL:-info}", "${LEVEL:-info}"},
		{"secret default redacted", "${DB_PASSWORD:-hunter2}", "${DB_PASSWORD:-" + R + "}"},
		{"secret empty default", "${API_KEY:-}", "${API_KEY:-" + R + "}"},
		{"literal shape masked", "ghp_LITERALLITERALLITERAL0001", R},
		{"query literal masked", "https://h/?token=abc&x=${X}", "https://h/?token=" + R + "&x=${X}"},
		{"malformed kept", "${ bad} ok", "${ bad} ok"},
		{"malformed then secret default", "${ bad} ${DB_PASSWORD:-hunter2}", "${ bad} ${DB_PASSWORD:-" + R + "}"},
		{"unterminated secret default", "a ${DB_PASSWORD:-hunter2 rest", "a ${DB_PASSWORD:-" + R},
		{"nested secret default", "${DB_PASSWORD:-x${Y}z}", "${DB_PASSWORD:-" + R},
		{"unterminated plain default", "${LEVEL:-info", "${LEVEL:-info"},
		{"open at end", "x${", "x${"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ProjectDefinition(&Definition{Kind: KindStdio, Command: tt.in, Args: []string{tt.in}, Cwd: tt.in, URL: tt.in})
			assert.Equal(t, tt.want, p.Command)
			assert.Equal(t, []string{tt.want}, p.Args)
			assert.Equal(t, tt.want, p.Cwd)
			assert.Equal(t, tt.want, p.URL)
			assert.Equal(t, tt.want, p.Endpoint)
			assert.NotContains(t, fmt.Sprintf("%+v", p), "hunter2")
		})
	}
	p := ProjectDefinition(&Definition{Kind: KindHTTP, URL: "https://x/${P}", Env: map[string]string{"B": "v", "A": "w"}, Headers: map[string]string{"X": "y"}})
	assert.Equal(t, "https://x/${P}", p.Endpoint)
	assert.Equal(t, []string{"A", "B"}, p.EnvKeys)
	assert.Equal(t, []string{"X"}, p.HeaderKeys)
	assert.Equal(t, Projection{EnvKeys: []string{}, HeaderKeys: []string{}}, ProjectDefinition(nil))
	assert.Equal(t, Projection{EnvKeys: []string{}, HeaderKeys: []string{}}, Project(nil))
}

// TestCanaries plants unique canaries everywhere a secret can come from and
// checks that none reaches any projection (struct, JSON, %+v), endpoint,
// fingerprint encoding or error.
func TestCanaries(t *testing.T) {
	canaries := map[string]string{
		"GITHUB_TOKEN":   "CANARYa1GithubTok",
		"DB_PASSWORD":    "CANARYa2DbPass",
		"OPENAI_API_KEY": "CANARYa3OpenAI",
		"MCP_TOKEN":      "CANARYa4McpTok",
		"SSH_KEY":        "CANARYa5SshKey",
		"SESSION_SECRET": "CANARYa6Session",
	}
	const (
		envLiteral    = "CANARYb1EnvLiteral"
		headerLiteral = "CANARYb2HeaderLiteral"
		urlQuery      = "CANARYb3UrlQuery"
		urlUserinfo   = "CANARYb4UrlUserinfo"
		defaultSecret = "CANARYb5Default"
	)
	vars := map[string]string{"HOME": "/home/u", "USER": "u", "NON_SECRET_Q": urlQuery}
	for k, v := range canaries {
		vars[k] = v
	}
	defs := []Definition{
		{
			Name: "stdio", Kind: KindStdio,
			Command: "/opt/run",
			Args:    []string{"--token=${GITHUB_TOKEN}", "--db=postgres://u:${DB_PASSWORD}@db/x", "${SESSION_SECRET}", "x${UNSET_TOKEN:-" + defaultSecret + "}"},
			Env: map[string]string{
				"OPENAI_API_KEY": "${OPENAI_API_KEY}",
				"API_KEY":        envLiteral,
				"CONFIG":         "a=${GITHUB_TOKEN}",
				"PASSWORD":       "${HOME}",
			},
			Cwd: "/w/${HOME}",
		},
		{
			Name: "http", Kind: KindHTTP,
			URL: "https://${USER}:${DB_PASSWORD}@h.example/mcp/${SSH_KEY}?token=${MCP_TOKEN}&q=1",
			Headers: map[string]string{
				"Authorization": "Bearer " + headerLiteral,
				"X-Api-Key":     "${OPENAI_API_KEY}",
				"X-Trace":       "${GITHUB_TOKEN}",
				"Cookie":        "sid=" + headerLiteral,
			},
		},
		{
			// Literal canaries in the URL: masked for display by shape
			// (a ?token= value through a non-secret variable, a userinfo
			// password written literally).
			Name: "http-literal", Kind: KindHTTP,
			URL: "https://admin:" + urlUserinfo + "@h.example/mcp?token=${NON_SECRET_Q}",
		},
	}
	all := []string{envLiteral, headerLiteral, urlQuery, urlUserinfo, defaultSecret}
	for _, v := range canaries {
		all = append(all, v)
	}
	// The expanded values of secret stretches are kept out of the
	// fingerprint encoding; everything written (literals under any key,
	// defaults, URL literals) is content, since display masking is a
	// guess that never touches the fingerprint, so those are checked for
	// display only.
	var notHashed []string
	for _, v := range canaries {
		notHashed = append(notHashed, v)
	}

	for _, d := range defs {
		t.Run(d.Name, func(t *testing.T) {
			m := fpTMat(t, &d, vars)
			p := Project(m)
			pd := ProjectDefinition(&d)
			js, err := json.Marshal(p)
			require.NoError(t, err)
			jsd, err := json.Marshal(pd)
			require.NoError(t, err)
			shown := []string{
				string(js), string(jsd),
				fmt.Sprintf("%+v", p), fmt.Sprintf("%#v", p), fmt.Sprintf("%+v", pd),
				fmt.Sprintf("%+v", m), fmt.Sprintf("%#v", m), fmt.Sprintf("%v", *m),
				Endpoint(m), Fingerprint(m),
			}
			for _, c := range all {
				for i, s := range shown {
					assert.NotContains(t, s, c, "display %d", i)
				}
			}
			enc := string(fpEncode(m))
			for _, c := range notHashed {
				assert.NotContains(t, enc, c, "fingerprint encoding")
			}
			if d.Name == "http-literal" {
				// Documented: literal text is hashed as it is.
				assert.Contains(t, enc, urlUserinfo)
			}

			// Errors from Materialize on the same definition, made
			// invalid or incomplete, carry no canary either.
			bad := d
			bad.Args = append(append([]string{}, d.Args...), "${"+canaries["GITHUB_TOKEN"])
			_, err = Materialize(&bad, matTLookup(vars))
			require.Error(t, err)
			incomplete := d
			incomplete.Args = append(append([]string{}, d.Args...), "${MISSING_TOKEN}")
			_, err2 := Materialize(&incomplete, matTLookup(vars))
			require.Error(t, err2)
			for _, c := range all {
				for _, e := range []error{err, err2} {
					assert.NotContains(t, e.Error(), c)
					assert.NotContains(t, fmt.Sprintf("%+v", e), c)
					assert.NotContains(t, fmt.Sprintf("%#v", e), c)
				}
			}
		})
	}
}

// TestProjectNeverShowsValues: env and header values of every kind stay out
// of a projection, secret or not.
func TestProjectNeverShowsValues(t *testing.T) {
	d := Definition{
		Kind: KindHTTP, URL: "https://x.example",
		Env:     map[string]string{"NODE_OPTIONS": "VALUE-node-opts", "PLAIN": "VALUE-plain"},
		Headers: map[string]string{"X-Plain": "VALUE-hdr"},
	}
	m := fpTMat(t, &d, nil)
	for _, p := range []Projection{Project(m), ProjectDefinition(&d)} {
		js, err := json.Marshal(p)
		require.NoError(t, err)
		assert.False(t, strings.Contains(string(js), "VALUE-"), string(js))
		assert.Equal(t, []string{"NODE_OPTIONS", "PLAIN"}, p.EnvKeys)
		assert.Equal(t, []string{"X-Plain"}, p.HeaderKeys)
	}
}

// TestProjectFlagValue: an argument after a credential-shaped flag is the
// flag's value, shown as markers only, expanded or not; so is a header
// helper argument after one.
func TestProjectFlagValue(t *testing.T) {
	const R = secret.Redacted
	rv := secret.RedactedVar
	d := Definition{
		Name: "f", Kind: KindStdio, Command: "srv",
		Args: []string{
			"--api-key", "${STRIPE}",
			"--token", "LITERALsecret",
			"--password", "pre-${STRIPE}-post",
			"--client-secret", "${STRIPE:-DEFAULTsecret}",
			"--port", "8080",
			"-p", "LITERALshown",
			"--secret", "",
			"--token",
		},
		HeadersHelper: []string{"/bin/h", "--api-key", "HELPERsecret", "--port", "1", "--token"},
	}
	m := fpTMat(t, &d, map[string]string{"STRIPE": "VARsecret"})
	p := Project(m)
	assert.Equal(t, []string{
		"--api-key", rv("STRIPE"),
		"--token", R,
		"--password", R + rv("STRIPE") + R,
		"--client-secret", rv("STRIPE"),
		"--port", "8080",
		"-p", "LITERALshown",
		"--secret", "",
		"--token",
	}, p.Args)
	assert.Equal(t, []string{"/bin/h", "--api-key", R, "--port", "1", "--token"}, p.HeadersHelper)
	assert.True(t, m.Args[1].ArgSecret && m.Args[1].HasSecret())
	assert.False(t, m.Args[9].ArgSecret, "after --port")
	assert.False(t, m.Args[0].ArgSecret, "the first argument follows no flag")

	pd := ProjectDefinition(&d)
	assert.Equal(t, []string{
		"--api-key", "${STRIPE}",
		"--token", R,
		"--password", R + "${STRIPE}" + R,
		"--client-secret", "${STRIPE:-" + R + "}",
		"--port", "8080",
		"-p", "LITERALshown",
		"--secret", "",
		"--token",
	}, pd.Args)
	assert.Equal(t, p.HeadersHelper, pd.HeadersHelper)

	// A malformed template after a flag hides the rest.
	pd = ProjectDefinition(&Definition{Kind: KindStdio, Command: "x", Args: []string{"--token", "ab${ bad SECRET"}})
	assert.Equal(t, []string{"--token", R}, pd.Args)
	pd = ProjectDefinition(&Definition{Kind: KindStdio, Command: "x", Args: []string{"--token", "${A}${ bad SECRET"}})
	assert.Equal(t, []string{"--token", "${A}" + R}, pd.Args)

	for _, s := range []string{fmt.Sprintf("%+v", p), fmt.Sprintf("%+v", pd), fmt.Sprintf("%v", m)} {
		for _, c := range []string{"VARsecret", "LITERALsecret", "DEFAULTsecret", "HELPERsecret"} {
			assert.NotContains(t, s, c)
		}
	}
}

// TestProjectDefinitionPositionDefault: the default of a template written
// where a credential goes is hidden whatever its variable is called.
func TestProjectDefinitionPositionDefault(t *testing.T) {
	const R = secret.Redacted
	for in, want := range map[string]string{
		"Bearer ${B:-DEFAULTsecret}":          "Bearer ${B:-" + R + "}",
		"--api-key=${K:-DEFAULTsecret}":       "--api-key=${K:-" + R + "}",
		"//r/:_authToken=${N:-DEFAULTsecret}": "//r/:_authToken=${N:-" + R + "}",
		"https://u:${P:-DEFAULTsecret}@h/x":   "https://u:${P:-" + R + "}@h/x",
		"https://h/?x=${Q:-shown}&token=${T}": "https://h/?x=${Q:-shown}&token=${T}",
		"--mode=${M:-shown}":                  "--mode=${M:-shown}",
		"Bearer ${B:-a b} ${C:-shown}":        "Bearer ${B:-" + R + "} ${C:-shown}",
	} {
		p := ProjectDefinition(&Definition{Kind: KindStdio, Command: "x", Args: []string{in}})
		assert.Equal(t, []string{want}, p.Args, "%q", in)
	}
}
