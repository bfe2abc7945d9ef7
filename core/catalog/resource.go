package catalog

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Resource is one admitted resource as the host sees it. Only Build makes
// Resources; a Resource is immutable and safe for concurrent use. Its text
// fields are server data.
type Resource struct {
	host, uri, name, title, desc, mime string
	size                               int64
	srv                                *toolServer
}

// HostName returns the resource's host-facing name, ToolName(server, uri)
// (a resource is identified by its URI; names need not be unique).
func (r *Resource) HostName() string { return r.host }

// URI returns the resource's URI.
func (r *Resource) URI() string { return r.uri }

// Server returns the server id.
func (r *Resource) Server() string { return r.srv.id }

// Name returns the resource's name ("" when none).
func (r *Resource) Name() string { return r.name }

// Title returns the resource's title ("" when none).
func (r *Resource) Title() string { return r.title }

// Description returns the resource's description ("" when none).
func (r *Resource) Description() string { return r.desc }

// MIMEType returns the declared MIME type ("" when none).
func (r *Resource) MIMEType() string { return r.mime }

// Size returns the declared size in bytes (0 when none); it is the
// server's claim, never trusted for a bound.
func (r *Resource) Size() int64 { return r.size }

// Read reads the resource (see Catalog.ReadResource).
func (r *Resource) Read(ctx context.Context) (ports.ReadResult, error) {
	return r.srv.read(ctx, r.uri)
}

// Subscribe asks the server for updates of the resource (see
// Catalog.Subscribe).
func (r *Resource) Subscribe(ctx context.Context) error { return r.srv.subscribe(ctx, r.uri, true) }

// Unsubscribe stops the updates Subscribe asked for.
func (r *Resource) Unsubscribe(ctx context.Context) error {
	return r.srv.subscribe(ctx, r.uri, false)
}

// ResourceTemplate is one admitted resource template. Only Build makes
// them; a ResourceTemplate is immutable and safe for concurrent use.
type ResourceTemplate struct {
	host, name, title, desc, mime string
	tpl                           *URITemplate
	srv                           *toolServer
}

// HostName returns the template's host-facing name,
// ToolName(server, uriTemplate).
func (t *ResourceTemplate) HostName() string { return t.host }

// Server returns the server id.
func (t *ResourceTemplate) Server() string { return t.srv.id }

// URITemplate returns the template as the server listed it.
func (t *ResourceTemplate) URITemplate() string { return t.tpl.String() }

// Vars returns the template's variable names, in order of first use.
func (t *ResourceTemplate) Vars() []string { return t.tpl.Vars() }

// Name returns the template's name ("" when none).
func (t *ResourceTemplate) Name() string { return t.name }

// Title returns the template's title ("" when none).
func (t *ResourceTemplate) Title() string { return t.title }

// Description returns the template's description ("" when none).
func (t *ResourceTemplate) Description() string { return t.desc }

// MIMEType returns the declared MIME type ("" when none).
func (t *ResourceTemplate) MIMEType() string { return t.mime }

// Expand expands the template with vars. It refuses, with a
// *refusal.Error, a variable the template does not have (Class Config,
// "unknown_argument"), an expansion whose scheme or authority differ from
// those the template's literal text fixes, or a template whose literal
// text fixes none (Class Refused, "template_origin_mismatch"), and an
// expansion over MaxExpandedLen (Class Config, "uri_too_long").
func (t *ResourceTemplate) Expand(vars map[string]string) (string, error) {
	for k := range vars {
		if !t.hasVar(k) {
			return "", t.srv.refuse(refusal.Config, ReasonUnknownArgument, t.unknownDetail())
		}
	}
	u, reason := t.tpl.ExpandSameOrigin(vars)
	switch reason {
	case "":
		return u, nil
	case ReasonTemplateOrigin:
		return "", t.srv.refuse(refusal.Refused, reason, "the expansion leaves the template's origin")
	}
	return "", t.srv.refuse(refusal.Config, reason, "")
}

func (t *ResourceTemplate) hasVar(name string) bool {
	for _, v := range t.tpl.vars {
		if v == name {
			return true
		}
	}
	return false
}

// Read expands the template (see Expand) and reads the resulting URI (see
// Catalog.ReadResource).
func (t *ResourceTemplate) Read(ctx context.Context, vars map[string]string) (ports.ReadResult, error) {
	u, err := t.Expand(vars)
	if err != nil {
		return ports.ReadResult{}, err
	}
	return t.srv.read(ctx, u)
}

// unknownDetail is the Detail of a variable the template does not have:
// it names the ones it has, never the one given.
func (t *ResourceTemplate) unknownDetail() string {
	return "the template has no variable of that name; " + declaredNames("it has", t.tpl.Vars())
}

// Complete asks the server for completions of the template variable v
// from value, with the values of other variables in resolved. A variable
// the template does not have is refused, Class Config,
// "unknown_argument", before anything is sent. Values are bounded like
// Prompt.Complete's.
func (t *ResourceTemplate) Complete(ctx context.Context, v, value string, resolved map[string]string) (ports.Completion, error) {
	if !t.hasVar(v) {
		return ports.Completion{}, t.srv.refuse(refusal.Config, ReasonUnknownArgument, t.unknownDetail())
	}
	for k := range resolved {
		if !t.hasVar(k) {
			return ports.Completion{}, t.srv.refuse(refusal.Config, ReasonUnknownArgument, t.unknownDetail())
		}
	}
	return t.srv.complete(ctx, ports.CompleteRequest{
		Ref: ports.CompletionRef{Type: ports.CompletionRefResource, Name: t.tpl.String()}, Argument: v, Value: value, Context: resolved,
	})
}

// ReadResource reads uri from the server, whether or not it is listed:
// a URI without a scheme is refused (Class Config, "invalid_uri") before
// anything is sent. The contents are cut to the catalog's read cap
// (Options.ReadCap, DefaultReadCap) in bytes, text bytes and decoded blob
// bytes alike: the text that crosses the cap is cut at a character
// boundary, a blob that crosses it is left out, later items are left out,
// and Truncated is set. The caller's errors are returned unchanged.
func (c *Catalog) ReadResource(ctx context.Context, uri string) (ports.ReadResult, error) {
	return c.srv.read(ctx, uri)
}

// Subscribe asks the server for notifications/resources/updated of uri
// (delivered by the supervisor, see supervisor.Options.OnResourceUpdated);
// a URI without a scheme is refused (Class Config, "invalid_uri").
func (c *Catalog) Subscribe(ctx context.Context, uri string) error {
	return c.srv.subscribe(ctx, uri, true)
}

// Unsubscribe stops the updates Subscribe asked for.
func (c *Catalog) Unsubscribe(ctx context.Context, uri string) error {
	return c.srv.subscribe(ctx, uri, false)
}

func (s *toolServer) checkURI(uri string) error {
	if _, _, _, ok := uriOrigin(uri); !ok || len(uri) > MaxExpandedLen {
		return s.refuse(refusal.Config, ReasonInvalidURI, "not an absolute URI")
	}
	return nil
}

func (s *toolServer) read(ctx context.Context, uri string) (_ ports.ReadResult, err error) {
	if err := s.checkURI(uri); err != nil {
		return ports.ReadResult{}, err
	}
	cc, err := s.content()
	if err != nil {
		return ports.ReadResult{}, err
	}
	res, err := cc.ReadResource(ctx, ports.ReadRequest{URI: uri})
	if err != nil {
		return ports.ReadResult{}, err
	}
	defer s.recoverPanic(&err)
	return admitRead(res, s.readCap), nil
}

// admitRead cuts res to limit bytes.
func admitRead(res ports.ReadResult, limit int) ports.ReadResult {
	used := 0
	out := ports.ReadResult{Contents: make([]ports.ResourceContents, 0, len(res.Contents))}
	for _, c := range res.Contents {
		n := len(c.Text)
		if c.IsBlob {
			n = len(c.Blob)
		}
		if used+n <= limit {
			out.Contents = append(out.Contents, c)
			used += n
			continue
		}
		out.Truncated = true
		if rest := limit - used; !c.IsBlob && rest > 0 {
			if c.Text = cutUTF8(c.Text, rest); c.Text != "" {
				out.Contents = append(out.Contents, c)
			}
		}
		break
	}
	return out
}

// cutUTF8 returns the longest prefix of s of at most n bytes that ends at
// a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (s *toolServer) subscribe(ctx context.Context, uri string, sub bool) error {
	if err := s.checkURI(uri); err != nil {
		return err
	}
	cc, err := s.content()
	if err != nil {
		return err
	}
	if sub {
		return cc.Subscribe(ctx, uri)
	}
	return cc.Unsubscribe(ctx, uri)
}

// admitResources makes the resources of a catalog: one that does not
// decode or has no string uri with a scheme is rejected "invalid_entry", a
// uri listed before "duplicate_name", equal host-facing names
// "name_collision" (all involved). Rejected.Name is the URI.
func admitResources(items []json.RawMessage, srv *toolServer, reject func(ports.ListKind, string, string)) []*Resource {
	const kind = ports.ListResources
	var out []*Resource
	seen := map[string]bool{}
	for _, it := range items {
		var w struct {
			URI         *string `json:"uri"`
			Name        string  `json:"name"`
			Title       string  `json:"title"`
			Description string  `json:"description"`
			MIMEType    string  `json:"mimeType"`
			Size        int64   `json:"size"`
		}
		if !decodeObject(it, &w) || w.URI == nil {
			reject(kind, nameOf(it, "uri"), ReasonInvalidEntry)
			continue
		}
		uri := *w.URI
		if srv.checkURI(uri) != nil {
			reject(kind, uri, ReasonInvalidEntry)
			continue
		}
		if seen[uri] {
			reject(kind, uri, ReasonDuplicateName)
			continue
		}
		seen[uri] = true
		out = append(out, &Resource{host: ToolName(srv.id, uri), uri: uri, name: w.Name, title: w.Title,
			desc: w.Description, mime: w.MIMEType, size: max(w.Size, 0), srv: srv})
	}
	return dropCollisions(out, (*Resource).HostName, (*Resource).URI, kind, reject)
}

// admitTemplates makes the resource templates of a catalog: one that does
// not decode or has no string uriTemplate is rejected "invalid_entry", one
// whose uriTemplate does not parse "invalid_template", a template listed
// before "duplicate_name", equal host-facing names "name_collision".
// Rejected.Name is the URI template.
func admitTemplates(items []json.RawMessage, srv *toolServer, reject func(ports.ListKind, string, string)) []*ResourceTemplate {
	const kind = ports.ListResourceTemplates
	var out []*ResourceTemplate
	seen := map[string]bool{}
	for _, it := range items {
		var w struct {
			URITemplate *string `json:"uriTemplate"`
			Name        string  `json:"name"`
			Title       string  `json:"title"`
			Description string  `json:"description"`
			MIMEType    string  `json:"mimeType"`
		}
		if !decodeObject(it, &w) || w.URITemplate == nil {
			reject(kind, nameOf(it, "uriTemplate"), ReasonInvalidEntry)
			continue
		}
		raw := *w.URITemplate
		tpl, ok := ParseURITemplate(raw)
		if !ok {
			reject(kind, raw, ReasonInvalidTemplate)
			continue
		}
		if seen[raw] {
			reject(kind, raw, ReasonDuplicateName)
			continue
		}
		seen[raw] = true
		out = append(out, &ResourceTemplate{host: ToolName(srv.id, raw), name: w.Name, title: w.Title,
			desc: w.Description, mime: w.MIMEType, tpl: tpl, srv: srv})
	}
	return dropCollisions(out, (*ResourceTemplate).HostName, (*ResourceTemplate).URITemplate, kind, reject)
}
