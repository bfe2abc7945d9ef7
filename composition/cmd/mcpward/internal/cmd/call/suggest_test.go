package call

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/ports"
)

func TestSplitTool(t *testing.T) {
	defined := []string{"fs", "fs__x", "github", "my.server"}
	tests := []struct {
		name    string
		servers []string
		tool    string
		host    bool
	}{
		{"fs/read_file", []string{"fs"}, "read_file", false},
		{"fs/a/b", []string{"fs"}, "a/b", false},
		{"mcp__fs__read_file", []string{"fs"}, "mcp__fs__read_file", true},
		{"mcp__fs__x__y", []string{"fs", "fs__x"}, "mcp__fs__x__y", true},
		{catalog.ToolName("my.server", "t"), []string{"my.server"}, catalog.ToolName("my.server", "t"), true},
		{"mcp__ghost__t", nil, "mcp__ghost__t", true},
	}
	for _, tt := range tests {
		servers, tool, host := splitTool(tt.name, defined)
		assert.Equal(t, tt.servers, servers, tt.name)
		assert.Equal(t, tt.tool, tool, tt.name)
		assert.Equal(t, tt.host, host, tt.name)
	}
}

func TestSuggest(t *testing.T) {
	r := composition.ServerStatus{Name: "fs", Tools: []composition.ToolSummary{
		{ToolSpec: ports.ToolSpec{Name: "mcp__fs__read_text_file"}, NameOnServer: "read_text_file"},
		{ToolSpec: ports.ToolSpec{Name: "mcp__fs__write_file"}, NameOnServer: "write_file"},
		{ToolSpec: ports.ToolSpec{Name: "mcp__fs__list_directory"}, NameOnServer: "list_directory"},
	}, Rejected: []catalog.Rejected{
		{Server: "fs", Kind: ports.ListTools, Name: "delete_file", Reason: catalog.ReasonToolFiltered},
		{Server: "fs", Kind: ports.ListTools, Name: "move_file", Reason: catalog.ReasonPolicyDenied},
	}}
	assert.Equal(t, "did you mean fs/read_text_file?", suggest(r, "read_txt_file"))
	assert.Equal(t, "did you mean fs/write_file?", suggest(r, "mcp__fs__write_fil"))
	assert.Contains(t, suggest(r, "delete_file"), "filtered out")
	assert.Contains(t, suggest(r, "mcp__fs__move_file"), "managed policy")
	assert.Equal(t, `"mcpward tools fs" lists its tools`, suggest(r, "zzz"))
	assert.Equal(t, "", suggest(composition.ServerStatus{Name: "empty"}, "x"))
	// A hostile name costs a bounded amount and is made safe.
	long := strings.Repeat("\x1b[31m", 100000)
	assert.NotContains(t, suggest(r, long), "\x1b")
}

func TestEditDistance(t *testing.T) {
	assert.Equal(t, 0, editDistance("abc", "abc"))
	assert.Equal(t, 1, editDistance("abc", "abd"))
	assert.Equal(t, 3, editDistance("", "abc"))
	assert.Equal(t, 2, editDistance("ecoh", "echo"))
}
