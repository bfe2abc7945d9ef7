// Package toolcall runs the tool calls a model asked for against the tools
// a host offered it, and prepares their results for a model API. It is the
// part the model-API bridges (the bridges/anthropic and bridges/openai
// modules) share, free of any API's types: each bridge turns a response's
// tool-use blocks into Calls, Run makes them (a host-supplied confirmation
// first, several at a time), and Parts and ErrorText turn each Outcome
// into what the bridge writes back.
package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// DefaultMaxParallel is how many calls of one response Run makes at once
// when Options.MaxParallel is 0 (or less).
const DefaultMaxParallel = 4

// Reason words of the refusals Run makes itself.
const (
	// ReasonUnknownTool (Class Config): the model named a tool the host
	// did not offer (a made-up name, or one from an older turn).
	ReasonUnknownTool = "unknown_tool"
	// ReasonDeclined (Class Refused): the host's Confirm said no with an
	// error that is not a *refusal.Error (one that is keeps its own class
	// and reason).
	ReasonDeclined = "declined"
	// ReasonCancelled and ReasonTimeout (Class Transient): the context
	// ended before the call started.
	ReasonCancelled = "cancelled"
	ReasonTimeout   = "timeout"
	// ReasonUnclassified (Class Internal): a tool failed with an error
	// that is not a *refusal.Error (a host's own ports.Tool, say).
	ReasonUnclassified = "unclassified"
)

// Call is one tool call a model asked for.
type Call struct {
	// ID is the API's id of the call (a tool_use id, a tool call id, a
	// call_id), echoed in its result.
	ID string
	// Name is the tool's host-facing name as the model gave it.
	Name string
	// Args are the arguments as the model gave them: untrusted, possibly
	// not even JSON (the tool's Call refuses them by name then).
	Args json.RawMessage
	// Spec is the offered tool's spec (its Annotations included); the zero
	// ToolSpec when no offered tool has Name.
	Spec ports.ToolSpec
}

// Options tune Run. The zero value (or nil) means every default.
type Options struct {
	// Confirm, when set, is asked before each call of an offered tool,
	// with the call and the tool's spec: nil lets the call go, an error
	// refuses it (it is never made; the model reads the refusal's class
	// and reason: ReasonDeclined, Class Refused, for an error that is not
	// a *refusal.Error). Run asks one call at a time, in the order the
	// model gave them, never concurrently, so a host can prompt a user;
	// a call confirmed starts at once, while the next is asked. A call of
	// a tool that was not offered is refused without asking.
	//
	// Spec.Annotations are the server's hints, not facts: a server can
	// claim readOnlyHint for a tool that deletes files. A host that lets
	// tools marked read-only through unasked trusts the server's word;
	// it should do so only for servers it trusts that far.
	Confirm func(ctx context.Context, c Call) error
	// MaxParallel bounds the calls made at once; 0 (or less) means
	// DefaultMaxParallel, 1 one after another. The calls of one model
	// response are independent by the APIs' contract (the model wants
	// all their results at once), so they may run in any order.
	MaxParallel int
}

// Outcome is what became of one Call.
type Outcome struct {
	// Call is the call, its Spec filled in.
	Call Call
	// Result is the tool's result when Err is nil.
	Result ports.ToolResult
	// Err is why there is no result: the tool's refusal or failure, the
	// host's refusal in Confirm, an unknown tool, or the context's end.
	Err error
}

// Run makes calls with tools (the set offered to the model; the first of
// two tools with one name wins) and returns one Outcome per call, in the
// calls' order, each call's Err set when it was not made or failed. It
// returns when every call started has returned. Its error is non-nil
// only when ctx ended (a *refusal.Error, Class Transient, Reason
// "cancelled" or "timeout"): the calls not started then carry that
// refusal, and the host should stop its loop. Run is safe for concurrent
// use; the tools are called as their ports.Tool contract says (a
// catalog tool of an older generation of a composition Fleet is refused
// by name when its server's tool changed).
func Run(ctx context.Context, tools []ports.Tool, calls []Call, opts *Options) ([]Outcome, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	parallel := o.MaxParallel
	if parallel <= 0 {
		parallel = DefaultMaxParallel
	}
	byName := make(map[string]ports.Tool, len(tools))
	for _, t := range tools {
		if t == nil {
			continue
		}
		if n := t.Spec().Name; byName[n] == nil {
			byName[n] = t
		}
	}
	out := make([]Outcome, len(calls))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, c := range calls {
		t := byName[c.Name]
		if t != nil {
			c.Spec = t.Spec()
		}
		out[i].Call = c
		if err := ctxErr(ctx); err != nil {
			out[i].Err = err
			continue
		}
		if t == nil {
			out[i].Err = &refusal.Error{Class: refusal.Config, Reason: ReasonUnknownTool,
				Detail: "no tool of that name was offered"}
			continue
		}
		if o.Confirm != nil {
			if err := o.Confirm(ctx, c); err != nil {
				var r *refusal.Error
				if !errors.As(err, &r) {
					r = &refusal.Error{Class: refusal.Refused, Reason: ReasonDeclined, Detail: "the host declined the call"}
				}
				out[i].Err = r
				continue
			}
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			out[i].Err = ctxErr(ctx)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i].Result, out[i].Err = t.Call(ctx, c.Args)
		}()
	}
	wg.Wait()
	return out, ctxErr(ctx)
}

// ctxErr returns ctx's end as a refusal, or nil while it lasts.
func ctxErr(ctx context.Context) error {
	switch err := ctx.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return refusal.New(refusal.Transient, ReasonTimeout, "")
	default:
		return refusal.New(refusal.Transient, ReasonCancelled, "")
	}
}
