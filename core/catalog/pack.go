package catalog

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"runtime"
	"slices"
	"sync"

	"github.com/mcpward/mcpward/ports"
)

// Packing bounds.
const (
	// minChunk and maxChunk bound the blocks a packer packs into.
	minChunk = 1 << 10
	maxChunk = 64 << 10
	// parallelMin is the number of tools per goroutine below which Build
	// narrows on one goroutine.
	parallelMin = 512
	// refMark starts a reference to a string table entry in a packed
	// schema; its uvarint index follows. Compact JSON escapes every byte
	// below 0x20, so the mark never occurs in the JSON itself.
	refMark = 0x01
	// minRef is the shortest string literal (quotes included) worth a
	// reference, which takes two or three bytes.
	minRef = 4
)

// strtab is the string literals (quotes and escapes included) that occur
// more than once in one packer's schemas, stored end to end: entry i is
// data[off[i]:off[i+1]]. It only grows while its packer packs and is
// immutable afterwards.
type strtab struct {
	data []byte
	off  []uint32
}

// add appends lit and returns its index.
func (t *strtab) add(lit []byte) int {
	if len(t.off) == 0 {
		t.off = append(t.off, 0)
	}
	t.data = append(t.data, lit...)
	t.off = append(t.off, uint32(len(t.data)))
	return len(t.off) - 2
}

func (t *strtab) get(i uint64) []byte { return t.data[t.off[i]:t.off[i+1]] }

// expandedLen returns the length of the JSON the packed schema b stands for.
func (t *strtab) expandedLen(b []byte) int {
	n := 0
	for {
		k := bytes.IndexByte(b, refMark)
		if k < 0 {
			return n + len(b)
		}
		i, w := binary.Uvarint(b[k+1:])
		n += k + int(t.off[i+1]-t.off[i])
		b = b[k+1+w:]
	}
}

// expand appends the JSON the packed schema b stands for to dst.
func (t *strtab) expand(dst, b []byte) []byte {
	for {
		k := bytes.IndexByte(b, refMark)
		if k < 0 {
			return append(dst, b...)
		}
		dst = append(dst, b[:k]...)
		i, w := binary.Uvarint(b[k+1:])
		dst = append(dst, t.get(i)...)
		b = b[k+1+w:]
	}
}

// clip trims t's slices to their length, once its packer is done.
func (t *strtab) clip() {
	t.data = bytes.Clone(t.data)
	t.off = slices.Clone(t.off)
}

// packer narrows schemas and packs the results: identical narrowed
// schemas are stored once, all of them end to end in blocks (Build
// copies them into the catalog's exact-size slab, see schemaBuilder).
// Schema k is chunks[recs[k].tab][recs[k].off:][:recs[k].n], the last
// chunk being data, the block being filled.
type packer struct {
	narrower
	chunks [][]byte
	data   []byte
	size   int // bytes stored, in chunks and data
	recs   []schemaRec
	seed   maphash.Seed
	seen   map[uint64]uint32
	// tab is the string table of this packer's entries; strs maps each
	// string literal met so far to its index in tab, or to -1 when it
	// was met only once (and is stored inline in that one schema).
	tab  *strtab
	strs map[uint64]int
	enc  []byte  // scratch: the packed form of buf
	dec  []byte  // scratch: an entry's JSON, to compare with buf
	ends []int32 // scratch: valueEnds
	open []int32 // scratch: valueEnds
	// canon rewrites raw schemas (see packTool).
	canon canon
}

func newPacker(seed maphash.Seed) *packer {
	return &packer{seed: seed, seen: make(map[uint64]uint32), tab: new(strtab), strs: make(map[uint64]int)}
}

// done trims the packer's string table; the packer must not pack again.
func (p *packer) done() { p.tab.clip() }

// encode appends the packed form of the compact JSON src to dst: every
// string literal of at least minRef bytes, and every object or array
// below the root, that was met before, in this schema or an earlier one,
// becomes refMark and the uvarint of its index in p.tab. A value met the
// first time is copied, its own parts packed the same way.
//
// p.strs is keyed by hash; a hash that names a table entry is taken only
// when the entry's bytes are equal, so a collision costs at most a
// needless table entry, never a wrong schema.
func (p *packer) encode(dst, src []byte) []byte {
	ends := p.valueEnds(src)
	for i := 0; i < len(src); {
		c := src[i]
		if c != '"' && (c != '{' && c != '[' || i == 0) {
			dst = append(dst, c)
			i++
			continue
		}
		end := int(ends[i])
		lit := src[i:end]
		if len(lit) < minRef {
			dst = append(dst, lit...)
			i = end
			continue
		}
		h := maphash.Bytes(p.seed, lit)
		k, met := p.strs[h]
		switch {
		case !met:
			k = -1
			p.strs[h] = k
		case k < 0:
			k = p.tab.add(lit)
			p.strs[h] = k
		case !bytes.Equal(p.tab.get(uint64(k)), lit):
			k = -1 // a hash collision: leave this one inline
		}
		if k < 0 {
			if c == '"' {
				dst = append(dst, lit...)
				i = end
			} else {
				dst = append(dst, c) // pack the parts
				i++
			}
			continue
		}
		dst = append(dst, refMark)
		dst = binary.AppendUvarint(dst, uint64(k))
		i = end
	}
	return dst
}

// valueEnds returns, at the index of each string literal's opening quote
// and each '{' and '[' of the compact JSON src, the end of that value;
// other indices hold garbage. The slice is p's scratch.
func (p *packer) valueEnds(src []byte) []int32 {
	if cap(p.ends) < len(src) {
		p.ends = make([]int32, len(src)+len(src)/4)
	}
	ends, open := p.ends[:len(src)], p.open[:0]
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '"':
			e := stringEnd(src, i)
			ends[i] = int32(e)
			i = e - 1
		case '{', '[':
			open = append(open, int32(i))
		case '}', ']':
			ends[open[len(open)-1]] = int32(i + 1)
			open = open[:len(open)-1]
		}
	}
	p.open = open
	return ends
}

// stringEnd returns the end of the JSON string literal starting at a[i].
func stringEnd(a []byte, i int) int {
	for i++; a[i] != '"'; i++ {
		if a[i] == '\\' {
			i++
		}
	}
	return i + 1
}

// pack narrows schema and returns the index of its packed form in p and
// the dropped paths. p.form holds schema's form afterwards (see packTool).
// It returns false, storing nothing, when schema's form passes the budget
// (see MaxSchemaBytes): Build refuses such a schema.
func (p *packer) pack(schema map[string]any) (uint32, []string, bool) {
	p.reset()
	p.rootTree(schema)
	if p.form.over {
		return 0, nil, false
	}
	return p.store(), p.dropped, true
}

// packWritten stores schema as the server wrote it (every keyword kept,
// compact JSON with sorted keys, numbers as encoding/json writes a
// float64) and returns its index in p. It returns false, storing nothing,
// for a schema nested deeper than maxValueDepth (or holding what JSON
// cannot: a key that is not UTF-8). A schema equal to one already stored
// (its narrowed form, when narrowing changed nothing) is stored once.
func (p *packer) packWritten(schema map[string]any) (uint32, bool) {
	p.reset()
	if !p.value(schema, 0) {
		p.buf = p.buf[:0]
		p.popKeys(0)
		return 0, false
	}
	return p.store(), true
}

// store packs p.buf (unless an equal schema is stored already) and
// returns its index in p.
func (p *packer) store() uint32 {
	h := maphash.Bytes(p.seed, p.buf)
	prev, hashed := p.seen[h]
	if hashed {
		p.dec = p.tab.expand(p.dec[:0], p.bytes(prev))
		if bytes.Equal(p.dec, p.buf) {
			return prev
		}
	}
	p.enc = p.encode(p.enc[:0], p.buf)
	k := uint32(len(p.recs))
	if cap(p.data)-len(p.data) < len(p.enc) {
		if p.data != nil {
			p.chunks = append(p.chunks, p.data)
		}
		// Blocks double from minChunk to maxChunk, so that a small
		// catalog's garbage is small and a large one's is one block.
		p.data = make([]byte, 0, max(len(p.enc), min(max(2*cap(p.data), minChunk), maxChunk)))
	}
	p.recs = append(p.recs, schemaRec{off: uint32(len(p.data)), n: uint32(len(p.enc)), tab: uint32(len(p.chunks))})
	p.data = append(p.data, p.enc...)
	p.size += len(p.enc)
	if !hashed {
		p.seen[h] = k
	}
	return k
}

// bytes returns the packed form of p's schema k.
func (p *packer) bytes(k uint32) []byte {
	r := p.recs[k]
	c := p.data
	if int(r.tab) < len(p.chunks) {
		c = p.chunks[r.tab]
	}
	return c[r.off : r.off+r.n]
}

// json returns the JSON of p's schema k (for tests).
func (p *packer) json(k uint32) []byte { return p.tab.expand(nil, p.bytes(k)) }

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
	first *ports.ToolItem
	// p packed the schemas: ks[i] is tool i's schema in p, -1 for a
	// tool whose schema Build rejects.
	p       *packer
	ks      []int32
	dropped [][]string
	// ws[i] is tool i's schema as written in wp, -1 when there is none.
	ws []int32
	wp *packer
}

// matches reports whether p was prepared for tools.
func (p *preparedTools) matches(tools []ports.ToolItem) bool {
	return p != nil && len(tools) > 0 && len(p.ks) == len(tools) && p.first == &tools[0]
}

// preparer narrows the tools of each page on its own goroutine while
// Discover fetches the next page, while the page's decoded schemas are
// still warm in the cache.
type preparer struct {
	pages chan preparerPage
	// free holds the pageForms the goroutine is done with, for reuse.
	free   chan *pageForms
	done   chan struct{}
	out    preparedTools
	closed bool // pages is closed (finish or stop ran)
	// panicked is the value of a panic of the goroutine, recovered there
	// and raised again by stop in Discover's goroutine (inside the
	// caller's panic boundary, such as the supervisor's), so that it
	// fails one server instead of the process. Read after done.
	panicked any
}

// packPrepared is how the goroutine narrows one schema; a test replaces
// it to panic.
var packPrepared = packTool

func startPreparer() *preparer {
	pr := &preparer{pages: make(chan preparerPage, 8), free: make(chan *pageForms, 10), done: make(chan struct{})}
	go func() {
		defer close(pr.done)
		defer func() {
			if v := recover(); v != nil {
				pr.panicked = v
				for range pr.pages { // let add and stop go on
				}
			}
		}()
		p, wp := newPacker(maphash.MakeSeed()), newPacker(maphash.MakeSeed())
		pr.out.p, pr.out.wp = p, wp
		for pg := range pr.pages {
			tools := pg.tools
			for i := range tools {
				k, w, dropped := packPrepared(p, wp, tools[i].InputSchema, pg.forms.get(i))
				pr.out.ks = append(pr.out.ks, k)
				pr.out.ws = append(pr.out.ws, w)
				pr.out.dropped = append(pr.out.dropped, dropped)
			}
			pg.forms.reset()
			select {
			case pr.free <- pg.forms:
			default:
			}
		}
		p.done()
		wp.done()
	}()
	return pr
}

// stop ends the goroutine, once the pages queued are narrowed, and waits
// for it. It may be called more than once (Discover defers it, so that a
// panic out of a List leaves no goroutine behind). When the goroutine
// panicked, the first stop panics with the same value, in the caller's
// goroutine.
func (pr *preparer) stop() {
	if pr.closed {
		<-pr.done
		return
	}
	pr.closed = true
	close(pr.pages)
	<-pr.done
	if pr.panicked != nil {
		panic(pr.panicked)
	}
}

// preparerPage is one page's tools and the canonical forms of their raw
// input schemas.
type preparerPage struct {
	tools []ports.ToolItem
	forms *pageForms
}

// forms returns an empty pageForms for the next page.
func (pr *preparer) forms() *pageForms {
	select {
	case f := <-pr.free:
		return f
	default:
		return new(pageForms)
	}
}

// add queues one page's tools, in page order, with the canonical forms
// of their raw input schemas (see pageForms), which the preparer owns
// from now on.
func (pr *preparer) add(tools []ports.ToolItem, forms *pageForms) {
	if len(tools) > 0 {
		pr.pages <- preparerPage{tools, forms}
	}
}

// finish waits for the queued pages and returns the result for all, the
// concatenation of the pages.
func (pr *preparer) finish(all []ports.ToolItem) *preparedTools {
	pr.stop()
	if len(all) == 0 {
		return nil
	}
	pr.out.first = &all[0]
	return &pr.out
}

// draft is what prepare works out for one tool: its names, its narrowed
// schema (schema k of packer p) and its schema as written (schema w of
// packer wp, when hasW).
//
// The schemas as written go to packers of their own: a packer stores a
// string or object it meets a second time in its table besides the first
// (inline), so a schema packed beside its own narrowed form, which shares
// most of its text, would store that text three times.
type draft struct {
	host, name string
	p, wp      *packer
	k, w       uint32
	hasW       bool
	dropped    []string
	// invalid: the schema, a json.RawMessage, is not one Build admits
	// (see mayAdmit); nothing was packed.
	invalid bool
}

// packDraft narrows the schema v, which mayAdmit admits, into p and
// stores it as written in wp, for d; d.invalid when Build does not admit
// it after all.
func packDraft(p, wp *packer, v any, d *draft) {
	k, w, dropped := packTool(p, wp, v, nil)
	d.p, d.wp, d.k, d.dropped = p, wp, uint32(k), dropped
	d.w, d.hasW, d.invalid = uint32(w), w >= 0, k < 0
}

// prepare fills, for each index in idx, drafts[i]'s host name, server
// name and narrowed schema from items[i], whose InputSchema mayAdmit
// admits (drafts[i].invalid when it is raw and Build does not admit it
// after all). It takes the narrowed schemas from pre when Discover prepared
// them; otherwise large catalogs are split across up to GOMAXPROCS
// goroutines, each packing its own share, and prepare returns when all are
// done. Every packer used is registered with sb, in a fixed order.
func prepare(server string, items []ports.ToolItem, idx []int, drafts []draft, pre *preparedTools, sb *schemaBuilder) {
	seed := maphash.MakeSeed()
	if pre.matches(items) {
		var p, wp *packer
		sb.add(pre.p)
		sb.add(pre.wp)
		for _, i := range idx {
			setNames(server, &items[i], &drafts[i])
			if k := pre.ks[i]; k >= 0 {
				drafts[i].p, drafts[i].wp, drafts[i].k, drafts[i].dropped = pre.p, pre.wp, uint32(k), pre.dropped[i]
				if w := pre.ws[i]; w >= 0 {
					drafts[i].w, drafts[i].hasW = uint32(w), true
				}
				continue
			}
			if p == nil {
				p, wp = newPacker(seed), newPacker(seed)
				sb.add(p)
				sb.add(wp)
			}
			packDraft(p, wp, items[i].InputSchema, &drafts[i])
		}
		if p != nil {
			p.done()
			wp.done()
		}
		return
	}
	workers := min(runtime.GOMAXPROCS(0), len(idx)/parallelMin)
	if workers <= 1 {
		p, wp := newPacker(seed), newPacker(seed)
		sb.add(p)
		sb.add(wp)
		prepareRange(server, items, idx, drafts, p, wp)
		return
	}
	var wg sync.WaitGroup
	per := (len(idx) + workers - 1) / workers
	for start := 0; start < len(idx); start += per {
		part := idx[start:min(start+per, len(idx))]
		p, wp := newPacker(seed), newPacker(seed)
		sb.add(p)
		sb.add(wp)
		wg.Go(func() { prepareRange(server, items, part, drafts, p, wp) })
	}
	wg.Wait()
}

func prepareRange(server string, items []ports.ToolItem, idx []int, drafts []draft, p, wp *packer) {
	for _, i := range idx {
		setNames(server, &items[i], &drafts[i])
		packDraft(p, wp, items[i].InputSchema, &drafts[i])
	}
	p.done()
	wp.done()
}

// setNames sets d's host-facing and server names from it.
func setNames(server string, it *ports.ToolItem, d *draft) {
	d.host = ToolName(server, it.Name)
	d.name = it.Name
}
