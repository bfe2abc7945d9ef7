package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"sync"
	"testing"

	"github.com/mcpward/mcpward/ports"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// packSchemas are schemas whose strings and subschemas repeat across and
// within schemas, with escapes, non-ASCII text and short literals, so
// that packing uses references of every kind.
var packSchemas = []string{
	`{"type":"object","properties":{"a":{"type":"string","description":"quote \" and \\ here"},"b":{"type":"string","description":"quote \" and \\ here"}}}`,
	`{"properties":{"x":{"type":"array","items":{"type":"string","enum":["é","\u2028","<&>"]}},"y":{"type":"array","items":{"type":"string","enum":["é","\u2028","<&>"]}}}}`,
	`{"properties":{"a":{"type":"string","description":"quote \" and \\ here"},"n":{"type":"integer","minimum":1}},"required":["a"]}`,
	`{"properties":{"x":{"type":"array","items":{"type":"string","enum":["é","\u2028","<&>"]}},"z":{"type":"object","properties":{}}}}`,
	`{"properties":{"\u0001":{"const":"\u0001\u0001"},"zz":{"const":"\u0001\u0001"}}}`,
	`{}`,
}

// TestPackRoundTrip proves that Spec returns exactly the bytes Narrow
// writes for every tool, however much of its schema packing replaced by
// references, and that packing does replace repeated parts.
func TestPackRoundTrip(t *testing.T) {
	var items []ports.ToolItem
	for i, s := range packSchemas {
		items = append(items, item(t, fmt.Sprintf("t%d", i), s))
	}
	items = append(items, decodeTools(t, realisticToolsJSON(50, true))...)
	cat := Build("srv", ports.SessionIdentity{}, Lists{Tools: items}, nil, nil)
	require.Len(t, cat.Tools, len(items))
	refs := 0
	for _, it := range items {
		tool, ok := cat.Tool(ToolName("srv", it.Name))
		require.True(t, ok, it.Name)
		want, _ := Narrow(it.InputSchema)
		assert.Equal(t, string(want), string(tool.Spec().InputSchema), it.Name)
		v, err := tool.inputValidator()
		require.NoError(t, err, it.Name)
		assert.NotNil(t, v, it.Name)
		sch := &tool.srv.st.sch
		r := sch.recs[tool.schemaID()]
		if packed := sch.data[r.off : r.off+r.n]; bytes.IndexByte(packed, refMark) >= 0 {
			refs++
			assert.Less(t, len(packed), len(want), it.Name)
		}
	}
	assert.Greater(t, refs, 50, "later schemas are packed")
}

// TestSpecConcurrent calls Spec of packed tools from many goroutines (run
// with -race) and checks every result.
func TestSpecConcurrent(t *testing.T) {
	items := decodeTools(t, realisticToolsJSON(100, true))
	cat := Build("srv", ports.SessionIdentity{}, Lists{Tools: items}, nil, nil)
	want := make(map[string]string, len(items))
	for _, it := range items {
		b, _ := Narrow(it.InputSchema)
		want[ToolName("srv", it.Name)] = string(b)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, tool := range cat.Tools {
				if got := string(tool.Spec().InputSchema); got != want[tool.HostName()] {
					t.Errorf("%s: Spec differs from Narrow", tool.HostName())
				}
				_, _ = tool.inputValidator()
			}
		})
	}
	wg.Wait()
}

// TestPackHashCollision makes every known hash name the wrong table
// entry: encode must notice that the bytes differ and keep them inline.
func TestPackHashCollision(t *testing.T) {
	p := newPacker(maphash.MakeSeed())
	for _, s := range packSchemas {
		p.pack(decode(t, s).(map[string]any))
	}
	require.Greater(t, len(p.tab.off), 2, "the table has at least two entries")
	for h, k := range p.strs {
		if k >= 0 {
			p.strs[h] = (k + 1) % (len(p.tab.off) - 1)
		}
	}
	for i, s := range packSchemas {
		m := decode(t, s).(map[string]any)
		m["required"] = []any{fmt.Sprint("r", i)} // a new schema, not a shared one
		k, _, _ := p.pack(m)
		want, _ := Narrow(m)
		assert.Equal(t, string(want), string(p.json(k)), s)
	}
}

// FuzzPack packs two schemas, one after the other, with one packer and
// checks that both expand to Narrow's bytes.
func FuzzPack(f *testing.F) {
	for i := range packSchemas {
		f.Add(packSchemas[i], packSchemas[(i+1)%len(packSchemas)])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		p := newPacker(maphash.MakeSeed())
		var entries []uint32
		var schemas []map[string]any
		for _, s := range []string{a, b, a} {
			var v any
			if json.Unmarshal([]byte(s), &v) != nil {
				return
			}
			m, ok := objectSchema(v)
			if !ok {
				return
			}
			e, _, _ := p.pack(m)
			entries = append(entries, e)
			schemas = append(schemas, m)
		}
		p.done()
		for i, e := range entries {
			want, _ := Narrow(schemas[i])
			if got := p.json(e); !bytes.Equal(got, want) {
				t.Fatalf("entry %d expands to %q, want %q", i, got, want)
			}
		}
		if entries[0] != entries[2] {
			t.Fatal("the same schema packed twice is not shared")
		}
	})
}
