package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// TestStoreTypesHoldNoPointers pins what makes the retained catalog cheap
// for the collector: the per-tool and per-schema records and the lookup
// index's slots hold no pointer, so their slices are never scanned.
func TestStoreTypesHoldNoPointers(t *testing.T) {
	var hasPointer func(reflect.Type) bool
	hasPointer = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.Pointer, reflect.String, reflect.Slice, reflect.Map, reflect.Interface,
			reflect.Chan, reflect.Func, reflect.UnsafePointer:
			return true
		case reflect.Array:
			return hasPointer(ty.Elem())
		case reflect.Struct:
			for i := range ty.NumField() {
				if hasPointer(ty.Field(i).Type) {
					return true
				}
			}
		}
		return false
	}
	for _, v := range []any{toolRec{}, schemaRec{}, nameSlot{}, span{}, toolRef{}} {
		assert.False(t, hasPointer(reflect.TypeOf(v)), "%T", v)
	}
	// A Tool is its server (shared by the catalog), an output schema
	// reference (nil unless the tool has one) and numbers.
	pointers := 0
	for f := range reflect.TypeOf(Tool{}).Fields() {
		if hasPointer(f.Type) {
			pointers++
		}
	}
	assert.Equal(t, 2, pointers)
}

func boolp(b bool) *bool { return &b }

// storeItems are tools exercising every field the store keeps.
func storeItems(t *testing.T) []ports.ToolItem {
	return []ports.ToolItem{
		{Name: "plain", Description: "d", InputSchema: decode(t, `{"type":"object","properties":{"x":{"type":"integer"}}}`)},
		{Name: "all", Title: "The Title", Description: "Every field ✓ \x00 \u2028",
			InputSchema:  decode(t, `{"type":"object","properties":{"x":{"anyOf":[]},"y":{"type":"string"}}}`),
			OutputSchema: decode(t, `{"type":"object","properties":{"r":{"oneOf":[]},"s":{"type":"number"}}}`),
			Meta:         map[string]any{MetaMaxResultSizeChars: float64(2000)},
			Annotations:  &ports.ToolAnnotations{Title: "ann", ReadOnlyHint: boolp(true), DestructiveHint: boolp(false), OpenWorldHint: boolp(true)}},
		{Name: "empty-ann", InputSchema: decode(t, `{}`), Annotations: &ports.ToolAnnotations{}},
		{Name: "hints", InputSchema: decode(t, `{}`), Annotations: &ports.ToolAnnotations{IdempotentHint: boolp(false)}},
		{Name: "bad-out", InputSchema: decode(t, `{}`), OutputSchema: decode(t, `{"type":"array"}`)},
		{Name: "na me/with \xff bytes", Description: strings.Repeat("long ", 1000), InputSchema: decode(t, `{}`)},
		{Name: strings.Repeat("n", 300), InputSchema: decode(t, `{}`)},
		{Name: "\x00", InputSchema: decode(t, `{}`)},
	}
}

// wantSpec is the Spec a tool built from it must have.
func wantSpec(server string, it ports.ToolItem) ports.ToolSpec {
	in, _ := Narrow(it.InputSchema)
	s := ports.ToolSpec{Name: ToolName(server, it.Name), Title: it.Title, Description: it.Description, InputSchema: in}
	var e encoder
	if e.value(it.InputSchema, 0) {
		s.ServerInputSchema = e.buf
	}
	if m, ok := objectSchema(it.OutputSchema); ok && it.OutputSchema != nil {
		s.OutputSchema, _ = Narrow(m)
	}
	if a := it.Annotations; a != nil {
		c := *a
		s.Annotations = &c
	}
	return s
}

// TestStoreRoundTrip: every field of every tool comes back from the store
// as the server gave it (schemas as Narrow writes them), through Tool,
// Catalog.Tool and Set.Tool alike.
func TestStoreRoundTrip(t *testing.T) {
	items := storeItems(t)
	cat := Build("srv", ports.SessionIdentity{}, Lists{Tools: items}, nil, nil)
	require.Len(t, cat.Tools, len(items), "rejected: %v", cat.Rejected)
	set := NewSet([]*Catalog{cat}, nil)
	for _, it := range items {
		host := ToolName("srv", it.Name)
		tool, ok := cat.Tool(strings.Clone(host))
		require.True(t, ok, it.Name)
		st, ok := set.Tool(strings.Clone(host))
		require.True(t, ok, it.Name)
		assert.Same(t, tool, st, it.Name)
		assert.Equal(t, host, tool.HostName())
		assert.Equal(t, it.Name, tool.NameOnServer())
		spec := tool.Spec()
		assert.Equal(t, wantSpec("srv", it), spec, it.Name)
		written, err := json.Marshal(it.InputSchema)
		require.NoError(t, err)
		assert.JSONEq(t, string(written), string(spec.ServerInputSchema), "the schema as written: %s", it.Name)
		_, dropped := Narrow(it.InputSchema)
		assert.Equal(t, dropped, tool.Narrowed(), it.Name)
		if m, ok := objectSchema(it.OutputSchema); ok && it.OutputSchema != nil {
			_, odropped := Narrow(m)
			assert.Equal(t, odropped, tool.OutputNarrowed(), it.Name)
		} else {
			assert.Nil(t, tool.OutputNarrowed(), it.Name)
		}
		wantCap := DefaultAdmissionCap
		if it.Name == "all" {
			wantCap = 2000
		}
		assert.Equal(t, wantCap, tool.ResultCap(), it.Name)
		assert.Equal(t, DefaultMaxBinaryBytes, tool.BinaryCap(), it.Name)
		if spec.Annotations != nil {
			spec.Annotations.Title = "changed"
			assert.Equal(t, wantSpec("srv", it).Annotations, tool.Spec().Annotations, "Spec hands out copies")
		}
	}
	all, _ := cat.Tool(ToolName("srv", "all"))
	assert.Equal(t, []string{"/properties/x"}, all.Narrowed())
	assert.Equal(t, []string{"/properties/r"}, all.OutputNarrowed())
	for _, name := range []string{"srv", "", "\x00", strings.Repeat("x", 300)} {
		_, ok := cat.Tool(name)
		assert.False(t, ok, "%q", name)
		_, ok = set.Tool(name)
		assert.False(t, ok, "%q", name)
	}
	_, ok := cat.Tool("srv")
	assert.False(t, ok)
	_, ok = set.Tool(ToolName("srv", "all") + "x")
	assert.False(t, ok)
}

// TestStoreEmpty: catalogs and sets without tools answer every lookup
// with false and list nothing.
func TestStoreEmpty(t *testing.T) {
	cat := Build("srv", ports.SessionIdentity{}, Lists{}, nil, nil)
	assert.Empty(t, cat.Tools)
	assert.Empty(t, cat.ModelTools())
	_, ok := cat.Tool("")
	assert.False(t, ok)
	rejected := Build("srv", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{{Name: ""}}}, nil, nil)
	assert.Empty(t, rejected.Tools)
	for _, s := range []*Set{NewSet(nil, nil), NewSet([]*Catalog{nil, cat, rejected}, nil)} {
		assert.Empty(t, s.Tools())
		assert.Empty(t, s.ModelTools())
		_, ok := s.Tool("")
		assert.False(t, ok)
		_, ok = s.Tool("mcp__srv__x")
		assert.False(t, ok)
	}
	var zero Catalog
	_, ok = zero.Tool("x")
	assert.False(t, ok)
}

// TestStoreHugeDescription keeps a description as large as a whole
// listing may be (DefaultMaxBytes) beside small tools.
func TestStoreHugeDescription(t *testing.T) {
	huge := strings.Repeat("é", DefaultMaxBytes/2)
	items := []ports.ToolItem{
		{Name: "a", Description: "small", InputSchema: decode(t, `{}`)},
		{Name: "huge", Description: huge, Title: huge[:1000], InputSchema: decode(t, `{}`)},
		{Name: "z", Description: "after", InputSchema: decode(t, `{}`)},
	}
	cat := Build("srv", ports.SessionIdentity{}, Lists{Tools: items}, nil, nil)
	require.Len(t, cat.Tools, 3)
	for _, it := range items {
		tool, ok := cat.Tool(ToolName("srv", it.Name))
		require.True(t, ok)
		spec := tool.Spec()
		assert.True(t, spec.Description == it.Description, it.Name)
		assert.True(t, spec.Title == it.Title, it.Name)
	}
}

// TestStoreManyCatalogsSet joins catalogs of many servers; every tool is
// found, as its own catalog's *Tool, and Tools is sorted.
func TestStoreManyCatalogsSet(t *testing.T) {
	var cats []*Catalog
	for s := range 20 {
		var items []ports.ToolItem
		for i := range 50 {
			items = append(items, item(t, fmt.Sprintf("t%d", i), fmt.Sprintf(`{"properties":{"p%d":{"type":"integer"}}}`, i%7)))
		}
		cats = append(cats, Build(fmt.Sprintf("s%d", s), ports.SessionIdentity{}, Lists{Tools: items}, nil, nil))
	}
	x := Build("x", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{item(t, "only", `{}`)}}, nil, nil)
	set := NewSet(append(cats, x), nil)
	require.Len(t, set.Tools(), 20*50+1)
	for _, c := range cats {
		for _, tool := range c.Tools {
			got, ok := set.Tool(strings.Clone(tool.HostName()))
			require.True(t, ok)
			assert.Same(t, tool, got)
		}
	}
	tools := set.Tools()
	for i := 1; i < len(tools); i++ {
		assert.Less(t, tools[i-1].HostName(), tools[i].HostName())
	}
}

// TestStoreConcurrent looks tools up, reads their Specs and calls them
// (compiling validators on first use) from many goroutines; run with
// -race.
func TestStoreConcurrent(t *testing.T) {
	items := decodeTools(t, realisticToolsJSON(300, true))
	c := &fakeCaller{res: okResult}
	cat := Build("srv", ports.SessionIdentity{}, Lists{Tools: items}, c, nil)
	set := NewSet([]*Catalog{cat}, nil)
	args := json.RawMessage(`{"path":"/p"}`)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range items {
				it := items[(i+g*37)%len(items)]
				host := ToolName("srv", it.Name)
				a, ok := set.Tool(host)
				b, ok2 := cat.Tool(host)
				if !ok || !ok2 || a != b || a.NameOnServer() != it.Name {
					t.Errorf("lookup of %s", host)
					return
				}
				if a.Spec().Description != it.Description {
					t.Errorf("description of %s", host)
				}
				if _, err := a.Call(context.Background(), args); err != nil {
					t.Errorf("call of %s: %v", host, err)
				}
			}
		})
	}
	wg.Wait()
}

// TestNameIndex puts names of every length up to 255 bytes, of any bytes,
// and finds each, and none of a set of near misses.
func TestNameIndex(t *testing.T) {
	var names []string
	seen := map[string]bool{}
	for i := range 3000 {
		n := (i * 7) % 256
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(i*31 + j*17)
		}
		if s := string(b); !seen[s] {
			seen[s] = true
			names = append(names, s)
		}
	}
	var sb strBuilder
	offs := make([]uint32, len(names))
	for i, s := range names {
		offs[i] = sb.add(s).off
	}
	all := sb.String()
	x := newNameIndex(len(names))
	for i, s := range names {
		x.put(s, offs[i], uint32(i), uint32(2*i))
	}
	for i, s := range names {
		got := x.get(all, strings.Clone(s))
		require.NotNil(t, got, "name %d", i)
		assert.Equal(t, uint32(i+1), got.ref)
		assert.Equal(t, uint32(2*i), got.aux)
		if len(s) > 0 && !seen[s[1:]] {
			assert.Nil(t, x.get(all, s[1:]), "a suffix of name %d", i)
		}
		if !seen[s+"x"] {
			assert.Nil(t, x.get(all, s+"x"), "name %d and more", i)
		}
	}
	assert.Panics(t, func() { x.put(strings.Repeat("y", 256), 0, 0, 0) })
}

// TestStoreTooLarge: past the bytes a catalog keeps (lowered here), every
// tool is rejected by name rather than stored at a wrong offset.
func TestStoreTooLarge(t *testing.T) {
	saved := maxStoreBytes
	t.Cleanup(func() { maxStoreBytes = saved })
	items := []ports.ToolItem{item(t, "a", `{"properties":{"x":{"type":"integer"}}}`), item(t, "b", `{}`)}
	for _, limit := range []int{10, 30} { // below the strings; below the schemas only
		maxStoreBytes = limit
		if limit == 30 {
			items[0].Description, items[1].Description = "", ""
		}
		cat := Build("s", ports.SessionIdentity{}, Lists{Tools: items}, nil, nil)
		assert.Empty(t, cat.Tools, "limit %d", limit)
		assert.Equal(t, []Rejected{{"s", ports.ListTools, "a", ReasonCatalogTooLarge}, {"s", ports.ListTools, "b", ReasonCatalogTooLarge}}, cat.Rejected)
		_, ok := cat.Tool(ToolName("s", "a"))
		assert.False(t, ok)
		assert.Empty(t, NewSet([]*Catalog{cat}, nil).Tools())
	}
	maxStoreBytes = saved
	cat := Build("s", ports.SessionIdentity{}, Lists{Tools: items}, nil, nil)
	assert.Len(t, cat.Tools, 2)
}
