package portstest

import (
	"context"
	"slices"
	"sync"

	"github.com/mcpward/mcpward/ports"
)

// Elicitor is a scripted ports.Elicitor that records every request. Answer
// decides each answer; nil accepts a form with its defaults
// (ports.ElicitSchema.Defaults) and declines a URL. Set Answer before first
// use. Fallible method: "Elicit". Safe for concurrent use.
type Elicitor struct {
	Faults
	Answer func(ctx context.Context, r ports.ElicitRequest) (ports.ElicitResult, error)

	mu   sync.Mutex
	reqs []ports.ElicitRequest
}

// NewElicitor returns an Elicitor answering with answer (nil: the
// defaults, see Elicitor).
func NewElicitor(answer func(ctx context.Context, r ports.ElicitRequest) (ports.ElicitResult, error)) *Elicitor {
	e := &Elicitor{Answer: answer}
	e.setMethods("Elicit")
	return e
}

// Elicit records r and returns Answer's answer.
func (e *Elicitor) Elicit(ctx context.Context, r ports.ElicitRequest) (ports.ElicitResult, error) {
	e.mu.Lock()
	e.reqs = append(e.reqs, r)
	e.mu.Unlock()
	if err := e.hit("Elicit"); err != nil {
		return ports.ElicitResult{}, err
	}
	if e.Answer != nil {
		return e.Answer(ctx, r)
	}
	if r.Mode != ports.ElicitForm {
		return ports.ElicitResult{Action: ports.ElicitDecline}, nil
	}
	return ports.ElicitResult{Action: ports.ElicitAccept, Content: r.Schema.Defaults()}, nil
}

// Requests returns a copy of every request received, in order.
func (e *Elicitor) Requests() []ports.ElicitRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.reqs)
}

// Roots is a ports.Roots on a ports.RootSet whose List can be made to
// fail. Fallible method: "List". Safe for concurrent use.
type Roots struct {
	Faults
	*ports.RootSet
}

// NewRoots returns a Roots holding roots.
func NewRoots(roots ...ports.Root) *Roots {
	r := &Roots{RootSet: ports.NewRootSet(roots...)}
	r.setMethods("List")
	return r
}

// List returns the current roots, or the injected failure.
func (r *Roots) List(ctx context.Context) ([]ports.Root, error) {
	if err := r.hit("List"); err != nil {
		return nil, err
	}
	return r.RootSet.List(ctx)
}
