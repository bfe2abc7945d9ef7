package catalog

import (
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var modelName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// hashed matches a sanitized name: the 12-hex-digit suffix.
var hashed = regexp.MustCompile(`_[0-9a-f]{12}$`)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		server, tool string
		want         string // exact name, or the prefix of a sanitized one
		sanitized    bool
	}{
		{"github", "create_issue", "mcp__github__create_issue", false},
		{"my-server", "Tool-1", "mcp__my-server__Tool-1", false},
		{"s", "a__b", "mcp__s__a__b", false}, // tool part may hold the separator
		{"_s", "t", "mcp___s__t", false},     // leading '_' keeps the split unambiguous
		{"s", "_t", "mcp__s___t", false},     // so does a tool starting with '_'
		{"a__b", "t", "mcp__a_b__t_", true},  // server with separator is ambiguous
		{"a_", "t", "mcp__a__t_", true},      // trailing '_' is ambiguous
		{"fs", "read.file", "mcp__fs__read_file_", true},
		{"fs", "read file", "mcp__fs__read_file_", true},
		{"fs", "名前", "mcp__fs_____", true}, // one '_' per rune, not per byte
		{"my.server", "t", "mcp__my_server__t_", true},
		{"a..b", "t", "mcp__a_b__t_", true},
		{"", "t", "mcp____t_", true},
		{"s", "", "mcp__s___", true},
		{"s", "bad\xffutf8", "mcp__s__bad_utf8_", true},
		{"s", long[:64-len("mcp__s__")], "mcp__s__" + long[:56], false},
		{"s", long[:64-len("mcp__s__")+1], "mcp__s__" + long[:43] + "_", true},
		{long, "t", "mcp__" + long[:43] + "__t_", true},
		{long, long, "mcp__" + long[:20] + "__" + long[:24] + "_", true},
	}
	for _, tt := range tests {
		t.Run(tt.server+"/"+tt.tool, func(t *testing.T) {
			got := ToolName(tt.server, tt.tool)
			assert.Regexp(t, modelName, got)
			assert.Equal(t, got, ToolName(tt.server, tt.tool), "not stable")
			if tt.sanitized {
				assert.Regexp(t, hashed, got)
				assert.Equal(t, tt.want, got[:len(got)-12], "sanitized part")
			} else {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestToolNameDistinct(t *testing.T) {
	// Pairs whose sanitized parts are equal still get distinct names.
	pairs := [][2]string{
		{"a.b", "t"}, {"a,b", "t"}, {"a b", "t"}, {"a__b", "t"}, {"a_b", "t"},
		{"s", "x.y"}, {"s", "x y"}, {"s", "x_y"}, {"s.", "x.y"},
		{"ab.", "c"}, {"a", "b.c"}, {"ab", ".c"}, {"a.", "bc"}, {"", "ab."}, {"ab.", ""},
		{"s", strings.Repeat("y", 100) + "1"}, {"s", strings.Repeat("y", 100) + "2"},
		{strings.Repeat("z", 100) + "1", "t"}, {strings.Repeat("z", 100) + "2", "t"},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		n := ToolName(p[0], p[1])
		if prev, dup := seen[n]; dup {
			t.Fatalf("%q and %q share the name %q", prev, p, n)
		}
		seen[n] = p
	}
}

var (
	fuzzNamesMu sync.Mutex
	fuzzNames   = map[string][2]string{}
)

// FuzzToolName checks that every name is valid for model APIs, stable, and
// that distinct pairs seen by this process get distinct names.
func FuzzToolName(f *testing.F) {
	f.Add("github", "create_issue")
	f.Add("a__b", "c")
	f.Add("a", "_b")
	f.Add("a.b", "c/d")
	f.Add("", "")
	f.Add(strings.Repeat("s", 70), strings.Repeat("t", 70))
	f.Add("名前", "\xff")
	f.Fuzz(func(t *testing.T, server, tool string) {
		n := ToolName(server, tool)
		require.Regexp(t, modelName, n)
		require.Equal(t, n, ToolName(server, tool))
		require.True(t, strings.HasPrefix(n, ToolNamePrefix))
		require.True(t, IsToolNameOf(n, server), "the name %q of (%q, %q) belongs to its server", n, server, tool)
		fuzzNamesMu.Lock()
		defer fuzzNamesMu.Unlock()
		if prev, ok := fuzzNames[n]; ok && prev != [2]string{server, tool} {
			t.Fatalf("%q and %q share the name %q", prev, [2]string{server, tool}, n)
		}
		if len(fuzzNames) < 1<<20 {
			fuzzNames[n] = [2]string{server, tool}
		}
	})
}

// TestIsToolNameOf: every name ToolName gives a server belongs to it (a
// property over generated pairs, and FuzzToolName's), and a name of
// another plain server, or not a tool name at all, does not.
func TestIsToolNameOf(t *testing.T) {
	servers := []string{"github", "a", "a_b", "a-b", "a__b", "a.b", "", "名前", "s_", strings.Repeat("s", 30),
		strings.Repeat("s", 30) + ".x", strings.Repeat("s", 70), "weird server/name"}
	tools := []string{"t", "create_issue", "x__y", "_b", "b_", "x.y", "", strings.Repeat("t", 60), "x_0123456789ab", "名"}
	for _, s := range servers {
		for _, tl := range tools {
			n := ToolName(s, tl)
			assert.True(t, IsToolNameOf(n, s), "%q of (%q, %q)", n, s, tl)
		}
	}
	for _, c := range []struct{ name, server string }{
		{"mcp__github__t", "git"},
		{"mcp__github__t", "github2"},
		{"mcp__github__t", "hub"},
		{"mcp__a_b__t", "a"},
		{"mcp__a__t", "a_b"},
		{"github__t", "github"},
		{"mcp__github__", "github"},
		{"mcp__github", "github"},
		{"mcp__github__" + strings.Repeat("t", 60), "github"},
		{ToolName("a.b", "t"), "a"},
		{ToolName("other", "x.y"), "github"},
	} {
		assert.False(t, IsToolNameOf(c.name, c.server), "%q is no name of %q", c.name, c.server)
	}
}
