package catalog

import (
	"cmp"
	"slices"

	"github.com/mcpward/mcpward/ports"
)

// KindServer is the Rejected.Kind of a whole server that was not connected
// (refused authentication, an SSE or WebSocket definition, ...); its Name
// is the server id.
const KindServer ports.ListKind = "server"

// Set is the host's whole catalog across servers: every admitted tool of
// every catalog under its host-facing name. It is immutable and safe for
// concurrent use.
type Set struct {
	cats     []*Catalog
	tools    []*Tool // sorted by host-facing name
	byHost   map[string]*Tool
	rejected []Rejected
	entries  entrySet
}

// NewSet makes the Set of cats (nil entries are skipped) plus rejected,
// the entries rejected before any catalog existed (Kind KindServer and the
// like). Tools of different catalogs that share a host-facing name are
// all rejected with "name_collision"; every catalog's own Rejected entries
// are included. NewSet copies what it keeps; the catalogs are not
// modified.
func NewSet(cats []*Catalog, rejected []Rejected) *Set {
	s := &Set{}
	total := 0
	for _, c := range cats {
		if c != nil {
			s.cats = append(s.cats, c)
			total += len(c.Tools)
		}
	}
	s.rejected = slices.Clone(rejected)
	owner := make(map[string]*Catalog, total)
	collided := make(map[string]bool)
	s.byHost = make(map[string]*Tool, total)
	for _, c := range s.cats {
		s.rejected = append(s.rejected, c.Rejected...)
		for _, t := range c.Tools {
			if o, dup := owner[t.host]; dup && o != c {
				collided[t.host] = true
				continue
			}
			owner[t.host] = c
			s.byHost[t.host] = t
		}
	}
	for _, c := range s.cats {
		for _, t := range c.Tools {
			if collided[t.host] {
				s.rejected = append(s.rejected, Rejected{Server: c.Server, Kind: ports.ListTools, Name: t.name, Reason: ReasonNameCollision})
			}
		}
	}
	for h := range collided {
		delete(s.byHost, h)
	}
	s.tools = make([]*Tool, 0, len(s.byHost))
	for _, t := range s.byHost {
		s.tools = append(s.tools, t)
	}
	slices.SortFunc(s.tools, func(a, b *Tool) int { return cmp.Compare(a.host, b.host) })
	s.addEntries()
	sortRejected(s.rejected)
	return s
}

// Tool returns the tool with host-facing name hostName.
//
// One naming rule holds for Set and Catalog alike: Tool and Tools give
// *Tool (the ports.Tool plus its server name, narrowed paths and result
// cap), HostTools gives the same tools as []ports.Tool for a host's
// generic tool slot.
func (s *Set) Tool(hostName string) (*Tool, bool) {
	t, ok := s.byHost[hostName]
	return t, ok
}

// Tools returns every admitted tool, sorted by host-facing name, in a new
// slice (see Tool for the naming rule).
func (s *Set) Tools() []*Tool { return slices.Clone(s.tools) }

// HostTools returns every admitted tool as a ports.Tool, sorted by
// host-facing name, in a new slice.
func (s *Set) HostTools() []ports.Tool {
	out := make([]ports.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t
	}
	return out
}

// Catalogs returns the catalogs, in the order given to NewSet, in a new
// slice.
func (s *Set) Catalogs() []*Catalog { return slices.Clone(s.cats) }

// Rejected returns every rejected entry (those given to NewSet, the
// catalogs' own and the cross-server collisions), sorted by Server, Kind,
// Name and Reason, in a new slice.
func (s *Set) Rejected() []Rejected { return slices.Clone(s.rejected) }
