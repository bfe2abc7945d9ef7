package portstest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestSessionContent(t *testing.T) {
	sc := toolsScript()
	sc.Identity.Declared = append(sc.Identity.Declared, ports.ListResources)
	sc.Identity.Subscribe = true
	sc.Content.ReadResource = func(_ context.Context, r ports.ReadRequest) (ports.ReadResult, error) {
		return ports.ReadResult{Contents: []ports.ResourceContents{{URI: r.URI, Text: "x"}}}, nil
	}
	var updates []string
	s := connect(t, portstest.NewConnector(sc), ports.Target{ServerID: "s"}, ports.Signals{ResourceUpdated: func(u string) { updates = append(updates, u) }})
	ctx := context.Background()

	_, err := s.GetPrompt(ctx, ports.GetPromptRequest{Name: "p", Arguments: map[string]string{"a": "b"}})
	require.NoError(t, err)
	assert.Equal(t, []ports.GetPromptRequest{{Name: "p", Arguments: map[string]string{"a": "b"}}}, s.PromptRequests())
	res, err := s.ReadResource(ctx, ports.ReadRequest{URI: "u://1"})
	require.NoError(t, err)
	assert.Equal(t, "u://1", res.Contents[0].URI)
	_, err = s.Complete(ctx, ports.CompleteRequest{Argument: "a"})
	assert.ErrorIs(t, err, portstest.ErrUnsupported, "completions are not declared")
	assert.Empty(t, s.CompleteRequests())

	assert.False(t, s.FireResourceUpdated("u://1"), "not subscribed")
	require.NoError(t, s.Subscribe(ctx, "u://1"))
	assert.True(t, s.FireResourceUpdated("u://1"))
	require.NoError(t, s.Unsubscribe(ctx, "u://1"))
	assert.False(t, s.FireResourceUpdated("u://1"))
	assert.Equal(t, []string{"u://1"}, updates)
	assert.Empty(t, s.Subscriptions())

	boom := errors.New("boom")
	s.FailOnce("ReadResource", boom)
	_, err = s.ReadResource(ctx, ports.ReadRequest{URI: "u://2"})
	assert.ErrorIs(t, err, boom)
	assert.Len(t, s.ReadRequests(), 1, "a failed call is not recorded")
	require.NoError(t, s.Close())
	_, err = s.GetPrompt(ctx, ports.GetPromptRequest{})
	assert.ErrorIs(t, err, portstest.ErrSessionClosed)
}
