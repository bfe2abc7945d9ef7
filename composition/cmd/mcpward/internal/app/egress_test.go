//go:build unix

package app

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/core/egress"
)

func TestParseEgressTarget(t *testing.T) {
	tests := []struct{ in, want string }{
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.1.2.3/8", "10.0.0.0/8"},
		{"10.0.0.5", "10.0.0.5/32"},
		{"fd00::/8", "fd00::/8"},
		{"[fd00::5]", "fd00::5/128"},
		{"::ffff:10.0.0.5", "::ffff:10.0.0.5/128"},
		{"Build.Corp.", "build.corp"},
		{"*.corp", "*.corp"},
		{"localhost", "localhost"},
		{" build.corp ", "build.corp"},
	}
	for _, tt := range tests {
		got, err := CanonicalTarget(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
	for _, bad := range []string{"", "https://build.corp", "build.corp:443", "build.corp/mcp", "10.0.0.0/33", "a@b.corp", "fe80::1%eth0",
		"metadata.google.internal", "2130706433", "exa mple.corp", "*.", "a.*.corp", "10.0.0.0/8/8", "x?y"} {
		_, err := CanonicalTarget(bad)
		assert.Error(t, err, bad)
	}
}

func TestDecodeEgressRules(t *testing.T) {
	ok := `{"allow": [{"target": "10.0.0.0/8"}, {"target": "build.corp", "http": true}], "deny": [{"target": "wiki.corp"}]}`
	r, err := DecodeEgressRules([]byte(ok))
	require.NoError(t, err)
	assert.Equal(t, EgressRules{Allow: []EgressRule{{Target: "10.0.0.0/8"}, {Target: "build.corp", HTTP: true}}, Deny: []EgressRule{{Target: "wiki.corp"}}}, r)
	r, err = DecodeEgressRules([]byte("  \n"))
	require.NoError(t, err)
	assert.Empty(t, r.Allow)
	for name, bad := range map[string]string{
		"unknown key":         `{"allow": [], "shell": "x"}`,
		"unknown rule key":    `{"allow": [{"target": "a.corp", "port": 1}]}`,
		"a duplicate key":     `{"allow": [], "allow": [{"target": "10.0.0.0/8"}]}`,
		"a duplicate deeper":  `{"allow": [{"target": "a.corp", "target": "10.0.0.0/8"}]}`,
		"http on deny":        `{"deny": [{"target": "a.corp", "http": true}]}`,
		"a wildcard deny":     `{"deny": [{"target": "*.corp"}]}`,
		"a bad target":        `{"allow": [{"target": "https://a.corp"}]}`,
		"two values":          `{} {}`,
		"not an object":       `[]`,
		"a string for a list": `{"allow": "10.0.0.0/8"}`,
	} {
		_, err := DecodeEgressRules([]byte(bad))
		assert.Error(t, err, name)
	}
}

// FuzzDecodeEgressRules: the egress file's decoder never panics, and every
// rule it accepts has a canonical target that decodes again to the same
// rule.
func FuzzDecodeEgressRules(f *testing.F) {
	for _, s := range []string{`{"allow": [{"target": "10.0.0.0/8", "http": true}], "deny": [{"target": "w.corp"}]}`,
		`{"allow": [{"target": "*.corp"}]}`, `{"allow": [], "allow": []}`, `{"deny": [{"target": "a", "http": true}]}`, `[`, `{"allow": [{"target": "[::1]"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeEgressRules(data)
		if err != nil {
			return
		}
		for _, a := range append(append([]EgressRule(nil), r.Allow...), r.Deny...) {
			c, err := CanonicalTarget(a.Target)
			if err != nil {
				t.Fatalf("accepted %q, which is not canonicalizable", a.Target)
			}
			again, err := CanonicalTarget(c)
			if err != nil || again != c {
				t.Fatalf("canonical %q is not stable: %q %v", c, again, err)
			}
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeEgressRules(b); err != nil {
			t.Fatalf("what was accepted does not decode once written: %v", err)
		}
	})
}

// evalOne builds an App in a world (files relative to base; "ws" is the
// workspace) and evaluates the server name.
func evalOne(t *testing.T, base string, files map[string]string, name string) (*App, composition.ServerEvaluation) {
	t.Helper()
	for p, data := range files {
		writeFile(t, filepath.Join(base, p), data)
	}
	e := envAt(base, filepath.Join(base, "ws"))
	e.ManagedPath = filepath.Join(base, "etc", "managed-mcp.json")
	a := newApp(t, base, e)
	r, ok := a.Evaluate(context.Background()).Server(name)
	require.True(t, ok, name)
	return a, r
}

// TestEgressFromFiles: only the user's egress file and the managed files
// widen egress; a project or private file never does, whatever it writes;
// a managed setting presets rules or forbids the user's; metadata stays
// refused whatever is allowed; and list's question "which rule admitted
// it" has its answer.
func TestEgressFromFiles(t *testing.T) {
	const corpUser = `{"mcpServers": {"corp": {"type": "http", "url": "https://10.0.0.5/mcp"}}}`
	const widen = `{"allow": [{"target": "10.0.0.0/8"}]}`
	tests := []struct {
		name   string
		files  map[string]string
		reason string // "" when admitted
		source string // the rule's source when admitted by a rule
	}{
		{name: "the default refuses a private address", files: map[string]string{"config/mcpward/mcp.json": corpUser}, reason: egress.ReasonAddressRefused},
		{name: "your rule admits it", files: map[string]string{"config/mcpward/mcp.json": corpUser, "config/mcpward/egress.json": widen}, source: EgressSourceUser},
		{name: "a project file never widens", files: map[string]string{
			"ws/.git/HEAD": "ref: refs/heads/main\n",
			"ws/.mcp.json": `{"mcpServers": {"corp": {"type": "http", "url": "https://10.0.0.5/mcp"}}, "egress": {"allow": [{"target": "10.0.0.0/8"}]}}`,
		}, reason: egress.ReasonAddressRefused},
		{name: "an egress.json in the project never widens", files: map[string]string{
			"config/mcpward/mcp.json": corpUser, "ws/egress.json": widen, "ws/.mcpward/egress.json": widen,
		}, reason: egress.ReasonAddressRefused},
		{name: "a managed preset admits it", files: map[string]string{
			"config/mcpward/mcp.json": corpUser, "etc/managed-mcp.json": `{"egress": ` + widen + `}`,
		}, source: EgressSourceManaged},
		{name: "a managed setting ignores your rules", files: map[string]string{
			"config/mcpward/mcp.json": corpUser, "config/mcpward/egress.json": widen,
			"etc/managed-mcp.json": `{"egress": {"userRules": false}}`,
		}, reason: egress.ReasonAddressRefused},
		{name: "a managed deny wins over your allow", files: map[string]string{
			"config/mcpward/mcp.json": corpUser, "config/mcpward/egress.json": widen,
			"etc/managed-mcp.json": `{"egress": {"deny": [{"target": "10.0.0.0/24"}]}}`,
		}, reason: egress.ReasonAddressRefused},
		{name: "your deny wins over a managed allow", files: map[string]string{
			"config/mcpward/mcp.json": corpUser, "config/mcpward/egress.json": `{"deny": [{"target": "10.0.0.5"}]}`,
			"etc/managed-mcp.json": `{"egress": ` + widen + `}`,
		}, reason: egress.ReasonAddressRefused},
		{name: "metadata stays refused", files: map[string]string{
			"config/mcpward/mcp.json":    `{"mcpServers": {"corp": {"type": "http", "url": "https://169.254.169.254/mcp"}}}`,
			"config/mcpward/egress.json": `{"allow": [{"target": "169.254.0.0/16", "http": true}, {"target": "0.0.0.0/0", "http": true}]}`,
		}, reason: egress.ReasonMetadataRefused},
		{name: "plain http only when named so", files: map[string]string{
			"config/mcpward/mcp.json":    `{"mcpServers": {"corp": {"type": "http", "url": "http://10.0.0.5/mcp"}}}`,
			"config/mcpward/egress.json": widen,
		}, reason: egress.ReasonHTTPNotLoopback},
		{name: "plain http named", files: map[string]string{
			"config/mcpward/mcp.json":    `{"mcpServers": {"corp": {"type": "http", "url": "http://10.0.0.5/mcp"}}}`,
			"config/mcpward/egress.json": `{"allow": [{"target": "10.0.0.0/8", "http": true}]}`,
		}, source: EgressSourceUser},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, r := evalOne(t, t.TempDir(), tt.files, "corp")
			adm, admitted := a.EgressAdmission(context.Background(), r)
			if tt.reason != "" {
				assert.Equal(t, composition.StateRefused, r.State)
				assert.Equal(t, tt.reason, r.Reason)
				assert.False(t, admitted)
				return
			}
			assert.NotEqual(t, composition.StateRefused, r.State, r.Reason)
			require.True(t, admitted)
			assert.Equal(t, "10.0.0.0/8", adm.Target)
			assert.Equal(t, tt.source, adm.Source)
		})
	}
}

// TestEgressManagedUnreadable: a managed file that cannot be read (a FIFO
// here) leaves whether the user's rules are allowed unknown: they are not
// applied (fail closed).
func TestEgressManagedUnreadable(t *testing.T) {
	base := t.TempDir()
	mkfifo(t, filepath.Join(base, "etc", "managed-mcp.json"))
	a, _ := evalOne(t, base, map[string]string{
		"config/mcpward/mcp.json":    `{"mcpServers": {"corp": {"type": "http", "url": "https://10.0.0.5/mcp"}}}`,
		"config/mcpward/egress.json": `{"allow": [{"target": "10.0.0.0/8"}]}`,
	}, "corp")
	assert.False(t, a.Egress.UserRulesAllowed())
	u := mustURL(t, "https://10.0.0.5/mcp")
	assert.Error(t, a.Egress.Policy.AdmitURL(context.Background(), u))
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}
