package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/bench/internal/clientkit"
)

// TestDocumentsOf checks the cache of single-target documents: a target
// gets the document it would get built afresh, the same bytes at every
// later connect, and no two targets that differ in any field (the
// separator included) share one.
func TestDocumentsOf(t *testing.T) {
	httpT := clientkit.Target{Name: "bench", Transport: "http", URL: "http://127.0.0.1:1/mcp", Era: "legacy"}
	stdioT := clientkit.Target{Name: "bench", Transport: "stdio", Command: "/bin/server", Args: []string{"-tools", "0"}, Era: "legacy"}
	targets := []clientkit.Target{
		httpT,
		stdioT,
		{Name: "bench", Transport: "http", URL: "http://127.0.0.1:2/mcp", Era: "legacy"},
		{Name: "other", Transport: "http", URL: "http://127.0.0.1:1/mcp", Era: "legacy"},
		{Name: "bench", Transport: "stdio", Command: "/bin/server", Args: []string{"-tools", "1"}, Era: "legacy"},
		{Name: "bench", Transport: "stdio", Command: "/bin/server", Args: []string{"-tools\x000"}, Era: "legacy"},
		{Name: "bench", Transport: "stdio", Command: "/bin/server", Args: []string{"-tools"}, Era: "legacy"},
	}
	docs := &documents{byKey: map[string][]byte{}}
	for _, tg := range targets {
		want, err := document([]clientkit.Target{tg})
		require.NoError(t, err)
		got, err := docs.of([]clientkit.Target{tg})
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%+v", tg)
		again, err := docs.of([]clientkit.Target{tg})
		require.NoError(t, err)
		assert.Same(t, &got[0], &again[0], "a later connect of %+v builds its document again", tg)
	}

	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	data, err := docs.of([]clientkit.Target{httpT})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	assert.Equal(t, map[string]map[string]any{"bench": {"type": "http", "url": httpT.URL}}, doc.MCPServers)

	// Several targets (ConnectMany) are one document, built each time.
	many := []clientkit.Target{httpT, {Name: "b2", Transport: "http", URL: "http://127.0.0.1:3/mcp", Era: "legacy"}}
	data, err = docs.of(many)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	assert.Len(t, doc.MCPServers, 2)
	assert.Len(t, docs.byKey, len(targets))
}
