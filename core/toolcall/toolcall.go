// Package toolcall runs the tool calls a model asked for against the tools
// a host offered it, and prepares their results for a model API. It is the
// part the model-API bridges (the bridges/anthropic and bridges/openai
// modules) share, free of any API's types, and its Options are both
// bridges' options: each bridge turns a response's tool-use blocks into
// Calls, Run makes them (a host-supplied confirmation first, several at a
// time), and Parts and ErrorText turn each Outcome into what the bridge
// writes back. A Gate does the same for calls that come one at a time,
// from an LLM SDK's own tool runner.
package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// DefaultMaxParallel is how many calls of one response Run makes at once
// when Options.MaxParallel is 0 (or less).
const DefaultMaxParallel = 4

// Reason words of the refusals Run makes itself.
const (
	// ReasonUnknownTool is catalog.ReasonUnknownTool (Class Config): the
	// model named a tool the host did not offer (a made-up name, or one
	// from an older turn).
	//
	// Deprecated: use catalog.ReasonUnknownTool (or
	// composition.ReasonUnknownTool), the word's one definition.
	ReasonUnknownTool = catalog.ReasonUnknownTool
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
	// call_id), echoed in its result; "" where the API's tool runner does
	// not hand it over (see the bridges' runner paths).
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

// Options tune Run, a Gate and both model-API bridges (bridges/anthropic
// and bridges/openai, whose Options are this type): one value serves
// every bridge and every path of a bridge. The zero value (or nil) means
// every default.
type Options struct {
	// Confirm, when set, is asked before each call of an offered tool,
	// with the call and the tool's spec: nil lets the call go, an error
	// refuses it (it is never made; the model reads the refusal's class
	// and reason: ReasonDeclined, Class Refused, for an error that is not
	// a *refusal.Error). It is asked one call at a time, never
	// concurrently, so a host can prompt a user: Run asks in the order
	// the model gave the calls, and a call confirmed starts at once while
	// the next is asked; a Gate asks in the order the calls reach it. A
	// call of a tool that was not offered is refused without asking.
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
	// MaxDescription bounds each tool's description as the bridges hand it
	// to a model API, in characters; 0 (or less) means
	// DefaultMaxDescription (see Description). Run ignores it.
	MaxDescription int
	// OnProgress, when set, gets the progress of every call made, with
	// that call (its ID tells parallel calls apart): each call then asks
	// the server for progress, as ports.WithProgress does (the server
	// gets a progress token, and each notification restarts the call's
	// timeout window), and a progress callback the caller's ctx carries
	// is not used. It is called from the call's own goroutine:
	// concurrently for different calls, never concurrently for one, never
	// after the call returned. It must not block.
	OnProgress func(c Call, p ports.Progress)
	// Structured says how a result's structured content reaches the
	// model beside its content blocks; the zero value is
	// StructuredFallback, only when the content holds nothing (see
	// Parts). Run ignores it.
	Structured Structured
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
	byName := byName(tools)
	out := make([]Outcome, len(calls))
	sem := make(chan struct{}, parallel(o))
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
			out[i].Err = unknownTool()
			continue
		}
		if err := confirm(ctx, o, c); err != nil {
			out[i].Err = err
			continue
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
			out[i].Result, out[i].Err = call(ctx, o, t, c)
		}()
	}
	wg.Wait()
	return out, ctxErr(ctx)
}

// Gate makes tool calls one at a time as they come, under one Options:
// for an LLM SDK's own tool runner, which calls each tool on a goroutine
// of its own (Run takes a whole response's calls at once instead). Its
// Confirm is asked one call at a time (never concurrently, in the order
// the calls reach the Gate), and at most MaxParallel calls of the Gate
// run at once. A Gate is safe for concurrent use.
type Gate struct {
	opts      Options
	confirmMu sync.Mutex
	sem       chan struct{}
}

// NewGate returns a Gate of opts (nil: every default); opts is copied.
func NewGate(opts *Options) *Gate {
	g := &Gate{}
	if opts != nil {
		g.opts = *opts
	}
	g.sem = make(chan struct{}, parallel(g.opts))
	return g
}

// Options returns the Gate's options.
func (g *Gate) Options() Options { return g.opts }

// Call makes c with t (nil: a tool not offered, refused with
// catalog.ReasonUnknownTool without asking Confirm), c.Spec filled in
// from t, and returns its Outcome: Confirm first, then a slot of
// MaxParallel, then the call. A ctx that ends before the call starts
// gives its refusal (Class Transient, "cancelled" or "timeout").
func (g *Gate) Call(ctx context.Context, t ports.Tool, c Call) Outcome {
	if t != nil {
		c.Spec = t.Spec()
	}
	out := Outcome{Call: c}
	if out.Err = ctxErr(ctx); out.Err != nil {
		return out
	}
	if t == nil {
		out.Err = unknownTool()
		return out
	}
	g.confirmMu.Lock()
	err := confirm(ctx, g.opts, c)
	g.confirmMu.Unlock()
	if err != nil {
		out.Err = err
		return out
	}
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		out.Err = ctxErr(ctx)
		return out
	}
	defer func() { <-g.sem }()
	out.Result, out.Err = call(ctx, g.opts, t, c)
	return out
}

// byName indexes tools by name, the first of one name winning.
func byName(tools []ports.Tool) map[string]ports.Tool {
	m := make(map[string]ports.Tool, len(tools))
	for _, t := range tools {
		if t == nil {
			continue
		}
		if n := t.Spec().Name; m[n] == nil {
			m[n] = t
		}
	}
	return m
}

// parallel returns o's bound of calls at once.
func parallel(o Options) int {
	if o.MaxParallel <= 0 {
		return DefaultMaxParallel
	}
	return o.MaxParallel
}

// unknownTool is the refusal of a call of a tool not offered.
func unknownTool() error {
	return &refusal.Error{Class: refusal.Config, Reason: catalog.ReasonUnknownTool,
		Detail: "no tool of that name was offered"}
}

// confirm asks o.Confirm about c; its error is a *refusal.Error.
func confirm(ctx context.Context, o Options, c Call) error {
	if o.Confirm == nil {
		return nil
	}
	err := o.Confirm(ctx, c)
	if err == nil {
		return nil
	}
	var r *refusal.Error
	if !errors.As(err, &r) {
		r = &refusal.Error{Class: refusal.Refused, Reason: ReasonDeclined, Detail: "the host declined the call"}
	}
	return r
}

// call makes c with t, its progress to o.OnProgress when set.
func call(ctx context.Context, o Options, t ports.Tool, c Call) (ports.ToolResult, error) {
	if f := o.OnProgress; f != nil {
		ctx = ports.WithProgress(ctx, func(p ports.Progress) { f(c, p) })
	}
	return t.Call(ctx, c.Args)
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
