package toolcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/toolcall"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestParts(t *testing.T) {
	accept := func(m string) bool { return m == "image/png" }
	sum := ports.ToolResult{
		Blocks:            []ports.ContentBlock{{Kind: ports.ContentText, Text: "5"}},
		StructuredContent: json.RawMessage(`{ "sum" : 5 }`)}
	tests := []struct {
		name string
		res  ports.ToolResult
		mode toolcall.Structured
		want []toolcall.Part
	}{
		{"empty", ports.ToolResult{}, toolcall.StructuredFallback, []toolcall.Part{{Text: "(no content)"}}},
		{"empty text left out", ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: ports.ContentText}}}, toolcall.StructuredFallback, []toolcall.Part{{Text: "(no content)"}}},
		{"raw content without blocks", ports.ToolResult{Content: json.RawMessage(` [{"type":"text","text":"x"}] `)}, toolcall.StructuredFallback,
			[]toolcall.Part{{Text: `[{"type":"text","text":"x"}]`}}},
		{"fallback: content first, structured content not again", sum, toolcall.StructuredFallback, []toolcall.Part{{Text: "5"}}},
		{"fallback: structured content when there is no content", ports.ToolResult{Blocks: []ports.ContentBlock{},
			StructuredContent: json.RawMessage(`{ "sum" : 5 }`)}, toolcall.StructuredFallback, []toolcall.Part{{Text: `{"sum":5}`}}},
		{"fallback: structured content when the content is an empty text", ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: ports.ContentText}},
			StructuredContent: json.RawMessage(`{"sum":5}`)}, toolcall.StructuredFallback, []toolcall.Part{{Text: `{"sum":5}`}}},
		{"also: structured content already in a text block", ports.ToolResult{
			Blocks:            []ports.ContentBlock{{Kind: ports.ContentText, Text: "{\n  \"sum\": 5\n}"}},
			StructuredContent: json.RawMessage(`{"sum":5}`)}, toolcall.StructuredAlso, []toolcall.Part{{Text: "{\n  \"sum\": 5\n}"}}},
		{"also: structured content added", sum, toolcall.StructuredAlso, []toolcall.Part{{Text: "5"}, {Text: `{"sum":5}`}}},
		{"only: structured content for the blocks", sum, toolcall.StructuredOnly, []toolcall.Part{{Text: `{"sum":5}`}}},
		{"only: the blocks without structured content", ports.ToolResult{Blocks: sum.Blocks}, toolcall.StructuredOnly, []toolcall.Part{{Text: "5"}}},
		{"images", ports.ToolResult{Blocks: []ports.ContentBlock{
			{Kind: ports.ContentImage, MIMEType: "image/png", Data: []byte{1, 2}},
			{Kind: ports.ContentImage, MIMEType: "image/tiff", Data: []byte{1}},
			{Kind: ports.ContentResource, URI: "file:///a.png", MIMEType: "image/png", Data: []byte{3}},
		}}, toolcall.StructuredFallback, []toolcall.Part{
			{Image: &toolcall.Image{MIMEType: "image/png", Data: []byte{1, 2}}},
			{Text: "[image (image/tiff, 1 bytes) left out: the model API takes no such block in a tool result]"},
			{Image: &toolcall.Image{MIMEType: "image/png", Data: []byte{3}}},
		}},
		{"a long server string is clipped in a note", ports.ToolResult{Blocks: []ports.ContentBlock{
			{Kind: ports.ContentResourceLink, URI: strings.Repeat("u", 300)}}}, toolcall.StructuredFallback,
			[]toolcall.Part{{Text: "[resource link " + strings.Repeat("u", 256) + "…]"}}},
		{"truncated", ports.ToolResult{Truncated: true, Blocks: []ports.ContentBlock{{Kind: ports.ContentText, Text: "abc"}}}, toolcall.StructuredFallback,
			[]toolcall.Part{{Text: "abc"}, {Text: "[the result was cut to the host's size limit]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, toolcall.Parts(tt.res, accept, tt.mode))
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
	assert.Equal(t, catalog.ReasonUnknownTool, refusal.ReasonOf(outs[1].Err))
	assert.Equal(t, toolcall.ReasonDeclined, refusal.ReasonOf(outs[2].Err))
	assert.Equal(t, refusal.Refused, refusal.ClassOf(outs[2].Err))
}

// TestRunProgressPerCall: with OnProgress each call asks for progress and
// its progress arrives with that call (its ID), parallel calls apart; a
// callback of the caller's ctx is not used then.
func TestRunProgressPerCall(t *testing.T) {
	var tools []ports.Tool
	var calls []toolcall.Call
	for _, n := range []string{"a", "b", "c"} {
		tools = append(tools, portstest.NewTool(ports.ToolSpec{Name: n, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, _ json.RawMessage) (ports.ToolResult, error) {
				f := ports.ProgressFunc(ctx)
				if f == nil {
					return ports.ToolResult{}, errors.New("no progress asked for")
				}
				f(ports.Progress{Progress: 1, Message: "step of " + n})
				f(ports.Progress{Progress: 2, Message: "step of " + n})
				return ports.ToolResult{}, nil
			}))
		calls = append(calls, toolcall.Call{ID: "id-" + n, Name: n})
	}
	var mu sync.Mutex
	got := map[string][]string{}
	ctx := ports.WithProgress(context.Background(), func(ports.Progress) { t.Error("the ctx's callback is not used") })
	outs, err := toolcall.Run(ctx, tools, calls, &toolcall.Options{MaxParallel: 3, OnProgress: func(c toolcall.Call, p ports.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got[c.ID] = append(got[c.ID], fmt.Sprint(p.Progress, " ", p.Message))
	}})
	require.NoError(t, err)
	for _, o := range outs {
		require.NoError(t, o.Err)
	}
	assert.Equal(t, map[string][]string{
		"id-a": {"1 step of a", "2 step of a"},
		"id-b": {"1 step of b", "2 step of b"},
		"id-c": {"1 step of c", "2 step of c"},
	}, got)

	// Without OnProgress, the ctx's callback is the call's (the former
	// shared callback).
	var shared atomic.Int32
	ctx = ports.WithProgress(context.Background(), func(ports.Progress) { shared.Add(1) })
	_, err = toolcall.Run(ctx, tools, calls, nil)
	require.NoError(t, err)
	assert.Equal(t, int32(6), shared.Load())
}

// TestGate: a Gate asks Confirm one call at a time however many
// goroutines call it, never lets more than MaxParallel calls run, refuses
// a tool not offered without asking, and refuses once ctx ended.
func TestGate(t *testing.T) {
	var running, peak atomic.Int32
	tool := portstest.NewTool(ports.ToolSpec{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, json.RawMessage) (ports.ToolResult, error) {
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(2 * time.Millisecond)
			running.Add(-1)
			return ports.ToolResult{}, nil
		})
	var confirming, asked atomic.Int32
	g := toolcall.NewGate(&toolcall.Options{MaxParallel: 2, Confirm: func(_ context.Context, c toolcall.Call) error {
		if confirming.Add(1) != 1 {
			t.Error("Confirm asked concurrently")
		}
		defer confirming.Add(-1)
		asked.Add(1)
		assert.Equal(t, "t", c.Spec.Name, "the spec is filled in")
		if c.ID == "no" {
			return errors.New("no")
		}
		return nil
	}})
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint(i)
			if i == 5 {
				id = "no"
			}
			o := g.Call(context.Background(), tool, toolcall.Call{ID: id, Name: "t"})
			if id == "no" {
				assert.Equal(t, toolcall.ReasonDeclined, refusal.ReasonOf(o.Err))
				return
			}
			assert.NoError(t, o.Err)
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(12), asked.Load())
	assert.LessOrEqual(t, peak.Load(), int32(2))

	o := g.Call(context.Background(), nil, toolcall.Call{ID: "x", Name: "nope"})
	assert.Equal(t, catalog.ReasonUnknownTool, refusal.ReasonOf(o.Err))
	assert.Equal(t, int32(12), asked.Load(), "a tool not offered is refused without asking")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o = g.Call(ctx, tool, toolcall.Call{ID: "y", Name: "t"})
	assert.Equal(t, toolcall.ReasonCancelled, refusal.ReasonOf(o.Err))
}
