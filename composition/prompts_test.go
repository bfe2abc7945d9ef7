package composition

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
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

// TestFleetEverythingContent completes arguments and receives a subscribed
// resource's updates through the Fleet, against server-everything.
func TestFleetEverythingContent(t *testing.T) {
	node, err := exec.LookPath("node")
	entry, _ := filepath.Abs("../peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, serr := os.Stat(entry); err != nil || serr != nil {
		if os.Getenv("MCPWARD_REQUIRE_PEERS") == "1" {
			t.Fatal("MCPWARD_REQUIRE_PEERS=1 but node or server-everything is missing (run: cd peers && npm ci)")
		}
		t.Skip("node or server-everything is missing (run: cd peers && npm ci)")
	}
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), map[string]string{"PATH": filepath.Dir(node), "HOME": t.TempDir()})})
	nb, _ := json.Marshal(node)
	eb, _ := json.Marshal(entry)
	updates := make(chan ports.ResourceUpdate, 16)
	f := r.host.Connect(context.Background(), userSrc(`{"mcpServers": {"every": {"command": `+string(nb)+`, "args": [`+string(eb)+`, "stdio"]}}}`),
		&ConnectOptions{Supervisor: &supervisor.Options{UpdateInterval: time.Millisecond}, OnResourceUpdated: func(u ports.ResourceUpdate) {
			select {
			case updates <- u:
			default:
			}
		}})
	t.Cleanup(func() { _ = f.Close() })
	require.Equal(t, StateConnected, result(t, f, "every").State)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c, err := f.Complete(ctx, "every", ports.CompletionRef{Type: ports.CompletionRefPrompt, Name: "completable-prompt"}, "department", "S", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"Sales", "Support"}, c.Values)
	c, err = f.Complete(ctx, "every", ports.CompletionRef{Type: ports.CompletionRefResource, Name: "demo://resource/dynamic/text/{resourceId}"}, "resourceId", "12", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"12"}, c.Values)
	_, err = f.Complete(ctx, "every", ports.CompletionRef{Type: ports.CompletionRefPrompt, Name: "completable-prompt"}, "nope", "", nil)
	assert.Equal(t, catalog.ReasonUnknownArgument, refusal.ReasonOf(err))

	rr, err := f.ReadTemplate(ctx, "every", "demo://resource/dynamic/text/{resourceId}", map[string]string{"resourceId": "4"})
	require.NoError(t, err)
	assert.Contains(t, rr.Contents[0].Text, "Resource 4")

	const uri = "demo://resource/dynamic/text/1"
	require.NoError(t, f.Subscribe(ctx, "every", uri))
	_, err = f.CallServerTool(ctx, "every", "toggle-subscriber-updates", nil)
	require.NoError(t, err)
	select {
	case u := <-updates:
		assert.Equal(t, ports.ResourceUpdate{Server: "every", URI: uri}, u)
	case <-ctx.Done():
		t.Fatal("no resource update reached the host")
	}
	require.NoError(t, f.Unsubscribe(ctx, "every", uri))
	_, err = f.CallServerTool(ctx, "every", "toggle-subscriber-updates", nil)
	require.NoError(t, err)
}
