package composition

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func TestFleetPromptsAndResources(t *testing.T) {
	bin := privateExample(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), map[string]string{"LANG": "C"})})
	b, _ := json.Marshal(bin)
	f := r.host.Connect(context.Background(), userSrc(`{"mcpServers": {"example": {"command": `+string(b)+`}}}`), nil)
	t.Cleanup(func() { _ = f.Close() })
	ctx := context.Background()

	p, ok := f.Set().Prompt("mcp__example__review")
	require.True(t, ok, "the Set holds the server's prompts by host-facing name")
	assert.Equal(t, []ports.PromptArgument{{Name: "text", Description: "the text to review", Required: true}}, p.Arguments())

	res, err := f.GetPrompt(ctx, "example", "review", map[string]string{"text": "abc"})
	require.NoError(t, err)
	require.Len(t, res.Messages, 1)
	assert.Equal(t, "user", res.Messages[0].Role)
	assert.Contains(t, string(res.Messages[0].Content), "abc")

	_, err = f.GetPrompt(ctx, "example", "review", nil)
	assert.Equal(t, catalog.ReasonMissingArgument, refusal.ReasonOf(err))
	_, err = f.GetPrompt(ctx, "example", "review", map[string]string{"text": "a", "x": "b"})
	assert.Equal(t, catalog.ReasonUnknownArgument, refusal.ReasonOf(err))
	_, err = f.GetPrompt(ctx, "example", "nope", nil)
	assert.Equal(t, ReasonUnknownPrompt, refusal.ReasonOf(err))
	_, err = f.GetPrompt(ctx, "nope", "review", nil)
	assert.Equal(t, ReasonUnknownServer, refusal.ReasonOf(err))

	rr, err := f.ReadResource(ctx, "example", "example://readme")
	require.NoError(t, err)
	require.Len(t, rr.Contents, 1)
	assert.Contains(t, rr.Contents[0].Text, "mcpward example server")
	_, err = f.ReadTemplate(ctx, "example", "example://{x}", nil)
	assert.Equal(t, ReasonUnknownTemplate, refusal.ReasonOf(err))
	_, err = f.Complete(ctx, "example", ports.CompletionRef{Type: ports.CompletionRefPrompt, Name: "review"}, "text", "", nil)
	assert.Equal(t, refusal.Unsupported, refusal.ClassOf(err), "the example server declares no completions")
}
