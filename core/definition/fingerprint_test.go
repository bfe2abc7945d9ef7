package definition

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// The -update flag rewrites golden files. Another test file of this
// package may register the same flag, so it is registered only when
// absent and read through flag.Lookup.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
}

// fpTUpdate reports whether -update was given.
func fpTUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// fpTGolden compares got with testdata/name, or rewrites it under -update.
func fpTGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if fpTUpdate() {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test -update")
	assert.Equal(t, string(want), string(got), "golden %s differs; run go test -update if the change is intended", path)
}

// fpTMat materializes d with vars, failing the test on error.
func fpTMat(t testing.TB, d *Definition, vars map[string]string) *Materialized {
	t.Helper()
	m, err := Materialize(d, matTLookup(vars))
	require.NoError(t, err)
	return m
}

// fpTFixture is a representative definition with its variables, shared by
// the fingerprint and projection golden tests.
type fpTFixture struct {
	name string
	def  Definition
	vars map[string]string
}

func fpTFixtures() []fpTFixture {
	return []fpTFixture{
		{
			name: "stdio_minimal",
			def:  Definition{Name: "fs", Tier: ports.TierUser, Origin: "/home/u/.mcp.json", Kind: KindStdio, Command: "mcp-fs"},
		},
		{
			name: "stdio_full",
			def: Definition{
				Name: "github", Tier: ports.TierProject, Origin: "/repo/.mcp.json", Kind: KindStdio,
				Command: "npx",
				Args:    []string{"-y", "@modelcontextprotocol/server-github", "--token=${GITHUB_TOKEN}", "--root=${HOME}/src", "--log=${LOG_LEVEL:-info}"},
				Env: map[string]string{
					"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}",
					"NODE_OPTIONS":                 "--max-old-space-size=4096",
					"CONFIG":                       "user=${USER};password=${DB_PASSWORD:-changeme}",
				},
				Cwd:                      "${HOME}/src",
				RequiresTrustedWorkspace: true,
			},
			vars: map[string]string{"GITHUB_TOKEN": "ghp_FIXTUREFIXTUREFIXTUREFIXTURE01", "HOME": "/home/u", "USER": "u"},
		},
		{
			name: "http_full",
			def: Definition{
				Name: "remote", Tier: ports.TierManaged, Origin: "/etc/mcp/managed.json", Kind: KindHTTP,
				URL: "https://${MCP_HOST:-mcp.example.com}/v1/mcp?token=${MCP_TOKEN}&region=eu",
				Headers: map[string]string{
					"Authorization": "Bearer ${MCP_TOKEN}",
					"X-Tenant":      "${TENANT}",
					"X-Static":      "static",
				},
				HeadersHelper: []string{"/usr/local/bin/mcp-auth", "--server", "remote"},
				OAuth: &OAuth{
					ClientID: "client-123", Scopes: []string{"read", "write"}, CallbackPort: 8765,
					MetadataURL: "https://auth.example.com/.well-known/oauth-authorization-server",
				},
			},
			vars: map[string]string{"MCP_TOKEN": "tok-FIXTURE", "TENANT": "acme"},
		},
		{
			name: "http_userinfo",
			def: Definition{
				Name: "db", Tier: ports.TierLocal, Origin: "local", Kind: KindHTTP,
				URL: "https://admin:${DB_PASSWORD}@db.internal.example:8443/mcp",
			},
			vars: map[string]string{"DB_PASSWORD": "pw-FIXTURE"},
		},
		{
			name: "sse_refused",
			def: Definition{
				Name: "legacy", Tier: ports.TierPlugin, Origin: "plugin:legacy", Kind: KindSSE,
				URL: "https://legacy.example.com/sse", Refusal: "deprecated_transport",
			},
		},
	}
}

func TestFingerprintGolden(t *testing.T) {
	for _, fx := range fpTFixtures() {
		t.Run(fx.name, func(t *testing.T) {
			m := fpTMat(t, &fx.def, fx.vars)
			var b strings.Builder
			b.WriteString(string(fpEncode(m)))
			b.WriteString("sha256 ")
			b.WriteString(Fingerprint(m))
			b.WriteString("\n")
			fpTGolden(t, "fingerprint_"+fx.name+".golden", []byte(b.String()))
		})
	}
}

func TestFingerprintShape(t *testing.T) {
	m := fpTMat(t, &Definition{Name: "x"}, nil)
	fp := Fingerprint(m)
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), fp)
	assert.True(t, strings.HasPrefix(string(fpEncode(m)), FingerprintVersion+"\n"))
	assert.Equal(t, "", Fingerprint(nil))
	assert.Equal(t, "", Fingerprint(&Materialized{}))
}

// fpTBase is the definition the change tests start from.
func fpTBase() (Definition, map[string]string) {
	return Definition{
			Name: "srv", Tier: ports.TierUser, Origin: "/o", Kind: KindStdio,
			Command: "node",
			Args:    []string{"server.js", "--token=${GITHUB_TOKEN}", "--mode=${MODE}"},
			Env: map[string]string{
				"NODE_OPTIONS": "--max-old-space-size=1024",
				"API_KEY":      "literal-api-key-1",
				"GITHUB_TOKEN": "${GITHUB_TOKEN}",
				"PLAIN":        "x",
			},
			Cwd:           "/srv",
			URL:           "https://mcp.example.com/mcp?token=${MCP_TOKEN}",
			Headers:       map[string]string{"Authorization": "Bearer abc", "X-Key-Id": "${KEY_ID}", "X-Session": "s1", "X-Sig": "${SIGNING_KEY}"},
			HeadersHelper: []string{"/bin/h", "a"},
			OAuth:         &OAuth{ClientID: "c", Scopes: []string{"s"}, CallbackPort: 1, MetadataURL: "https://m.example"},
		}, map[string]string{
			"GITHUB_TOKEN": "ghp_one", "MODE": "fast", "MCP_TOKEN": "t1", "KEY_ID": "k1", "SIGNING_KEY": "sig1",
		}
}

func TestFingerprintChanges(t *testing.T) {
	base, baseVars := fpTBase()
	baseFP := Fingerprint(fpTMat(t, &base, baseVars))

	tests := []struct {
		name string
		edit func(d *Definition, vars map[string]string)
		same bool
	}{
		// Rotations: the fingerprint must not change.
		{"rotate secret var", func(_ *Definition, v map[string]string) { v["GITHUB_TOKEN"] = "ghp_two_totally_different" }, true},
		{"rotate secret var to empty", func(_ *Definition, v map[string]string) { v["GITHUB_TOKEN"] = "" }, true},
		{"rotate secret in url", func(_ *Definition, v map[string]string) { v["MCP_TOKEN"] = "t2" }, true},
		{"rotate secret under plain header key", func(_ *Definition, v map[string]string) { v["SIGNING_KEY"] = "sig2" }, true},
		{"provenance tier", func(d *Definition, _ map[string]string) { d.Tier = ports.TierManaged }, true},
		{"provenance origin", func(d *Definition, _ map[string]string) { d.Origin = "/elsewhere" }, true},
		{"request timeout", func(d *Definition, _ map[string]string) { d.Timeout = 5 * time.Minute }, true},
		{"unrelated variable", func(_ *Definition, v map[string]string) { v["UNUSED"] = "x" }, true},

		// Everything written is identity (issue 22): literals under any key,
		// which variable feeds a value, a default, a literal standing where
		// a template stood.
		{"literal under credential env key", func(d *Definition, _ map[string]string) { d.Env["API_KEY"] = "literal-api-key-2" }, false},
		{"literal under credential header key", func(d *Definition, _ map[string]string) { d.Headers["Authorization"] = "Bearer xyz" }, false},
		{"credential env value becomes template", func(d *Definition, v map[string]string) {
			d.Env["API_KEY"] = "${OTHER_THING}"
			v["OTHER_THING"] = "x"
		}, false},
		{"session header literal", func(d *Definition, _ map[string]string) { d.Headers["X-Session"] = "s2" }, false},
		{"literal equals non-secret expansion", func(d *Definition, _ map[string]string) { d.Args[2] = "--mode=fast" }, false},
		{"credential variable swapped in env", func(d *Definition, v map[string]string) {
			d.Env["GITHUB_TOKEN"] = "${AWS_SECRET_ACCESS_KEY}"
			v["AWS_SECRET_ACCESS_KEY"] = v["GITHUB_TOKEN"]
		}, false},
		{"credential variable swapped in header", func(d *Definition, v map[string]string) {
			d.Headers["X-Sig"] = "${OTHER_SIGNING_KEY}"
			v["OTHER_SIGNING_KEY"] = v["SIGNING_KEY"]
		}, false},
		{"position variable swapped", func(d *Definition, v map[string]string) {
			d.URL = "https://mcp.example.com/mcp?token=${OTHER}"
			v["OTHER"] = v["MCP_TOKEN"]
		}, false},
		{"default added to a credential variable", func(d *Definition, _ map[string]string) { d.Env["GITHUB_TOKEN"] = "${GITHUB_TOKEN:-}" }, false},

		// Everything else changes it.
		{"node options", func(d *Definition, _ map[string]string) { d.Env["NODE_OPTIONS"] = "--require=/tmp/evil.js" }, false},
		{"plain env value", func(d *Definition, _ map[string]string) { d.Env["PLAIN"] = "y" }, false},
		{"env key added", func(d *Definition, _ map[string]string) { d.Env["NEW"] = "" }, false},
		{"env key renamed", func(d *Definition, _ map[string]string) { d.Env["PLAIN2"] = d.Env["PLAIN"]; delete(d.Env, "PLAIN") }, false},
		{"credential env key removed", func(d *Definition, _ map[string]string) { delete(d.Env, "API_KEY") }, false},
		{"non-secret var value", func(_ *Definition, v map[string]string) { v["MODE"] = "slow" }, false},
		{"non-secret header var", func(_ *Definition, v map[string]string) { v["KEY_ID"] = "k2" }, false},
		{"url host", func(d *Definition, _ map[string]string) { d.URL = "https://evil.example.com/mcp?token=${MCP_TOKEN}" }, false},
		{"url path", func(d *Definition, _ map[string]string) { d.URL = "https://mcp.example.com/other?token=${MCP_TOKEN}" }, false},
		{"secret var renamed", func(d *Definition, v map[string]string) {
			d.Args[1] = "--token=${GH_TOKEN}"
			v["GH_TOKEN"] = v["GITHUB_TOKEN"]
		}, false},
		{"secret moved to other arg", func(d *Definition, _ map[string]string) { d.Args[1] = "--token="; d.Args[2] += "${GITHUB_TOKEN}" }, false},
		{"literal token in args", func(d *Definition, _ map[string]string) { d.Args[0] = "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" }, false},
		{"name", func(d *Definition, _ map[string]string) { d.Name = "srv2" }, false},
		{"kind", func(d *Definition, _ map[string]string) { d.Kind = KindHTTP }, false},
		{"command", func(d *Definition, _ map[string]string) { d.Command = "nodejs" }, false},
		{"arg appended", func(d *Definition, _ map[string]string) { d.Args = append(d.Args, "") }, false},
		{"cwd", func(d *Definition, _ map[string]string) { d.Cwd = "/srv2" }, false},
		{"header added", func(d *Definition, _ map[string]string) { d.Headers["X-New"] = "" }, false},
		{"header key case", func(d *Definition, _ map[string]string) {
			d.Headers["authorization"] = d.Headers["Authorization"]
			delete(d.Headers, "Authorization")
		}, false},
		{"helper argv", func(d *Definition, _ map[string]string) { d.HeadersHelper = []string{"/bin/h", "b"} }, false},
		{"helper removed", func(d *Definition, _ map[string]string) { d.HeadersHelper = nil }, false},
		{"helper emptied", func(d *Definition, _ map[string]string) { d.HeadersHelper = []string{} }, false},
		{"oauth removed", func(d *Definition, _ map[string]string) { d.OAuth = nil }, false},
		{"oauth client id", func(d *Definition, _ map[string]string) { d.OAuth.ClientID = "c2" }, false},
		{"oauth scopes", func(d *Definition, _ map[string]string) { d.OAuth.Scopes = []string{"s", "t"} }, false},
		{"oauth port", func(d *Definition, _ map[string]string) { d.OAuth.CallbackPort = 2 }, false},
		{"oauth metadata", func(d *Definition, _ map[string]string) { d.OAuth.MetadataURL = "https://n.example" }, false},
		{"oauth client metadata", func(d *Definition, _ map[string]string) { d.OAuth.ClientMetadataURL = "https://c.example/m.json" }, false},
		{"requires trusted", func(d *Definition, _ map[string]string) { d.RequiresTrustedWorkspace = true }, false},
		{"refusal", func(d *Definition, _ map[string]string) { d.Refusal = "deprecated_transport" }, false},
		{"include tools added", func(d *Definition, _ map[string]string) { d.IncludeTools = []string{"read"} }, false},
		{"include tools empty", func(d *Definition, _ map[string]string) { d.IncludeTools = []string{} }, false},
		{"exclude tools added", func(d *Definition, _ map[string]string) { d.ExcludeTools = []string{"write"} }, false},
		{"exclude tools empty", func(d *Definition, _ map[string]string) { d.ExcludeTools = []string{} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, vars := fpTBase()
			tt.edit(&d, vars)
			got := Fingerprint(fpTMat(t, &d, vars))
			if tt.same {
				assert.Equal(t, baseFP, got)
			} else {
				assert.NotEqual(t, baseFP, got)
			}
		})
	}
}

func TestFingerprintDistinguishes(t *testing.T) {
	tests := []struct {
		name string
		a, b Definition
		vars map[string]string
	}{
		{"split args", Definition{Args: []string{"a b"}}, Definition{Args: []string{"a", "b"}}, nil},
		{"joined args", Definition{Args: []string{"ab"}}, Definition{Args: []string{"a", "b"}}, nil},
		{"moved text", Definition{Args: []string{"ab", "c"}}, Definition{Args: []string{"a", "bc"}}, nil},
		{"empty arg", Definition{Args: []string{""}}, Definition{Args: nil}, nil},
		{"two literal tokens", Definition{Args: []string{"ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}, Definition{Args: []string{"ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}}, nil},
		{"literal vs marker", Definition{Args: []string{`var:GITHUB_TOKEN`}}, Definition{Args: []string{"${GITHUB_TOKEN}"}}, map[string]string{"GITHUB_TOKEN": "var:GITHUB_TOKEN"}},
		{"literal quoted marker", Definition{Args: []string{`S"var:GITHUB_TOKEN"`}}, Definition{Args: []string{"${GITHUB_TOKEN}"}}, map[string]string{"GITHUB_TOKEN": "x"}},
		{"two secrets vs one", Definition{Args: []string{"${A_TOKEN}${A_TOKEN}"}}, Definition{Args: []string{"${A_TOKEN}"}}, map[string]string{"A_TOKEN": "x"}},
		{"env marker literal", Definition{Env: map[string]string{"X": "env:API_KEY"}}, Definition{Env: map[string]string{"API_KEY": "v"}}, nil},
		{"env vs header", Definition{Env: map[string]string{"K": "v"}}, Definition{Headers: map[string]string{"K": "v"}}, nil},
		{"key value boundary", Definition{Env: map[string]string{"a": "bc"}}, Definition{Env: map[string]string{"ab": "c"}}, nil},
		{"quote in value", Definition{Command: `a" L"b`}, Definition{Command: "a", Args: []string{"b"}}, nil},
		{"invalid utf8", Definition{Command: "\xff"}, Definition{Command: "\xfe"}, nil},
		{"newline in name", Definition{Name: "a\nkind \"x\""}, Definition{Name: "a", Kind: "x"}, nil},
		{"oauth nil vs empty", Definition{}, Definition{OAuth: &OAuth{}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := fpTMat(t, &tt.a, tt.vars)
			b := fpTMat(t, &tt.b, tt.vars)
			assert.NotEqual(t, string(fpEncode(a)), string(fpEncode(b)))
			assert.NotEqual(t, Fingerprint(a), Fingerprint(b))
		})
	}
}

func TestFingerprintMapOrder(t *testing.T) {
	keys := []string{"A", "B", "C", "D", "E", "F", "G", "H", "API_KEY", "GITHUB_TOKEN", "Z1", "Z2"}
	var want string
	for i := range 50 {
		env := map[string]string{}
		hdr := map[string]string{}
		// Insert in a different rotation each time; Go also randomises
		// iteration order per map.
		for j := range keys {
			k := keys[(i+j)%len(keys)]
			env[k] = "v" + k
			hdr["X-"+k] = "h" + k
		}
		got := Fingerprint(fpTMat(t, &Definition{Name: "m", Env: env, Headers: hdr}, nil))
		if i == 0 {
			want = got
		}
		require.Equal(t, want, got)
	}
}

// TestFingerprintSecretDefault: a credential-shaped variable's stretch is
// its marker and its default as written, whether the value or the default
// produced it; the expanded value is left out.
func TestFingerprintSecretDefault(t *testing.T) {
	d := Definition{Args: []string{"${DB_PASSWORD:-changeme}"}}
	unset := Fingerprint(fpTMat(t, &d, nil))
	set := Fingerprint(fpTMat(t, &d, map[string]string{"DB_PASSWORD": "real"}))
	assert.Equal(t, unset, set)
	enc := string(fpEncode(fpTMat(t, &d, map[string]string{"DB_PASSWORD": "real"})))
	assert.NotContains(t, enc, "real")
	assert.Contains(t, enc, `args [[V"DB_PASSWORD" D"changeme"]]`)

	// The default is identity (attack 1 of issue 22: the code in a
	// default changed, the approval held).
	d2 := Definition{Args: []string{"${DB_PASSWORD:-changed}"}}
	assert.NotEqual(t, unset, Fingerprint(fpTMat(t, &d2, nil)))

	// A non-secret default is content, and so is its expansion.
	d = Definition{Args: []string{"${LEVEL:-info}"}}
	assert.NotEqual(t,
		Fingerprint(fpTMat(t, &d, nil)),
		Fingerprint(fpTMat(t, &d, map[string]string{"LEVEL": "debug"})))
	assert.Contains(t, string(fpEncode(fpTMat(t, &d, map[string]string{"LEVEL": "debug"}))), `[V"LEVEL" D"info" E"debug"]`)
}

// TestFingerprintKeySecretHashesWhatIsWritten: a value under a
// credential-shaped key is hashed as written (literal, variable names,
// defaults); only the expansions of its templates are left out.
func TestFingerprintKeySecretHashesWhatIsWritten(t *testing.T) {
	m := fpTMat(t, &Definition{
		Headers: map[string]string{"AUTHORIZATION": "Bearer ${GITHUB_TOKEN}", "X-Api-Key": "literal"},
		Env:     map[string]string{"Api_Key": "${HOME:-/h}"},
	}, map[string]string{"GITHUB_TOKEN": "tok-value", "HOME": "/home/u"})
	enc := string(fpEncode(m))
	assert.Contains(t, enc, `"AUTHORIZATION" [L"Bearer " V"GITHUB_TOKEN"]`)
	assert.Contains(t, enc, `"X-Api-Key" [L"literal"]`)
	assert.Contains(t, enc, `"Api_Key" [V"HOME" D"/h"]`)
	assert.NotContains(t, enc, "tok-value")
	assert.NotContains(t, enc, "/home/u")
}

// BenchmarkFingerprint measures materializing and fingerprinting a large
// definition (200 args, 200 env entries, 50 headers).
func BenchmarkFingerprint(b *testing.B) {
	d := &Definition{Name: "big", Kind: KindStdio, Command: "${HOME}/bin/server", Env: map[string]string{}, Headers: map[string]string{}}
	for i := range 200 {
		d.Args = append(d.Args, fmt.Sprintf("--opt%d=${V%d:-default}", i, i))
		d.Env[fmt.Sprintf("KEY_%d_TOKEN", i)] = fmt.Sprintf("${SECRET_%d}", i)
	}
	for i := range 50 {
		d.Headers[fmt.Sprintf("X-H%d", i)] = "value ${HOME}"
	}
	vars := map[string]string{"HOME": "/home/u"}
	for i := range 200 {
		vars[fmt.Sprintf("SECRET_%d", i)] = "s"
	}
	lookup := matTLookup(vars)
	b.ReportAllocs()
	for b.Loop() {
		m, err := Materialize(d, lookup)
		if err != nil {
			b.Fatal(err)
		}
		_ = Fingerprint(m)
	}
}

// TestFingerprintSecretByPosition: a template written where a credential
// goes is secret whatever its variable is called, so rotating its value
// keeps the fingerprint and the value never reaches the encoding; literal
// text in the same place is hashed, so changing it changes the
// fingerprint.
func TestFingerprintSecretByPosition(t *testing.T) {
	tests := []struct {
		name    string
		args    []string // ${X} is the plain-named variable under test
		literal []string // the same place holding a literal instead
		marker  string   // what the encoding holds in its place
	}{
		{"argument after --api-key", []string{"--api-key", "${X}"}, []string{"--api-key", "literal-1"}, `[V"X"]`},
		{"argument after --token", []string{"-y", "--token", "${X}"}, []string{"-y", "--token", "literal-1"}, `[V"X"]`},
		{"argument after --password, with text", []string{"--password", "pre${X}post"}, []string{"--password", "preliteral-1post"}, `[L"pre" V"X" L"post"]`},
		{"argument after --client-secret", []string{"--client-secret", "${X}"}, []string{"--client-secret", "literal-1"}, `[V"X"]`},
		{"--api-key=", []string{"--api-key=${X}"}, []string{"--api-key=literal-1"}, `[L"--api-key=" V"X"]`},
		{"npm auth token", []string{"//registry.npmjs.org/:_authToken=${X}"}, []string{"//registry.npmjs.org/:_authToken=literal-1"}, `V"X"`},
		{"bearer", []string{"--header", "Authorization: Bearer ${X}"}, []string{"--header", "Authorization: Bearer literal-1"}, `[L"Authorization: Bearer " V"X"]`},
		{"userinfo password", []string{"postgres://u:${X}@db/x"}, []string{"postgres://u:literal-1@db/x"}, `[L"postgres://u:" V"X" L"@db/x"]`},
		{"query token", []string{"https://h/?access_token=${X}&a=1"}, []string{"https://h/?access_token=literal-1&a=1"}, `V"X"`},
		{"docker -e assignment", []string{"run", "-e", "API_KEY=${X}"}, []string{"run", "-e", "API_KEY=literal-1"}, `[L"API_KEY=" V"X"]`},
		{"connection string", []string{"Server=db;Password=${X};Port=1"}, []string{"Server=db;Password=literal-1;Port=1"}, `[L"Server=db;Password=" V"X" L";Port=1"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Definition{Name: "p", Kind: KindStdio, Command: "srv", Args: tt.args}
			m1 := fpTMat(t, &d, map[string]string{"X": "ROTATEDone"})
			m2 := fpTMat(t, &d, map[string]string{"X": "ROTATEDtwo"})
			assert.Equal(t, Fingerprint(m1), Fingerprint(m2), "rotating the variable changed the fingerprint")
			enc := string(fpEncode(m1))
			assert.NotContains(t, enc, "ROTATED")
			assert.Contains(t, enc, tt.marker)
			for _, a := range m1.Args {
				assert.NotContains(t, a.Display(), "ROTATED")
			}

			// Literal text in the same place is content.
			l1 := Definition{Name: "p", Kind: KindStdio, Command: "srv", Args: tt.literal}
			l2 := l1
			l2.Args = append([]string(nil), tt.literal...)
			l2.Args[len(l2.Args)-1] = strings.Replace(l2.Args[len(l2.Args)-1], "literal-1", "literal-2", 1)
			ml1, ml2 := fpTMat(t, &l1, nil), fpTMat(t, &l2, nil)
			assert.NotEqual(t, Fingerprint(ml1), Fingerprint(ml2), "a changed literal kept the fingerprint")
			for _, a := range ml1.Args {
				assert.NotContains(t, a.Display(), "literal-1")
			}
		})
	}

	// Not a credential position: a plain variable stays content.
	for _, args := range [][]string{{"--port", "${X}"}, {"--api-key=x", "${X}"}, {"-p", "${X}"}, {"${X}", "--token"}, {"--mode=${X}"}} {
		d := Definition{Name: "p", Kind: KindStdio, Command: "srv", Args: args}
		assert.NotEqual(t,
			Fingerprint(fpTMat(t, &d, map[string]string{"X": "one"})),
			Fingerprint(fpTMat(t, &d, map[string]string{"X": "two"})), "%q", args)
	}
}

// TestFingerprintLiteralShapes: a literal the display masks by its shape
// is still hashed as it is.
func TestFingerprintLiteralShapes(t *testing.T) {
	for _, pair := range [][2]string{
		{"rk_live_AAAAAAAAAAAAAAAAAAAA", "rk_live_BBBBBBBBBBBBBBBBBBBB"},
		{"npm_" + strings.Repeat("A", 36), "npm_" + strings.Repeat("B", 36)},
		{"https://hooks.slack.com/services/T0/B0/AAAAAAAAAAAA", "https://hooks.slack.com/services/T0/B0/BBBBBBBBBBBB"},
		{"//r.example/:_authToken=AAAAAAAA", "//r.example/:_authToken=BBBBBBBB"},
	} {
		a := fpTMat(t, &Definition{Name: "s", Kind: KindStdio, Command: "srv", Args: []string{pair[0]}}, nil)
		b := fpTMat(t, &Definition{Name: "s", Kind: KindStdio, Command: "srv", Args: []string{pair[1]}}, nil)
		assert.Equal(t, a.Args[0].Display(), b.Args[0].Display(), "both mask alike for display")
		assert.NotEqual(t, Fingerprint(a), Fingerprint(b), "%q", pair[0])
	}
}
