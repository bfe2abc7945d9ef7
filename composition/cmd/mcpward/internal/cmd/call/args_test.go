package call

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
)

func TestMergeArgs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"text":{"type":"string"},"n":{"type":"integer"},"ok":{"type":"boolean"},
		"tags":{"type":"array"},"maybe":{"type":["string","null"]},"any":{}}}`)
	tests := []struct {
		name, base string
		pairs      []string
		want       string
	}{
		{"typed by the schema", "", []string{"text=42", "n=42", "ok=true", "tags=[\"a\"]", "maybe=null", "any=7", "undeclared=1"},
			`{"any":"7","maybe":"null","n":42,"ok":true,"tags":["a"],"text":"42","undeclared":"1"}`},
		{"added to --args, a pair wins", `{"text":"a","n":1}`, []string{"n=2"}, `{"n":2,"text":"a"}`},
		{"a value holding =", "", []string{"text=a=b"}, `{"text":"a=b"}`},
		{"no pairs: --args as given", `{ "x" : 1 }`, nil, `{ "x" : 1 }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mergeArgs(tt.base, tt.pairs, schema)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, got)
		})
	}
	for _, bad := range [][]string{{"n=secret-value-x"}, {"novalue"}, {"=1"}} {
		_, err := mergeArgs("", bad, schema)
		require.Error(t, err, bad)
		assert.True(t, cmdutil.IsUsage(err), bad)
		assert.NotContains(t, err.Error(), "secret-value-x", "a value is never echoed")
	}
	_, err := mergeArgs(`[1]`, []string{"n=1"}, schema)
	assert.True(t, cmdutil.IsUsage(err))
}

func TestReadArgs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "args.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"text":"from a file"}`), 0o600))
	got, err := readArgs("@"+p, nil)
	require.NoError(t, err)
	assert.Equal(t, `{"text":"from a file"}`, got)
	got, err = readArgs("-", strings.NewReader(`{"text":"from stdin"}`))
	require.NoError(t, err)
	assert.Equal(t, `{"text":"from stdin"}`, got)
	got, err = readArgs(`{"a":1}`, nil)
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, got)
	for _, s := range []string{"@" + filepath.Join(dir, "none"), "@" + dir} {
		_, err = readArgs(s, nil)
		assert.True(t, cmdutil.IsUsage(err), s)
	}
	_, err = readArgs("-", strings.NewReader(strings.Repeat(" ", 4<<20+1)))
	assert.True(t, cmdutil.IsUsage(err), "over the argument cap")
}
