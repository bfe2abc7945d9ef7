package mcpsession

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// TestEverythingContent gets prompts, reads resources and templates,
// completes arguments and receives a subscribed resource's update from
// the third-party peer.
func TestEverythingContent(t *testing.T) {
	d := everythingStdio(t)
	rec := &updateRecorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := New(d, nil).Connect(ctx, target("everything"), rec.signals())
	require.NoError(t, err)
	defer func() { assert.NoError(t, sess.Close()) }()
	id := sess.Identity()
	assert.True(t, id.Subscribe)
	assert.True(t, id.Completions)

	res, err := sess.GetPrompt(ctx, ports.GetPromptRequest{Name: "args-prompt", Arguments: map[string]string{"city": "Oslo"}})
	require.NoError(t, err)
	require.NotEmpty(t, res.Messages)
	assert.JSONEq(t, `{"type":"text","text":"What's weather in Oslo?"}`, string(res.Messages[0].Content))

	_, err = sess.GetPrompt(ctx, ports.GetPromptRequest{Name: "no-such-prompt"})
	re := requireReason(t, err, refusal.Protocol, "prompt_rejected")
	t.Logf("prompt: %s", re.Detail)
	assert.Contains(t, re.Detail, "no-such-prompt", "the server's own message is kept (#25 item 6)")

	_, err = sess.ReadResource(ctx, ports.ReadRequest{URI: "demo://nope"})
	re = requireReason(t, err, refusal.Protocol, "read_rejected")
	t.Logf("read: %s", re.Detail)
	assert.Contains(t, re.Detail, "demo://nope", "the server's own message is kept (#25 item 6)")

	rr, err := sess.ReadResource(ctx, ports.ReadRequest{URI: "demo://resource/dynamic/text/1"})
	require.NoError(t, err)
	require.Len(t, rr.Contents, 1)
	assert.Contains(t, rr.Contents[0].Text, "Resource 1")
	rr, err = sess.ReadResource(ctx, ports.ReadRequest{URI: "demo://resource/dynamic/blob/2"})
	require.NoError(t, err)
	require.Len(t, rr.Contents, 1)
	assert.True(t, rr.Contents[0].IsBlob)

	c, err := sess.Complete(ctx, ports.CompleteRequest{Ref: ports.CompletionRef{Type: ports.CompletionRefPrompt, Name: "completable-prompt"},
		Argument: "name", Value: "", Context: map[string]string{"department": "Sales"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"David", "Eve", "Frank"}, c.Values)
	c, err = sess.Complete(ctx, ports.CompleteRequest{Ref: ports.CompletionRef{Type: ports.CompletionRefResource, Name: "demo://resource/dynamic/text/{resourceId}"},
		Argument: "resourceId", Value: "7"})
	require.NoError(t, err)
	assert.Equal(t, []string{"7"}, c.Values)

	const uri = "demo://resource/dynamic/text/1"
	require.NoError(t, sess.Subscribe(ctx, uri))
	_, err = sess.Call(ctx, ports.CallRequest{Name: "toggle-subscriber-updates", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
	select {
	case got := <-rec.ch:
		assert.Equal(t, uri, got)
	case <-ctx.Done():
		t.Fatal("no resource update")
	}
	require.NoError(t, sess.Unsubscribe(ctx, uri))
	_, err = sess.Call(ctx, ports.CallRequest{Name: "toggle-subscriber-updates", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
}
