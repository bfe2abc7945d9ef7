package catalog

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkWalkersAgree narrows the decoded schema v with the tree walk
// (root) and with its form walked (rootTree): the same bytes, the same
// paths. When the form is exact it is what encoder.value writes.
func checkWalkersAgree(t *testing.T, v any) {
	var old, unified narrower
	old.reset()
	old.root(v)
	unified.reset()
	unified.rootTree(v)
	require.Equal(t, string(old.buf), string(unified.buf))
	require.Equal(t, old.dropped, unified.dropped)
	if !unified.form.inexact {
		var e encoder
		require.True(t, e.value(v, 0), "an exact form of a value encoder.value refuses")
		require.Equal(t, string(e.buf), string(unified.form.buf))
	}
}

// FuzzWalkersAgree holds the form walk to the tree walk on decoded JSON
// (whose form must be canon's) and on FuzzBuild's generated schemas (which
// hold what JSON cannot: NaN, json.Number of any text, names and strings
// that are not UTF-8, deep nesting).
func FuzzWalkersAgree(f *testing.F) {
	for _, b := range rawSeeds(f) {
		f.Add(b)
	}
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var tree any
		if json.Unmarshal(b, &tree) == nil {
			checkWalkersAgree(t, tree)
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
			checkWalkersAgree(t, it.InputSchema)
			checkWalkersAgree(t, it.Meta)
		}
	})
}

// TestWalkersAgreeCases holds the form walk to the tree walk over the
// golden test's hand-written schemas and Go values.
func TestWalkersAgreeCases(t *testing.T) {
	for _, c := range walkerJSONCases {
		t.Run(c.name, func(t *testing.T) { checkWalkersAgree(t, decode(t, c.in)) })
	}
	for _, c := range walkerGoCases() {
		t.Run(c.name, func(t *testing.T) { checkWalkersAgree(t, c.in) })
	}
}
