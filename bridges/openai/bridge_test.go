package openaibridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	openaibridge "github.com/mcpward/mcpward/bridges/openai"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/memory"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/toolcall"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "openaibridge-")
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

// recorded decodes a recorded API response of testdata into v, the SDK's
// own type.
func recorded[T any](t testing.TB, name string) *T {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var v T
	require.NoError(t, json.Unmarshal(b, &v))
	return &v
}

// asJSON marshals v as the SDK sends it.
func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func ptr[T any](v T) *T { return &v }

func TestToolsParams(t *testing.T) {
	tools := []ports.Tool{
		portstest.NewTool(ports.ToolSpec{Name: "mcp__s__plain", Description: "Plain.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)}, nil),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__s__any", Title: "A title, no description",
			InputSchema: json.RawMessage(`{"anyOf":[{"required":["a"]}],"properties":{"a":{}}}`)}, nil),
		portstest.NewTool(ports.ToolSpec{Name: "not/valid", InputSchema: json.RawMessage(`{"type":"object"}`)}, nil),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__s__none", InputSchema: json.RawMessage(`[]`)}, nil),
	}
	opts := &openaibridge.Options{MaxDescription: 12}
	assert.JSONEq(t, `[
		{"type":"function","function":{"name":"mcp__s__plain","description":"Plain.","strict":false,"parameters":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}},
		{"type":"function","function":{"name":"mcp__s__any","description":"A title, no…","strict":false,"parameters":{"type":"object","properties":{"a":{}}}}},
		{"type":"function","function":{"name":"mcp__s__none","strict":false,"parameters":{"type":"object","properties":{}}}}
	]`, asJSON(t, openaibridge.Tools(tools, opts)))
	assert.JSONEq(t, `[
		{"type":"function","name":"mcp__s__plain","description":"Plain.","strict":false,"parameters":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}},
		{"type":"function","name":"mcp__s__any","description":"A title, no…","strict":false,"parameters":{"type":"object","properties":{"a":{}}}},
		{"type":"function","name":"mcp__s__none","strict":false,"parameters":{"type":"object","properties":{}}}
	]`, asJSON(t, openaibridge.ResponseTools(tools, opts)))
}

func TestDispatchChatFleet(t *testing.T) {
	fleet := exampleFleet(t)
	ctx := context.Background()
	tools := fleet.Current().Set.ModelTools()
	params := openaibridge.Tools(tools, nil)
	require.Len(t, params, 4)
	for _, p := range params {
		assert.Regexp(t, `^[a-zA-Z0-9_-]{1,64}$`, p.OfFunction.Function.Name)
		assert.Equal(t, "object", string(p.OfFunction.Function.Parameters["type"].(json.RawMessage)[1:7]))
	}

	reply := recorded[openai.ChatCompletion](t, "chat_tool_calls.json").Choices[0].Message
	msgs, err := openaibridge.Dispatch(ctx, tools, &reply, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"role":"tool","tool_call_id":"call_add1","content":"5"},
		{"role":"tool","tool_call_id":"call_echo2","content":"error: config invalid_arguments: /text: expected string, got number"},
		{"role":"tool","tool_call_id":"call_echo3","content":"error: config invalid_arguments: /: expected one JSON object"},
		{"role":"tool","tool_call_id":"call_count4","content":"3"}
	]`, asJSON(t, msgs))

	// The assistant message and the tool messages make a valid next request.
	next := openai.ChatCompletionNewParams{Model: openai.ChatModelGPT4_1, Tools: params,
		Messages: append([]openai.ChatCompletionMessageParamUnion{openai.UserMessage("add 2 and 3"), reply.ToParam()}, msgs...)}
	assert.Contains(t, asJSON(t, next), `"tool_calls":[{"id":"call_add1"`)
}

func TestDispatchChatFakes(t *testing.T) {
	tools := []ports.Tool{
		portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__chart", InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: &ports.ToolAnnotations{ReadOnlyHint: ptr(true)}},
			func(context.Context, json.RawMessage) (ports.ToolResult, error) {
				return ports.ToolResult{Truncated: true, Blocks: []ports.ContentBlock{
					{Kind: ports.ContentText, Text: "week 3"},
					{Kind: ports.ContentImage, MIMEType: "image/png", Data: []byte("\x89PNG")},
					{Kind: ports.ContentResourceLink, URI: "file:///w3.csv", Name: "w3.csv", MIMEType: "text/csv"},
					{Kind: ports.ContentResource, URI: "file:///notes.md", Text: "# notes"},
				}}, nil
			}),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__build", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, json.RawMessage) (ports.ToolResult, error) {
				return ports.ToolResult{IsError: true, Blocks: []ports.ContentBlock{{Kind: ports.ContentText, Text: "2 tests failed"}}}, nil
			}),
		portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__wipe", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, json.RawMessage) (ports.ToolResult, error) {
				panic("a declined call is never made")
			}),
	}
	var asked []string
	confirm := func(_ context.Context, c openaibridge.Call) error {
		asked = append(asked, c.ID)
		if a := c.Spec.Annotations; a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint || c.Name == "mcp__fake__build" {
			return nil
		}
		return &refusal.Error{Class: refusal.Refused, Reason: "user_declined", Detail: "the user said no"}
	}
	reply := recorded[openai.ChatCompletion](t, "chat_fakes.json").Choices[0].Message
	msgs, err := openaibridge.Dispatch(context.Background(), tools, &reply, &openaibridge.Options{Confirm: confirm, MaxParallel: 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"call_1", "call_2", "call_3"}, asked)
	assert.JSONEq(t, `[
		{"role":"tool","tool_call_id":"call_1","content":"week 3\n\n[image (image/png, 4 bytes) left out: the model API takes no such block in a tool result]\n\n[resource link file:///w3.csv, name w3.csv, text/csv]\n\n[resource file:///notes.md]\n# notes\n\n[the result was cut to the host's size limit]"},
		{"role":"tool","tool_call_id":"call_2","content":"[the tool reported an error]\n2 tests failed"},
		{"role":"tool","tool_call_id":"call_3","content":"error: refused user_declined: the user said no"},
		{"role":"tool","tool_call_id":"call_4","content":"error: config unknown_tool: no tool of that name was offered"},
		{"role":"tool","tool_call_id":"call_5","content":"error: config unknown_tool: no tool of that name was offered"}
	]`, asJSON(t, msgs))

	none, err := openaibridge.Dispatch(context.Background(), tools, &openai.ChatCompletionMessage{Content: "done"}, nil)
	require.NoError(t, err)
	assert.Nil(t, none)
}

func TestDispatchResponseFleet(t *testing.T) {
	fleet := exampleFleet(t)
	ctx := context.Background()
	tools := fleet.Current().Set.ModelTools()
	resp := recorded[responses.Response](t, "response_function_calls.json")
	items, err := openaibridge.DispatchResponse(ctx, tools, resp, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"type":"function_call_output","call_id":"call_Radd","output":"5"},
		{"type":"function_call_output","call_id":"call_Rmissing","output":"error: config invalid_arguments: /b: expected a value (the property is required), got none"}
	]`, asJSON(t, items))

	// The structured content beside the text, when the host asks for it.
	items2, err := openaibridge.DispatchResponse(ctx, tools, resp, &openaibridge.Options{Structured: toolcall.StructuredAlso})
	require.NoError(t, err)
	assert.Equal(t, "5\n\n{\"sum\":5}", items2[0].OfFunctionCallOutput.Output.OfString.Value)

	next := responses.ResponseNewParams{Model: openai.ChatModelGPT4_1, PreviousResponseID: openai.String(resp.ID),
		Tools: openaibridge.ResponseTools(tools, nil), Input: responses.ResponseNewParamsInputUnion{OfInputItemList: items}}
	assert.Contains(t, asJSON(t, next), `"previous_response_id":"resp_68f0a1b2c3d4e5f6"`)

	none, err := openaibridge.DispatchResponse(ctx, tools, recorded[responses.Response](t, "response_message.json"), nil)
	require.NoError(t, err)
	assert.Nil(t, none, "no function call: the loop ends")
}

func TestDispatchCancelled(t *testing.T) {
	fleet := exampleFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cancel()
	reply := recorded[openai.ChatCompletion](t, "chat_tool_calls.json").Choices[0].Message
	msgs, err := openaibridge.Dispatch(ctx, fleet.Current().Set.ModelTools(), &reply, nil)
	require.Error(t, err)
	var r *refusal.Error
	require.True(t, errors.As(err, &r))
	assert.Equal(t, "cancelled", r.Reason)
	require.Len(t, msgs, 4)
	for _, m := range msgs {
		assert.Equal(t, "error: transient cancelled", m.OfTool.Content.OfString.Value)
	}
	assert.False(t, strings.Contains(asJSON(t, msgs), "example"), "no server id reaches the model")
}

func TestDispatchResponseImages(t *testing.T) {
	chart := portstest.NewTool(ports.ToolSpec{Name: "mcp__fake__chart", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, json.RawMessage) (ports.ToolResult, error) {
			return ports.ToolResult{IsError: true, Blocks: []ports.ContentBlock{
				{Kind: ports.ContentText, Text: "partial chart"},
				{Kind: ports.ContentImage, MIMEType: "image/png", Data: []byte("\x89PNG")},
				{Kind: ports.ContentImage, MIMEType: "image/bmp", Data: []byte("BM")},
			}}, nil
		})
	var resp responses.Response
	require.NoError(t, json.Unmarshal([]byte(`{"id":"resp_1","object":"response","status":"completed","model":"gpt-4.1",
		"output":[{"type":"function_call","id":"fc_1","call_id":"call_img","name":"mcp__fake__chart","arguments":"{}","status":"completed"}]}`), &resp))
	items, err := openaibridge.DispatchResponse(context.Background(), []ports.Tool{chart}, &resp, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"function_call_output","call_id":"call_img","output":[
		{"type":"input_text","text":"[the tool reported an error]"},
		{"type":"input_text","text":"partial chart"},
		{"type":"input_image","image_url":"data:image/png;base64,iVBORw=="},
		{"type":"input_text","text":"[image (image/bmp, 2 bytes) left out: the model API takes no such block in a tool result]"}
	]}]`, asJSON(t, items))
}
