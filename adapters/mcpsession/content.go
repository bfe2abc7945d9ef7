package mcpsession

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// MaxSessionSubscriptions bounds the URIs one session is subscribed to;
// Subscribe past it is refused (Class Refused, "too_many_subscriptions")
// without contacting the server.
const MaxSessionSubscriptions = 4096

// MaxModernSubscriptions is MaxSessionSubscriptions for a modern session,
// where the go-sdk holds one subscriptions/listen stream open per
// subscribed URI (over HTTP, a request and its connection each).
const MaxModernSubscriptions = 32

var (
	opPrompt    = op{rejected: "prompt_rejected", abandoned: "request_abandoned", fallbackClass: refusal.Protocol, fallback: "malformed_reply"}
	opRead      = op{rejected: "read_rejected", abandoned: "request_abandoned", fallbackClass: refusal.Protocol, fallback: "malformed_reply"}
	opSubscribe = op{rejected: "subscribe_rejected", abandoned: "request_abandoned", fallbackClass: refusal.Protocol, fallback: "malformed_reply"}
	opComplete  = op{rejected: "complete_rejected", abandoned: "request_abandoned", fallbackClass: refusal.Protocol, fallback: "malformed_reply"}
)

// subscriptions are the URIs a session subscribed to; only their
// notifications/resources/updated reach Signals.ResourceUpdated.
type subscriptions struct {
	mu   sync.Mutex
	uris map[string]bool
}

func (s *subscriptions) has(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uris[uri]
}

func (s *subscriptions) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.uris))
	for u := range s.uris {
		out = append(out, u)
	}
	return out
}

// resourceUpdated handles notifications/resources/updated: a subscribed
// URI is signalled. When the inbound gate dropped an update while this one
// waited (it coalesces per method, not per URI), every subscribed URI is
// signalled, since the dropped one cannot be told apart.
func (s *session) resourceUpdated(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if s.sig.ResourceUpdated == nil || !s.ready.Load() || s.closed.Load() {
		return
	}
	if s.gate != nil && s.gate.lostUpdates.Swap(false) {
		for _, u := range s.subs.all() {
			s.sig.ResourceUpdated(u)
		}
		return
	}
	if req == nil || req.Params == nil || !s.subs.has(req.Params.URI) {
		return
	}
	s.sig.ResourceUpdated(req.Params.URI)
}

// undeclared is the refusal of a request whose capability the server did
// not declare (nothing is sent).
func (s *session) undeclared(what string) error {
	return s.refuse(refusal.Unsupported, "capability_undeclared", what)
}

// GetPrompt makes one prompts/get request.
//
// Errors, besides those of List (see the package comment): Class
// Unsupported, Reason "capability_undeclared" when the server did not
// declare prompts (nothing sent); Protocol "prompt_rejected" for a
// JSON-RPC error reply (an unknown prompt, invalid arguments: the session
// stays usable); Protocol "input_required" for a multi-round-trip result;
// Protocol "malformed_reply" for a message without content; Transient
// "request_abandoned" when ctx ended in flight.
func (s *session) GetPrompt(ctx context.Context, r ports.GetPromptRequest) (ports.PromptResult, error) {
	if !s.declares(ports.ListPrompts) {
		return ports.PromptResult{}, s.undeclared("prompts")
	}
	if err := s.usable(ctx); err != nil {
		return ports.PromptResult{}, err
	}
	jctx, stop := s.join(ctx)
	params := &mcp.GetPromptParams{Name: r.Name, Arguments: r.Arguments}
	round := ports.InputRoundOf(ctx)
	if round != nil && s.modern.Load() {
		params.InputResponses, params.RequestState = roundParams(round), round.State
	}
	res, err := guarded(s.cs.GetPrompt)(jctx, params)
	if round != nil && err == nil && res.InputRequests != nil && s.modern.Load() && res.NeedsInput() {
		// The host hands the questions on (handon.go).
		err = s.handOn(round, res.InputRequests, res.RequestState)
		stop()
		if err != nil {
			return ports.PromptResult{}, roundFailure(err)
		}
		return ports.PromptResult{}, nil
	}
	for round := 1; err == nil && res.InputRequests != nil && s.modern.Load() && res.NeedsInput(); round++ {
		var responses mcp.InputResponseMap
		if responses, err = s.nextRound(jctx, round, res.InputRequests, res.RequestState); err == nil {
			res, err = guarded(s.cs.GetPrompt)(jctx, &mcp.GetPromptParams{Name: r.Name, Arguments: r.Arguments, InputResponses: responses, RequestState: res.RequestState})
		}
	}
	stop()
	if re := roundFailure(err); re != nil {
		return ports.PromptResult{}, re
	}
	if err != nil {
		values := make([]string, 0, len(r.Arguments))
		for _, v := range r.Arguments {
			values = append(values, v)
		}
		return ports.PromptResult{}, s.withServerMessage(s.failure(ctx, err, opPrompt), err, opPrompt, values)
	}
	if res.InputRequests != nil {
		return ports.PromptResult{}, s.refuse(refusal.Protocol, "input_required", "")
	}
	out := ports.PromptResult{Description: res.Description, Messages: make([]ports.PromptMessage, 0, len(res.Messages))}
	for _, m := range res.Messages {
		if m == nil || m.Content == nil {
			return ports.PromptResult{}, s.refuse(refusal.Protocol, "malformed_reply", "")
		}
		b, err := m.Content.MarshalJSON()
		if err != nil {
			return ports.PromptResult{}, s.refuse(refusal.Protocol, "malformed_reply", "")
		}
		out.Messages = append(out.Messages, ports.PromptMessage{Role: string(m.Role), Content: b})
	}
	return out, nil
}

// ReadResource makes one resources/read request. Errors as for GetPrompt
// (the capability is resources, the rejection "read_rejected"). A blob
// item is decoded (IsBlob set).
func (s *session) ReadResource(ctx context.Context, r ports.ReadRequest) (ports.ReadResult, error) {
	if !s.declares(ports.ListResources) {
		return ports.ReadResult{}, s.undeclared("resources")
	}
	if err := s.usable(ctx); err != nil {
		return ports.ReadResult{}, err
	}
	jctx, stop := s.join(ctx)
	res, err := guarded(s.cs.ReadResource)(jctx, &mcp.ReadResourceParams{URI: r.URI})
	for round := 1; err == nil && res.InputRequests != nil && s.modern.Load() && res.NeedsInput(); round++ {
		var responses mcp.InputResponseMap
		if responses, err = s.nextRound(jctx, round, res.InputRequests, res.RequestState); err == nil {
			res, err = guarded(s.cs.ReadResource)(jctx, &mcp.ReadResourceParams{URI: r.URI, InputResponses: responses, RequestState: res.RequestState})
		}
	}
	stop()
	if re := roundFailure(err); re != nil {
		return ports.ReadResult{}, re
	}
	if err != nil {
		return ports.ReadResult{}, s.withServerMessage(s.failure(ctx, err, opRead), err, opRead, nil)
	}
	if res.InputRequests != nil {
		return ports.ReadResult{}, s.refuse(refusal.Protocol, "input_required", "")
	}
	out := ports.ReadResult{Contents: make([]ports.ResourceContents, 0, len(res.Contents))}
	for _, c := range res.Contents {
		if c == nil {
			return ports.ReadResult{}, s.refuse(refusal.Protocol, "malformed_reply", "")
		}
		out.Contents = append(out.Contents, ports.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Blob: c.Blob, IsBlob: c.Blob != nil})
	}
	return out, nil
}

// Subscribe sends resources/subscribe for uri (on a modern session, opens
// a subscriptions/listen stream for it) and, once the server accepted,
// passes its notifications/resources/updated to Signals.ResourceUpdated.
// Errors as for GetPrompt (the capability is resources.subscribe, the
// rejection "subscribe_rejected"), and Class Refused,
// "too_many_subscriptions" past MaxSessionSubscriptions
// (MaxModernSubscriptions on a modern session).
func (s *session) Subscribe(ctx context.Context, uri string) error {
	if !s.identity.Subscribe {
		return s.undeclared("resources.subscribe")
	}
	limit := MaxSessionSubscriptions
	if s.modern.Load() {
		limit = MaxModernSubscriptions
	}
	s.subs.mu.Lock()
	full := !s.subs.uris[uri] && len(s.subs.uris) >= limit
	s.subs.mu.Unlock()
	if full {
		return s.refuse(refusal.Refused, "too_many_subscriptions", "")
	}
	if err := s.usable(ctx); err != nil {
		return err
	}
	jctx, stop := s.join(ctx)
	err := s.cs.Subscribe(jctx, &mcp.SubscribeParams{URI: uri})
	stop()
	if err != nil {
		return s.failure(ctx, err, opSubscribe)
	}
	s.subs.mu.Lock()
	if s.subs.uris == nil {
		s.subs.uris = map[string]bool{}
	}
	s.subs.uris[uri] = true
	s.subs.mu.Unlock()
	return nil
}

// Unsubscribe stops the updates of uri at once and sends
// resources/unsubscribe. Errors as for Subscribe.
func (s *session) Unsubscribe(ctx context.Context, uri string) error {
	if !s.identity.Subscribe {
		return s.undeclared("resources.subscribe")
	}
	s.subs.mu.Lock()
	delete(s.subs.uris, uri)
	s.subs.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return err
	}
	jctx, stop := s.join(ctx)
	err := s.cs.Unsubscribe(jctx, &mcp.UnsubscribeParams{URI: uri})
	stop()
	if err != nil {
		return s.failure(ctx, err, opSubscribe)
	}
	return nil
}

// Complete makes one completion/complete request. Errors as for GetPrompt
// (the capability is completions, the rejection "complete_rejected"), and
// Class Config, "completion_ref_invalid" for a reference type that is
// neither ref/prompt nor ref/resource (nothing sent).
func (s *session) Complete(ctx context.Context, r ports.CompleteRequest) (ports.Completion, error) {
	if !s.identity.Completions {
		return ports.Completion{}, s.undeclared("completions")
	}
	ref := &mcp.CompleteReference{Type: r.Ref.Type}
	switch r.Ref.Type {
	case ports.CompletionRefPrompt:
		ref.Name = r.Ref.Name
	case ports.CompletionRefResource:
		ref.URI = r.Ref.Name
	default:
		return ports.Completion{}, s.refuse(refusal.Config, "completion_ref_invalid", "")
	}
	if err := s.usable(ctx); err != nil {
		return ports.Completion{}, err
	}
	params := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: r.Argument, Value: r.Value}}
	if len(r.Context) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: r.Context}
	}
	jctx, stop := s.join(ctx)
	res, err := guarded(s.cs.Complete)(jctx, params)
	stop()
	if err != nil {
		return ports.Completion{}, s.failure(ctx, err, opComplete)
	}
	c := res.Completion
	return ports.Completion{Values: c.Values, Total: c.Total, HasMore: c.HasMore}, nil
}
