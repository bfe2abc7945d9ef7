package definition

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// TestTargetRefusal: a secret (a credential-shaped variable, or a template
// where a credential goes) never decides what runs or where it connects:
// Decode refuses such a definition by name and Materialize refuses it too
// (issue 22, attack 4 and its kin).
func TestTargetRefusal(t *testing.T) {
	tests := []struct {
		name string
		def  Definition
		want string
	}{
		{"credential variable as the command", Definition{Kind: KindStdio, Command: "${MY_TOKEN}"}, RefusalSecretInCommand},
		{"credential variable in the command's path", Definition{Kind: KindStdio, Command: "/opt/${API_KEY}/bin/srv"}, RefusalSecretInCommand},
		{"secret position in the command", Definition{Kind: KindStdio, Command: "--token=${X}"}, RefusalSecretInCommand},
		{"plain variable in the command", Definition{Kind: KindStdio, Command: "${HOME}/bin/srv"}, ""},
		{"agent socket is not a credential", Definition{Kind: KindStdio, Command: "${SSH_AUTH_SOCK}"}, ""},
		{"a path to a token file is not one", Definition{Kind: KindStdio, Command: "${TOKEN_FILE}"}, ""},
		{"credential variable as the cwd", Definition{Kind: KindStdio, Command: "srv", Cwd: "/w/${DEPLOY_TOKEN}"}, RefusalSecretInCwd},
		{"PWD as the cwd", Definition{Kind: KindStdio, Command: "srv", Cwd: "${PWD}"}, ""},
		{"secrets dir as the cwd", Definition{Kind: KindStdio, Command: "srv", Cwd: "${SECRET_DIR}"}, ""},
		{"credential variable as the host", Definition{Kind: KindHTTP, URL: "https://${API_TOKEN}/mcp"}, RefusalSecretInURL},
		{"credential variable in the host", Definition{Kind: KindHTTP, URL: "https://mcp.${TENANT_SECRET}.example/mcp"}, RefusalSecretInURL},
		{"credential variable as the port", Definition{Kind: KindHTTP, URL: "https://h.example:${PORT_TOKEN}/mcp"}, RefusalSecretInURL},
		{"credential variable as the scheme", Definition{Kind: KindHTTP, URL: "${SCHEME_TOKEN}://h.example/mcp"}, RefusalSecretInURL},
		{"credential variable as the whole url", Definition{Kind: KindHTTP, URL: "${MCP_TOKEN}"}, RefusalSecretInURL},
		{"credential variable before the path", Definition{Kind: KindHTTP, URL: "${MCP_TOKEN}/mcp"}, RefusalSecretInURL},
		{"host after a secret userinfo", Definition{Kind: KindHTTP, URL: "https://u:${DB_PASSWORD}@${API_KEY}/"}, RefusalSecretInURL},
		{"secret userinfo password", Definition{Kind: KindHTTP, URL: "https://u:${DB_PASSWORD}@h.example/"}, ""},
		{"secret query", Definition{Kind: KindHTTP, URL: "https://h.example/mcp?token=${X}"}, ""},
		{"secret path", Definition{Kind: KindHTTP, URL: "https://h.example/${API_KEY}/mcp"}, ""},
		{"plain variable host", Definition{Kind: KindHTTP, URL: "https://${MCP_HOST:-h.example}/mcp"}, ""},
		{"url variable", Definition{Kind: KindHTTP, URL: "${SERVER_URL}"}, ""},
	}
	lookup := func(name string) (string, bool) { return "v", true }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.def.Name = "s"
			assert.Equal(t, tt.want, targetRefusal(&tt.def))
			_, err := Materialize(&tt.def, lookup)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			assert.Equal(t, tt.want, refusal.ReasonOf(err))
			assert.Equal(t, refusal.Config, refusal.ClassOf(err))
			assert.NotContains(t, err.Error(), "${")
		})
	}

	// Decode refuses by name, and the definition still wins precedence.
	doc := Decode(Source{Tier: ports.TierProject, Origin: "p", Data: []byte(`{"mcpServers":{
		"a":{"command":"${MY_TOKEN}"},
		"b":{"command":"srv","cwd":"${DEPLOY_TOKEN}"},
		"c":{"type":"http","url":"https://${API_TOKEN}/mcp"},
		"d":{"type":"sse","url":"https://${API_TOKEN}/mcp"},
		"e":{"command":"srv","args":["--token","${X}"]}}}`)})
	got := map[string]string{}
	for _, e := range doc.Entries {
		require.NotNil(t, e.Def, e.Name)
		got[e.Name] = e.Def.Refusal
	}
	assert.Equal(t, map[string]string{"a": RefusalSecretInCommand, "b": RefusalSecretInCwd, "c": RefusalSecretInURL,
		"d": RefusalTransportSSE, "e": ""}, got)
}

// TestTargetRefusalExpanded: a secret value that would move a URL's host
// (a password holding "@" or "/") is refused when it is expanded, though
// the template as written is fine.
func TestTargetRefusalExpanded(t *testing.T) {
	d := Definition{Name: "s", Kind: KindHTTP, URL: "https://u:${DB_PASSWORD}@h.example/mcp"}
	for val, want := range map[string]string{
		"plain":             "",
		"x@evil.example":    "", // the last "@" ends the userinfo: the host is still h.example
		"x/evil":            RefusalSecretInURL,
		"x@evil.example/p#": RefusalSecretInURL,
	} {
		_, err := Materialize(&d, func(string) (string, bool) { return val, true })
		assert.Equal(t, want, refusal.ReasonOf(err), "%q", val)
	}
}
