package anthropicbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	anthropicbridge "github.com/mcpward/mcpward/bridges/anthropic"
	"github.com/mcpward/mcpward/core/toolcall"
	"github.com/mcpward/mcpward/ports"
)

// recordedAPI is a loopback stand-in for the Messages API: it answers the
// n-th request with the n-th recorded response of testdata and keeps each
// request's body.
type recordedAPI struct {
	mu     sync.Mutex
	bodies []map[string]any
}

// newRecordedAPI serves the recorded responses named, in order, and
// returns a client of the SDK pointed at it.
func newRecordedAPI(t *testing.T, responses ...string) (*recordedAPI, anthropic.Client) {
	t.Helper()
	var replies [][]byte
	for _, name := range responses {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		replies = append(replies, b)
	}
	api := &recordedAPI{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(body, &m), "%s", body)
		api.mu.Lock()
		n := len(api.bodies)
		api.bodies = append(api.bodies, m)
		api.mu.Unlock()
		if n >= len(replies) {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"no more recorded responses"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(replies[n])
	}))
	t.Cleanup(srv.Close)
	return api, anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
}

func (a *recordedAPI) requests() []map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bodies
}

// toolResults returns the tool_result blocks a request sent, as JSON.
func toolResults(t *testing.T, req map[string]any) string {
	t.Helper()
	msgs, _ := req["messages"].([]any)
	var out []any
	for _, m := range msgs {
		content, _ := m.(map[string]any)["content"].([]any)
		for _, c := range content {
			if b, _ := c.(map[string]any); b["type"] == "tool_result" {
				out = append(out, b)
			}
		}
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	return string(b)
}

// TestBetaToolsRunner: the SDK's own tool runner, on recorded API
// responses, runs the reply's tool_use blocks through BetaTools: the tools
// go out under their host-facing names and schemas, Confirm is asked once
// per call and never concurrently, structured content is sent once, a
// refusal and an error result reach the model as is_error text without a
// secret, and a tool never offered is the runner's own "not found".
func TestBetaToolsRunner(t *testing.T) {
	api, client := newRecordedAPI(t, "tool_use.json", "end_turn.json")
	var mu sync.Mutex
	var asked []string
	opts := &anthropicbridge.Options{MaxParallel: 2, Confirm: func(_ context.Context, c anthropicbridge.Call) error {
		mu.Lock()
		asked = append(asked, c.Name)
		mu.Unlock()
		if c.Name == "mcp__fake__wipe" {
			return fmt.Errorf("the user said no to %s", c.Name)
		}
		return nil
	}}
	tools := anthropicbridge.BetaTools(fakeTools(), opts)
	require.Len(t, tools, 4)
	runner := client.Beta.Messages.NewToolRunner(tools, anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model: anthropic.ModelClaudeSonnet4_6, MaxTokens: 1024,
			Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Chart, build, notes."))},
		},
	})
	final, err := runner.RunToCompletion(context.Background())
	require.NoError(t, err)
	assert.Equal(t, anthropic.BetaStopReasonEndTurn, final.StopReason)

	reqs := api.requests()
	require.Len(t, reqs, 2)
	var names []string
	for _, tl := range reqs[0]["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	assert.Equal(t, []string{"mcp__fake__chart", "mcp__fake__build", "mcp__fake__notes", "mcp__fake__wipe"}, names)
	assert.JSONEq(t, `{"type":"object","properties":{"week":{"type":"integer"}}}`, asJSON(t, reqs[0]["tools"].([]any)[0].(map[string]any)["input_schema"]))

	mu.Lock()
	assert.ElementsMatch(t, []string{"mcp__fake__chart", "mcp__fake__build", "mcp__fake__notes", "mcp__fake__wipe"}, asked,
		"asked once per offered tool's call, not for a tool never offered")
	mu.Unlock()
	got := toolResults(t, reqs[1])
	assert.JSONEq(t, `[
		{"type":"tool_result","tool_use_id":"toolu_01A09q90qw90lq917835lq9","content":[
			{"type":"text","text":"week 3"},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgpmYWtl"}},
			{"type":"text","text":"[image (image/svg+xml, 6 bytes) left out: the model API takes no such block in a tool result]"},
			{"type":"text","text":"[audio (audio/wav, 4 bytes) left out: the model API takes no audio in a tool result]"}]},
		{"type":"tool_result","tool_use_id":"toolu_01B1x2y3z4","is_error":true,"content":[{"type":"text","text":"Error: [the tool reported an error]\n2 tests failed"}]},
		{"type":"tool_result","tool_use_id":"toolu_01C5v6w7","is_error":true,"content":[{"type":"text","text":"Error: transient server_unavailable"}]},
		{"type":"tool_result","tool_use_id":"toolu_01D8e9f0","is_error":true,"content":[{"type":"text","text":"Error: refused declined: the host declined the call"}]},
		{"type":"tool_result","tool_use_id":"toolu_01E1g2h3","is_error":true,"content":[{"type":"text","text":"Error: Tool 'mcp__other__made_up' not found"}]}
	]`, got)
	assert.NotContains(t, got, "notes.example", "no origin reaches the model")
	assert.NotContains(t, got, "the user said no", "the host's error text is not used")
}

// TestBetaToolsStructured: BetaTools sends a result's structured content
// as Options.Structured says, like Dispatch.
func TestBetaToolsStructured(t *testing.T) {
	tool := func() []ports.Tool { return fakeTools()[:1] }
	for _, tc := range []struct {
		mode anthropicbridge.Options
		want int
	}{
		{anthropicbridge.Options{}, 4},
		{anthropicbridge.Options{Structured: toolcall.StructuredAlso}, 5},
	} {
		bt := anthropicbridge.BetaTools(tool(), &tc.mode)
		require.Len(t, bt, 1)
		blocks, err := bt[0].Execute(context.Background(), json.RawMessage(`{"week":3}`))
		require.NoError(t, err)
		assert.Len(t, blocks, tc.want)
		if tc.want == 5 {
			assert.Equal(t, `{"week":3,"points":[1,2]}`, blocks[4].OfText.Text)
		}
		for _, b := range blocks[:4] {
			if b.OfText != nil {
				assert.False(t, strings.HasPrefix(b.OfText.Text, "{"), "no structured content beside the content by default")
			}
		}
	}
}
