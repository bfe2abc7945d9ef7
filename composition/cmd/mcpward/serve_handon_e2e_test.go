package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
)

// statelessAsker starts a go-sdk server over stateless Streamable HTTP on
// loopback (a server of the 2026-07-28 era behind a load balancer keeps
// nothing between requests) whose tool "ask" asks a name, then the
// client's roots, its round in its request state, and "sample" asks for
// sampling. It returns the URL and the request states it received.
func statelessAsker(t *testing.T) (string, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var states []string
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "0"}, nil)
	obj := map[string]any{"type": "object"}
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		state := req.Params.RequestState
		mu.Lock()
		states = append(states, state)
		mu.Unlock()
		switch {
		case state == "round=1\x00é":
			a, _ := req.Params.InputResponses["step1"].(*mcp.ElicitResult)
			name := "nobody"
			if a != nil && a.Action == "accept" {
				name, _ = a.Content["name"].(string)
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}},
				RequestState: "round=2;name=" + name}, nil
		case strings.HasPrefix(state, "round=2;name="):
			roots, _ := req.Params.InputResponses["client_roots"].(*mcp.ListRootsResult)
			if roots == nil || len(roots.Roots) == 0 {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no roots"}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: strings.TrimPrefix(state, "round=2;name=") + " works in " + roots.Roots[0].URI}}}, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"step1": &mcp.ElicitParams{Message: "your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}}},
			RequestState: "round=1\x00é"}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "sample", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.CreateMessageParams{MaxTokens: 9,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}}}, nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String() + "/mcp", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), states...)
	}
}

// TestServeHTTPModernRounds: a go-sdk client on 2026-07-28 (elicitation
// declared, roots given) ↔ "mcpward serve --http" ↔ a go-sdk stateless
// upstream whose tool asks twice. Each question reaches the client (its
// SDK answers and retries on its own), each retry is a request of its
// own to serve (no session) and to the upstream, which gets its own
// request state back unchanged every round (serve's state is another,
// sealed); the final result is the upstream's. A tampered state is a
// JSON-RPC error naming request_state_invalid, sampling is refused by
// name. A legacy client over HTTP (a session, no input_required results)
// is asked each question itself, on the session whose call caused it
// (two sessions, each with its own answers), or, when it declared nothing,
// the call is refused by name.
func TestServeHTTPModernRounds(t *testing.T) {
	url, states := statelessAsker(t)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"up": {"type": "http", "url": ` + jsonString(url) + `}}}`,
	})
	addr := "127.0.0.1:" + freePort(t)
	cmd := serveCmd(w, "serve", "--http", addr, "--unsafe-no-token")
	stderr := &iostreams.Buffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "listening on") }, 30*time.Second, 20*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	endpoint := "http://" + addr + "/mcp"

	var asked []string
	c := mcp.NewClient(&mcp.Implementation{Name: "modern", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, r.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
	require.NoError(t, err, stderr.String())
	defer cs.Close()
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	waitTool(t, cs, "mcp__up__ask")
	r := call(t, cs, "mcp__up__ask", map[string]any{})
	assert.False(t, r.IsError, text(r))
	assert.Equal(t, "Ann works in file:///work", text(r))
	assert.Equal(t, []string{"your name?"}, asked)
	assert.Equal(t, []string{"", "round=1\x00é", "round=2;name=Ann"}, states(), "the upstream's states, unchanged")
	// The audit: the two rounds handed on are input_required, not
	// tool errors; the last is ok (outcome records are enqueued: the
	// store writes them within milliseconds).
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(w.root, "state", "mcpward", "store", "audit.jsonl"))
		return strings.Count(string(b), `"input_required"`) == 2 && strings.Contains(string(b), `"ok"`)
	}, 10*time.Second, 20*time.Millisecond, "two handed rounds and one result in the audit")
	b, err := os.ReadFile(filepath.Join(w.root, "state", "mcpward", "store", "audit.jsonl"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"tool_error"`, "a handed round is not a tool error")

	r = call(t, cs, "mcp__up__sample", map[string]any{})
	assert.True(t, r.IsError)
	assert.Contains(t, text(r), "sampling_refused")

	// By hand: the first round's state, tampered.
	manual := mcp.NewClient(&mcp.Implementation{Name: "manual", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, errors.New("unused") },
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	})
	ms, err := manual.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer ms.Close()
	first, err := ms.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__up__ask", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, first.NeedsInput(), "%+v", first)
	require.Contains(t, first.InputRequests, "step1")
	assert.NotContains(t, first.RequestState, "round=1", "serve's state is sealed, not the upstream's")
	n := len(states())
	_, err = ms.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__up__ask", Arguments: map[string]any{}, RequestState: first.RequestState + "-TAMPERED",
		InputResponses: mcp.InputResponseMap{"step1": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Eve"}}}})
	var je *jsonrpc.Error
	require.ErrorAs(t, err, &je)
	assert.Equal(t, int64(jsonrpc.CodeInvalidParams), je.Code)
	assert.Contains(t, je.Message, "request_state_invalid")
	assert.Len(t, states(), n, "nothing sent upstream")

	// Two legacy clients, each with a session: each one's call has its
	// questions put to that client (elicitation/create, roots/list on the
	// call's own stream), never to the other.
	for _, who := range []string{"Leo", "Mia"} {
		legacy := mcp.NewClient(&mcp.Implementation{Name: "legacy", Version: "0"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": who}}, nil
			},
		})
		legacy.AddRoots(&mcp.Root{URI: "file:///" + strings.ToLower(who)})
		ls, err := legacy.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		defer ls.Close()
		assert.NotEmpty(t, ls.ID(), "a legacy client has its session")
		r = call(t, ls, "mcp__up__ask", map[string]any{})
		assert.False(t, r.IsError, text(r))
		assert.Equal(t, who+" works in file:///"+strings.ToLower(who), text(r))
	}
	// A legacy client that cannot answer: refused by name.
	mute := mcp.NewClient(&mcp.Implementation{Name: "mute", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	ns, err := mute.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer ns.Close()
	r = call(t, ns, "mcp__up__ask", map[string]any{})
	assert.True(t, r.IsError)
	assert.Contains(t, text(r), "input_unavailable", text(r))
}
