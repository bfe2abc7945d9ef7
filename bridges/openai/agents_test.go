package openaibridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	openaibridge "github.com/mcpward/mcpward/bridges/openai"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// agentsAPI is a loopback stand-in for the Agents API: an idle session,
// its event stream replaying a recorded turn, and the events the runner
// posts (the input, then one tool result per handled call).
type agentsAPI struct {
	mu    sync.Mutex
	posts []map[string]any
}

func newAgentsAPI(t *testing.T, sse string) (*agentsAPI, openai.Client) {
	t.Helper()
	events, err := os.ReadFile(filepath.Join("testdata", sse))
	require.NoError(t, err)
	api := &agentsAPI{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/events"):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(events)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the runner closes the stream once the session is idle again
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"sess","object":"agent.session","status":"idle"}`)
		default:
			var body map[string]any
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				t.Errorf("a post that is not JSON: %v", err)
			}
			api.mu.Lock()
			api.posts = append(api.posts, body)
			api.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	return api, openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
}

// results returns the tool results the runner posted, as JSON, in order.
func (a *agentsAPI) results(t *testing.T) string {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []any
	for _, p := range a.posts {
		for _, e := range p["events"].([]any) {
			if ev := e.(map[string]any); ev["type"] == "agent.session.input.tool_result" {
				out = append(out, ev)
			}
		}
	}
	return asJSON(t, out)
}

// runTurn runs one turn of the SDK's Agents runner with handlers and
// returns its events' types.
func runTurn(t *testing.T, client openai.Client, handlers map[string]openai.AgentToolHandler) []string {
	t.Helper()
	stream := client.Beta.Agents.Sessions.Stream(context.Background(), "sess", openai.AgentSessionStreamParams{
		Input: "What is 2 + 3?", ToolHandlers: handlers,
		OnToolError: func(_ context.Context, e openai.BetaAgentToolError) {
			t.Errorf("a handler failed (%s, %s): the model would read a generic failure", e.ToolName, e.Stage)
		},
	})
	defer func() { _ = stream.Close() }()
	var types []string
	for stream.Next() {
		types = append(types, stream.Current().Type)
	}
	require.NoError(t, stream.Err())
	return types
}

func TestAgentTools(t *testing.T) {
	tools := []ports.Tool{
		portstest.NewTool(ports.ToolSpec{Name: "mcp__s__plain", Description: "Plain.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)}, nil),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__s__any", Title: "A title, no description",
			InputSchema: json.RawMessage(`{"anyOf":[{"required":["a"]}],"properties":{"a":{}}}`)}, nil),
		portstest.NewTool(ports.ToolSpec{Name: "not/valid", InputSchema: json.RawMessage(`{"type":"object"}`)}, nil),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__s__plain", Description: "A second of one name.", InputSchema: json.RawMessage(`{"type":"object"}`)}, nil),
	}
	opts := &openaibridge.Options{MaxDescription: 12}
	assert.JSONEq(t, `[
		{"type":"function","name":"mcp__s__plain","description":"Plain.","parameters":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}},
		{"type":"function","name":"mcp__s__any","description":"A title, no…","parameters":{"type":"object","properties":{"a":{}}}}
	]`, asJSON(t, openaibridge.AgentTools(tools, opts)))
	h := openaibridge.AgentToolHandlers(tools, opts)
	assert.Len(t, h, 2)
	assert.Contains(t, h, "mcp__s__plain")
	assert.Contains(t, h, "mcp__s__any")
}

// TestAgentToolHandlersFleet: the SDK's own Agents runner, on a recorded
// turn, calls a Fleet's tools through AgentToolHandlers: each result goes
// back as a successful tool result the model reads, an invalid argument
// included (its class, reason and what was expected, not the runner's
// generic failure), structured content sent once.
func TestAgentToolHandlersFleet(t *testing.T) {
	fleet := exampleFleet(t)
	api, client := newAgentsAPI(t, "agent_turn_fleet.sse")
	types := runTurn(t, client, openaibridge.AgentToolHandlers(fleet.Current().Set.ModelTools(), nil))
	assert.Equal(t, "agent.session.idle", types[len(types)-1])
	assert.JSONEq(t, `[
		{"type":"agent.session.input.tool_result","turn_id":"turn_01","call_id":"call_add","success":true,"output":"5"},
		{"type":"agent.session.input.tool_result","turn_id":"turn_01","call_id":"call_echo","success":true,"output":"error: config invalid_arguments: /text: expected string, got number"},
		{"type":"agent.session.input.tool_result","turn_id":"turn_01","call_id":"call_count","success":true,"output":"3"}
	]`, api.results(t))
}

// TestAgentToolHandlersFakes: Confirm is asked in the order the runner
// hands the calls over, a declined call and a refusal are text the model
// reads (never a secret), an error result starts with ErrorPrefix, an
// image goes as an input_image item, and progress arrives per call.
func TestAgentToolHandlersFakes(t *testing.T) {
	tools := []ports.Tool{
		portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__chart", InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: &ports.ToolAnnotations{ReadOnlyHint: ptr(true)}},
			func(ctx context.Context, args json.RawMessage) (ports.ToolResult, error) {
				if f := ports.ProgressFunc(ctx); f != nil {
					f(ports.Progress{Progress: 1, Total: 2})
				}
				return ports.ToolResult{Blocks: []ports.ContentBlock{
					{Kind: ports.ContentText, Text: "week 3"},
					{Kind: ports.ContentImage, MIMEType: "image/png", Data: []byte("\x89PNG")},
				}, StructuredContent: json.RawMessage(`{"week":3}`)}, nil
			}),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__build", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, json.RawMessage) (ports.ToolResult, error) {
				return ports.ToolResult{IsError: true, Blocks: []ports.ContentBlock{{Kind: ports.ContentText, Text: "2 tests failed"}}}, nil
			}),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__notes", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, json.RawMessage) (ports.ToolResult, error) {
				return ports.ToolResult{}, &refusal.Error{Class: refusal.Transient, Reason: "server_unavailable", Server: "fake", Origin: "https://notes.example:443"}
			}),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__wipe", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, json.RawMessage) (ports.ToolResult, error) {
				panic("a declined call is never made")
			}),
	}
	var asked []string
	var progress []string
	opts := &openaibridge.Options{
		Confirm: func(_ context.Context, c openaibridge.Call) error {
			asked = append(asked, c.Name) // the runner calls handlers one at a time (-race checks)
			if c.Name == "mcp__fake__wipe" {
				return errors.New("the user said no")
			}
			return nil
		},
		OnProgress: func(c openaibridge.Call, p ports.Progress) { progress = append(progress, c.Name) },
	}
	api, client := newAgentsAPI(t, "agent_turn_fakes.sse")
	runTurn(t, client, openaibridge.AgentToolHandlers(tools, opts))
	assert.Equal(t, []string{"mcp__fake__chart", "mcp__fake__build", "mcp__fake__notes", "mcp__fake__wipe"}, asked)
	assert.Equal(t, []string{"mcp__fake__chart"}, progress)
	got := api.results(t)
	assert.JSONEq(t, `[
		{"type":"agent.session.input.tool_result","turn_id":"turn_02","call_id":"call_chart","success":true,"output":[
			{"type":"input_text","text":"week 3"},
			{"type":"input_image","image_url":"data:image/png;base64,iVBORw=="}]},
		{"type":"agent.session.input.tool_result","turn_id":"turn_02","call_id":"call_build","success":true,"output":"[the tool reported an error]\n2 tests failed"},
		{"type":"agent.session.input.tool_result","turn_id":"turn_02","call_id":"call_notes","success":true,"output":"error: transient server_unavailable"},
		{"type":"agent.session.input.tool_result","turn_id":"turn_02","call_id":"call_wipe","success":true,"output":"error: refused declined: the host declined the call"}
	]`, got)
	assert.NotContains(t, got, "notes.example")
	assert.NotContains(t, got, "the user said no")
}
