package completion_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/completion"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/root"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
)

func TestCompletion(t *testing.T) {
	for shell, marker := range map[string]string{"bash": "complete -o default -F __start_mcpward mcpward", "zsh": "#compdef mcpward", "fish": "complete -c mcpward"} {
		t.Run(shell, func(t *testing.T) {
			run := cmdtest.NewWorld(t, nil).Factory(t)
			require.Equal(t, 0, root.Main(context.Background(), run.F, []string{"completion", shell}, "test"))
			assert.Contains(t, run.Out.String(), marker)
		})
	}
	run := cmdtest.NewWorld(t, nil).Factory(t)
	assert.Equal(t, 2, root.Main(context.Background(), run.F, []string{"completion", "ksh"}, "test"))
	assert.Contains(t, run.ErrOut.String(), "unknown shell (want bash, zsh or fish)")
	assert.Equal(t, []string{"bash", "zsh", "fish"}, completion.Shells)
}

// TestCompleteServerNames: the scripts ask the CLI for server names.
func TestCompleteServerNames(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{"ws/.mcp.json": `{"mcpServers": {"weather": {"command": "w"}, "files": {"command": "f"}}}`})
	run := w.Factory(t)
	require.Equal(t, 0, root.Main(context.Background(), run.F, []string{"__complete", "show", ""}, "test"))
	assert.Contains(t, run.Out.String(), "files\nweather\n")
	run = w.Factory(t)
	require.Equal(t, 0, root.Main(context.Background(), run.F, []string{"__complete", "sh"}, "test"))
	assert.Contains(t, run.Out.String(), "show\t")
}
