package get_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/get"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/show"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/editing"
	"github.com/mcpward/mcpward/core/refusal"
)

const project = `{"mcpServers": {"weather": {"command": "weather-mcp", "env": {"API_KEY": "${API_KEY}"}}}}`

// TestGetWithoutScopeIsShow: get NAME prints exactly what show NAME does.
func TestGetWithoutScopeIsShow(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{"ws/.mcp.json": project}, "API_KEY=cnry-value")
	for _, asJSON := range []bool{false, true} {
		a, b := w.Factory(t), w.Factory(t)
		require.NoError(t, get.Run(context.Background(), &get.Options{IO: a.IO, App: a.F.App, JSON: asJSON, Env: w.Env(), Name: "weather"}))
		require.NoError(t, show.Run(context.Background(), &show.Options{IO: b.IO, App: b.F.App, JSON: asJSON, Name: "weather"}))
		assert.Equal(t, b.Out.String(), a.Out.String())
		assert.NotContains(t, a.Out.String(), "cnry")
	}
}

func TestGetScope(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{"ws/.mcp.json": project}, "API_KEY=cnry-value")
	run := w.Factory(t)
	require.NoError(t, get.Run(context.Background(), &get.Options{IO: run.IO, App: run.F.App, Env: w.Env(), Scope: editing.ScopeProject, Name: "weather"}))
	assert.Contains(t, run.Out.String(), "weather in the project scope (")
	assert.Contains(t, run.Out.String(), "env keys   API_KEY (values never shown)")
	assert.NotContains(t, run.Out.String(), "cnry")

	run = w.Factory(t)
	err := get.Run(context.Background(), &get.Options{IO: run.IO, App: run.F.App, Env: w.Env(), Scope: editing.ScopeLocal, Name: "weather"})
	assert.Equal(t, editing.ReasonServerNotInScope, refusal.ReasonOf(err))
	assert.Contains(t, err.(interface{ Unwrap() error }).Unwrap().Error(), "the local scope does not define it")
}
