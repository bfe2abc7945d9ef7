package portstest

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/mcpward/mcpward/ports"
)

// ErrUnsupported is the default error of a content method whose capability
// the scripted identity does not declare (prompts, resources,
// resources.subscribe, completions).
var ErrUnsupported = errors.New("portstest: capability not declared")

// ContentScript scripts the content methods of a Session. A nil handler
// returns a zero result.
type ContentScript struct {
	GetPrompt    func(ctx context.Context, r ports.GetPromptRequest) (ports.PromptResult, error)
	ReadResource func(ctx context.Context, r ports.ReadRequest) (ports.ReadResult, error)
	Complete     func(ctx context.Context, r ports.CompleteRequest) (ports.Completion, error)
	// Subscribe, when non-nil, decides a Subscribe (and Unsubscribe when
	// sub is false) of uri; nil accepts.
	Subscribe func(ctx context.Context, uri string, sub bool) error
	// Unsupported makes the error of a method whose capability is not
	// declared; nil returns ErrUnsupported. The port asks for a
	// *refusal.Error of Class Unsupported, which portstest cannot build.
	Unsupported func(method string) error
}

// contentState is what a Session records of its content methods.
type contentState struct {
	subs    map[string]bool
	prompts []ports.GetPromptRequest
	reads   []ports.ReadRequest
	comps   []ports.CompleteRequest
}

func (s *Session) unsupported(method string) error {
	if s.script.Content.Unsupported != nil {
		return s.script.Content.Unsupported(method)
	}
	return ErrUnsupported
}

// begin checks a content method's fault, the session and ctx.
func (s *Session) begin(ctx context.Context, method string, declared bool) error {
	if err := s.hit(method); err != nil {
		return err
	}
	if s.Closed() {
		return ErrSessionClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !declared {
		return s.unsupported(method)
	}
	return nil
}

func (s *Session) declaresKind(k ports.ListKind) bool {
	return slices.Contains(s.script.Identity.Declared, k)
}

// GetPrompt records r and runs the script's GetPrompt. It fails without
// contact when the identity does not declare prompts.
func (s *Session) GetPrompt(ctx context.Context, r ports.GetPromptRequest) (ports.PromptResult, error) {
	if err := s.begin(ctx, "GetPrompt", s.declaresKind(ports.ListPrompts)); err != nil {
		return ports.PromptResult{}, err
	}
	s.mu.Lock()
	r.Arguments = maps.Clone(r.Arguments)
	s.content.prompts = append(s.content.prompts, r)
	s.mu.Unlock()
	if s.script.Content.GetPrompt == nil {
		return ports.PromptResult{}, nil
	}
	return s.script.Content.GetPrompt(ctx, r)
}

// ReadResource records r and runs the script's ReadResource. It fails
// without contact when the identity does not declare resources.
func (s *Session) ReadResource(ctx context.Context, r ports.ReadRequest) (ports.ReadResult, error) {
	if err := s.begin(ctx, "ReadResource", s.declaresKind(ports.ListResources)); err != nil {
		return ports.ReadResult{}, err
	}
	s.mu.Lock()
	s.content.reads = append(s.content.reads, r)
	s.mu.Unlock()
	if s.script.Content.ReadResource == nil {
		return ports.ReadResult{}, nil
	}
	return s.script.Content.ReadResource(ctx, r)
}

// Subscribe records a subscription of uri (when the script accepts it).
// It fails without contact when the identity does not declare Subscribe.
func (s *Session) Subscribe(ctx context.Context, uri string) error {
	return s.subscribe(ctx, "Subscribe", uri, true)
}

// Unsubscribe removes a subscription of uri (when the script accepts it).
func (s *Session) Unsubscribe(ctx context.Context, uri string) error {
	return s.subscribe(ctx, "Unsubscribe", uri, false)
}

func (s *Session) subscribe(ctx context.Context, method, uri string, sub bool) error {
	if err := s.begin(ctx, method, s.script.Identity.Subscribe); err != nil {
		return err
	}
	if f := s.script.Content.Subscribe; f != nil {
		if err := f(ctx, uri, sub); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sub {
		if s.content.subs == nil {
			s.content.subs = map[string]bool{}
		}
		s.content.subs[uri] = true
	} else {
		delete(s.content.subs, uri)
	}
	return nil
}

// Complete records r and runs the script's Complete. It fails without
// contact when the identity does not declare Completions.
func (s *Session) Complete(ctx context.Context, r ports.CompleteRequest) (ports.Completion, error) {
	if err := s.begin(ctx, "Complete", s.script.Identity.Completions); err != nil {
		return ports.Completion{}, err
	}
	s.mu.Lock()
	r.Context = maps.Clone(r.Context)
	s.content.comps = append(s.content.comps, r)
	s.mu.Unlock()
	if s.script.Content.Complete == nil {
		return ports.Completion{}, nil
	}
	return s.script.Content.Complete(ctx, r)
}

// FireResourceUpdated delivers a notifications/resources/updated for uri
// as the server's would, and reports whether it was delivered: only for a
// subscribed uri, before Close, with Signals.ResourceUpdated set.
func (s *Session) FireResourceUpdated(uri string) bool {
	s.mu.Lock()
	ok := !s.closed && s.content.subs[uri]
	s.mu.Unlock()
	if !ok || s.signals.ResourceUpdated == nil {
		return false
	}
	s.signals.ResourceUpdated(uri)
	return true
}

// Subscriptions returns the subscribed URIs, sorted.
func (s *Session) Subscriptions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.content.subs))
}

// PromptRequests returns the GetPrompts that reached the server, in order.
func (s *Session) PromptRequests() []ports.GetPromptRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.content.prompts)
}

// ReadRequests returns the ReadResources that reached the server, in
// order.
func (s *Session) ReadRequests() []ports.ReadRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.content.reads)
}

// CompleteRequests returns the Completes that reached the server, in
// order.
func (s *Session) CompleteRequests() []ports.CompleteRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.content.comps)
}
