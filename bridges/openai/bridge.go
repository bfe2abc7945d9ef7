// Package openaibridge hands a host's MCP tools to an OpenAI model
// (github.com/openai/openai-go/v3) and runs the tool calls the model asks
// for: over the Chat Completions API (Tools, Dispatch), the Responses API
// (ResponseTools, DispatchResponse), or the SDK's own runner of the Agents
// API (AgentTools, AgentToolHandlers: the tool handlers of
// client.Beta.Agents.Sessions.Stream and NewStreaming). Every path takes
// the same Options (toolcall.Options, the Anthropic bridge's too).
//
// The tools are those a host offers: a composition Fleet's
// fleet.Current().Set.ModelTools(), or any []ports.Tool. Each becomes a
// function tool with strict mode off (the APIs' strict mode takes only a
// subset of JSON Schema; the tool itself validates the model's arguments
// against its whole schema when called). Dispatch makes the calls of a
// reply through those same tools (a confirmation hook the host supplies
// first, a few at a time) and returns what answers them. A refused or
// failed call is a result the model can read (the refusal's class and
// reason words), never a Go error: the loop goes on, and the model may
// try again. A result's structured content is sent as Options.Structured
// says: by default only when the result has no other content.
//
// The SDK's Chat Completions and Responses services have no tool runner
// of their own (the hand-written loop of Dispatch is the way there); its
// Agents API has one, which AgentToolHandlers plugs into.
//
// The package name is openaibridge (the SDK's is openai); its import path
// is github.com/mcpward/mcpward/bridges/openai.
package openaibridge

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/mcpward/mcpward/core/toolcall"
	"github.com/mcpward/mcpward/ports"
)

// Call is one tool call the model asked for: its call id, the tool's
// host-facing name, the model's arguments and the offered tool's spec
// (with the server's Annotations, which are hints, not facts: see
// Options.Confirm).
type Call = toolcall.Call

// ErrorPrefix starts the text of a result the tool itself marked as an
// error (MCP's isError): these APIs have no error flag on a tool's output.
const ErrorPrefix = "[the tool reported an error]\n"

// Options tune every path of the bridge: toolcall.Options, the one
// options type of both bridges. Confirm is asked before each call (one at
// a time, never concurrently: in the reply's order for Dispatch and
// DispatchResponse, in the order the Agents runner hands the calls over
// for AgentToolHandlers); MaxParallel bounds the calls at once
// (toolcall.DefaultMaxParallel, 4, when 0); MaxDescription bounds each
// tool's description (toolcall.DefaultMaxDescription, 1024 characters);
// OnProgress gets each call's progress with the call (its call id for
// Dispatch and DispatchResponse); Structured chooses how structured
// content is sent (toolcall.StructuredFallback: only when the result has
// no other content). The zero value (or nil) means every default.
//
// c.Spec.Annotations, given to Confirm, carry the server's readOnlyHint,
// destructiveHint and the like. They are claims of an untrusted server,
// nothing checks them: a host may ask about tools marked destructive (or
// unmarked: the protocol's default is destructive) and let those marked
// read-only through, but that trusts the server's word, so it should do
// so only for servers it trusts that far.
type Options = toolcall.Options

// Tools returns tools as Chat Completions function tools, in their
// order: each with the tool's host-facing name (the API's rule, 1 to 64
// of [a-zA-Z0-9_-], holds for every name mcpward makes; a tool whose name
// breaks it is left out, as is a second tool of one name), its
// description (else its title) cut to MaxDescription, its input schema as
// toolcall.Schema gives it ("type": "object" at the top) and strict set
// to false. It is safe for concurrent use.
func Tools(tools []ports.Tool, opts *Options) []openai.ChatCompletionToolUnionParam {
	o := options(opts)
	var out []openai.ChatCompletionToolUnionParam
	each(tools, func(_ ports.Tool, spec ports.ToolSpec, params map[string]any) {
		f := shared.FunctionDefinitionParam{Name: spec.Name, Parameters: params, Strict: openai.Bool(false)}
		if d := toolcall.Description(spec, o.MaxDescription); d != "" {
			f.Description = openai.String(d)
		}
		out = append(out, openai.ChatCompletionFunctionTool(f))
	})
	return out
}

// ResponseTools returns tools as Responses API function tools, as Tools
// does for Chat Completions (strict false).
func ResponseTools(tools []ports.Tool, opts *Options) []responses.ToolUnionParam {
	o := options(opts)
	var out []responses.ToolUnionParam
	each(tools, func(_ ports.Tool, spec ports.ToolSpec, params map[string]any) {
		f := responses.FunctionToolParam{Name: spec.Name, Parameters: params, Strict: openai.Bool(false)}
		if d := toolcall.Description(spec, o.MaxDescription); d != "" {
			f.Description = openai.String(d)
		}
		out = append(out, responses.ToolUnionParam{OfFunction: &f})
	})
	return out
}

// each calls f with every tool with a valid, first-seen name, its spec
// and its parameters.
func each(tools []ports.Tool, f func(ports.Tool, ports.ToolSpec, map[string]any)) {
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t == nil {
			continue
		}
		spec := t.Spec()
		if !toolcall.ValidName(spec.Name) || seen[spec.Name] {
			continue
		}
		seen[spec.Name] = true
		schema := toolcall.Schema(spec)
		params := make(map[string]any, len(schema))
		for k, v := range schema {
			params[k] = v
		}
		f(t, spec, params)
	}
}

// Dispatch makes the calls of msg's tool_calls with tools (those offered
// to the model in the request msg answers) and returns one tool message
// per call, in msg's order, to append after msg:
//
//	msgs = append(msgs, reply.ToParam())
//	msgs = append(msgs, results...)
//
// It returns no messages when msg has no tool call. A message's content
// is the text of toolcall.Parts of the tool's result, parts separated by
// a blank line (a tool message takes text only: an image or audio block
// is a note saying what was left out; structured content is its JSON
// text where Options.Structured sends it), after ErrorPrefix for an error
// result of the tool. A call that
// was not made or failed (the tool's refusal, invalid arguments or
// arguments that are not JSON, Confirm's no, a tool not offered, a custom
// tool call) reads toolcall.ErrorText: class and reason words, never a
// secret. Calls run concurrently (see Options.MaxParallel), each bounded
// by its tool's own timeouts. The error is non-nil only when ctx ended
// (Class Transient, "cancelled" or "timeout"); the messages are complete
// even then, the calls not started carrying that refusal.
func Dispatch(ctx context.Context, tools []ports.Tool, msg *openai.ChatCompletionMessage, opts *Options) ([]openai.ChatCompletionMessageParamUnion, error) {
	if msg == nil || len(msg.ToolCalls) == 0 {
		return nil, nil
	}
	calls := make([]toolcall.Call, 0, len(msg.ToolCalls))
	for _, tc := range msg.ToolCalls {
		c := toolcall.Call{ID: tc.ID}
		if tc.Type == "function" {
			f := tc.AsFunction().Function
			c.Name, c.Args = f.Name, []byte(f.Arguments)
		}
		calls = append(calls, c) // a custom tool call has no name: refused as not offered
	}
	o := options(opts)
	outs, err := toolcall.Run(ctx, tools, calls, &o)
	out := make([]openai.ChatCompletionMessageParamUnion, len(outs))
	for i, oc := range outs {
		out[i] = openai.ToolMessage(text(oc, o.Structured), oc.Call.ID)
	}
	return out, err
}

// DispatchResponse makes the calls of resp's function_call output items
// with tools (those offered in the request resp answers) and returns one
// function_call_output input item per call, in resp's order, for the
// next request's input (with PreviousResponseID set to resp.ID, or after
// resp's output items). The output is text as Dispatch makes it, except
// that a result holding a PNG, JPEG, GIF or WebP image (or embedded blob
// of those types) is a list of input_text and input_image items (the
// image as a data: URL), in the result's order; errors as for Dispatch.
func DispatchResponse(ctx context.Context, tools []ports.Tool, resp *responses.Response, opts *Options) ([]responses.ResponseInputItemUnionParam, error) {
	if resp == nil {
		return nil, nil
	}
	var calls []toolcall.Call
	for _, item := range resp.Output {
		if item.Type != "function_call" {
			continue
		}
		fc := item.AsFunctionCall()
		calls = append(calls, toolcall.Call{ID: fc.CallID, Name: fc.Name, Args: []byte(fc.Arguments)})
	}
	if len(calls) == 0 {
		return nil, nil
	}
	o := options(opts)
	outs, err := toolcall.Run(ctx, tools, calls, &o)
	out := make([]responses.ResponseInputItemUnionParam, len(outs))
	for i, oc := range outs {
		out[i] = responseOutput(oc, o.Structured)
		out[i].OfFunctionCallOutput.CallID = openai.String(oc.Call.ID)
	}
	return out, err
}

// responseOutput returns the function_call_output item of one outcome:
// its text, or, when the result holds an image the API takes, a list of
// input_text and input_image (a data: URL) items in the result's order.
func responseOutput(o toolcall.Outcome, structured toolcall.Structured) responses.ResponseInputItemUnionParam {
	if o.Err != nil {
		return responses.ResponseInputItemParamOfFunctionCallOutput(text(o, structured))
	}
	parts := toolcall.Parts(o.Result, imageType, structured)
	if !slices.ContainsFunc(parts, func(p toolcall.Part) bool { return p.Image != nil }) {
		return responses.ResponseInputItemParamOfFunctionCallOutput(text(o, structured))
	}
	var list responses.ResponseFunctionCallOutputItemListParam
	if o.Result.IsError {
		list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: strings.TrimSuffix(ErrorPrefix, "\n")}})
	}
	for _, p := range parts {
		if p.Image != nil {
			url := "data:" + p.Image.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Image.Data)
			list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: openai.String(url)}})
			continue
		}
		list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: p.Text}})
	}
	return responses.ResponseInputItemParamOfFunctionCallOutput(list)
}

// imageType reports whether the Responses API takes images of MIME type
// mime in a function call's output.
func imageType(mime string) bool {
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// text returns what the model reads of one outcome.
func text(o toolcall.Outcome, structured toolcall.Structured) string {
	if o.Err != nil {
		return toolcall.ErrorText(o.Err)
	}
	parts := toolcall.Parts(o.Result, nil, structured)
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = p.Text
	}
	t := strings.Join(s, "\n\n")
	if o.Result.IsError {
		t = ErrorPrefix + t
	}
	return t
}

// options returns *opts, or the zero Options.
func options(opts *Options) Options {
	if opts == nil {
		return Options{}
	}
	return *opts
}
