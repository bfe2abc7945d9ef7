package catalog

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkForm writes the decoded schema v's form: when exact, it is what
// encoder.value writes for v (which packTool stores as written).
func checkForm(t *testing.T, v any) {
	var w formWriter
	w.form(v)
	require.NotEmpty(t, w.buf)
	require.Empty(t, w.keys, "key stack not unwound")
	if !w.inexact {
		var e encoder
		require.True(t, e.value(v, 0), "an exact form of a value encoder.value refuses")
		require.Equal(t, string(e.buf), string(w.buf))
	}
}

// FuzzForm holds formWriter to canon on decoded JSON (the same form, so
// one walk narrows both alike) and to encoder.value on FuzzBuild's
// generated schemas (which hold what JSON cannot: NaN, json.Number of any
// text, names and strings that are not UTF-8, deep nesting).
func FuzzForm(f *testing.F) {
	for _, b := range rawSeeds(f) {
		f.Add(b)
	}
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var tree any
		if json.Unmarshal(b, &tree) == nil {
			checkForm(t, tree)
			var c canon
			if c.run(b) == rawOK {
				var w formWriter
				w.form(tree)
				require.False(t, w.inexact)
				require.Equal(t, string(c.out), string(w.buf), "form is not canon's")
			}
		}
		g := &gen{b: b}
		for !g.done() {
			it := g.tool()
			checkForm(t, it.InputSchema)
			checkForm(t, it.Meta)
		}
	})
}

// TestFormCases runs checkForm over the golden test's hand-written
// schemas and Go values.
func TestFormCases(t *testing.T) {
	for _, c := range walkerJSONCases {
		t.Run(c.name, func(t *testing.T) { checkForm(t, decode(t, c.in)) })
	}
	for _, c := range walkerGoCases() {
		t.Run(c.name, func(t *testing.T) { checkForm(t, c.in) })
	}
}
