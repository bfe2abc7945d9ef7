package conformance

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	for _, tt := range []struct {
		name string
		want Scenario
		ok   bool
	}{
		{"initialize", Scenario{}, true},
		{"tools_call", Scenario{Tool: "add_numbers", Args: `{"a":5,"b":3}`}, true},
		{"auth/metadata-default", Scenario{Tool: "test-tool", Args: `{}`, Auth: true}, true},
		{"auth/client-credentials-jwt", Scenario{Tool: "test-tool", Args: `{}`, Auth: true, Grant: GrantClientCredentials}, true},
		{"auth/cross-app-access-complete-flow", Scenario{Tool: "test-tool", Args: `{}`, Auth: true, Grant: GrantEnterpriseManaged}, true},
		{"auth/enterprise-managed-authorization", Scenario{Tool: "test-tool", Args: `{}`, Auth: true, Grant: GrantEnterpriseManaged}, true},
		{"auth/wif-jwt-bearer", Scenario{Tool: "test-tool", Args: `{}`, Auth: true, Grant: GrantWorkloadIdentity}, true},
		{"auth/dpop", Scenario{Tool: "test-tool", Args: `{}`, Auth: true}, true},
		{"request-metadata", Scenario{}, true},
		{"json-schema-ref-no-deref", Scenario{}, true},
		{"http-standard-headers", Scenario{Do: DoEveryKind}, true},
		{"http-custom-headers", Scenario{Do: DoContextCalls}, true},
		{"http-invalid-tool-headers", Scenario{Do: DoCallAll}, true},
		{"json-schema-2020-12-preservation", Scenario{Do: DoEchoSchema}, true},
		{"auth/", Scenario{}, false},
		{"nope", Scenario{}, false},
	} {
		got, ok := Lookup(tt.name)
		assert.Equal(t, tt.ok, ok, tt.name)
		assert.Equal(t, tt.want, got, tt.name)
	}
}

func TestMainUsage(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	var log strings.Builder
	assert.Equal(t, 2, Main(context.Background(), nil, env(map[string]string{EnvScenario: "initialize"}), &log), "no URL")
	assert.Equal(t, 2, Main(context.Background(), []string{"http://localhost:1/mcp"}, env(map[string]string{EnvScenario: "nope"}), &log))
	assert.Equal(t, 2, Main(context.Background(), []string{"http://localhost:1/mcp"},
		env(map[string]string{EnvScenario: "initialize", EnvContext: "[not json"}), &log))
	assert.NotContains(t, log.String(), "not json", "the context is never echoed")
}

// TestSources: a definition without "oauth" unless the context names a
// pre-registered client; never its secret.
func TestSources(t *testing.T) {
	srcs, err := sources("http://localhost:1/mcp", Context{})
	require.NoError(t, err)
	require.Len(t, srcs, 1)
	assert.NotContains(t, string(srcs[0].Data), "oauth")
	srcs, err = sources("http://localhost:1/mcp", Context{ClientID: "pre", ClientSecret: "canary-secret"})
	require.NoError(t, err)
	var doc map[string]map[string]map[string]any
	require.NoError(t, json.Unmarshal(srcs[0].Data, &doc))
	assert.Equal(t, map[string]any{"clientId": "pre"}, doc["mcpServers"][serverName]["oauth"])
	assert.NotContains(t, string(srcs[0].Data), "canary-secret")
}

// TestWithoutNulls: a host omits an argument it has no value for.
func TestWithoutNulls(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a":1,"b":null,"c":{"d":null}}`, `{"a":1,"c":{"d":null}}`},
		{`{}`, `{}`},
		{`null`, `{}`},
		{``, `{}`},
		{`[1]`, `{}`},
	} {
		assert.JSONEq(t, tt.want, string(withoutNulls(json.RawMessage(tt.in))), tt.in)
	}
}

// TestContextToolCalls: the suite's toolCalls are read from the context.
func TestContextToolCalls(t *testing.T) {
	var cc Context
	require.NoError(t, json.Unmarshal([]byte(`{"toolCalls":[{"name":"a","arguments":{"x":1}},{"name":"b"}]}`), &cc))
	require.Len(t, cc.ToolCalls, 2)
	assert.Equal(t, "a", cc.ToolCalls[0].Name)
	assert.JSONEq(t, `{"x":1}`, string(cc.ToolCalls[0].Arguments))
	assert.Equal(t, "b", cc.ToolCalls[1].Name)
}
