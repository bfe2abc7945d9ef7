package toolcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/toolcall"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestParts(t *testing.T) {
	accept := func(m string) bool { return m == "image/png" }
	tests := []struct {
		name string
		res  ports.ToolResult
		want []toolcall.Part
	}{
		{"empty", ports.ToolResult{}, []toolcall.Part{{Text: "(no content)"}}},
		{"empty text left out", ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: ports.ContentText}}}, []toolcall.Part{{Text: "(no content)"}}},
		{"raw content without blocks", ports.ToolResult{Content: json.RawMessage(` [{"type":"text","text":"x"}] `)},
			[]toolcall.Part{{Text: `[{"type":"text","text":"x"}]`}}},
		{"structured content already in a text block", ports.ToolResult{
			Blocks:            []ports.ContentBlock{{Kind: ports.ContentText, Text: "{\n  \"sum\": 5\n}"}},
			StructuredContent: json.RawMessage(`{"sum":5}`)}, []toolcall.Part{{Text: "{\n  \"sum\": 5\n}"}}},
		{"structured content added", ports.ToolResult{
			Blocks:            []ports.ContentBlock{{Kind: ports.ContentText, Text: "5"}},
			StructuredContent: json.RawMessage(`{ "sum" : 5 }`)}, []toolcall.Part{{Text: "5"}, {Text: `{"sum":5}`}}},
		{"images", ports.ToolResult{Blocks: []ports.ContentBlock{
			{Kind: ports.ContentImage, MIMEType: "image/png", Data: []byte{1, 2}},
			{Kind: ports.ContentImage, MIMEType: "image/tiff", Data: []byte{1}},
			{Kind: ports.ContentResource, URI: "file:///a.png", MIMEType: "image/png", Data: []byte{3}},
		}}, []toolcall.Part{
			{Image: &toolcall.Image{MIMEType: "image/png", Data: []byte{1, 2}}},
			{Text: "[image (image/tiff, 1 bytes) left out: the model API takes no such block in a tool result]"},
			{Image: &toolcall.Image{MIMEType: "image/png", Data: []byte{3}}},
		}},
		{"a long server string is clipped in a note", ports.ToolResult{Blocks: []ports.ContentBlock{
			{Kind: ports.ContentResourceLink, URI: strings.Repeat("u", 300)}}},
			[]toolcall.Part{{Text: "[resource link " + strings.Repeat("u", 256) + "…]"}}},
		{"truncated", ports.ToolResult{Truncated: true, Blocks: []ports.ContentBlock{{Kind: ports.ContentText, Text: "abc"}}},
			[]toolcall.Part{{Text: "abc"}, {Text: "[the result was cut to the host's size limit]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, toolcall.Parts(tt.res, accept))
		})
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&refusal.Error{Class: refusal.AuthRequired, Reason: "sign_in_required", Server: "secret-server", Origin: "https://h.example:443"}, "error: auth_required sign_in_required"},
		{&refusal.Error{Class: refusal.Config, Reason: "unknown_tool", Detail: "a fixed phrase"}, "error: config unknown_tool: a fixed phrase"},
		{errors.New("token=s3cr3t"), "error: internal unclassified"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, toolcall.ErrorText(tt.err))
	}
}

func TestSchemaAndNames(t *testing.T) {
	got, err := json.Marshal(toolcall.Schema(ports.ToolSpec{InputSchema: json.RawMessage(
		`{"$schema":"x","type":["object","null"],"allOf":[{}],"properties":true,"required":"a"}`)}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(got))
	assert.True(t, toolcall.ValidName("mcp__a-b__c_d"))
	for _, n := range []string{"", "a.b", "é", strings.Repeat("a", 65)} {
		assert.False(t, toolcall.ValidName(n), n)
	}
	assert.Equal(t, "ab…", toolcall.Description(ports.ToolSpec{Description: "abcd"}, 3))
	assert.Equal(t, "abc", toolcall.Description(ports.ToolSpec{Description: "abc"}, 3))
	assert.Equal(t, "T", toolcall.Description(ports.ToolSpec{Description: " ", Title: "T"}, 0))
}

func TestRunConfirmsInOrderAndRefusesUnknown(t *testing.T) {
	var calls atomic.Int32
	tool := portstest.NewTool(ports.ToolSpec{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, json.RawMessage) (ports.ToolResult, error) {
			calls.Add(1)
			return ports.ToolResult{}, nil
		})
	var asked []string
	outs, err := toolcall.Run(context.Background(), []ports.Tool{tool, nil}, []toolcall.Call{{ID: "1", Name: "t"}, {ID: "2", Name: "nope"}, {ID: "3", Name: "t"}},
		&toolcall.Options{Confirm: func(_ context.Context, c toolcall.Call) error {
			asked = append(asked, c.ID)
			assert.Equal(t, "t", c.Spec.Name, "the spec is filled in")
			if c.ID == "3" {
				return errors.New("no")
			}
			return nil
		}})
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "3"}, asked)
	assert.Equal(t, int32(1), calls.Load())
	require.Len(t, outs, 3)
	assert.NoError(t, outs[0].Err)
	assert.Equal(t, toolcall.ReasonUnknownTool, refusal.ReasonOf(outs[1].Err))
	assert.Equal(t, toolcall.ReasonDeclined, refusal.ReasonOf(outs[2].Err))
	assert.Equal(t, refusal.Refused, refusal.ClassOf(outs[2].Err))
}
