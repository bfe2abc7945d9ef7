package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// fakeBackend offers a catalog the test replaces with set.
type fakeBackend struct {
	mu      sync.Mutex
	cat     Catalog
	changed chan struct{}
	call    func(ctx context.Context, name string, args json.RawMessage) (ports.ToolResult, error)
}

func newFake(c Catalog) *fakeBackend {
	b := &fakeBackend{changed: make(chan struct{})}
	b.cat = c
	return b
}

func (b *fakeBackend) set(c Catalog) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cat = c
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *fakeBackend) Catalog() Catalog {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.cat
	c.Changed = b.changed
	return c
}

func (b *fakeBackend) CallTool(ctx context.Context, name string, args json.RawMessage) (ports.ToolResult, error) {
	return b.call(ctx, name, args)
}

func (b *fakeBackend) GetPrompt(_ context.Context, name string, args map[string]string) (ports.PromptResult, error) {
	return ports.PromptResult{Description: name, Messages: []ports.PromptMessage{{Role: "user",
		Content: json.RawMessage(`{"type":"text","text":"hi ` + args["who"] + `"}`)}}}, nil
}

func (b *fakeBackend) ReadResource(_ context.Context, uri string) (ports.ReadResult, error) {
	return ports.ReadResult{Contents: []ports.ResourceContents{{URI: uri, Text: "body"}}}, nil
}

func (b *fakeBackend) ReadTemplate(_ context.Context, tpl, uri string) (ports.ReadResult, error) {
	return ports.ReadResult{Contents: []ports.ResourceContents{{URI: uri, Text: "from " + tpl}}}, nil
}

func (b *fakeBackend) Subscribe(context.Context, string) error   { return nil }
func (b *fakeBackend) Unsubscribe(context.Context, string) error { return nil }

func (b *fakeBackend) Complete(_ context.Context, ref ports.CompletionRef, arg, value string, _ map[string]string) (ports.Completion, error) {
	return ports.Completion{Values: []string{ref.Type + " " + ref.Name + " " + arg + " " + value}}, nil
}

var objSchema = json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)

// connect serves s to an in-memory go-sdk client.
func connect(t *testing.T, s *Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := s.srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, opts)
	cs, err := c.Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Close(); cancel() })
	return cs
}

func names(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	slices.Sort(out)
	return out
}

// TestHostileDefinitionsAreLeftOut: schemas the SDK would panic on (not
// an object, no type "object", not JSON), bad annotations and an empty
// name are left out and counted; the good tool is served.
func TestHostileDefinitionsAreLeftOut(t *testing.T) {
	b := newFake(Catalog{Tools: []Tool{
		{Name: "good", InputSchema: objSchema, Title: "Good", Annotations: json.RawMessage(`{"readOnlyHint":true}`)},
		{Name: "array_schema", InputSchema: json.RawMessage(`[]`)},
		{Name: "string_type", InputSchema: json.RawMessage(`{"type":"string"}`)},
		{Name: "no_schema"},
		{Name: "null_schema", InputSchema: json.RawMessage(`null`)},
		{Name: "bad_output", InputSchema: objSchema, OutputSchema: json.RawMessage(`7`)},
		{Name: "bad_annotations", InputSchema: objSchema, Annotations: json.RawMessage(`"x"`)},
		{Name: "", InputSchema: objSchema},
	}, Resources: []Resource{{URI: "::not a uri"}, {URI: "file:///ok", Name: "ok"}}})
	s := New(b, nil)
	defer s.Close()
	cs := connect(t, s, nil)
	assert.Equal(t, []string{"good"}, names(t, cs))
	assert.GreaterOrEqual(t, s.Skipped(), 6)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, "Good", res.Tools[0].Title)
	require.NotNil(t, res.Tools[0].Annotations)
	assert.True(t, res.Tools[0].Annotations.ReadOnlyHint)
}

// TestChangesReachTheClient: a new catalog adds and removes tools, and the
// client is told (notifications/tools/list_changed).
func TestChangesReachTheClient(t *testing.T) {
	b := newFake(Catalog{Tools: []Tool{{Name: "a", InputSchema: objSchema}, {Name: "b", InputSchema: objSchema}}})
	s := New(b, nil)
	defer s.Close()
	changed := make(chan struct{}, 8)
	cs := connect(t, s, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	assert.Equal(t, []string{"a", "b"}, names(t, cs))
	b.set(Catalog{Tools: []Tool{{Name: "b", InputSchema: objSchema}, {Name: "c", InputSchema: objSchema}}})
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed")
	}
	require.Eventually(t, func() bool { return slices.Equal(names(t, cs), []string{"b", "c"}) }, 10*time.Second, 10*time.Millisecond)
}

// TestCallForwarding: arguments pass as sent, the client's progress
// token rides to the backend and its notifications come back, a
// backend error is an isError result with its text, content blocks
// pass, and a client's cancel ends the backend's ctx.
func TestCallForwarding(t *testing.T) {
	b := newFake(Catalog{Tools: []Tool{{Name: "t", InputSchema: objSchema}, {Name: "fail", InputSchema: objSchema}, {Name: "block", InputSchema: objSchema}}})
	ended := make(chan error, 1)
	b.call = func(ctx context.Context, name string, args json.RawMessage) (ports.ToolResult, error) {
		switch name {
		case "fail":
			return ports.ToolResult{}, errors.New("mcpward: refused (Config invalid_arguments)")
		case "block":
			<-ctx.Done()
			ended <- ctx.Err()
			return ports.ToolResult{}, ctx.Err()
		}
		if f := ports.ProgressFunc(ctx); f != nil {
			f(ports.Progress{Progress: 1, Total: 2, Message: "half"})
		}
		return ports.ToolResult{Content: json.RawMessage(`[{"type":"text","text":` + string(mustJSON(string(args))) + `},{"type":"image","data":"AAAA","mimeType":"image/png"}]`)}, nil
	}
	s := New(b, nil)
	defer s.Close()
	progress := make(chan *mcp.ProgressNotificationParams, 4)
	cs := connect(t, s, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress <- r.Params
	}})
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "t", Arguments: map[string]any{"x": "y"}}
	params.SetProgressToken("tok-1")
	r, err := cs.CallTool(ctx, params)
	require.NoError(t, err)
	require.Len(t, r.Content, 2)
	assert.JSONEq(t, `{"x":"y"}`, r.Content[0].(*mcp.TextContent).Text)
	assert.IsType(t, &mcp.ImageContent{}, r.Content[1])
	select {
	case p := <-progress:
		assert.Equal(t, "tok-1", p.ProgressToken)
		assert.Equal(t, "half", p.Message)
	case <-time.After(10 * time.Second):
		t.Fatal("no progress forwarded")
	}

	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].(*mcp.TextContent).Text, "invalid_arguments")

	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
	require.Error(t, err)
	select {
	case err := <-ended:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the client's cancel did not end the backend's call")
	}
}

// TestUnknownContentIsRefusedByName: a result block the SDK does not know
// becomes an error result, never a panic or a dropped session.
func TestUnknownContentIsRefusedByName(t *testing.T) {
	b := newFake(Catalog{Tools: []Tool{{Name: "t", InputSchema: objSchema}}})
	b.call = func(context.Context, string, json.RawMessage) (ports.ToolResult, error) {
		return ports.ToolResult{Content: json.RawMessage(`[{"type":"hologram"}]`)}, nil
	}
	s := New(b, nil)
	defer s.Close()
	cs := connect(t, s, nil)
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "t", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].(*mcp.TextContent).Text, "malformed_result")
}

// TestPromptsAndResources pass through.
func TestPromptsAndResources(t *testing.T) {
	b := newFake(Catalog{Prompts: []Prompt{{Name: "p", Arguments: []ports.PromptArgument{{Name: "who", Required: true}}}},
		Resources: []Resource{{URI: "file:///r", Name: "r"}}, Templates: []Template{{URITemplate: "file:///t/{name}", Name: "t"}}})
	s := New(b, nil)
	defer s.Close()
	cs := connect(t, s, nil)
	gp, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "p", Arguments: map[string]string{"who": "ann"}})
	require.NoError(t, err)
	require.Len(t, gp.Messages, 1)
	assert.Equal(t, "hi ann", gp.Messages[0].Content.(*mcp.TextContent).Text)
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///r"})
	require.NoError(t, err)
	require.Len(t, rr.Contents, 1)
	assert.Equal(t, "body", rr.Contents[0].Text)
	rr, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///t/x"})
	require.NoError(t, err)
	assert.Equal(t, "from file:///t/{name}", rr.Contents[0].Text)
	cr, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "file:///t/{name}"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "x"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"ref/resource file:///t/{name} name x"}, cr.Completion.Values)
	require.NoError(t, cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "file:///r"}))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
