package add_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/add"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/editing"
)

func TestNewCmdAdd(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var got *add.Options
	capture := func(_ context.Context, o *add.Options) error { got = o; return nil }

	require.NoError(t, cmdtest.Execute(run.F, add.NewCmdAdd(run.F, capture),
		"-e", "A=1", "--env", "B=x=y", "--cwd", "/srv", "--scope", "user", "w", "--", "npx", "-y", "w-mcp"))
	assert.Equal(t, "w", got.Name)
	assert.Equal(t, editing.ScopeUser, got.Scope)
	assert.Equal(t, "npx", got.Command)
	assert.Equal(t, []string{"-y", "w-mcp"}, got.Args)
	assert.Equal(t, [][2]string{{"A", "1"}, {"B", "x=y"}}, got.EnvPairs)
	assert.Equal(t, "{\n  \"type\": \"stdio\",\n  \"command\": \"npx\",\n  \"args\": [\n    \"-y\",\n    \"w-mcp\"\n  ],\n  \"env\": {\n    \"A\": \"1\",\n    \"B\": \"x=y\"\n  },\n  \"cwd\": \"/srv\"\n}\n", string(got.Entry().Marshal()))

	run = cmdtest.NewWorld(t, nil).Factory(t)
	require.NoError(t, cmdtest.Execute(run.F, add.NewCmdAdd(run.F, capture),
		"--transport", "http", "-H", "X-A: 1", "-H", "Authorization:Bearer ${T}", "n", "https://n.example/mcp"))
	assert.Equal(t, editing.ScopeLocal, got.Scope, "local is the default scope")
	assert.Equal(t, [][2]string{{"X-A", "1"}, {"Authorization", "Bearer ${T}"}}, got.Headers)
	assert.Equal(t, "{\n  \"type\": \"http\",\n  \"url\": \"https://n.example/mcp\",\n  \"headers\": {\n    \"X-A\": \"1\",\n    \"Authorization\": \"Bearer ${T}\"\n  }\n}\n", string(got.Entry().Marshal()))
}

func TestNewCmdAddUsage(t *testing.T) {
	for _, args := range [][]string{
		{"w"},
		{"--transport", "http", "n"},
		{"--transport", "http", "n", "https://x", "extra"},
		{"--transport", "http", "-e", "A=cnry", "n", "https://x"},
		{"--transport", "http", "--cwd", "/x", "n", "https://x"},
		{"-H", "A: cnry", "w", "--", "x"},
		{"-e", "cnry", "w", "--", "x"},
		{"-e", "=cnry", "w", "--", "x"},
		{"--transport", "http", "-H", "cnry", "n", "https://x"},
		{"--transport", "ftp", "n", "https://x"},
		{"--scope", "global", "w", "--", "x"},
	} {
		run := cmdtest.NewWorld(t, nil).Factory(t)
		err := cmdtest.Execute(run.F, add.NewCmdAdd(run.F, func(context.Context, *add.Options) error { return nil }), args...)
		require.Error(t, err, "%q", args)
		assert.True(t, cmdutil.IsUsage(err), "%q: %v", args, err)
		assert.NotContains(t, err.Error(), "cnry", "a value is never echoed")
	}
}
