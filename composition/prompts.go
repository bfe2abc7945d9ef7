package composition

import (
	"context"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Reasons of the Fleet's prompt and resource methods.
const (
	// ReasonUnknownPrompt: Class Config; the server's catalog has no
	// prompt of that name.
	ReasonUnknownPrompt = "unknown_prompt"
	// ReasonUnknownTemplate: Class Config; the server's catalog has no
	// resource template of that URI template.
	ReasonUnknownTemplate = "unknown_template"
)

// ServerCatalog returns the current catalog of the server named server
// (possibly stale or partial), or the refusal that says why there is none,
// naming the server: a server the Fleet does not have (Class Config,
// ReasonUnknownServer), one without a catalog (ReasonServerUnavailable:
// failed, connecting, or not usable; see Fleet.CallServerTool), and
// after Close (Class Config, ReasonFleetClosed).
func (f *Fleet) ServerCatalog(server string) (*catalog.Catalog, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.members[server]
	switch {
	case f.closed:
		return nil, fleetClosed(server)
	case m == nil:
		return nil, refusal.New(refusal.Config, ReasonUnknownServer, server)
	case m.sv == nil:
		return nil, f.unavailableLocked(m)
	}
	if cat := m.sv.Catalog(); cat != nil {
		return cat, nil
	}
	return nil, f.unavailableLocked(m)
}

// GetPrompt gets the prompt named prompt (its name on the server) of the
// server named server with args (see catalog.Prompt.Get: unknown and
// missing arguments are refused before anything is sent, the messages
// are cut to the admission cap). Besides ServerCatalog's refusals, a
// prompt the catalog does not hold is Class Config, ReasonUnknownPrompt.
// The request is bounded like a tool call (ConnectOptions.Supervisor's
// CallTimeoutMax).
func (f *Fleet) GetPrompt(ctx context.Context, server, prompt string, args map[string]string) (ports.PromptResult, error) {
	cat, err := f.ServerCatalog(server)
	if err != nil {
		return ports.PromptResult{}, err
	}
	p, ok := cat.Prompt(prompt)
	if !ok {
		return ports.PromptResult{}, &refusal.Error{Class: refusal.Config, Reason: ReasonUnknownPrompt, Server: server,
			Detail: "the server's catalog has no prompt of that name"}
	}
	return p.Get(ctx, args)
}

// ReadResource reads uri from the server named server, whether the server
// listed it or not (see catalog.Catalog.ReadResource: the contents are cut
// to the read cap, Truncated set). Refusals as for GetPrompt.
func (f *Fleet) ReadResource(ctx context.Context, server, uri string) (ports.ReadResult, error) {
	cat, err := f.ServerCatalog(server)
	if err != nil {
		return ports.ReadResult{}, err
	}
	return cat.ReadResource(ctx, uri)
}

// ReadTemplate expands the server's resource template uriTemplate with
// vars and reads the result (see catalog.ResourceTemplate.Read: an
// expansion that leaves the template's origin is refused, Class Refused,
// catalog.ReasonTemplateOrigin). A template the catalog does not hold is
// Class Config, ReasonUnknownTemplate.
func (f *Fleet) ReadTemplate(ctx context.Context, server, uriTemplate string, vars map[string]string) (ports.ReadResult, error) {
	cat, err := f.ServerCatalog(server)
	if err != nil {
		return ports.ReadResult{}, err
	}
	t, ok := cat.ResourceTemplate(uriTemplate)
	if !ok {
		return ports.ReadResult{}, &refusal.Error{Class: refusal.Config, Reason: ReasonUnknownTemplate, Server: server,
			Detail: "the server's catalog has no resource template like that"}
	}
	return t.Read(ctx, vars)
}

// Complete asks the server named server for completions of argument arg
// of ref (a prompt by name, or a resource template by URI template) from
// value, with the values already chosen in resolved. The argument must be
// one the prompt or template declares (catalog.ReasonUnknownArgument).
// Refusals as for GetPrompt and ReadTemplate.
func (f *Fleet) Complete(ctx context.Context, server string, ref ports.CompletionRef, arg, value string, resolved map[string]string) (ports.Completion, error) {
	cat, err := f.ServerCatalog(server)
	if err != nil {
		return ports.Completion{}, err
	}
	switch ref.Type {
	case ports.CompletionRefPrompt:
		if p, ok := cat.Prompt(ref.Name); ok {
			return p.Complete(ctx, arg, value, resolved)
		}
		return ports.Completion{}, &refusal.Error{Class: refusal.Config, Reason: ReasonUnknownPrompt, Server: server,
			Detail: "the server's catalog has no prompt of that name"}
	case ports.CompletionRefResource:
		if t, ok := cat.ResourceTemplate(ref.Name); ok {
			return t.Complete(ctx, arg, value, resolved)
		}
		return ports.Completion{}, &refusal.Error{Class: refusal.Config, Reason: ReasonUnknownTemplate, Server: server,
			Detail: "the server's catalog has no resource template like that"}
	}
	return ports.Completion{}, &refusal.Error{Class: refusal.Config, Reason: "completion_ref_invalid", Server: server}
}

// Subscribe subscribes to updates of uri on the server named server;
// they reach ConnectOptions.OnResourceUpdated, coalesced (see
// supervisor.Server.Subscribe). Refusals as for ReadResource, and the
// supervisor's "too_many_subscriptions".
func (f *Fleet) Subscribe(ctx context.Context, server, uri string) error {
	cat, err := f.ServerCatalog(server)
	if err != nil {
		return err
	}
	return cat.Subscribe(ctx, uri)
}

// Unsubscribe ends a subscription Subscribe made.
func (f *Fleet) Unsubscribe(ctx context.Context, server, uri string) error {
	cat, err := f.ServerCatalog(server)
	if err != nil {
		return err
	}
	return cat.Unsubscribe(ctx, uri)
}
