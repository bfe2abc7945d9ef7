package openaibridge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"

	"github.com/openai/openai-go/v3"

	"github.com/mcpward/mcpward/core/toolcall"
	"github.com/mcpward/mcpward/ports"
)

// AgentTools returns tools as function tools of the Agents API, for the
// Tools of an agent or of a session's agent configuration
// (BetaAgentSessionNewParamsAgent.Tools), in their order: each with the
// tool's host-facing name, its description (else its title) cut to
// MaxDescription, and its input schema as toolcall.Schema gives it. A
// tool whose name breaks the API's rule (1 to 64 of [a-zA-Z0-9_-]) is
// left out, as is a second tool of one name. It is safe for concurrent
// use.
func AgentTools(tools []ports.Tool, opts *Options) []openai.AgentToolParamUnion {
	o := options(opts)
	var out []openai.AgentToolParamUnion
	each(tools, func(_ ports.Tool, spec ports.ToolSpec, params map[string]any) {
		f := openai.AgentToolParamFunction{Name: spec.Name, Description: toolcall.Description(spec, o.MaxDescription), Parameters: params}
		out = append(out, openai.AgentToolParamUnion{OfParamFunction: &f})
	})
	return out
}

// AgentToolHandlers returns the handlers of tools for the SDK's own runner
// of the Agents API, keyed by host-facing name (the names AgentTools
// gives), for AgentSessionStreamParams.ToolHandlers or
// BetaAgentSessionNewParams.ToolHandlers:
//
//	stream := client.Beta.Agents.Sessions.Stream(ctx, sessionID, openai.AgentSessionStreamParams{
//		Input: "What is 2 + 3?", ToolHandlers: openaibridge.AgentToolHandlers(tools, opts),
//	})
//
// Each handler makes one call of its tool: Confirm first (one call at a
// time, in the order the runner hands them over), at most MaxParallel
// calls of these handlers at once, then the tool, which checks the
// arguments against its whole schema and cuts its result to its caps.
// The runner hands a handler the arguments decoded into a map (so a
// number is a float64: an integer beyond 2^53 has lost its precision
// before mcpward sees it), and no call id: OnProgress gets a Call whose ID
// is "".
//
// A handler's output is what Dispatch sends for the call: its text, or,
// when the result holds an image the API takes, a list of input_text and
// input_image items (the image as a data: URL). A call that was not made
// or failed (the tool's refusal, invalid arguments, Confirm's no) is the
// text toolcall.ErrorText gives it, with no Go error: the runner would
// replace an error by a generic "Tool handler failed." the model cannot
// act on. A handler returns an error only when ctx ended (Class
// Transient, "cancelled" or "timeout"), which ends the runner's turn.
//
// The handlers are a snapshot of tools, like AgentTools: a host that
// offers a composition Fleet's live set passes a new generation's tools
// with the next turn. It is safe for concurrent use.
func AgentToolHandlers(tools []ports.Tool, opts *Options) map[string]openai.AgentToolHandler {
	o := options(opts)
	g := toolcall.NewGate(&o)
	out := make(map[string]openai.AgentToolHandler, len(tools))
	each(tools, func(t ports.Tool, spec ports.ToolSpec, _ map[string]any) {
		out[spec.Name] = func(ctx context.Context, args map[string]any) (any, error) {
			raw, err := json.Marshal(args)
			if err != nil { // not from a decoded JSON object: never sent as "{}"
				raw = json.RawMessage("null")
			}
			oc := g.Call(ctx, t, toolcall.Call{Name: spec.Name, Args: raw})
			if oc.Err != nil && ctx.Err() != nil {
				return nil, oc.Err
			}
			return agentOutput(oc, o.Structured), nil
		}
	})
	return out
}

// agentOutput returns the output of one outcome as an Agents API tool
// result: its text, or input_text and input_image items when it holds an
// image the API takes.
func agentOutput(o toolcall.Outcome, structured toolcall.Structured) any {
	if o.Err != nil {
		return text(o, structured)
	}
	parts := toolcall.Parts(o.Result, imageType, structured)
	if !slices.ContainsFunc(parts, func(p toolcall.Part) bool { return p.Image != nil }) {
		return text(o, structured)
	}
	var list []openai.InputContentParamUnion
	if o.Result.IsError {
		list = append(list, openai.InputContentParamOfParamInputText(ErrorPrefix[:len(ErrorPrefix)-1]))
	}
	for _, p := range parts {
		if p.Image != nil {
			list = append(list, openai.InputContentParamOfParamInputImage("data:"+p.Image.MIMEType+";base64,"+base64.StdEncoding.EncodeToString(p.Image.Data)))
			continue
		}
		list = append(list, openai.InputContentParamOfParamInputText(p.Text))
	}
	return list
}
