package catalog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything", true},
		{"a", "a", true},
		{"a", "A", false},
		{"a*", "abc", true},
		{"*c", "abc", true},
		{"*b*", "abc", true},
		{"a*c", "ac", true},
		{"a*c", "abcbc", true},
		{"a*c", "abcb", false},
		{"a**b", "axxb", true},
		{"*.example.com", "mcp.example.com", true},
		{"*.example.com", "example.com", false},
		{"https://*.example.com/*", "https://a.example.com/mcp", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, WildcardMatch(tt.pattern, tt.s), "%q ~ %q", tt.pattern, tt.s)
	}
	// Many stars against a long subject stay bounded (no exponential
	// backtracking): this returns at once.
	assert.False(t, WildcardMatch(strings.Repeat("*a", 50)+"b", strings.Repeat("a", 10000)))
}

func TestMatchToolPattern(t *testing.T) {
	tests := []struct {
		pattern, server, tool string
		want                  bool
	}{
		{"github/create_issue", "github", "create_issue", true},
		{"github/*", "github", "anything", true},
		{"github/*", "gitlab", "anything", false},
		{"*/delete_*", "fs", "delete_file", true},
		{"*/delete_*", "fs", "read_file", false},
		{"mcp__github__create_issue", "github", "create_issue", true},
		{"mcp__github__*", "github", "x", true},
		{"create_issue", "github", "create_issue", false},
		{"", "github", "x", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, MatchToolPattern(tt.pattern, tt.server, tt.tool), "%q ~ %s/%s", tt.pattern, tt.server, tt.tool)
	}
}

func TestBuildToolFilters(t *testing.T) {
	tools := func() []ports.ToolItem {
		return []ports.ToolItem{
			item(t, "read", `{}`), item(t, "write", `{}`), item(t, "delete", `{}`), item(t, "x.", `{}`),
		}
	}
	tests := []struct {
		name      string
		opts      *Options
		wantHost  []string
		wantRejct []Rejected
	}{
		{name: "nil options admit everything", opts: nil,
			wantHost: []string{"mcp__s__delete", "mcp__s__read", "mcp__s__write", ToolName("s", "x.")}},
		{name: "include", opts: &Options{IncludeTools: []string{"read", "absent"}},
			wantHost: []string{"mcp__s__read"},
			wantRejct: []Rejected{{"s", ports.ListTools, "delete", ReasonToolFiltered}, {"s", ports.ListTools, "write", ReasonToolFiltered},
				{"s", ports.ListTools, "x.", ReasonToolFiltered}}},
		{name: "empty include admits none", opts: &Options{IncludeTools: []string{}},
			wantRejct: []Rejected{{"s", ports.ListTools, "delete", ReasonToolFiltered}, {"s", ports.ListTools, "read", ReasonToolFiltered},
				{"s", ports.ListTools, "write", ReasonToolFiltered}, {"s", ports.ListTools, "x.", ReasonToolFiltered}}},
		{name: "exclude wins over include", opts: &Options{IncludeTools: []string{"read", "write"}, ExcludeTools: []string{"write"}},
			wantHost: []string{"mcp__s__read"},
			wantRejct: []Rejected{{"s", ports.ListTools, "delete", ReasonToolFiltered}, {"s", ports.ListTools, "write", ReasonToolFiltered},
				{"s", ports.ListTools, "x.", ReasonToolFiltered}}},
		{name: "policy denial wins over include", opts: &Options{IncludeTools: []string{"read", "delete"}, DeniedTools: []string{"*/delete"}},
			wantHost: []string{"mcp__s__read"},
			wantRejct: []Rejected{{"s", ports.ListTools, "delete", ReasonPolicyDenied}, {"s", ports.ListTools, "write", ReasonToolFiltered},
				{"s", ports.ListTools, "x.", ReasonToolFiltered}}},
		{name: "policy by host-facing name", opts: &Options{DeniedTools: []string{"mcp__s__write"}},
			wantHost:  []string{"mcp__s__delete", "mcp__s__read", ToolName("s", "x.")},
			wantRejct: []Rejected{{"s", ports.ListTools, "write", ReasonPolicyDenied}}},
		{name: "policy of another server", opts: &Options{DeniedTools: []string{"other/*"}},
			wantHost: []string{"mcp__s__delete", "mcp__s__read", "mcp__s__write", ToolName("s", "x.")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := Build("s", ports.SessionIdentity{ServerID: "s", Declared: []ports.ListKind{ports.ListTools}}, Lists{Tools: tools()}, nil, tt.opts)
			assert.ElementsMatch(t, tt.wantHost, hostNames(cat.Tools))
			assert.Equal(t, tt.wantRejct, cat.Rejected)
			for _, r := range cat.Rejected {
				_, ok := cat.Tool(ToolName("s", r.Name))
				require.False(t, ok, "rejected tool %s reachable", r.Name)
			}
		})
	}
}

// A filtered tool takes no part in a name collision: its twin stays.
func TestBuildFilteredToolDoesNotCollide(t *testing.T) {
	sanitized := ToolName("srv", "x.")
	twin := strings.TrimPrefix(sanitized, "mcp__srv__")
	l := Lists{Tools: []ports.ToolItem{item(t, "x.", `{}`), item(t, twin, `{}`)}}
	cat := Build("srv", ports.SessionIdentity{ServerID: "srv"}, l, nil, &Options{ExcludeTools: []string{"x."}})
	assert.Equal(t, []string{sanitized}, hostNames(cat.Tools))
	assert.Equal(t, []Rejected{{"srv", ports.ListTools, "x.", ReasonToolFiltered}}, cat.Rejected)
}

// FuzzMatchToolPattern: any pattern and names, no panic; "*" as the whole
// tool part matches every tool of its server; a pattern without "*"
// matches exactly one spelling.
func FuzzMatchToolPattern(f *testing.F) {
	f.Add("github/*", "github", "x")
	f.Add("mcp__a__*", "a", "b")
	f.Add("*/*", "", "")
	f.Fuzz(func(t *testing.T, pattern, server, tool string) {
		got := MatchToolPattern(pattern, server, tool)
		if !strings.Contains(server, "/") && !strings.Contains(server, "*") {
			assert.True(t, MatchToolPattern(server+"/*", server, tool))
		}
		if got && !strings.Contains(pattern, "*") {
			assert.True(t, pattern == server+"/"+tool || pattern == ToolName(server, tool), "%q ~ %q %q", pattern, server, tool)
		}
	})
}

// toolDenied agrees with MatchToolPattern over a list.
func TestToolDeniedAgrees(t *testing.T) {
	pats := []string{"", "a/*", "mcp__b__x", "*/y", "mcp__*__z"}
	for _, server := range []string{"a", "b", "c", "s.x"} {
		for _, tool := range []string{"x", "y", "z", "w"} {
			want := false
			for _, p := range pats {
				want = want || MatchToolPattern(p, server, tool)
			}
			assert.Equal(t, want, toolDenied(pats, server, tool), "%s/%s", server, tool)
		}
	}
}
