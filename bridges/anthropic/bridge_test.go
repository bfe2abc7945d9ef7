package anthropicbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	anthropicbridge "github.com/mcpward/mcpward/bridges/anthropic"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/memory"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "anthropicbridge-")
	if err != nil {
		panic(err)
	}
	serverBin = filepath.Join(dir, "example-server")
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// exampleFleet builds the example server of examples/server (once) and
// returns a Fleet connected to it under the name "example".
func exampleFleet(t testing.TB) *composition.Fleet {
	t.Helper()
	if _, err := os.Stat(serverBin); err != nil {
		cmd := exec.Command("go", "build", "-o", serverBin, ".")
		cmd.Dir = filepath.Join("..", "..", "examples", "server")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "building the example server: %s", out)
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	host, cleanup, err := memory.Open(context.Background(), memory.Config{Config: composition.Config{Lookup: os.LookupEnv, Authority: composition.NewEnvAuthority(wd)}})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	q, _ := json.Marshal(serverBin)
	cfg := []byte(`{"mcpServers": {"example": {"command": ` + string(q) + `}}}`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fleet := host.Connect(ctx, []definition.Source{{Tier: ports.TierUser, Origin: "test.json", Data: cfg}},
		&composition.ConnectOptions{CallTimeout: time.Minute})
	t.Cleanup(func() { _ = fleet.Close() })
	for _, s := range fleet.Servers() {
		require.Equal(t, composition.StateConnected, s.State, "%s: %s", s.Name, s.Reason)
	}
	return fleet
}

// recorded decodes a recorded Messages API response of testdata into the
// SDK's own type.
func recorded(t testing.TB, name string) *anthropic.Message {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var m anthropic.Message
	require.NoError(t, json.Unmarshal(b, &m))
	return &m
}

// asJSON marshals v as the SDK sends it.
func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// fakeTools are the tools of TestDispatchRecorded: one per kind of
// result the bridge converts.
func fakeTools() []ports.Tool {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	return []ports.Tool{
		portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__chart", Description: "A chart of a week.", InputSchema: json.RawMessage(`{"type":"object","properties":{"week":{"type":"integer"}}}`),
			Annotations: &ports.ToolAnnotations{ReadOnlyHint: ptr(true)}},
			func(context.Context, json.RawMessage) (ports.ToolResult, error) {
				return ports.ToolResult{Blocks: []ports.ContentBlock{
					{Kind: ports.ContentText, Text: "week 3"},
					{Kind: ports.ContentImage, MIMEType: "image/png", Data: png},
					{Kind: ports.ContentImage, MIMEType: "image/svg+xml", Data: []byte("<svg/>")},
					{Kind: ports.ContentAudio, MIMEType: "audio/wav", Data: []byte("RIFF")},
				}, StructuredContent: json.RawMessage(`{"week": 3, "points": [1, 2]}`)}, nil
			}),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__build", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, json.RawMessage) (ports.ToolResult, error) {
				return ports.ToolResult{IsError: true, Blocks: []ports.ContentBlock{{Kind: ports.ContentText, Text: "2 tests failed"}}}, nil
			}),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__notes", InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: &ports.ToolAnnotations{ReadOnlyHint: ptr(true)}},
			func(context.Context, json.RawMessage) (ports.ToolResult, error) {
				return ports.ToolResult{}, &refusal.Error{Class: refusal.Transient, Reason: "server_unavailable", Server: "fake", Origin: "https://notes.example:443"}
			}),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__wipe", InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: &ports.ToolAnnotations{DestructiveHint: ptr(true)}},
			func(context.Context, json.RawMessage) (ports.ToolResult, error) {
				panic("a declined call is never made")
			}),
	}
}

func TestToolsParams(t *testing.T) {
	long := strings.Repeat("é", 30)
	tools := []ports.Tool{
		portstest.NewTool(ports.ToolSpec{Name: "mcp__s__plain", Description: "Plain.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`)}, nil),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__s__combinators", Title: "Only a title",
			InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","oneOf":[{"required":["a"]},{"required":["b"]}],"properties":{"a":{},"b":{}}}`)}, nil),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__s__long", Description: long, InputSchema: json.RawMessage(`not json`)}, nil),
		portstest.NewTool(ports.ToolSpec{Name: "bad name!", InputSchema: json.RawMessage(`{"type":"object"}`)}, nil),
		portstest.NewTool(ports.ToolSpec{Name: strings.Repeat("x", 65), InputSchema: json.RawMessage(`{"type":"object"}`)}, nil),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__s__plain", Description: "A second tool of one name.", InputSchema: json.RawMessage(`{"type":"object"}`)}, nil),
	}
	got := asJSON(t, anthropicbridge.Tools(tools, &anthropicbridge.Options{MaxDescription: 10}))
	assert.JSONEq(t, `[
		{"name":"mcp__s__plain","description":"Plain.","input_schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}},
		{"name":"mcp__s__combinators","description":"Only a ti…","input_schema":{"type":"object","properties":{"a":{},"b":{}}}},
		{"name":"mcp__s__long","description":"ééééééééé…","input_schema":{"type":"object","properties":{}}}
	]`, got)
}

func TestToolsOfFleetAreAccepted(t *testing.T) {
	fleet := exampleFleet(t)
	params := anthropicbridge.Tools(fleet.Current().Set.ModelTools(), nil)
	require.Len(t, params, 4)
	for _, p := range params {
		require.NotNil(t, p.OfTool)
		assert.Regexp(t, `^[a-zA-Z0-9_-]{1,64}$`, p.OfTool.Name)
		var schema map[string]any
		require.NoError(t, json.Unmarshal([]byte(asJSON(t, p.OfTool.InputSchema)), &schema))
		assert.Equal(t, "object", schema["type"], p.OfTool.Name)
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			assert.NotContains(t, schema, k)
		}
	}
	assert.Equal(t, "mcp__example__add", params[0].OfTool.Name)
}

func TestDispatchRecorded(t *testing.T) {
	var asked []string
	opts := &anthropicbridge.Options{Confirm: func(_ context.Context, c anthropicbridge.Call) error {
		asked = append(asked, c.Name) // never concurrent: no lock needed (-race checks)
		if a := c.Spec.Annotations; a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint {
			return nil
		}
		if c.Name == "mcp__fake__build" {
			return nil
		}
		return fmt.Errorf("the user said no to %s", c.Name)
	}}
	blocks, err := anthropicbridge.Dispatch(context.Background(), fakeTools(), recorded(t, "tool_use.json"), opts)
	require.NoError(t, err)
	assert.Equal(t, []string{"mcp__fake__chart", "mcp__fake__build", "mcp__fake__notes", "mcp__fake__wipe"}, asked, "asked in order, not for a tool never offered")
	msg := asJSON(t, anthropic.NewUserMessage(blocks...))
	assert.JSONEq(t, `{"role":"user","content":[
		{"type":"tool_result","tool_use_id":"toolu_01A09q90qw90lq917835lq9","content":[
			{"type":"text","text":"week 3"},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgpmYWtl"}},
			{"type":"text","text":"[image (image/svg+xml, 6 bytes) left out: the model API takes no such block in a tool result]"},
			{"type":"text","text":"[audio (audio/wav, 4 bytes) left out: the model API takes no audio in a tool result]"}]},
		{"type":"tool_result","tool_use_id":"toolu_01B1x2y3z4","is_error":true,"content":[{"type":"text","text":"2 tests failed"}]},
		{"type":"tool_result","tool_use_id":"toolu_01C5v6w7","is_error":true,"content":[{"type":"text","text":"error: transient server_unavailable"}]},
		{"type":"tool_result","tool_use_id":"toolu_01D8e9f0","is_error":true,"content":[{"type":"text","text":"error: refused declined: the host declined the call"}]},
		{"type":"tool_result","tool_use_id":"toolu_01E1g2h3","is_error":true,"content":[{"type":"text","text":"error: config unknown_tool: no tool of that name was offered"}]}
	]}`, msg)
	assert.NotContains(t, msg, "notes.example", "no origin reaches the model")
	assert.NotContains(t, msg, "the user said no", "the host's error text is not used")
}

func TestDispatchFleet(t *testing.T) {
	fleet := exampleFleet(t)
	ctx := context.Background()
	g := fleet.Current()
	blocks, err := anthropicbridge.Dispatch(ctx, g.Set.ModelTools(), recorded(t, "example_add.json"), nil)
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"type":"tool_result","tool_use_id":"toolu_01add","content":[{"type":"text","text":"5"}]},
		{"type":"tool_result","tool_use_id":"toolu_02echo","is_error":true,"content":[{"type":"text","text":"error: config invalid_arguments: /text: expected string, got number"}]},
		{"type":"tool_result","tool_use_id":"toolu_03count","content":[{"type":"text","text":"3"}]}
	]`, asJSON(t, blocks))

	none, err := anthropicbridge.Dispatch(ctx, g.Set.ModelTools(), recorded(t, "end_turn.json"), nil)
	require.NoError(t, err)
	assert.Nil(t, none, "no tool_use, no results: the loop ends")

	// A tool of a removed server, offered in an older generation, is
	// refused by name.
	require.NoError(t, fleet.Remove("example"))
	blocks, err = anthropicbridge.Dispatch(ctx, g.Set.ModelTools(), recorded(t, "example_add.json"), nil)
	require.NoError(t, err)
	require.Len(t, blocks, 3)
	for _, i := range []int{0, 2} { // the echo call's arguments are refused first
		require.NotNil(t, blocks[i].OfToolResult)
		assert.True(t, blocks[i].OfToolResult.IsError.Value)
		assert.Equal(t, "error: config server_removed: the server was removed from the Fleet", blocks[i].OfToolResult.Content[0].OfText.Text)
	}
}

func TestDispatchBoundsParallelCalls(t *testing.T) {
	for _, max := range []int{1, 2, 5} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			var running, peak atomic.Int32
			var mu sync.Mutex
			var order []string
			var tools []ports.Tool
			var content []string
			for i := range 8 {
				name := fmt.Sprintf("mcp__fake__t%d", i)
				tools = append(tools, portstest.NewTool(ports.ToolSpec{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
					func(context.Context, json.RawMessage) (ports.ToolResult, error) {
						n := running.Add(1)
						for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
						}
						time.Sleep(5 * time.Millisecond) // lets calls overlap; asserted only as a bound
						running.Add(-1)
						mu.Lock()
						order = append(order, name)
						mu.Unlock()
						return ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: ports.ContentText, Text: name}}}, nil
					}))
				content = append(content, fmt.Sprintf(`{"type":"tool_use","id":"toolu_%d","name":%q,"input":{}}`, i, name))
			}
			var msg anthropic.Message
			require.NoError(t, json.Unmarshal([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_reason":"tool_use","content":[`+strings.Join(content, ",")+`]}`), &msg))
			blocks, err := anthropicbridge.Dispatch(context.Background(), tools, &msg, &anthropicbridge.Options{MaxParallel: max})
			require.NoError(t, err)
			require.Len(t, blocks, 8)
			for i, b := range blocks {
				assert.Equal(t, fmt.Sprintf("toolu_%d", i), b.OfToolResult.ToolUseID, "results in the reply's order")
				assert.Equal(t, fmt.Sprintf("mcp__fake__t%d", i), b.OfToolResult.Content[0].OfText.Text)
			}
			assert.LessOrEqual(t, int(peak.Load()), max)
			assert.Len(t, order, 8)
		})
	}
}

func TestDispatchCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	blocks, err := anthropicbridge.Dispatch(ctx, fakeTools(), recorded(t, "tool_use.json"), nil)
	require.Error(t, err)
	assert.Equal(t, refusal.Transient, refusal.ClassOf(err))
	require.Len(t, blocks, 5)
	for _, b := range blocks {
		assert.Equal(t, "error: transient cancelled", b.OfToolResult.Content[0].OfText.Text)
	}
}
