package catalog

import "github.com/mcpward/mcpward/ports"

// entrySet is what a Set holds of prompts, resources and templates.
type entrySet struct {
	prompts   []*Prompt
	resources []*Resource
	templates []*ResourceTemplate
	byPrompt  map[string]*Prompt
	byRes     map[string]*Resource
	byTpl     map[string]*ResourceTemplate
}

// addEntries joins the catalogs' prompts, resources and templates: entries
// of different catalogs that share a host-facing name (within one kind)
// are all rejected with "name_collision", like tools.
func (s *Set) addEntries() {
	var ps []*Prompt
	var rs []*Resource
	var ts []*ResourceTemplate
	for _, c := range s.cats {
		ps = append(ps, c.Prompts...)
		rs = append(rs, c.Resources...)
		ts = append(ts, c.ResourceTemplates...)
	}
	reject := func(e entryRef, kind ports.ListKind) {
		s.rejected = append(s.rejected, Rejected{Server: e.server, Kind: kind, Name: e.name, Reason: ReasonNameCollision})
	}
	e := &s.entries
	e.prompts, e.byPrompt = joinEntries(ps, func(p *Prompt) entryRef { return entryRef{p.host, p.srv.id, p.name} }, ports.ListPrompts, reject)
	e.resources, e.byRes = joinEntries(rs, func(r *Resource) entryRef { return entryRef{r.host, r.srv.id, r.uri} }, ports.ListResources, reject)
	e.templates, e.byTpl = joinEntries(ts, func(t *ResourceTemplate) entryRef { return entryRef{t.host, t.srv.id, t.tpl.raw} }, ports.ListResourceTemplates, reject)
}

type entryRef struct{ host, server, name string }

// joinEntries drops the entries whose host-facing name an entry of another
// server shares (rejecting each), and returns the rest sorted by
// host-facing name with an index.
func joinEntries[E any](es []E, ref func(E) entryRef, kind ports.ListKind, reject func(entryRef, ports.ListKind)) ([]E, map[string]E) {
	owner := make(map[string]string, len(es))
	collided := map[string]bool{}
	for _, e := range es {
		r := ref(e)
		if o, ok := owner[r.host]; ok && o != r.server {
			collided[r.host] = true
		}
		owner[r.host] = r.server
	}
	out := make([]E, 0, len(es))
	by := make(map[string]E, len(es))
	for _, e := range es {
		r := ref(e)
		if collided[r.host] {
			reject(r, kind)
			continue
		}
		out = append(out, e)
		by[r.host] = e
	}
	return sortedByHost(out, func(e E) string { return ref(e).host }), by
}

// Prompts returns every admitted prompt of every catalog, sorted by
// host-facing name, in a new slice.
func (s *Set) Prompts() []*Prompt { return append([]*Prompt(nil), s.entries.prompts...) }

// Prompt returns the prompt with host-facing name hostName.
func (s *Set) Prompt(hostName string) (*Prompt, bool) {
	p, ok := s.entries.byPrompt[hostName]
	return p, ok
}

// Resources returns every admitted resource of every catalog, sorted by
// host-facing name, in a new slice.
func (s *Set) Resources() []*Resource { return append([]*Resource(nil), s.entries.resources...) }

// Resource returns the resource with host-facing name hostName.
func (s *Set) Resource(hostName string) (*Resource, bool) {
	r, ok := s.entries.byRes[hostName]
	return r, ok
}

// ResourceTemplates returns every admitted resource template of every
// catalog, sorted by host-facing name, in a new slice.
func (s *Set) ResourceTemplates() []*ResourceTemplate {
	return append([]*ResourceTemplate(nil), s.entries.templates...)
}

// ResourceTemplate returns the template with host-facing name hostName.
func (s *Set) ResourceTemplate(hostName string) (*ResourceTemplate, bool) {
	t, ok := s.entries.byTpl[hostName]
	return t, ok
}

// Prompt returns the catalog's prompt named name on the server.
func (c *Catalog) Prompt(name string) (*Prompt, bool) {
	for _, p := range c.Prompts {
		if p.name == name {
			return p, true
		}
	}
	return nil, false
}

// ResourceTemplate returns the catalog's template whose URI template is
// uriTemplate.
func (c *Catalog) ResourceTemplate(uriTemplate string) (*ResourceTemplate, bool) {
	for _, t := range c.ResourceTemplates {
		if t.tpl.raw == uriTemplate {
			return t, true
		}
	}
	return nil, false
}
