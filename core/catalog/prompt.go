package catalog

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Prompt and resource bounds.
const (
	// MaxPromptArguments is the most arguments a prompt may declare; a
	// prompt with more is rejected ("too_many_arguments").
	MaxPromptArguments = 100
	// DefaultReadCap is the most bytes of a resource read (text bytes plus
	// decoded blob bytes) admitted unless Options.ReadCap says otherwise.
	DefaultReadCap = 1 << 20
	// MaxCompletionValues is the most completion values kept (MCP's own
	// bound); MaxCompletionValueLen the longest value kept, in bytes
	// (a longer one is dropped).
	MaxCompletionValues   = 100
	MaxCompletionValueLen = 1024
)

// Rejected.Reason words of prompts, resources and templates, and refusal
// reasons of their methods.
const (
	// ReasonTooManyArguments: a prompt declaring more than
	// MaxPromptArguments arguments (Rejected.Kind "prompts").
	ReasonTooManyArguments = "too_many_arguments"
	// ReasonInvalidTemplate: a resource template whose uriTemplate is not
	// a valid RFC 6570 template (see ParseURITemplate).
	ReasonInvalidTemplate = "invalid_template"
	// ReasonUnknownArgument (Class Config): a prompts/get or completion
	// argument, or a template variable, the entry does not declare.
	ReasonUnknownArgument = "unknown_argument"
	// ReasonMissingArgument (Class Config): a required prompt argument
	// without a value.
	ReasonMissingArgument = "missing_argument"
	// ReasonTemplateOrigin (Class Refused): a template expansion whose
	// scheme or authority is not the one the template's literal text
	// fixes, or a template whose literal text fixes none.
	ReasonTemplateOrigin = "template_origin_mismatch"
	// ReasonURITooLong (Class Config): an expansion over MaxExpandedLen.
	ReasonURITooLong = "uri_too_long"
	// ReasonInvalidURI (Class Config): a URI without a scheme.
	ReasonInvalidURI = "invalid_uri"
)

// ContentCaller makes the prompt, resource and completion requests of a
// catalog's entries on the server's current session; the supervisor
// implements it. A Caller given to Build that is not a ContentCaller
// makes every such request fail with Reason "no_caller". Its errors reach
// the host unchanged.
type ContentCaller interface {
	GetPrompt(ctx context.Context, r ports.GetPromptRequest) (ports.PromptResult, error)
	ReadResource(ctx context.Context, r ports.ReadRequest) (ports.ReadResult, error)
	Subscribe(ctx context.Context, uri string) error
	Unsubscribe(ctx context.Context, uri string) error
	Complete(ctx context.Context, r ports.CompleteRequest) (ports.Completion, error)
}

// Prompt is one admitted prompt as the host sees it. Only Build makes
// Prompts; a Prompt is immutable and safe for concurrent use. Its text
// fields are server data.
type Prompt struct {
	host, name, title, desc string
	args                    []ports.PromptArgument
	srv                     *toolServer
}

// HostName returns the prompt's host-facing name, ToolName(server, name):
// the same scheme as tools, in a namespace of its own.
func (p *Prompt) HostName() string { return p.host }

// NameOnServer returns the prompt's own name, as the server listed it.
func (p *Prompt) NameOnServer() string { return p.name }

// ServerName returns NameOnServer: the prompt's name on the server, not
// the server's name.
//
// Deprecated: use NameOnServer, whose name says which name it is.
func (p *Prompt) ServerName() string { return p.NameOnServer() }

// Server returns the server id.
func (p *Prompt) Server() string { return p.srv.id }

// Title returns the prompt's title ("" when none).
func (p *Prompt) Title() string { return p.title }

// Description returns the prompt's description ("" when none).
func (p *Prompt) Description() string { return p.desc }

// Arguments returns the declared arguments, in the server's order, in a
// new slice.
func (p *Prompt) Arguments() []ports.PromptArgument { return slices.Clone(p.args) }

func (p *Prompt) declared(name string) (ports.PromptArgument, bool) {
	for _, a := range p.args {
		if a.Name == name {
			return a, true
		}
	}
	return ports.PromptArgument{}, false
}

// Get validates args against the declared arguments and makes the
// prompts/get request. Before anything is sent it refuses, Class Config,
// an argument the prompt does not declare (Reason "unknown_argument") and
// a required argument without a value (Reason "missing_argument"); an
// empty string counts as a value. The result is checked (every message a
// "user" or "assistant" role and a content object, else Class Protocol,
// Reason "malformed_result") and cut to the catalog's admission cap in
// characters like a tool result (text of text blocks, JSON of the others;
// later messages dropped, Truncated set). The caller's errors are returned
// unchanged.
func (p *Prompt) Get(ctx context.Context, args map[string]string) (_ ports.PromptResult, err error) {
	for k := range args {
		if _, ok := p.declared(k); !ok {
			return ports.PromptResult{}, p.srv.refuse(refusal.Config, ReasonUnknownArgument, p.unknownDetail())
		}
	}
	for _, a := range p.args {
		if _, ok := args[a.Name]; a.Required && !ok {
			return ports.PromptResult{}, p.srv.refuse(refusal.Config, ReasonMissingArgument,
				"the required argument "+detailName(a.Name)+" has no value")
		}
	}
	cc, err := p.srv.content()
	if err != nil {
		return ports.PromptResult{}, err
	}
	res, err := cc.GetPrompt(ctx, ports.GetPromptRequest{Name: p.name, Arguments: args})
	if err != nil {
		return ports.PromptResult{}, err
	}
	defer p.srv.recoverPanic(&err)
	out, ok := admitPrompt(res, p.srv.cap, p.srv.binCap)
	if !ok {
		return ports.PromptResult{}, p.srv.refuse(refusal.Protocol, ReasonMalformedResult, "")
	}
	return out, nil
}

// admitPrompt checks res and cuts its messages to limit characters (an
// image or audio block of a message counts against binLimit bytes
// instead, as in a tool result).
func admitPrompt(res ports.PromptResult, limit, binLimit int) (ports.PromptResult, bool) {
	arr := make([]byte, 0, 256)
	arr = append(arr, '[')
	for i, m := range res.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return ports.PromptResult{}, false
		}
		c := trimSpace(m.Content)
		if len(c) == 0 || c[0] != '{' {
			return ports.PromptResult{}, false
		}
		if i > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, c...)
	}
	arr = append(arr, ']')
	cut, _, truncated, reason := admitContent(arr, limit, binLimit)
	if reason != "" {
		return ports.PromptResult{}, false
	}
	out := ports.PromptResult{Description: res.Description, Truncated: truncated}
	if !truncated {
		out.Messages = res.Messages
		return out, true
	}
	i := 0
	eachElement(cut, func(item []byte) bool {
		out.Messages = append(out.Messages, ports.PromptMessage{Role: res.Messages[i].Role, Content: json.RawMessage(item)})
		i++
		return true
	})
	return out, true
}

// Complete asks the server for completions of the prompt's argument arg
// from value, with the values of other arguments in resolved. An argument
// the prompt does not declare (in arg or resolved) is refused, Class
// Config, Reason "unknown_argument", before anything is sent. At most
// MaxCompletionValues values of at most MaxCompletionValueLen bytes are
// kept.
func (p *Prompt) Complete(ctx context.Context, arg, value string, resolved map[string]string) (ports.Completion, error) {
	if _, ok := p.declared(arg); !ok {
		return ports.Completion{}, p.srv.refuse(refusal.Config, ReasonUnknownArgument, p.unknownDetail())
	}
	for k := range resolved {
		if _, ok := p.declared(k); !ok {
			return ports.Completion{}, p.srv.refuse(refusal.Config, ReasonUnknownArgument, p.unknownDetail())
		}
	}
	return p.srv.complete(ctx, ports.CompleteRequest{
		Ref: ports.CompletionRef{Type: ports.CompletionRefPrompt, Name: p.name}, Argument: arg, Value: value, Context: resolved,
	})
}

// unknownDetail is the Detail of an argument the prompt does not declare:
// it names the ones it does (the server's names), never the one given
// (a name the caller chose is not echoed, as for a tool's arguments).
func (p *Prompt) unknownDetail() string {
	names := make([]string, len(p.args))
	for i, a := range p.args {
		names[i] = a.Name
	}
	return "the prompt declares no argument of that name; " + declaredNames("it declares", names)
}

// complete makes a completion request and bounds its values.
func (s *toolServer) complete(ctx context.Context, r ports.CompleteRequest) (ports.Completion, error) {
	cc, err := s.content()
	if err != nil {
		return ports.Completion{}, err
	}
	c, err := cc.Complete(ctx, r)
	if err != nil {
		return ports.Completion{}, err
	}
	vals := make([]string, 0, min(len(c.Values), MaxCompletionValues))
	for _, v := range c.Values {
		if len(vals) == MaxCompletionValues {
			c.HasMore = true
			break
		}
		if len(v) <= MaxCompletionValueLen {
			vals = append(vals, v)
		}
	}
	c.Values = vals
	if c.Total < 0 {
		c.Total = 0
	}
	return c, nil
}

// content returns the server's ContentCaller or the "no_caller" refusal.
func (s *toolServer) content() (ContentCaller, error) {
	if cc, ok := s.caller.(ContentCaller); ok && cc != nil {
		return cc, nil
	}
	return nil, s.refuse(refusal.Internal, ReasonNoCaller, "")
}

func (s *toolServer) refuse(class refusal.Class, reason, detail string) *refusal.Error {
	return &refusal.Error{Class: class, Reason: reason, Server: s.id, Detail: detail}
}

// recoverPanic turns a panic while checking a server's result into Class
// Internal, Reason "panic" (like Tool.Call's boundary).
func (s *toolServer) recoverPanic(err *error) {
	if v := recover(); v != nil {
		*err = s.refuse(refusal.Internal, ReasonPanic, "a panic was recovered while checking the result")
	}
}

// wirePrompt is a listed prompt as JSON.
type wirePrompt struct {
	Name        *string           `json:"name"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Arguments   []json.RawMessage `json:"arguments"`
}

// admitPrompts makes the prompts of a catalog: a prompt that does not
// decode, has no string name or an argument without a unique name is
// rejected "invalid_entry"; one with more than MaxPromptArguments
// arguments "too_many_arguments"; a name listed before "duplicate_name";
// equal host-facing names "name_collision" (all involved).
func admitPrompts(items []json.RawMessage, srv *toolServer, reject func(ports.ListKind, string, string)) []*Prompt {
	const kind = ports.ListPrompts
	var out []*Prompt
	seen := map[string]bool{}
	for _, it := range items {
		var w wirePrompt
		if !decodeObject(it, &w) || w.Name == nil || *w.Name == "" {
			reject(kind, nameOf(it, "name"), ReasonInvalidEntry)
			continue
		}
		name := *w.Name
		if len(w.Arguments) > MaxPromptArguments {
			reject(kind, name, ReasonTooManyArguments)
			continue
		}
		args, ok := promptArgs(w.Arguments)
		if !ok {
			reject(kind, name, ReasonInvalidEntry)
			continue
		}
		if seen[name] {
			reject(kind, name, ReasonDuplicateName)
			continue
		}
		seen[name] = true
		out = append(out, &Prompt{host: ToolName(srv.id, name), name: name, title: w.Title, desc: w.Description, args: args, srv: srv})
	}
	return dropCollisions(out, (*Prompt).HostName, (*Prompt).NameOnServer, kind, reject)
}

func promptArgs(raw []json.RawMessage) ([]ports.PromptArgument, bool) {
	var args []ports.PromptArgument
	names := map[string]bool{}
	for _, r := range raw {
		var a struct {
			Name        *string `json:"name"`
			Title       string  `json:"title"`
			Description string  `json:"description"`
			Required    bool    `json:"required"`
		}
		if !decodeObject(r, &a) || a.Name == nil || *a.Name == "" || names[*a.Name] {
			return nil, false
		}
		names[*a.Name] = true
		args = append(args, ports.PromptArgument{Name: *a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
	}
	return args, true
}

// decodeObject decodes the JSON object b into v.
func decodeObject(b []byte, v any) bool {
	b = trimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Unmarshal(b, v) == nil
}

// nameOf returns the string member key of the JSON object b, or "".
func nameOf(b []byte, key string) string {
	var m map[string]json.RawMessage
	if !decodeObject(b, &m) {
		return ""
	}
	var s string
	_ = json.Unmarshal(m[key], &s)
	return s
}

// dropCollisions rejects every entry whose host-facing name another entry
// shares ("name_collision") and returns the others.
func dropCollisions[E any](es []E, host, name func(E) string, kind ports.ListKind, reject func(ports.ListKind, string, string)) []E {
	count := make(map[string]int, len(es))
	for _, e := range es {
		count[host(e)]++
	}
	return slices.DeleteFunc(es, func(e E) bool {
		if count[host(e)] > 1 {
			reject(kind, name(e), ReasonNameCollision)
			return true
		}
		return false
	})
}

// sortedByHost sorts es by host-facing name.
func sortedByHost[E any](es []E, host func(E) string) []E {
	slices.SortFunc(es, func(a, b E) int { return strings.Compare(host(a), host(b)) })
	return es
}
