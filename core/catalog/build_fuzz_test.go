package catalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// genWords are the strings the generator picks by index: schema keywords
// and values, names that sanitize alike, the result-size key.
var genWords = []string{
	"type", "object", "properties", "items", "required", "additionalProperties",
	"enum", "const", "default", "examples", "description", "title", "format",
	"pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"minLength", "maxLength", "minItems", "maxItems", "$ref", "anyOf", "oneOf",
	"not", "patternProperties", "prefixItems", "string", "integer", "number",
	"boolean", "array", "null", MetaMaxResultSizeChars, "a", "a.b", "a_b", "",
	"~/", "mcp__", "__", "x-", "[", "(?<n>x)", "é",
}

// Generator limits: bytes of fuzz input turn into values of any size, but
// one input must stay quick to run.
const (
	genMaxDepth  = 24      // nesting of ordinary arrays and objects
	genMaxDeep   = 20_000  // nesting of one "deep" value
	genMaxRepeat = 12_000  // repetitions of a repeated string
	genDeepTotal = 30_000  // levels of all deep values of one input
	genRepTotal  = 1 << 20 // bytes of all repeated strings of one input
)

// gen turns fuzz bytes into discovery results; past the end of its input
// every read gives zeros.
type gen struct {
	b     []byte
	names []string
	// deepMade and repMade count the levels of deep values and the bytes of
	// repeated strings made so far.
	deepMade, repMade int
	// shallow turns "deep" values into leaves (encoding/json is slow to
	// marshal them, and raw items need no depth).
	shallow bool
}

func (g *gen) done() bool { return len(g.b) == 0 }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *gen) u16() int { return int(g.byte()) | int(g.byte())<<8 }

// take returns the next n bytes (fewer at the end), capacity clipped.
func (g *gen) take(n int) []byte {
	n = min(n, len(g.b))
	out := g.b[:n:n]
	g.b = g.b[n:]
	return out
}

// str is a string of up to 255 bytes, or up to 65,535 after a length
// byte 255.
func (g *gen) str() string {
	n := int(g.byte())
	if n == 255 {
		n = g.u16()
	}
	return string(g.take(n))
}

// rep is a short unit repeated up to genMaxRepeat times.
func (g *gen) rep() string {
	unit := g.take(1 + int(g.byte()%4))
	n := min(g.u16()%(genMaxRepeat+1), (genRepTotal-g.repMade)/max(len(unit), 1))
	g.repMade += n * len(unit)
	return strings.Repeat(string(unit), n)
}

func (g *gen) word() string { return genWords[int(g.byte())%len(genWords)] }

func (g *gen) key() string {
	if g.byte()%2 == 0 {
		return g.word()
	}
	return g.str()
}

// value is a value as encoding/json decodes it into an any, and values it
// does not make: NaN, infinities, json.Number of any text, strings and
// keys that are not UTF-8.
func (g *gen) value(depth int) any {
	tag := g.byte()
	if depth > genMaxDepth {
		tag %= 7
	}
	switch tag % 11 {
	case 0:
		return nil
	case 1:
		return g.byte()&1 == 1
	case 2:
		var b [8]byte
		copy(b[:], g.take(8))
		return math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
	case 3:
		return float64(int8(g.byte()))
	case 4:
		return json.Number(g.str())
	case 5:
		return g.str()
	case 6:
		return g.word()
	case 7:
		a := make([]any, g.byte()%8)
		for i := range a {
			a[i] = g.value(depth + 1)
		}
		return a
	case 8:
		n := int(g.byte() % 8)
		m := make(map[string]any, n)
		for range n {
			m[g.key()] = g.value(depth + 1)
		}
		return m
	case 9:
		d, how := min(g.u16()%(genMaxDeep+1), genDeepTotal-g.deepMade), g.byte()
		if g.shallow {
			d = 0
		}
		g.deepMade += d
		v := g.value(genMaxDepth + 1)
		for range d {
			switch how % 3 {
			case 0:
				v = []any{v}
			case 1:
				v = map[string]any{"items": v}
			default:
				v = map[string]any{"type": "object", "properties": map[string]any{"p": v}}
			}
		}
		return v
	default:
		return g.rep()
	}
}

// name is a tool name: a word, bytes, a long repetition, empty, a
// duplicate of an earlier name or one that sanitizes like it, plain, or
// NUL and invalid UTF-8.
func (g *gen) name() string {
	var s string
	switch g.byte() % 8 {
	case 0:
		s = g.word()
	case 1:
		s = g.str()
	case 2:
		s = g.rep()
	case 3:
		s = ""
	case 4, 5:
		if len(g.names) == 0 {
			s = "t"
			break
		}
		s = g.names[int(g.byte())%len(g.names)]
		if len(s) > 0 && g.byte()%2 == 0 {
			b := []byte(s)
			b[int(g.byte())%len(b)] = '.'
			s = string(b)
		}
	case 6:
		s = "t" + strconv.Itoa(int(g.byte()))
	default:
		s = "\x00\xff" + g.str()
	}
	g.names = append(g.names, s)
	return s
}

func (g *gen) object() map[string]any {
	m, _ := g.value(genMaxDepth).(map[string]any)
	if m == nil && g.byte()%2 == 0 {
		m = map[string]any{}
	}
	return m
}

func (g *gen) tool() ports.ToolItem {
	it := ports.ToolItem{Name: g.name()}
	flags := g.byte()
	if flags&1 != 0 {
		it.Title = g.str()
	}
	if flags&2 != 0 {
		it.Description = g.str()
	}
	if flags&4 != 0 {
		it.Description = g.rep()
	}
	if flags&8 != 0 {
		it.InputSchema = g.value(0)
	} else {
		props := map[string]any{}
		for range g.byte() % 6 {
			props[g.key()] = g.value(1)
		}
		it.InputSchema = map[string]any{"type": "object", "properties": props}
	}
	if flags&16 != 0 {
		it.Meta = g.object()
	}
	if flags&32 != 0 {
		if it.Meta == nil {
			it.Meta = map[string]any{}
		}
		it.Meta[MetaMaxResultSizeChars] = g.value(genMaxDepth)
	}
	return it
}

// raw is a raw prompt, resource or template: any bytes, an object with
// its identifier, or any value as JSON.
func (g *gen) raw() json.RawMessage {
	g.shallow = true
	defer func() { g.shallow = false }()
	switch g.byte() % 3 {
	case 0:
		return json.RawMessage(g.str())
	case 1:
		b, err := json.Marshal(map[string]any{g.word(): g.name(), g.key(): g.value(1)})
		if err == nil {
			return b
		}
	}
	b, err := json.Marshal(g.value(0))
	if err != nil {
		return json.RawMessage(g.str())
	}
	return b
}

// fuzzPage is one page and the cursor that requests it.
type fuzzPage struct {
	cursor string
	page   ports.Page
}

// fuzzSession serves generated pages; an unknown cursor fails the page.
type fuzzSession struct {
	ports.Session // the content methods, never called
	id            ports.SessionIdentity
	pages         map[ports.ListKind][]fuzzPage
}

var errUnknownCursor = refusal.New(refusal.Protocol, "unknown_cursor", "srv")

func (s *fuzzSession) Identity() ports.SessionIdentity { return s.id }

func (s *fuzzSession) List(_ context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
	for _, p := range s.pages[kind] {
		if p.cursor == cursor {
			return p.page, nil
		}
	}
	return ports.Page{}, errUnknownCursor
}

func (s *fuzzSession) Call(context.Context, ports.CallRequest) (ports.CallResult, error) {
	return ports.CallResult{}, nil
}
func (s *fuzzSession) Done() <-chan struct{} { return nil }
func (s *fuzzSession) Close() error          { return nil }

// session makes the session and the DiscoverOptions the input describes.
func (g *gen) session(server string) (*fuzzSession, *DiscoverOptions) {
	mask := g.byte()
	opts := &DiscoverOptions{MaxPages: int(g.byte() % 16), MaxItems: int(g.byte() % 64), MaxBytes: int64(g.u16()) * 4}
	s := &fuzzSession{id: ports.SessionIdentity{ServerID: server}, pages: map[ports.ListKind][]fuzzPage{}}
	for i, k := range listKinds {
		if mask&0xf == 0 || mask&(1<<i) != 0 {
			s.id.Declared = append(s.id.Declared, k)
		}
		s.pages[k] = []fuzzPage{{}}
	}
	last := func(k ports.ListKind) *ports.Page { return &s.pages[k][len(s.pages[k])-1].page }
	for !g.done() {
		switch g.byte() % 9 {
		case 0, 1, 2:
			p := last(ports.ListTools)
			p.Tools = append(p.Tools, g.tool())
		case 3:
			p := last(ports.ListTools)
			p.Dropped = append(p.Dropped, ports.DroppedTool{Name: g.name(), Reason: g.word()})
		case 4, 5, 6:
			p := last(listKinds[1+int(g.byte())%3])
			p.Items = append(p.Items, g.raw())
		case 7: // the next page
			k := listKinds[int(g.byte())%len(listKinds)]
			c := "c" + strconv.Itoa(len(s.pages[k]))
			last(k).NextCursor = c
			s.pages[k] = append(s.pages[k], fuzzPage{cursor: c})
		default: // an odd cursor: earlier, repeated, unknown, long
			k := listKinds[int(g.byte())%len(listKinds)]
			if g.byte()%2 == 0 {
				last(k).NextCursor = s.pages[k][int(g.byte())%len(s.pages[k])].cursor
			} else {
				last(k).NextCursor = g.str()
			}
		}
	}
	return s, opts
}

// chain returns the pages Discover may request for kind, in order: from
// cursor "" along the next cursors, until a cursor is unknown or
// repeated or the list ends.
func (s *fuzzSession) chain(kind ports.ListKind) []ports.Page {
	var out []ports.Page
	seen := map[string]bool{}
	cursor := ""
	for !seen[cursor] {
		seen[cursor] = true
		p, err := s.List(context.Background(), kind, cursor)
		if err != nil {
			break
		}
		out = append(out, p)
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	return out
}

// FuzzBuild runs generated discovery results (names of any length and
// bytes, duplicates, schemas and _meta of any shape and depth, raw items
// of any bytes, odd cursors, small bounds) through Discover, Build, Spec,
// Call and NewSet, and checks that nothing panics, that Discover keeps a
// prefix of each list within its bounds and marks every list it cut,
// that every item Discover kept is admitted or rejected exactly once,
// that host-facing names are model-safe, unique and resolve, and that
// Build gives the same catalog with and without Discover's narrowing.
func FuzzBuild(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add("srv", s)
	}
	f.Add(strings.Repeat("s", 100), []byte{0, 0, 0, 0, 0, 0, 2, 255})
	f.Add("a__b.", []byte{0xf, 1, 1, 0, 1, 0, 1, 2, 3, 'x', 0, 4, 0, 0, 0, 4, 0, 1, 0})
	f.Fuzz(func(t *testing.T, server string, data []byte) {
		g := &gen{b: data}
		sess, opts := g.session(server)
		l, err := Discover(context.Background(), sess, opts)
		checkDiscovered(t, sess, opts, l, err)

		cat := Build(server, sess.id, l, nil, nil)
		checkCatalog(t, server, l, cat)

		// Build without Discover's narrowing gives the same catalog.
		plain := Build(server, sess.id, Lists{
			Tools: slices.Clone(l.Tools), Dropped: slices.Clone(l.Dropped), Prompts: l.Prompts,
			Resources: l.Resources, ResourceTemplates: l.ResourceTemplates, Partial: l.Partial,
		}, nil, nil)
		require.Equal(t, specs(cat), specs(plain))
		require.Equal(t, cat.Rejected, plain.Rejected)
		require.Equal(t, cat.Diagnostics, plain.Diagnostics)

		// Two servers' catalogs in one Set.
		other := Build(server+"2", sess.id, l, nil, nil)
		set := NewSet([]*Catalog{cat, other}, nil)
		hosts := map[string]bool{}
		for _, tool := range set.Tools() {
			name := tool.Spec().Name
			require.Regexp(t, modelName, name)
			require.False(t, hosts[name], "two tools named %q", name)
			hosts[name] = true
			got, ok := set.Tool(name)
			require.True(t, ok)
			require.Same(t, tool, got)
		}
		own := 0
		for _, c := range []*Catalog{cat, other} {
			own += len(c.Rejected)
		}
		require.Equal(t, len(cat.Tools)+len(other.Tools), len(set.Tools())+len(set.Rejected())-own,
			"a tool of the Set's catalogs is neither in the Set nor rejected by it")
	})
}

// specs returns the Specs of tools, in order.
func specs(c *Catalog) []ports.ToolSpec {
	var out []ports.ToolSpec
	for _, t := range c.Tools {
		out = append(out, t.Spec())
	}
	return out
}

// checkDiscovered checks that each kind Discover kept is a prefix of what
// the server listed, within the bounds, and whole unless marked partial.
func checkDiscovered(t *testing.T, sess *fuzzSession, opts *DiscoverOptions, l Lists, err error) {
	maxItems, maxBytes, maxPages := DefaultMaxItems, int64(DefaultMaxBytes), DefaultMaxPages
	if opts.MaxItems > 0 {
		maxItems = opts.MaxItems
	}
	if opts.MaxBytes > 0 {
		maxBytes = opts.MaxBytes
	}
	if opts.MaxPages > 0 {
		maxPages = opts.MaxPages
	}
	failed := false
	for kind, reason := range l.Partial {
		require.True(t, slices.Contains(sess.id.Declared, kind), "undeclared kind %s partial", kind)
		switch reason {
		case PartialListFailed:
			failed = true
		case PartialPageLimit, PartialRepeatedCursor, PartialItemsExceeded, PartialBytesExceeded:
		default:
			t.Fatalf("kind %s partial for %q", kind, reason)
		}
	}
	if failed {
		require.ErrorIs(t, err, errUnknownCursor)
	} else {
		require.NoError(t, err)
	}
	for _, kind := range listKinds {
		if !slices.Contains(sess.id.Declared, kind) {
			require.NotContains(t, l.Partial, kind)
			continue
		}
		chain := sess.chain(kind)
		var listed, kept int
		var size int64
		if kind == ports.ListTools {
			var tools []ports.ToolItem
			var dropped []ports.DroppedTool
			for _, p := range chain {
				tools = append(tools, p.Tools...)
				dropped = append(dropped, p.Dropped...)
			}
			require.LessOrEqual(t, len(l.Tools), len(tools))
			for i, it := range l.Tools {
				require.Equal(t, tools[i].Name, it.Name, "tool %d is not the server's", i)
				require.Equal(t, tools[i].Description, it.Description, "tool %d is not the server's", i)
				size += toolSize(&l.Tools[i], math.MaxInt64/2)
			}
			require.LessOrEqual(t, len(l.Dropped), len(dropped))
			require.True(t, slices.Equal(dropped[:len(l.Dropped)], l.Dropped), "dropped tools are not the server's")
			for _, d := range l.Dropped {
				size += sizeDropped + int64(len(d.Name)+len(d.Reason))
			}
			listed, kept = len(tools)+len(dropped), len(l.Tools)+len(l.Dropped)
		} else {
			var items []json.RawMessage
			for _, p := range chain {
				items = append(items, p.Items...)
			}
			got := map[ports.ListKind][]json.RawMessage{
				ports.ListPrompts: l.Prompts, ports.ListResources: l.Resources, ports.ListResourceTemplates: l.ResourceTemplates,
			}[kind]
			require.LessOrEqual(t, len(got), len(items))
			require.True(t, slices.EqualFunc(items[:len(got)], got, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }), "%s: items are not the server's", kind)
			for _, it := range got {
				size += int64(len(it))
			}
			listed, kept = len(items), len(got)
		}
		require.LessOrEqual(t, kept, maxItems, "%s: over the item bound", kind)
		require.LessOrEqual(t, size, maxBytes, "%s: over the byte bound", kind)
		reason, partial := l.Partial[kind]
		if !partial {
			require.Equal(t, listed, kept, "%s: complete but items missing", kind)
			require.LessOrEqual(t, len(chain), maxPages)
		}
		if reason == PartialItemsExceeded {
			require.Equal(t, maxItems, kept, "%s: stopped short of the item bound", kind)
		}
	}
}

// checkCatalog checks that every item of l is admitted or rejected exactly
// once, and the admitted tools' names, specs and calls.
func checkCatalog(t *testing.T, server string, l Lists, cat *Catalog) {
	require.Equal(t, len(l.Partial) == 0, cat.Complete())
	require.Equal(t, len(l.Partial), len(cat.Partial))

	var in, out []string
	for _, it := range l.Tools {
		in = append(in, it.Name)
	}
	for _, d := range l.Dropped {
		in = append(in, d.Name)
	}
	rejected := map[ports.ListKind]int{}
	for _, r := range cat.Rejected {
		require.Equal(t, server, r.Server)
		require.NotEmpty(t, r.Reason)
		rejected[r.Kind]++
		if r.Kind == ports.ListTools {
			out = append(out, r.Name)
		}
	}
	hosts := map[string]bool{}
	for _, tool := range cat.Tools {
		out = append(out, tool.NameOnServer())
		host := tool.HostName()
		require.Regexp(t, modelName, host)
		require.Equal(t, ToolName(server, tool.NameOnServer()), host)
		require.False(t, hosts[host], "two tools named %q", host)
		hosts[host] = true
		got, ok := cat.Tool(host)
		require.True(t, ok)
		require.Same(t, tool, got)

		// The spec's schema is the tool's narrowed schema, unpacked.
		spec := tool.Spec()
		require.Equal(t, host, spec.Name)
		first := slices.IndexFunc(l.Tools, func(it ports.ToolItem) bool { return it.Name == tool.NameOnServer() })
		want, _ := Narrow(l.Tools[first].InputSchema)
		require.Equal(t, string(want), string(spec.InputSchema))
		_, err := compileSchema(spec.InputSchema)
		require.NoError(t, err)
		// A string that is not UTF-8, which no JSON decoder makes, is
		// written as encoding/json writes it ("\ufffd"), which decodes to
		// another string: only the decoded spec narrows to itself.
		var v any
		require.NoError(t, json.Unmarshal(spec.InputSchema, &v))
		again, _ := Narrow(v)
		assertNarrowInvariants(t, again)
		// The schema as written is the listed one, whole (or absent, with
		// its diagnostic, when nested too deep to keep).
		var e encoder
		if e.value(l.Tools[first].InputSchema, 0) {
			require.Equal(t, string(e.buf), string(spec.ServerInputSchema))
			require.True(t, json.Valid(spec.ServerInputSchema))
		} else {
			require.Nil(t, spec.ServerInputSchema)
			require.Contains(t, cat.Diagnostics, Diagnostic{Tool: tool.NameOnServer(), Reason: DiagInputSchemaTooDeep})
		}
		c := tool.ResultCap()
		require.True(t, c == DefaultAdmissionCap || c >= MinResultSizeChars && c <= MaxResultSizeChars, "cap %d", c)

		_, err = tool.Call(context.Background(), nil)
		var ae *ArgumentError
		if !errors.As(err, &ae) {
			require.Equal(t, ReasonNoCaller, refusal.ReasonOf(err))
		}
	}
	slices.Sort(in)
	slices.Sort(out)
	require.Equal(t, in, out, "tools admitted and rejected are not the tools listed")
	require.Equal(t, len(l.Prompts), len(cat.Prompts)+rejected[ports.ListPrompts])
	require.Equal(t, len(l.Resources), len(cat.Resources)+rejected[ports.ListResources])
	require.Equal(t, len(l.ResourceTemplates), len(cat.ResourceTemplates)+rejected[ports.ListResourceTemplates])
	for k := range rejected {
		require.Contains(t, listKinds[:], k, "a rejected entry of another kind")
	}
	for _, d := range cat.Diagnostics {
		require.True(t, slices.ContainsFunc(cat.Tools, func(tool *Tool) bool { return tool.NameOnServer() == d.Tool }), "a diagnostic of no admitted tool")
	}
}

// enc writes fuzz input in gen's format, for seeds.
type enc []byte

func (e *enc) op(b ...byte) *enc { *e = append(*e, b...); return e }

func (e *enc) str(s string) *enc {
	if len(s) < 255 {
		return e.op(byte(len(s))).op([]byte(s)...)
	}
	return e.op(255, byte(len(s)), byte(len(s)>>8)).op([]byte(s)...)
}

// value writes v (as encoding/json decodes it) in gen's format.
func (e *enc) value(v any) *enc {
	switch x := v.(type) {
	case nil:
		return e.op(0)
	case bool:
		if x {
			return e.op(1, 1)
		}
		return e.op(1, 0)
	case float64:
		return e.op(2).op(binary.LittleEndian.AppendUint64(nil, math.Float64bits(x))...)
	case string:
		if i := slices.Index(genWords, x); i >= 0 {
			return e.op(6, byte(i))
		}
		return e.op(5).str(x)
	case []any:
		e.op(7, byte(min(len(x), 7)))
		for _, el := range x[:min(len(x), 7)] {
			e.value(el)
		}
		return e
	case map[string]any:
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		})[:min(len(x), 7)]
		e.op(8, byte(len(keys)))
		for _, k := range keys {
			if i := slices.Index(genWords, k); i >= 0 {
				e.op(0, byte(i))
			} else {
				e.op(1).str(k)
			}
			e.value(x[k])
		}
		return e
	}
	return e.op(0)
}

// tool writes a tool named name (a gen.str) with schema, plus the flags'
// extras.
func (e *enc) tool(name string, schema any) *enc {
	return e.op(0, 1).str(name).op(8).value(schema)
}

// fuzzSeeds are inputs of every shape: the schemas of testdata/narrow,
// long names, duplicates, deep values, pages and odd cursors, bounds.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob("testdata/narrow/*.json")
	var e enc
	e.op(0, 0, 0, 0, 0)
	for i, file := range files {
		b, err := os.ReadFile(file)
		var v any
		if err != nil || json.Unmarshal(b, &v) != nil {
			continue
		}
		e.tool("t"+strconv.Itoa(i), v)
		if i%3 == 2 {
			e.op(7, 0) // next tools page
		}
	}
	seeds = append(seeds, e)

	long := enc{0, 0, 0, 0, 0}
	for _, n := range []int{56, 57, 64, 65, 128, 129, 10_000} {
		long.tool(strings.Repeat("a", n), map[string]any{})
	}
	long.op(0, 2, 1, 0xc3, 0xa9, 0x10, 0x27, 8).value(map[string]any{}) // "é"×10,000
	long.op(0, 3, 8).value(map[string]any{})                            // ""
	long.op(0, 4, 0, 1, 8).value(map[string]any{})                      // a duplicate
	long.op(0, 5, 1, 0, 1, 8).value(map[string]any{})                   // sanitizes like an earlier one
	long.op(0, 7, 2, 0, 'x', 8).value(map[string]any{})                 // NUL, invalid UTF-8
	seeds = append(seeds, long)

	for _, header := range []enc{{0xf, 3, 5, 200, 0}, {0xf, 0, 0, 100, 0}} {
		bounds := header
		for i := range 12 {
			bounds.tool("b"+strconv.Itoa(i), map[string]any{"type": "object"})
			bounds.op(4, 0, 0).str(`{"name":"p"}`) // a prompt
			if i%4 == 3 {
				bounds.op(7, byte(i/4)) // a next page of some kind
			}
		}
		bounds.op(8, 0, 0, 1) // the last tools page points back to "c1"
		seeds = append(seeds, bounds)
	}

	odd := enc{0, 0, 0, 0, 0}
	odd.op(0, 6, 2, 8, 2, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f)             // a NaN schema
	odd.op(0, 6, 3, 32+8, 8, 0, 2, 0, 0, 0, 0, 0, 0x40, 0x8f, 0x40) // _meta maxResultSizeChars 1000
	odd.op(0, 6, 4, 32+8, 8, 0, 4).str("1e400")                     // _meta maxResultSizeChars json.Number
	odd.op(3, 1).str("dropped").op(0)                               // a dropped tool
	odd.op(5, 2, 0).str("not json")                                 // a resource that is not JSON
	odd.op(8, 1, 1).str("unknown cursor")                           // a prompts cursor that fails
	odd.op(0, 6, 1, 8, 9, 0x20, 0x4e, 2, 5).str("leaf")             // a schema 20,000 deep
	seeds = append(seeds, odd)
	return seeds
}
