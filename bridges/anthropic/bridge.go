// Package anthropicbridge hands a host's MCP tools to a Claude model
// through the Anthropic Messages API (github.com/anthropics/anthropic-sdk-go/v2)
// and runs the tool calls the model asks for.
//
// Two paths, one Options (toolcall.Options, the OpenAI bridge's too):
//
//   - The hand-written loop: Tools turns the tools a host offers (a
//     composition Fleet's fleet.Current().Set.ModelTools(), or any
//     []ports.Tool) into the SDK's tool parameters; Dispatch takes the
//     model's reply, makes the calls of its tool_use blocks through those
//     same tools (a confirmation hook the host supplies first, a few at a
//     time) and returns the tool_result blocks of the user message that
//     answers it.
//   - The SDK's own tool runner: BetaTools turns the same tools into
//     anthropic.BetaTool values for client.Beta.Messages.NewToolRunner,
//     as the SDK's mcp.NewBetaTools does for a go-sdk session, keeping
//     mcpward's host-facing names, the confirmation and the bounds.
//
// A refused or failed call is an error result the model can read (the
// refusal's class and reason words), never a Go error: the loop goes on,
// and the model may try again. A result's structured content is sent as
// Options.Structured says: by default only when the result has no other
// content, the rule of the SDK's own MCP helper.
//
// The package name is anthropicbridge (the SDK's is anthropic); its import
// path is github.com/mcpward/mcpward/bridges/anthropic.
package anthropicbridge

import (
	"context"
	"encoding/base64"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/mcpward/mcpward/core/toolcall"
	"github.com/mcpward/mcpward/ports"
)

// Call is one tool call the model asked for: its tool_use id, the tool's
// host-facing name, the model's arguments and the offered tool's spec
// (with the server's Annotations, which are hints, not facts: see
// Options.Confirm).
type Call = toolcall.Call

// Options tune Tools, Dispatch and BetaTools: toolcall.Options, the one
// options type of both bridges. Confirm is asked before each call (one at
// a time, never concurrently: in the reply's order for Dispatch, in the
// order the runner starts them for BetaTools); MaxParallel bounds the
// calls at once (toolcall.DefaultMaxParallel, 4, when 0); MaxDescription
// bounds each tool's description (toolcall.DefaultMaxDescription, 1024
// characters); OnProgress gets each call's progress with the call (its
// tool_use id for Dispatch); Structured chooses how structured content is
// sent (toolcall.StructuredFallback: only when the result has no other
// content). The zero value (or nil) means every default.
//
// c.Spec.Annotations, given to Confirm, carry the server's readOnlyHint,
// destructiveHint and the like. They are claims of an untrusted server,
// nothing checks them: a host may ask about tools marked destructive (or
// unmarked: the protocol's default is destructive) and let those marked
// read-only through, but that trusts the server's word, so it should do
// so only for servers it trusts that far.
type Options = toolcall.Options

// Tools returns tools as the Messages API's tool parameters, in their
// order: each a custom tool with the tool's host-facing name (the API's
// rule, 1 to 64 of [a-zA-Z0-9_-], holds for every name mcpward makes; a
// tool whose name breaks it is left out, as is a second tool of one
// name), its description (else its title) cut to MaxDescription, and its
// input schema as toolcall.Schema gives it ("type": "object" at the top,
// no top-level combinator, which the API refuses). The tool still checks
// the model's arguments against its whole schema when called. It is safe
// for concurrent use.
func Tools(tools []ports.Tool, opts *Options) []anthropic.ToolUnionParam {
	o := options(opts)
	out := make([]anthropic.ToolUnionParam, 0, len(tools))
	offerable(tools, func(_ ports.Tool, spec ports.ToolSpec, props any, extra map[string]any) {
		p := anthropic.ToolParam{Name: spec.Name, InputSchema: anthropic.ToolInputSchemaParam{Properties: props, ExtraFields: extra}}
		if d := toolcall.Description(spec, o.MaxDescription); d != "" {
			p.Description = anthropic.String(d)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &p})
	})
	return out
}

// offerable calls f, in order, for each tool of tools a model may be
// offered — not nil, a valid name, the first tool of its name — with its
// schema (toolcall.Schema) split into the properties and the other
// keywords ("type" is the API's own). Tools and BetaTools share it.
func offerable(tools []ports.Tool, f func(t ports.Tool, spec ports.ToolSpec, props any, extra map[string]any)) {
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
		extra := make(map[string]any, len(schema))
		for k, v := range schema {
			switch k {
			case "type", "properties":
			default:
				extra[k] = v
			}
		}
		f(t, spec, schema["properties"], extra)
	}
}

// Dispatch makes the calls of msg's tool_use blocks with tools (those
// offered to the model in the request msg answers) and returns one
// tool_result block per tool_use, in msg's order, for the user message
// that answers msg:
//
//	msgs = append(msgs, reply.ToParam(), anthropic.NewUserMessage(results...))
//
// It returns no blocks when msg has no tool_use. A result's content is
// toolcall.Parts of the tool's result: text blocks as text, a JPEG, PNG,
// GIF or WebP image (or embedded blob of those types) as an image block,
// any other binary block as a note, structured content as its JSON text
// where Options.Structured sends it (by default only for a result without
// other content); is_error is set for an error result of the tool. A call that was not
// made or failed (the tool's refusal, invalid arguments, Confirm's no, a
// tool not offered) is an is_error result whose text is
// toolcall.ErrorText: class and reason words, never a secret. Calls run
// concurrently (see Options.MaxParallel), each bounded by its tool's own
// timeouts. The error is non-nil only when ctx ended (Class Transient,
// "cancelled" or "timeout"); the blocks are complete even then, the calls
// not started carrying that refusal.
func Dispatch(ctx context.Context, tools []ports.Tool, msg *anthropic.Message, opts *Options) ([]anthropic.ContentBlockParamUnion, error) {
	if msg == nil {
		return nil, nil
	}
	var calls []toolcall.Call
	for _, b := range msg.Content {
		if b.Type != "tool_use" {
			continue
		}
		u := b.AsToolUse()
		calls = append(calls, toolcall.Call{ID: u.ID, Name: u.Name, Args: u.Input})
	}
	if len(calls) == 0 {
		return nil, nil
	}
	o := options(opts)
	outs, err := toolcall.Run(ctx, tools, calls, &o)
	blocks := make([]anthropic.ContentBlockParamUnion, len(outs))
	for i, out := range outs {
		blocks[i] = anthropic.ContentBlockParamUnion{OfToolResult: result(out, o.Structured)}
	}
	return blocks, err
}

// result returns the tool_result block of one outcome.
func result(out toolcall.Outcome, structured toolcall.Structured) *anthropic.ToolResultBlockParam {
	r := &anthropic.ToolResultBlockParam{ToolUseID: out.Call.ID}
	if out.Err != nil {
		r.IsError = anthropic.Bool(true)
		r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: toolcall.ErrorText(out.Err)}}}
		return r
	}
	if out.Result.IsError {
		r.IsError = anthropic.Bool(true)
	}
	for _, p := range toolcall.Parts(out.Result, imageType, structured) {
		if p.Image != nil {
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{
				Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
					MediaType: anthropic.Base64ImageSourceMediaType(p.Image.MIMEType),
					Data:      base64.StdEncoding.EncodeToString(p.Image.Data),
				}},
			}})
			continue
		}
		r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: p.Text}})
	}
	return r
}

// imageType reports whether the API takes images of MIME type mime.
func imageType(mime string) bool {
	switch anthropic.Base64ImageSourceMediaType(mime) {
	case anthropic.Base64ImageSourceMediaTypeImageJPEG, anthropic.Base64ImageSourceMediaTypeImagePNG,
		anthropic.Base64ImageSourceMediaTypeImageGIF, anthropic.Base64ImageSourceMediaTypeImageWebP:
		return true
	}
	return false
}

// options returns *opts, or the zero Options.
func options(opts *Options) Options {
	if opts == nil {
		return Options{}
	}
	return *opts
}
