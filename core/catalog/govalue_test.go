package catalog

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// The rule under test (see MaxSchemaBytes): the work on a schema a host
// hands over as a Go value is bounded by the length of the JSON it stands
// for, and never more than a small multiple of the budget; a value whose
// JSON passes the budget (a sub-schema shared too often, or a cycle the
// depth limits do not end first) is refused like a root that is no object
// (Narrow: {"type":"object"}, "/" reported; Build: invalid_input_schema);
// any other value gives exactly what the JSON it stands for gives.

// maxSteps is the most steps (values and schemas entered, see
// encoder.steps) the form writer may take for one schema under a budget
// of maxFormBytes: every step writes a byte, kept or cut off, or ends its
// value, and the budget bounds both kinds of bytes (see overBudget).
func maxSteps() int { return 16*maxFormBytes + 64 }

// withFormBytes lowers the budget for the rest of the test.
func withFormBytes(t testing.TB, n int) {
	saved := maxFormBytes
	t.Cleanup(func() { maxFormBytes = saved })
	maxFormBytes = n
}

// narrowSteps narrows v as Narrow does and returns the result and the
// form writer's steps.
func narrowSteps(v any) (json.RawMessage, []string, int) {
	n := new(narrower)
	n.reset()
	n.rootTree(v)
	return n.buf, n.dropped, n.form.steps
}

// buildOne builds a catalog of one tool with the input schema v.
func buildOne(v any) *Catalog {
	tools := []ports.ToolItem{{Name: "t", InputSchema: v, OutputSchema: v}}
	return Build("srv", ports.SessionIdentity{ServerID: "srv"}, Lists{Tools: tools}, nil, nil)
}

// refused checks that v is refused by the budget, within maxSteps.
func refused(t *testing.T, v any) {
	t.Helper()
	out, dropped, steps := narrowSteps(v)
	require.LessOrEqual(t, steps, maxSteps(), "the form writer passed its step bound")
	require.JSONEq(t, `{"type":"object"}`, string(out))
	require.Equal(t, []string{"/"}, dropped)
	got, gotDropped := Narrow(v)
	require.Equal(t, out, got)
	require.Equal(t, dropped, gotDropped)
	cat := buildOne(v)
	require.Empty(t, cat.Tools)
	require.Equal(t, []Rejected{{Server: "srv", Kind: ports.ListTools, Name: "t", Reason: ReasonInvalidInputSchema}}, cat.Rejected)
}

// sameAsJSON checks that v, which holds no cycle, narrows and builds as
// the value JSON decoding makes of its JSON.
func sameAsJSON(t *testing.T, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var dec any
	require.NoError(t, json.Unmarshal(b, &dec))
	out, dropped, steps := narrowSteps(v)
	require.LessOrEqual(t, steps, maxSteps())
	want, wantDropped := Narrow(dec)
	require.Equal(t, string(want), string(out))
	require.Equal(t, wantDropped, dropped)
	got, gotDropped := Narrow(v)
	require.Equal(t, string(want), string(got))
	require.Equal(t, wantDropped, gotDropped)
	a, w := buildOne(v), buildOne(dec)
	require.Equal(t, specs(w), specs(a))
	require.Equal(t, w.Rejected, a.Rejected)
	require.Equal(t, w.Diagnostics, a.Diagnostics)
}

// TestGoValueSharedAndCyclic is the rule on the values a host can make by
// hand: the lead's reproduction (a cycle through properties, with two
// paths at each level, at the real budget), other cycles, legitimate
// sharing, and a DAG that stands for 2^60 bytes of JSON.
func TestGoValueSharedAndCyclic(t *testing.T) {
	pr := map[string]any{"type": "object"}
	pr["properties"] = map[string]any{"a": pr, "b": pr}
	t.Run("cycle_through_properties_default_budget", func(t *testing.T) {
		out, dropped, steps := narrowSteps(pr)
		require.LessOrEqual(t, steps, maxSteps())
		require.Equal(t, `{"type":"object"}`, string(out))
		require.Equal(t, []string{"/"}, dropped)
	})

	withFormBytes(t, 1<<14)
	wide := sharedChain(60)
	t.Run("cycle_through_properties", func(t *testing.T) { refused(t, pr) })
	t.Run("dag_of_2^60_bytes", func(t *testing.T) { refused(t, wide) })
	t.Run("dag_of_2^60_bytes_as_default", func(t *testing.T) {
		refused(t, map[string]any{"type": "object", "default": wide})
	})

	// A cycle every path of which goes round (a value that names itself)
	// ends at the depth limits: it gives what a value nested past them
	// gives, quickly.
	m := map[string]any{}
	m["a"], m["b"] = m, m
	arr := make([]any, 2)
	arr[0], arr[1] = arr, arr
	self := map[string]any{"type": "object", "description": "d"}
	self["x-a"], self["x-b"] = self, self
	var deep any = "leaf"
	for range maxValueDepth + 2 {
		deep = map[string]any{"a": deep}
	}
	deepSelf := map[string]any{"type": "object", "description": "d", "x-a": deep, "x-b": deep}
	for name, c := range map[string]struct{ cyclic, deep any }{
		"self_under_vendor_keywords": {self, deepSelf},
		"cycle_under_vendor_keyword": {map[string]any{"type": "object", "x-vendor": m}, map[string]any{"type": "object", "x-vendor": deep}},
		"cycle_as_default":           {map[string]any{"type": "object", "default": m}, map[string]any{"type": "object", "default": deep}},
		"cycle_in_enum":              {map[string]any{"type": "object", "enum": arr}, map[string]any{"type": "object", "enum": []any{deep}}},
		"cycle_below_a_property": {
			map[string]any{"type": "object", "properties": map[string]any{"p": map[string]any{"type": "object", "default": m}}},
			map[string]any{"type": "object", "properties": map[string]any{"p": map[string]any{"type": "object", "default": deep}}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			out, dropped, steps := narrowSteps(c.cyclic)
			require.LessOrEqual(t, steps, 16*maxValueDepth+64)
			want, wantDropped := Narrow(c.deep)
			require.Equal(t, string(want), string(out))
			require.Equal(t, wantDropped, dropped)
			a, w := buildOne(c.cyclic), buildOne(c.deep)
			require.Equal(t, specs(w), specs(a))
			require.Equal(t, w.Rejected, a.Rejected)
			require.Equal(t, w.Diagnostics, a.Diagnostics)
		})
	}

	t.Run("shared_subschema", func(t *testing.T) {
		str := map[string]any{"type": "string", "maxLength": 3.0, "description": "d"}
		obj := map[string]any{"type": "object", "properties": map[string]any{"s": str, "t": str}, "required": []any{"s"}}
		props := map[string]any{}
		for i := range 20 {
			props[fmt.Sprint("p", i)] = []any{str, obj}[i%2]
		}
		sameAsJSON(t, map[string]any{"type": "object", "properties": props, "default": map[string]any{"x": props}})
	})
	t.Run("dag_within_budget", func(t *testing.T) { sameAsJSON(t, sharedChain(6)) })
}

// sharedChain returns a schema standing for about 2^n * 60 bytes of JSON: each
// level names the next twice under properties.
func sharedChain(n int) any {
	var v any = map[string]any{"type": "string"}
	for range n {
		v = map[string]any{"type": "object", "properties": map[string]any{"a": v, "b": v}}
	}
	return v
}

// graph is a generated Go value: nodes that name each other, with sharing
// (two edges to one node) and back edges (cycles) as the input says.
type graph struct {
	kinds []byte     // per node: 0 schema, 1 array
	edges [][]int    // per node, the nodes it names, in order
	keys  [][]string // per schema node, the key of each edge
	vals  []any      // the materialized values
}

// genKeys are the keys a schema node names a child under.
var genKeys = []string{"properties", "items", "additionalProperties", "default", "enum", "x-v", "const", "examples"}

// newGraph generates a graph from b.
func newGraph(b []byte) *graph {
	g := &gen{b: b}
	n := 1 + int(g.byte())%24
	cycles := g.byte()%4 == 0
	gr := &graph{kinds: make([]byte, n), edges: make([][]int, n), keys: make([][]string, n)}
	for i := range n {
		gr.kinds[i] = g.byte() % 4 / 3 // mostly schemas
		for range int(g.byte()) % 5 {
			j := i + 1 + int(g.byte())%2
			if cycles && g.byte()%3 == 0 {
				j = int(g.byte()) % n
			}
			if j >= n {
				continue
			}
			gr.edges[i] = append(gr.edges[i], j)
			gr.keys[i] = append(gr.keys[i], genKeys[int(g.byte())%len(genKeys)])
		}
	}
	gr.materialize(g)
	return gr
}

// materialize makes the Go values: every container first, then the
// references, so that back edges point at the very same value.
func (gr *graph) materialize(g *gen) {
	gr.vals = make([]any, len(gr.kinds))
	for i, k := range gr.kinds {
		if k == 1 {
			gr.vals[i] = make([]any, len(gr.edges[i])+1)
			continue
		}
		typ := []any{"object", "string", "array", "integer"}[g.byte()%4]
		if i == 0 && g.byte()%4 != 0 {
			typ = "object" // mostly a root Build admits
		}
		gr.vals[i] = map[string]any{"type": typ, "minimum": float64(g.byte()) / 4, "description": g.word()}
	}
	for i, k := range gr.kinds {
		if k == 1 {
			a := gr.vals[i].([]any)
			for e, j := range gr.edges[i] {
				a[e] = gr.vals[j]
			}
			a[len(a)-1] = g.word()
			continue
		}
		m := gr.vals[i].(map[string]any)
		for e, j := range gr.edges[i] {
			switch key := gr.keys[i][e]; key {
			case "properties":
				p, _ := m[key].(map[string]any)
				if p == nil {
					p = map[string]any{}
					m[key] = p
				}
				p[fmt.Sprint("p", e)] = gr.vals[j]
			case "enum", "examples":
				l, _ := m[key].([]any)
				m[key] = append(l, gr.vals[j])
			default:
				m[key] = gr.vals[j]
			}
		}
	}
}

// cyclic reports whether a node reaches itself.
func (gr *graph) cyclic() bool {
	state := make([]byte, len(gr.kinds)) // 0 new, 1 on the path, 2 done
	var visit func(i int) bool
	visit = func(i int) bool {
		if state[i] == 1 {
			return true
		}
		if state[i] == 2 {
			return false
		}
		state[i] = 1
		for _, j := range gr.edges[i] {
			if visit(j) {
				return true
			}
		}
		state[i] = 2
		return false
	}
	return visit(0)
}

// jsonLen returns at least the length of root's compact JSON (of an acyclic
// graph), saturating at 1<<40: every node named counts its own minimum.
func (gr *graph) jsonLen() int64 {
	memo := make([]int64, len(gr.kinds))
	var size func(i int) int64
	size = func(i int) int64 {
		if memo[i] > 0 {
			return memo[i]
		}
		// A schema node writes at least {"description":"","minimum":0,
		// "type":"array"}, an array node [] and its last string; an
		// edge at least a comma or a name.
		s := int64(44)
		if gr.kinds[i] == 1 {
			s = 4
		}
		for e, j := range gr.edges[i] {
			if gr.kinds[i] == 0 && gr.replaced(i, e) {
				continue // materialize's later edge took its key
			}
			s = min(s+1+size(j), 1<<40)
		}
		memo[i] = s
		return s
	}
	return size(0)
}

// replaced reports whether schema node i's edge e is not in its value: a
// later edge with the same single-valued key overwrote it (materialize
// appends under properties, enum and examples, and sets any other key).
func (gr *graph) replaced(i, e int) bool {
	switch k := gr.keys[i][e]; k {
	case "properties", "enum", "examples":
		return false
	default:
		for _, later := range gr.keys[i][e+1:] {
			if later == k {
				return true
			}
		}
		return false
	}
}

// checkGoValue is the property: the form writer stays within maxSteps on
// any Go value, and a value without a cycle whose JSON is small enough to
// write out narrows and builds as that JSON does.
func checkGoValue(t *testing.T, b []byte) (overBudget bool) {
	gr := newGraph(b)
	v := gr.vals[0]
	out, dropped, steps := narrowSteps(v)
	require.LessOrEqual(t, steps, maxSteps(), "the form writer passed its step bound")
	got, gotDropped := Narrow(v)
	require.Equal(t, string(out), string(got))
	require.Equal(t, dropped, gotDropped)
	cat := buildOne(v)
	require.Len(t, cat.Rejected, 1-len(cat.Tools))
	if gr.cyclic() {
		return false
	}
	if gr.jsonLen() > 1<<20 {
		// Far past the budget: refused, not written out.
		require.Equal(t, `{"type":"object"}`, string(out))
		require.Equal(t, []string{"/"}, dropped)
		return true
	}
	sameAsJSON(t, v)
	n := new(narrower)
	n.reset()
	n.rootTree(v)
	return n.form.over
}

// goValueSeeds are the table of checkGoValue, and FuzzGoValue's seeds.
var goValueSeeds = [][]byte{
	{0},
	{4, 0, 0, 3, 0, 0, 0, 0, 1, 0, 0, 3, 0, 2, 1, 1, 1, 2},
	{9, 1, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 3, 0, 0},
	{9, 0, 0, 3, 0, 0, 1, 0, 0, 5, 0, 3, 0, 0, 1, 0, 0, 5, 0, 3, 0, 0, 1, 0, 0, 5},
	{5, 4, 1, 3, 2, 0, 0, 3, 1, 0, 3, 0, 0, 0, 0, 3, 0, 0, 0, 2, 2},
	{8, 0, 2, 2, 0, 0, 0, 0, 2, 0, 3, 1, 3, 0, 0, 6, 1, 3, 3},
}

// TestGoValueProperty runs the property over generated graphs: the seeds,
// then inputs made by a fixed sequence.
func TestGoValueProperty(t *testing.T) {
	withFormBytes(t, 1<<14)
	inputs := append([][]byte(nil), goValueSeeds...)
	x := uint32(2463534242)
	for range 300 {
		b := make([]byte, 160)
		for i := range b {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			b[i] = byte(x)
		}
		inputs = append(inputs, b)
	}
	var cyclic, huge, written, writtenOver int
	for i, b := range inputs {
		var over bool
		t.Run(fmt.Sprint(i), func(t *testing.T) { over = checkGoValue(t, b) })
		gr := newGraph(b)
		switch {
		case gr.cyclic():
			cyclic++
		case gr.jsonLen() > 1<<20:
			huge++
		case over:
			writtenOver++
		default:
			written++
		}
	}
	// The generator must reach every case the property names.
	require.Positive(t, cyclic)
	require.Positive(t, huge)
	require.Positive(t, written)
	require.Positive(t, writtenOver)
	t.Logf("%d cyclic, %d far past the budget, %d compared with their JSON (%d of them past the budget)", cyclic, huge, written+writtenOver, writtenOver)
}

// FuzzGoValue is checkGoValue over any input.
func FuzzGoValue(f *testing.F) {
	for _, s := range goValueSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		saved := maxFormBytes
		defer func() { maxFormBytes = saved }()
		maxFormBytes = 1 << 14
		_ = checkGoValue(t, b)
	})
}
