package portstest

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/mcpward/mcpward/ports"
)

var _ ports.Tool = (*Tool)(nil)

// Tool is a fake ports.Tool: a fixed spec and a call func. It records the
// arguments of every call that reaches the func. Fallible method: "Call".
type Tool struct {
	Faults
	spec ports.ToolSpec
	call func(ctx context.Context, args json.RawMessage) (ports.ToolResult, error)

	mu   sync.Mutex
	args []json.RawMessage
}

// NewTool returns a Tool describing itself by spec and answering calls with
// call; a nil call returns a zero ToolResult.
func NewTool(spec ports.ToolSpec, call func(ctx context.Context, args json.RawMessage) (ports.ToolResult, error)) *Tool {
	t := &Tool{spec: cloneSpec(spec), call: call}
	t.setMethods("Call")
	return t
}

// Spec returns a copy of the spec (schemas and annotations included).
func (t *Tool) Spec() ports.ToolSpec { return cloneSpec(t.spec) }

// cloneSpec returns a deep copy of s.
func cloneSpec(s ports.ToolSpec) ports.ToolSpec {
	s.InputSchema = bytes.Clone(s.InputSchema)
	s.OutputSchema = bytes.Clone(s.OutputSchema)
	if a := s.Annotations; a != nil {
		c := *a
		for _, h := range []**bool{&c.ReadOnlyHint, &c.DestructiveHint, &c.IdempotentHint, &c.OpenWorldHint} {
			if *h != nil {
				v := **h
				*h = &v
			}
		}
		s.Annotations = &c
	}
	return s
}

// Call records a copy of args and returns the call func's answer.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (ports.ToolResult, error) {
	if err := t.hit("Call"); err != nil {
		return ports.ToolResult{}, err
	}
	t.mu.Lock()
	t.args = append(t.args, bytes.Clone(args))
	t.mu.Unlock()
	if t.call == nil {
		return ports.ToolResult{}, nil
	}
	return t.call(ctx, args)
}

// Args returns copies of the arguments of the calls that reached the call
// func, in order.
func (t *Tool) Args() []json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := slices.Clone(t.args)
	for i := range out {
		out[i] = bytes.Clone(out[i])
	}
	return out
}
