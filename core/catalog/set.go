package catalog

import (
	"cmp"
	"hash/maphash"
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
	cats []*Catalog
	// order is every admitted tool, sorted by host-facing name, as the
	// index into cats and the tool's index there; index finds a tool by
	// host-facing name (ref: the index into cats, aux: the tool's),
	// names holding the names.
	order    []toolRef
	slabs    [][]Tool // slabs[i] is cats[i].slab
	names    string
	index    nameIndex
	rejected []Rejected
	entries  entrySet
}

// toolRef is a Set's reference to tool i of cats[cat].
type toolRef struct{ cat, i uint32 }

func (s *Set) tool(r toolRef) *Tool { return &s.slabs[r.cat][r.i] }

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
	owner := make(map[string]int, total) // host name -> index in cats
	collided := make(map[string]bool)
	for ci, c := range s.cats {
		s.rejected = append(s.rejected, c.Rejected...)
		for _, t := range c.Tools {
			h := t.HostName()
			if o, dup := owner[h]; dup && o != ci {
				collided[h] = true
				continue
			}
			owner[h] = ci
		}
	}
	s.slabs = make([][]Tool, len(s.cats))
	for i, c := range s.cats {
		s.slabs[i] = c.slab
	}
	s.order = make([]toolRef, 0, total)
	size := 0
	for ci, c := range s.cats {
		for _, t := range c.Tools {
			h := t.HostName()
			if collided[h] {
				s.rejected = append(s.rejected, Rejected{Server: c.Server, Kind: ports.ListTools, Name: t.NameOnServer(), Reason: ReasonNameCollision})
				continue
			}
			if owner[h] != ci {
				continue
			}
			s.order = append(s.order, toolRef{uint32(ci), t.i})
			size += len(h)
		}
	}
	owner, collided = nil, nil
	slices.SortFunc(s.order, func(a, b toolRef) int { return cmp.Compare(s.tool(a).HostName(), s.tool(b).HostName()) })
	s.order = slices.Clip(s.order)
	var str strBuilder
	str.Grow(size)
	spans := make([]span, len(s.order))
	for j, r := range s.order {
		spans[j] = str.add(s.tool(r).HostName())
	}
	s.names = str.String()
	s.index = newNameIndex(len(s.order))
	for j, sp := range spans {
		s.index.put(s.names[sp.off:sp.off+sp.n], sp.off, s.order[j].cat, s.order[j].i)
	}
	s.addEntries()
	sortRejected(s.rejected)
	return s
}

// Tool returns the tool with host-facing name hostName.
//
// One naming rule holds for Set and Catalog alike: Tool and Tools give
// *Tool (a ports.Tool that also tells its name on the server, narrowed
// paths and result cap: what a host inspects), ModelTools gives the same
// tools as []ports.Tool, the type a host's generic tool slot and the
// model-API bridges take: what a host offers its model.
func (s *Set) Tool(hostName string) (*Tool, bool) {
	// nameIndex.get, by hand: this is every call's lookup.
	slots := s.index.slots
	if len(slots) == 0 || len(hostName) > 0xff {
		return nil, false
	}
	h := maphash.String(s.index.seed, hostName)
	key := slotKey(h, len(hostName))
	mask := uint64(len(slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		x := &slots[i]
		if x.ref == 0 {
			return nil, false
		}
		if x.key == key && s.names[x.off:x.off+uint32(len(hostName))] == hostName {
			return &s.slabs[x.ref-1][x.aux], true
		}
	}
}

// Tools returns every admitted tool, sorted by host-facing name, in a new
// slice (see Tool for the naming rule).
func (s *Set) Tools() []*Tool {
	out := make([]*Tool, len(s.order))
	for i, r := range s.order {
		out[i] = s.tool(r)
	}
	return out
}

// ModelTools returns every admitted tool as a ports.Tool, sorted by
// host-facing name, in a new slice: the tools a host offers its model
// (Tools gives the same tools as *Tool).
func (s *Set) ModelTools() []ports.Tool {
	out := make([]ports.Tool, len(s.order))
	for i, r := range s.order {
		out[i] = s.tool(r)
	}
	return out
}

// HostTools returns ModelTools.
//
// Deprecated: use ModelTools, whose name says what the list is for (both
// lists hold the tools under their host-facing names).
func (s *Set) HostTools() []ports.Tool { return s.ModelTools() }

// Catalogs returns the catalogs, in the order given to NewSet, in a new
// slice.
func (s *Set) Catalogs() []*Catalog { return slices.Clone(s.cats) }

// Rejected returns every rejected entry (those given to NewSet, the
// catalogs' own and the cross-server collisions), sorted by Server, Kind,
// Name and Reason, in a new slice.
func (s *Set) Rejected() []Rejected { return slices.Clone(s.rejected) }
