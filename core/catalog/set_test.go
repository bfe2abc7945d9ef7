package catalog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

func TestSet(t *testing.T) {
	// Server "a.b" sanitizes to "a_b" and hashes its pair; server "a_b" is
	// plain and names a tool after that hash.
	collider := ToolName("a.b", "t")
	require.Equal(t, "mcp__a_b__", collider[:len("mcp__a_b__")])
	twin := collider[len("mcp__a_b__"):]

	one := Build("a.b", ports.SessionIdentity{}, Lists{
		Tools:   []ports.ToolItem{item(t, "t", `{}`), item(t, "u", `{}`)},
		Dropped: []ports.DroppedTool{{Name: "d", Reason: "invalid_header_annotation"}},
	}, nil, nil)
	two := Build("a_b", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{item(t, twin, `{}`), item(t, "v", `{}`)}}, nil, nil)
	three := Build("c", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{item(t, "w", `{}`)}}, nil, nil)
	require.Len(t, one.Tools, 2)
	require.Len(t, two.Tools, 2)

	given := []Rejected{{Server: "sse", Kind: KindServer, Name: "sse", Reason: "transport_unsupported"}}
	s := NewSet([]*Catalog{three, nil, one, two}, given)
	given[0].Reason = "changed"

	var names []string
	for _, tool := range s.Tools() {
		names = append(names, tool.Spec().Name)
	}
	assert.Equal(t, []string{ToolName("a.b", "u"), "mcp__a_b__v", "mcp__c__w"}, names)
	_, ok := s.Tool(collider)
	assert.False(t, ok, "a collided name resolves to nothing")
	tool, ok := s.Tool("mcp__c__w")
	require.True(t, ok)
	assert.Same(t, three.Tools[0], tool)

	assert.Equal(t, []Rejected{
		{"a.b", ports.ListTools, "d", "invalid_header_annotation"},
		{"a.b", ports.ListTools, "t", ReasonNameCollision},
		{"a_b", ports.ListTools, twin, ReasonNameCollision},
		{"sse", KindServer, "sse", "transport_unsupported"},
	}, s.Rejected())
	assert.Equal(t, []*Catalog{three, one, two}, s.Catalogs())
	assert.Len(t, one.Tools, 2, "catalogs are not modified")

	s.Rejected()[0].Name = "x"
	s.Catalogs()[0] = nil
	assert.Equal(t, "d", s.Rejected()[0].Name, "Rejected returns a copy")
	assert.Same(t, three, s.Catalogs()[0], "Catalogs returns a copy")
}

func TestSetSameServerTwice(t *testing.T) {
	a := Build("s", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{item(t, "x", `{}`), item(t, "y", `{}`)}}, nil, nil)
	b := Build("s", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{item(t, "x", `{}`)}}, nil, nil)
	s := NewSet([]*Catalog{a, b}, nil)
	require.Len(t, s.Tools(), 1)
	assert.Equal(t, "mcp__s__y", s.Tools()[0].Spec().Name)
	assert.Equal(t, []Rejected{{"s", ports.ListTools, "x", ReasonNameCollision}, {"s", ports.ListTools, "x", ReasonNameCollision}}, s.Rejected())
}

func TestSetEmpty(t *testing.T) {
	s := NewSet(nil, nil)
	assert.Empty(t, s.Tools())
	assert.Empty(t, s.Rejected())
	assert.Empty(t, s.Catalogs())
	_, ok := s.Tool("mcp__a__b")
	assert.False(t, ok)
}
