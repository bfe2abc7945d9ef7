package catalog

import (
	"bytes"
	"hash/maphash"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpward/mcpward/ports"
)

// schemaEntry is one narrowed schema, shared by every tool of a catalog
// whose narrowed schema has the same bytes, with its validator, compiled
// on the first call of any of them.
type schemaEntry struct {
	b []byte
	v atomic.Pointer[vnode]
}

// validator returns the compiled validator of e, compiling it first if no
// call has yet. Compiling is pure: concurrent first calls may each compile
// and one of the equal results is kept.
func (e *schemaEntry) validator() (*vnode, error) {
	if v := e.v.Load(); v != nil {
		return v, nil
	}
	v, err := compileSchema(e.b)
	if err != nil {
		return nil, err
	}
	e.v.CompareAndSwap(nil, v)
	return e.v.Load(), nil
}

// Packing bounds.
const (
	// arenaChunk is the size of the blocks narrowed schemas are packed
	// into, so that thousands of small schemas cost neither an allocation
	// each nor the rounding of each to a size class.
	arenaChunk = 64 << 10
	// slabSize is the number of schemaEntry values allocated at once.
	slabSize = 128
	// parallelMin is the number of tools per goroutine below which Build
	// narrows on one goroutine.
	parallelMin = 512
)

// packer narrows schemas and packs the results: identical narrowed
// schemas are stored once, all of them in shared blocks.
type packer struct {
	narrower
	arena []byte
	slab  []schemaEntry
	seed  maphash.Seed
	seen  map[uint64]*schemaEntry
}

func newPacker(seed maphash.Seed) *packer {
	return &packer{seed: seed, seen: make(map[uint64]*schemaEntry)}
}

// pack narrows schema and returns its entry and the dropped paths.
func (p *packer) pack(schema map[string]any) (*schemaEntry, []string) {
	p.reset()
	p.root(schema)
	h := maphash.Bytes(p.seed, p.buf)
	prev, hashed := p.seen[h]
	if hashed && bytes.Equal(prev.b, p.buf) {
		return prev, p.dropped
	}
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]schemaEntry, 0, slabSize)
	}
	p.slab = p.slab[:len(p.slab)+1]
	e := &p.slab[len(p.slab)-1]
	e.b = p.intern(p.buf)
	if !hashed {
		p.seen[h] = e
	}
	return e, p.dropped
}

// intern copies b into the arena (starting a new block when it is full; a
// large b gets its own) and returns the copy with its capacity clipped.
func (p *packer) intern(b []byte) []byte {
	if len(b) > arenaChunk/4 {
		return slices.Clip(bytes.Clone(b))
	}
	if cap(p.arena)-len(p.arena) < len(b) {
		p.arena = make([]byte, 0, arenaChunk)
	}
	start := len(p.arena)
	p.arena = append(p.arena, b...)
	return p.arena[start:len(p.arena):len(p.arena)]
}

// objectSchema returns the inputSchema v as a map when it is one Build
// admits: a JSON object whose "type", when present, is "object".
func objectSchema(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if t, has := m["type"]; has && t != any("object") {
		return nil, false
	}
	return m, true
}

// preparedTools is the narrowing Discover did while it drained the tools
// list: one entry per tool of Lists.Tools, nil for a tool whose schema
// Build rejects.
type preparedTools struct {
	// first is &Lists.Tools[0] as Discover returned it, so that Build
	// uses the entries only for that very slice.
	first   *ports.ToolItem
	entries []*schemaEntry
	dropped [][]string
}

// matches reports whether p was prepared for tools.
func (p *preparedTools) matches(tools []ports.ToolItem) bool {
	return p != nil && len(tools) > 0 && len(p.entries) == len(tools) && p.first == &tools[0]
}

// preparer narrows the tools of each page on its own goroutine while
// Discover fetches the next page, while the page's decoded schemas are
// still warm in the cache.
type preparer struct {
	pages chan []ports.ToolItem
	done  chan struct{}
	out   preparedTools
}

func startPreparer() *preparer {
	pr := &preparer{pages: make(chan []ports.ToolItem, 8), done: make(chan struct{})}
	go func() {
		defer close(pr.done)
		p := newPacker(maphash.MakeSeed())
		for tools := range pr.pages {
			for i := range tools {
				var e *schemaEntry
				var dropped []string
				if m, ok := objectSchema(tools[i].InputSchema); ok {
					e, dropped = p.pack(m)
				}
				pr.out.entries = append(pr.out.entries, e)
				pr.out.dropped = append(pr.out.dropped, dropped)
			}
		}
	}()
	return pr
}

// add queues one page's tools, in page order.
func (pr *preparer) add(tools []ports.ToolItem) {
	if len(tools) > 0 {
		pr.pages <- tools
	}
}

// finish waits for the queued pages and returns the result for all, the
// concatenation of the pages.
func (pr *preparer) finish(all []ports.ToolItem) *preparedTools {
	close(pr.pages)
	<-pr.done
	if len(all) == 0 {
		return nil
	}
	pr.out.first = &all[0]
	return &pr.out
}

// prepare fills, for each index in idx, slots[i]'s host name, server name
// and narrowed schema from items[i], whose InputSchema objectSchema
// admits. It takes the narrowed schemas from pre when Discover prepared
// them; otherwise large catalogs are split across up to GOMAXPROCS
// goroutines, each packing its own share, and prepare returns when all are
// done.
func prepare(server string, items []ports.ToolItem, idx []int, slots []Tool, pre *preparedTools) {
	seed := maphash.MakeSeed()
	if pre.matches(items) {
		var p *packer
		for _, i := range idx {
			setNames(server, &items[i], &slots[i])
			if e := pre.entries[i]; e != nil {
				slots[i].schema, slots[i].narrowed = e, pre.dropped[i]
				continue
			}
			if p == nil {
				p = newPacker(seed)
			}
			m, _ := objectSchema(items[i].InputSchema)
			slots[i].schema, slots[i].narrowed = p.pack(m)
		}
		return
	}
	workers := min(runtime.GOMAXPROCS(0), len(idx)/parallelMin)
	if workers <= 1 {
		prepareRange(server, items, idx, slots, newPacker(seed))
		return
	}
	var wg sync.WaitGroup
	per := (len(idx) + workers - 1) / workers
	for start := 0; start < len(idx); start += per {
		part := idx[start:min(start+per, len(idx))]
		wg.Go(func() { prepareRange(server, items, part, slots, newPacker(seed)) })
	}
	wg.Wait()
}

func prepareRange(server string, items []ports.ToolItem, idx []int, slots []Tool, p *packer) {
	for _, i := range idx {
		setNames(server, &items[i], &slots[i])
		m, _ := objectSchema(items[i].InputSchema)
		slots[i].schema, slots[i].narrowed = p.pack(m)
	}
}

// setNames sets t's host-facing and server names from it.
func setNames(server string, it *ports.ToolItem, t *Tool) {
	t.host = ToolName(server, it.Name)
	t.name = it.Name
	if tail := t.host[len(t.host)-len(it.Name):]; tail == it.Name {
		t.name = tail // share the host name's bytes
	}
}
