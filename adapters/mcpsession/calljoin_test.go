package mcpsession

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// TestJoinCall: a call's context ends when the caller's does, when Close
// starts (for calls in flight and for later ones), and not otherwise; end
// releases it. A context that can never end is joined without a
// registration.
func TestJoinCall(t *testing.T) {
	s := newSession("srv", &Conn{}, ports.Signals{}, time.Second)

	caller, cancelCaller := context.WithCancel(context.Background())
	c1, j1 := s.joinCall(caller)
	c2, j2 := s.joinCall(context.Background())
	require.NoError(t, c1.Err())
	require.NoError(t, c2.Err())
	cancelCaller()
	<-c1.Done()
	j1.end()
	assert.NoError(t, c2.Err(), "another call's caller does not end it")

	long, cancelLong := context.WithCancel(context.Background())
	defer cancelLong()
	c3, j3 := s.joinCall(long)
	c4, j4 := s.joinCall(long)
	j4.end()
	require.ErrorIs(t, c4.Err(), context.Canceled, "end releases it")
	s.calls.mu.Lock()
	assert.Len(t, s.calls.m, 1, "only the call in flight is held")
	s.calls.mu.Unlock()

	require.NoError(t, s.Close())
	<-c3.Done()
	<-c2.Done()
	j2.end()
	j3.end()
	c5, j5 := s.joinCall(long)
	assert.Error(t, c5.Err(), "a call joined after Close has ended already")
	j5.end()
	assert.NoError(t, long.Err())
}

// TestJoinCallAllocations: joining a call under a cancelable context costs
// the context it returns and its cancel function, nothing on the session's
// side (join, with a registration on the session's context, costs 5: the
// AfterFunc's context, its stop function and the closure it returns).
func TestJoinCallAllocations(t *testing.T) {
	s := newSession("srv", &Conn{}, ports.Signals{}, time.Second)
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, j := s.joinCall(ctx) // the map grows once
	j.end()
	allocs := testing.AllocsPerRun(200, func() {
		_, j := s.joinCall(ctx)
		j.end()
	})
	assert.LessOrEqual(t, allocs, 2.0)
}

// TestCallArgumentsAsGiven: the arguments reach the server byte for byte
// as the host gave them (they are handed to the SDK as a pointer to the raw
// bytes, which it encodes as the bytes themselves), under a context that
// can end as under one that cannot.
func TestCallArgumentsAsGiven(t *testing.T) {
	p := &memPeer{version: "2025-11-25", handle: func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
		return json.RawMessage(`{"content":[]}`), nil
	}}
	s := connect(t, New(fixedDialer(startMemPeer(t, p)), nil), ports.Signals{})
	args := `{"path":"/a","n":[1,2,{"x":null}],"s":"\u00e9\n"}`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []context.Context{context.Background(), ctx} {
		_, err := s.Call(c, ports.CallRequest{Name: "x", Arguments: json.RawMessage(args)})
		require.NoError(t, err)
		var params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		require.NoError(t, json.Unmarshal(p.lastParams("tools/call"), &params))
		assert.Equal(t, "x", params.Name)
		assert.JSONEq(t, args, string(params.Arguments))
	}
}

// TestMarshalContentSizedOnce: a text result holding JSON (a quote every
// few bytes, as tools often return) or control characters is encoded into
// one buffer sized up front; it used to be regrown once its escapes
// outgrew the text's own length.
func TestMarshalContentSizedOnce(t *testing.T) {
	for _, text := range []string{
		`{"records":[{"id":1,"kind":"a"},{"id":2,"kind":"b"}]}`,
		"line\none\tand \"two\"\x01",
		"plain text",
	} {
		content := []mcp.Content{&mcp.TextContent{Text: text}}
		got, err := marshalContent(content)
		require.NoError(t, err)
		assert.Equal(t, sdkContent(t, content), string(got))
		assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _, _ = marshalContent(content) }), text)
	}
}
