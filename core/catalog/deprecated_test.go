package catalog

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// TestDeprecatedNames: the names #27 renamed, kept for one release, do
// what their new names do: Tool.ServerName and Prompt.ServerName are
// NameOnServer, Catalog.HostTools and Set.HostTools are ModelTools.
// Removing one is a deliberate act: this test stops compiling.
func TestDeprecatedNames(t *testing.T) {
	l := Lists{
		Tools:   []ports.ToolItem{item(t, "b.x", `{"type":"object"}`), item(t, "a", `{}`)},
		Prompts: []json.RawMessage{json.RawMessage(`{"name":"p.1"}`)},
	}
	cat := Build("srv", ports.SessionIdentity{}, l, nil, nil)
	require.Len(t, cat.Tools, 2)
	for _, tl := range cat.Tools {
		assert.Equal(t, tl.NameOnServer(), tl.ServerName())
	}
	require.Len(t, cat.Prompts, 1)
	for _, p := range cat.Prompts {
		assert.Equal(t, "p.1", p.ServerName())
		assert.Equal(t, p.NameOnServer(), p.ServerName())
	}
	assert.Equal(t, cat.ModelTools(), cat.HostTools())
	set := NewSet([]*Catalog{cat}, nil)
	assert.Equal(t, set.ModelTools(), set.HostTools())
	assert.Len(t, set.HostTools(), 2)
}
