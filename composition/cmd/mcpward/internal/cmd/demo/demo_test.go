package demo_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/demo"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/root"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
)

func TestDemoJSON(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	run := cmdtest.NewWorld(t, nil).Factory(t)
	require.Equal(t, 0, root.Main(context.Background(), run.F, []string{"demo", "--json"}, "test"), run.ErrOut.String())
	var got demo.JSON
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &got), run.Out.String())
	assert.True(t, got.OK)
	require.Len(t, got.Steps, 5)
	assert.Equal(t, []string{"list", "--json"}, got.Steps[0].Args)
	var servers []struct{ Name, State string }
	require.NoError(t, json.Unmarshal(got.Steps[0].Output, &servers), "a step's output is its own JSON")
	assert.NotEmpty(t, servers)
	var approved struct {
		Approval struct{ GrantedBy string } `json:"approval"`
	}
	require.NoError(t, json.Unmarshal(got.Steps[1].Output, &approved))
	assert.Equal(t, "cli", approved.Approval.GrantedBy)
	assert.NoDirExists(t, got.Directory, "the demo removes its directory")
	left, err := os.ReadDir(os.Getenv("TMPDIR"))
	require.NoError(t, err)
	assert.Empty(t, left)
}

func TestDemoText(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	require.Equal(t, 0, root.Main(context.Background(), run.F, []string{"demo"}, "test"), run.ErrOut.String())
	assert.Contains(t, run.Out.String(), "$ mcpward approve weather\napproved weather")

	run = cmdtest.NewWorld(t, nil).Factory(t)
	assert.Equal(t, 2, root.Main(context.Background(), run.F, []string{"demo", "--server", "/nonexistent"}, "test"))
	assert.Contains(t, run.ErrOut.String(), "--server must name the built example server program")
}
