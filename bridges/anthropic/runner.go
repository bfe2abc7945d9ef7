package anthropicbridge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/mcpward/mcpward/core/toolcall"
	"github.com/mcpward/mcpward/ports"
)

// ErrorPrefix starts the text of a BetaTools result the tool itself marked
// as an error (MCP's isError): the SDK's tool runner sets is_error only for
// an error its tool returns, and renders it "Error: " and the error's text.
const ErrorPrefix = "[the tool reported an error]\n"

// BetaTools returns tools as anthropic.BetaTool values for the SDK's own
// tool runner, in their order:
//
//	runner := client.Beta.Messages.NewToolRunner(anthropicbridge.BetaTools(tools, opts), params)
//	final, err := runner.RunToCompletion(ctx)
//
// It is the equivalent of the SDK's mcp.NewBetaTools (which takes a go-sdk
// session), with what mcpward adds kept: each tool has its host-facing
// name, its description cut to MaxDescription and its input schema as
// Tools gives them (a tool whose name breaks the API's rule is left out,
// as is a second tool of one name); Confirm is asked before each call,
// one at a time, in the order the runner starts them (it starts a reply's
// calls at once, on goroutines of its own); at most MaxParallel calls of
// these tools run at once, across the runner's turns; the arguments are
// checked against each tool's whole schema and its results are cut to its
// caps, as for every call of the tool.
//
// A call that was not made or failed (the tool's refusal, invalid
// arguments, Confirm's no) returns an error whose text is
// toolcall.ErrorText without its "error: " (class and reason words, never
// a secret): the runner sends it as an is_error result, "Error: " and that
// text. A result the tool marked as an error is sent the same way, its
// text parts after ErrorPrefix (its images left out, as notes: an error
// result of the runner is text). Any other result is its toolcall.Parts,
// as Dispatch sends it (structured content as Options.Structured says).
// OnProgress gets each call's progress with a Call whose ID is "": the
// runner does not hand its tools the tool_use id.
//
// The tools are a snapshot of tools: a host that offers a composition
// Fleet's live set gives the runner the tools of one generation (a tool
// that changed since is refused by name, tool_changed, when called) and
// hands it a new generation's with runner.AddTools and
// runner.RemoveToolsByNames, or builds a new runner. It is safe for
// concurrent use.
func BetaTools(tools []ports.Tool, opts *Options) []anthropic.BetaTool {
	o := options(opts)
	g := toolcall.NewGate(&o)
	out := make([]anthropic.BetaTool, 0, len(tools))
	offerable(tools, func(t ports.Tool, spec ports.ToolSpec, props any, extra map[string]any) {
		in := anthropic.BetaToolInputSchemaParam{Properties: props, ExtraFields: extra}
		out = append(out, &betaTool{tool: t, name: spec.Name, desc: toolcall.Description(spec, o.MaxDescription), schema: in, gate: g})
	})
	return out
}

// betaTool is one tool of BetaTools.
type betaTool struct {
	tool   ports.Tool
	name   string
	desc   string
	schema anthropic.BetaToolInputSchemaParam
	gate   *toolcall.Gate
}

var _ anthropic.BetaTool = (*betaTool)(nil)

// Name returns the tool's host-facing name.
func (b *betaTool) Name() string { return b.name }

// Description returns the tool's description, cut to MaxDescription.
func (b *betaTool) Description() string { return b.desc }

// InputSchema returns the tool's input schema as Tools gives it.
func (b *betaTool) InputSchema() anthropic.BetaToolInputSchemaParam { return b.schema }

// Execute makes one call of the tool through the Gate of its BetaTools.
func (b *betaTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	out := b.gate.Call(ctx, b.tool, toolcall.Call{Name: b.name, Args: input})
	if out.Err != nil {
		return nil, modelError(strings.TrimPrefix(toolcall.ErrorText(out.Err), "error: "))
	}
	if out.Result.IsError {
		parts := toolcall.Parts(out.Result, nil, b.gate.Options().Structured)
		texts := make([]string, len(parts))
		for i, p := range parts {
			texts[i] = p.Text
		}
		return nil, modelError(ErrorPrefix + strings.Join(texts, "\n\n"))
	}
	var blocks []anthropic.BetaToolResultBlockParamContentUnion
	for _, p := range toolcall.Parts(out.Result, imageType, b.gate.Options().Structured) {
		if p.Image != nil {
			blocks = append(blocks, anthropic.BetaToolResultBlockParamContentUnion{OfImage: &anthropic.BetaImageBlockParam{
				Source: anthropic.BetaImageBlockParamSourceUnion{OfBase64: &anthropic.BetaBase64ImageSourceParam{
					MediaType: anthropic.BetaBase64ImageSourceMediaType(p.Image.MIMEType),
					Data:      base64.StdEncoding.EncodeToString(p.Image.Data),
				}},
			}})
			continue
		}
		blocks = append(blocks, anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: p.Text}})
	}
	return blocks, nil
}

// modelError is an error whose text is written for the model: words
// mcpward chose, or the tool's own error text, never a secret of the
// host.
type modelError string

func (e modelError) Error() string { return string(e) }
