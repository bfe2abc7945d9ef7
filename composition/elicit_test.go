package composition

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/mcpsession"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// sep1034Schema is the form of the official conformance suite's
// elicitation-sep1034-client-defaults scenario.
const sep1034Schema = `{"type":"object","properties":{
  "name":{"type":"string","default":"John Doe"},
  "age":{"type":"integer","default":30},
  "score":{"type":"number","default":95.5},
  "status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
  "verified":{"type":"boolean","default":true}}}`

// askerPeer is an in-process go-sdk server over httptest whose tools ask
// the client mid-call: "ask" elicits the sep1034 form, "nested" a form
// with a nested object, "roots" lists the client's roots. It records the
// roots list_changed notifications it gets.
type askerPeer struct {
	*httptest.Server
	mu      sync.Mutex
	changed int
}

func newAskerPeer(t *testing.T) *askerPeer {
	t.Helper()
	p := &askerPeer{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) {
			p.mu.Lock()
			p.changed++
			p.mu.Unlock()
		},
	})
	reply := func(v any, err error) (*mcp.CallToolResult, error) {
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "refused: " + err.Error()}}}, nil
		}
		b, _ := json.Marshal(v)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	}
	elicit := func(schema string) mcp.ToolHandler {
		return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var s any
			_ = json.Unmarshal([]byte(schema), &s)
			return reply(req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "accept with defaults", RequestedSchema: s}))
		}
	}
	empty := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: empty}, elicit(sep1034Schema))
	srv.AddTool(&mcp.Tool{Name: "nested", InputSchema: empty}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// The SDK's server sends a schema as it is (it checks only the
		// answer), so a nested form reaches the client.
		s := map[string]any{"type": "object", "properties": map[string]any{"addr": map[string]any{"type": "object", "properties": map[string]any{"street": map[string]any{"type": "string"}}}}}
		return reply(req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "nested", RequestedSchema: s}))
	})
	srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: empty}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return reply(req.Session.ListRoots(ctx, nil))
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	p.Server = httptest.NewServer(h)
	t.Cleanup(p.Close)
	return p
}

func (p *askerPeer) rootsChanged() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// TestFleetElicitation: through the Fleet, an enabled server's
// elicitation reaches the host's Elicitor and is answered with the
// form's defaults; a server the host did not enable is refused; a nested
// form is refused by name; sampling is never declared.
func TestFleetElicitation(t *testing.T) {
	p1, p2 := newAskerPeer(t), newAskerPeer(t)
	r := newRig(t, Config{})
	srcs := userSrc(`{"mcpServers": {"one": {"type": "http", "url": "` + p1.URL + `"}, "two": {"type": "http", "url": "` + p2.URL + `"}}}`)
	var mu sync.Mutex
	var asked []ports.ElicitRequest
	el := ports.ElicitorFunc(func(ctx context.Context, req ports.ElicitRequest) (ports.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, req)
		mu.Unlock()
		return ElicitDefaults().Elicit(ctx, req)
	})
	var refused []string
	onRefused := func(re *refusal.Error) {
		mu.Lock()
		refused = append(refused, re.Server+":"+re.Reason)
		mu.Unlock()
	}
	f := r.host.Connect(context.Background(), srcs, &ConnectOptions{Elicitation: &ElicitationOptions{Elicitor: el, Servers: []string{"one"}, OnRefused: onRefused}})
	t.Cleanup(func() { _ = f.Close() })
	require.Equal(t, StateConnected, result(t, f, "one").State)
	require.Equal(t, StateConnected, result(t, f, "two").State)

	res, err := f.CallServerTool(context.Background(), "one", "ask", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.False(t, res.IsError, "%s", text(t, res))
	assert.JSONEq(t, `{"action":"accept","content":{"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}}`, text(t, res))
	mu.Lock()
	require.Len(t, asked, 1)
	assert.Equal(t, "one", asked[0].ServerID)
	mu.Unlock()

	res, err = f.CallServerTool(context.Background(), "two", "ask", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.True(t, res.IsError, "a server the host did not enable cannot elicit")
	assert.Contains(t, text(t, res), "does not support elicitation")

	res, err = f.CallServerTool(context.Background(), "one", "nested", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), mcpsession.ReasonElicitSchemaNested, "the server learns why, by name")
	mu.Lock()
	assert.Len(t, asked, 1, "a refused form never reaches the host")
	assert.Equal(t, []string{"one:" + mcpsession.ReasonElicitSchemaNested}, refused, "the host is told")
	mu.Unlock()

	res, err = f.CallServerTool(context.Background(), "one", "ask", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.False(t, res.IsError, "the server stays usable")

	res, err = f.CallServerTool(context.Background(), "one", "roots", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.True(t, res.IsError, "no roots offered: roots/list is refused")
}

// TestFleetRoots: the roots of RootsOptions reach the enabled server, and
// a change is announced to it.
func TestFleetRoots(t *testing.T) {
	p := newAskerPeer(t)
	r := newRig(t, Config{})
	dir := t.TempDir()
	root, err := FileRoot(dir)
	require.NoError(t, err)
	assert.Equal(t, "file://"+filepath.ToSlash(dir), root.URI)
	assert.Equal(t, filepath.Base(dir), root.Name)
	set := ports.NewRootSet(root)
	f := r.host.Connect(context.Background(), userSrc(`{"mcpServers": {"one": {"type": "http", "url": "`+p.URL+`"}}}`),
		&ConnectOptions{Roots: &RootsOptions{Roots: set}, Session: &mcpsession.Options{ClientName: "t"}})
	t.Cleanup(func() { _ = f.Close() })
	res, err := f.CallServerTool(context.Background(), "one", "roots", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.False(t, res.IsError, "%s", text(t, res))
	assert.JSONEq(t, `{"roots":[{"uri":"`+root.URI+`","name":"`+root.Name+`"}]}`, text(t, res))

	set.Set(root, ports.Root{URI: "file:///srv/other"})
	require.Eventually(t, func() bool { return p.rootsChanged() > 0 }, 5*time.Second, 10*time.Millisecond)
	res, err = f.CallServerTool(context.Background(), "one", "roots", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.True(t, strings.Contains(text(t, res), "file:///srv/other"))

	res, err = f.CallServerTool(context.Background(), "one", "ask", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.True(t, res.IsError, "roots alone do not enable elicitation")
}

func TestElicitorsOfComposition(t *testing.T) {
	form := ports.ElicitRequest{Mode: ports.ElicitForm, Schema: ports.ElicitSchema{Fields: []ports.ElicitField{{Name: "a", Type: ports.FieldBoolean, Default: true}}}}
	url := ports.ElicitRequest{Mode: ports.ElicitURL, URL: "https://example.com/"}
	res, err := ElicitDefaults().Elicit(context.Background(), form)
	require.NoError(t, err)
	assert.Equal(t, ports.ElicitResult{Action: ports.ElicitAccept, Content: map[string]any{"a": true}}, res)
	incomplete := form
	incomplete.Schema.Fields = append([]ports.ElicitField{{Name: "b", Type: ports.FieldString, Required: true}}, form.Schema.Fields...)
	res, err = ElicitDefaults().Elicit(context.Background(), incomplete)
	require.NoError(t, err)
	assert.Equal(t, ports.ElicitResult{Action: ports.ElicitDecline}, res, "defaults that do not complete the form decline it")
	res, err = ElicitDefaults().Elicit(context.Background(), url)
	require.NoError(t, err)
	assert.Equal(t, ports.ElicitDecline, res.Action)
	for _, r := range []ports.ElicitRequest{form, url} {
		res, err = ElicitDecline().Elicit(context.Background(), r)
		require.NoError(t, err)
		assert.Equal(t, ports.ElicitResult{Action: ports.ElicitDecline}, res)
	}
}

// TestFleetElicitationEverything: the third-party server-everything (run
// by node over stdio) offers its elicitation tool only to a client that
// declares elicitation; through the Fleet its form (multi-selects, titled
// and legacy enums, formats) reaches the host parsed, and the host's
// answer, completed with the defaults, is accepted by the server.
func TestFleetElicitationEverything(t *testing.T) {
	node, err := exec.LookPath("node")
	entry, _ := filepath.Abs("../peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, serr := os.Stat(entry); err != nil || serr != nil {
		if os.Getenv("MCPWARD_REQUIRE_PEERS") == "1" {
			t.Fatal("MCPWARD_REQUIRE_PEERS=1 but node or server-everything is missing (run: cd peers && npm ci)")
		}
		t.Skip("node or server-everything is missing (run: cd peers && npm ci)")
	}
	b, _ := json.Marshal([]string{entry, "stdio"})
	nb, _ := json.Marshal(node)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), map[string]string{"PATH": filepath.Dir(node), "HOME": t.TempDir()})})
	srcs := userSrc(`{"mcpServers": {"everything": {"command": ` + string(nb) + `, "args": ` + string(b) + `}}}`)
	const tool = "trigger-elicitation-request"

	plain := r.host.Connect(context.Background(), srcs, nil)
	t.Cleanup(func() { _ = plain.Close() })
	require.Equal(t, StateConnected, result(t, plain, "everything").State)
	assert.NotContains(t, serverTools(result(t, plain, "everything")), tool, "no elicitation declared: the server hides its tool")
	require.NoError(t, plain.Close())

	var asked ports.ElicitRequest
	el := ports.ElicitorFunc(func(_ context.Context, req ports.ElicitRequest) (ports.ElicitResult, error) {
		asked = req
		return ports.ElicitResult{Action: ports.ElicitAccept, Content: req.Schema.WithDefaults(map[string]any{"name": "Ann"})}, nil
	})
	f := r.host.Connect(context.Background(), srcs, &ConnectOptions{Elicitation: &ElicitationOptions{Elicitor: el}})
	t.Cleanup(func() { _ = f.Close() })
	require.Equal(t, StateConnected, result(t, f, "everything").State)
	require.Contains(t, serverTools(result(t, f, "everything")), tool)
	res, err := f.CallServerTool(context.Background(), "everything", tool, json.RawMessage(`{}`))
	require.NoError(t, err)
	require.False(t, res.IsError, "%s", res.Content)
	assert.Contains(t, string(res.Content), "Name: Ann")
	assert.Contains(t, string(res.Content), "Favorite Integer: 42", "the default filled in")

	name, ok := asked.Schema.Field("name")
	require.True(t, ok)
	assert.True(t, name.Required)
	multi, ok := asked.Schema.Field("titledMultipleSelectEnum")
	require.True(t, ok)
	assert.Equal(t, ports.FieldMultiSelect, multi.Type)
	assert.Equal(t, ports.ElicitOption{Value: "fish-1", Title: "Tuna"}, multi.Options[0])
	legacy, ok := asked.Schema.Field("legacyTitledEnum")
	require.True(t, ok)
	assert.Equal(t, ports.ElicitOption{Value: "pet-2", Title: "Dogs"}, legacy.Options[1])
}

func serverTools(r ServerStatus) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.NameOnServer)
	}
	return out
}
