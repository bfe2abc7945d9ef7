package definition_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/definition"
)

func TestDecodeToolFilters(t *testing.T) {
	tests := []struct {
		name        string
		entry       string
		wantInclude []string
		wantExclude []string
		wantProblem string
		wantField   string
	}{
		{name: "absent", entry: `{"command":"x"}`},
		{name: "stdio include and exclude sorted and deduplicated",
			entry:       `{"command":"x","includeTools":["b","a","b"],"excludeTools":["w"]}`,
			wantInclude: []string{"a", "b"}, wantExclude: []string{"w"}},
		{name: "http entry", entry: `{"url":"https://h.example/mcp","excludeTools":["delete_repo"]}`,
			wantExclude: []string{"delete_repo"}},
		{name: "empty include admits nothing but is kept", entry: `{"command":"x","includeTools":[]}`,
			wantInclude: []string{}},
		{name: "not an array", entry: `{"command":"x","includeTools":"a"}`,
			wantProblem: definition.EntryInvalidField, wantField: "includeTools"},
		{name: "null is not absence", entry: `{"command":"x","excludeTools":null}`,
			wantProblem: definition.EntryInvalidField, wantField: "excludeTools"},
		{name: "non-string element", entry: `{"command":"x","excludeTools":[1]}`,
			wantProblem: definition.EntryInvalidField, wantField: "excludeTools"},
		{name: "empty name", entry: `{"command":"x","includeTools":[""]}`,
			wantProblem: definition.EntryInvalidField, wantField: "includeTools"},
		{name: "NUL in name", entry: `{"command":"x","includeTools":["a\u0000"]}`,
			wantProblem: definition.EntryInvalidField, wantField: "includeTools"},
		{name: "wrong case is unknown", entry: `{"command":"x","IncludeTools":["a"]}`,
			wantProblem: definition.EntryUnknownField, wantField: "IncludeTools"},
		{name: "duplicate key", entry: `{"command":"x","includeTools":["a"],"includeTools":["b"]}`,
			wantProblem: definition.EntryDuplicateField, wantField: "includeTools"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := decodeTestOne(t, tt.entry)
			if tt.wantProblem != "" {
				assert.Nil(t, e.Def)
				assert.Equal(t, tt.wantProblem, e.Problem)
				assert.Equal(t, tt.wantField, e.Field)
				return
			}
			require.NotNil(t, e.Def, "problem %s field %s", e.Problem, e.Field)
			assert.Equal(t, tt.wantInclude, e.Def.IncludeTools)
			assert.Equal(t, tt.wantExclude, e.Def.ExcludeTools)
		})
	}
}

// A definition without filters keeps its fingerprint; the filter is part
// of the identity (an approval of the unfiltered server does not cover a
// filtered one and the other way round).
func TestFingerprintToolFilters(t *testing.T) {
	fp := func(entry string) string {
		e := decodeTestOne(t, entry)
		require.NotNil(t, e.Def)
		m, err := definition.Materialize(e.Def, nil)
		require.NoError(t, err)
		return definition.Fingerprint(m)
	}
	plain := fp(`{"command":"x"}`)
	seen := map[string]string{plain: "plain"}
	for _, entry := range []string{
		`{"command":"x","includeTools":[]}`,
		`{"command":"x","includeTools":["a"]}`,
		`{"command":"x","excludeTools":["a"]}`,
		`{"command":"x","excludeTools":[]}`,
		`{"command":"x","includeTools":["a"],"excludeTools":["a"]}`,
	} {
		got := fp(entry)
		_, dup := seen[got]
		assert.False(t, dup, "%s fingerprints like %s", entry, seen[got])
		seen[got] = entry
	}
	assert.Equal(t, fp(`{"command":"x","includeTools":["b","a"]}`), fp(`{"command":"x","includeTools":["a","b","a"]}`))
}

func TestProjectToolFilters(t *testing.T) {
	for _, tt := range []struct {
		entry, want string
	}{
		{`{"command":"x"}`, ``},
		{`{"command":"x","includeTools":[]}`, `"includeTools":[]`},
		{`{"command":"x","includeTools":["b","a"],"excludeTools":["w"]}`, `"includeTools":["a","b"],"excludeTools":["w"]`},
	} {
		e := decodeTestOne(t, tt.entry)
		require.NotNil(t, e.Def)
		b, err := json.Marshal(definition.ProjectDefinition(e.Def))
		require.NoError(t, err)
		if tt.want == "" {
			assert.NotContains(t, string(b), "Tools")
		} else {
			assert.Contains(t, string(b), tt.want)
		}
	}
}

func TestProjectTimeout(t *testing.T) {
	for _, tt := range []struct {
		entry, want string
	}{
		{`{"command":"x"}`, ``},
		{`{"command":"x","timeout":1500}`, `"timeout":1500`},
		{`{"type":"http","url":"https://x.example/mcp","timeout":86400000}`, `"timeout":86400000`},
	} {
		e := decodeTestOne(t, tt.entry)
		require.NotNil(t, e.Def)
		b, err := json.Marshal(definition.ProjectDefinition(e.Def))
		require.NoError(t, err)
		if tt.want == "" {
			assert.NotContains(t, string(b), "timeout")
		} else {
			assert.Contains(t, string(b), tt.want)
		}
	}
}
