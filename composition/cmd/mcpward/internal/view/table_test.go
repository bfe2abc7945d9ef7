package view

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestFitTable(t *testing.T) {
	rows := [][]string{
		{"NAME", "STATE", "COMMAND/URL", "ORIGIN"},
		{"a", "allowed", "npx -y @modelcontextprotocol/server-everything@2026.8.31", "/home/u/.config/mcpward/workspaces/ws-0123456789abcdef/local.json"},
		{"long-server-name-é", "denied", "x", "-"},
	}
	var whole strings.Builder
	FitTable(&whole, rows, 0, 2, 3, 0)
	assert.Contains(t, whole.String(), "server-everything@2026.8.31  /home/u/.config", "width 0: every cell whole")
	for _, width := range []int{40, 60, 80, 100, 200} {
		var b strings.Builder
		FitTable(&b, rows, width, 2, 3, 0)
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		assert.Len(t, lines, 3)
		for _, l := range lines {
			assert.LessOrEqual(t, utf8.RuneCountInString(l), max(width, 2*3+8*3+len("allowed")), "width %d: %q", width, l)
			assert.Equal(t, strings.TrimRight(l, " "), l, "no trailing spaces")
		}
		assert.True(t, strings.HasPrefix(lines[0], "NAME"), "the header is kept")
		if width < 150 {
			assert.Contains(t, b.String(), "…", "width %d cuts", width)
		} else {
			assert.Equal(t, whole.String(), b.String(), "a table that fits is unchanged")
		}
	}
}
