package definition

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// decodeScanSeeds are documents that exercise the scanner's edges: every
// escape, surrogates valid and not, numbers valid and not, whitespace,
// control characters, trailing data, a byte-order mark, invalid UTF-8.
var decodeScanSeeds = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `-`, `01`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`,
	`-12.34e+056`, `+1`, `0x1`, `NaN`, `Infinity`, `tru`, `nul`, `truex`, `"a"`, `"a`, `"\"\\\/\b\f\n\r\t"`, `"\x"`, `"\'"`,
	`"\u0041\u00e9\u20AC"`, `"\uD83D\uDE00"`, `"\uD83D"`, `"\uDE00"`, `"\uD83Dx"`, `"\uD83D\u0041"`, `"\uD83D\uD83D\uDE00"`,
	`"\u12"`, `"\u12G4"`, "\"a\tb\"", "\"a\x00b\"", "\"a\x7fb\"", "\"\xff\"", "\xef\xbb\xbf{}", "{}\n", "{} x", "{}{}",
	` { "a" : [ 1 , 2 , { } , [ ] ] , "b" : null } `, `{"a":1,}`, `{"a":1 "b":2}`, `{"a" 1}`, `{a:1}`, `{"a":}`, `[1,]`, `[,1]`, `[1 2]`,
	`{"a":1,"a":2}`, `{"A":1,"a":2}`, "{\"k\xc3\xa9y\":\"v\"}", `{"\u0000":"\u0000"}`, "\t\r\n[\t1\r,\n2 ]\n",
	`{"mcpServers":{"x":{"command":"npx","args":["-y","${HOME}"],"env":{"TOKEN":"${T}"}}}}`,
}

func decodeScanAddSeeds(f *testing.F) {
	for _, s := range decodeScanSeeds {
		f.Add([]byte(s))
	}
	for _, glob := range []string{"testdata/decode_*.json", "testdata/resolve_*/*.json"} {
		paths, err := filepath.Glob(glob)
		require.NoError(f, err)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			require.NoError(f, err)
			f.Add(data)
		}
	}
}

// decodeScanGeneric turns a parsed tree into the value json.Unmarshal (with
// UseNumber) gives for the same document: objects become maps in which the
// last of repeated keys wins.
func decodeScanGeneric(v *decodeValue) any {
	switch v.kind {
	case decodeNull:
		return nil
	case decodeBool:
		return v.b
	case decodeNumber:
		return json.Number(v.str)
	case decodeString:
		return v.str
	case decodeArray:
		out := make([]any, len(v.elems))
		for i, e := range v.elems {
			out[i] = decodeScanGeneric(e)
		}
		return out
	default:
		out := make(map[string]any, len(v.members))
		for _, m := range v.members {
			out[m.key] = decodeScanGeneric(m.val)
		}
		return out
	}
}

// decodeScanCount is the number of values in a parsed tree.
func decodeScanCount(v *decodeValue) int {
	n := 1
	for _, e := range v.elems {
		n += decodeScanCount(e)
	}
	for _, m := range v.members {
		n += decodeScanCount(m.val)
	}
	return n
}

// decodeScanCheck asserts that decodeParse agrees with encoding/json on
// validity and values, and builds exactly the tree the previous
// json.Decoder-based parser built, and that the tree has no more values
// than decodeValueBound, which sizes the scanner's slabs.
func decodeScanCheck(t *testing.T, data []byte) {
	t.Helper()
	got, ok := decodeParse(data)
	ref, refOK := decodeParseReference(data)
	require.Equal(t, refOK, ok, "validity against the reference parser")
	require.Equal(t, utf8.Valid(data) && json.Valid(data), ok, "validity against encoding/json")
	if !ok {
		return
	}
	require.Equal(t, ref, got, "tree against the reference parser")
	require.LessOrEqual(t, decodeScanCount(got), decodeValueBound(string(data)), "values against decodeValueBound")
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var want any
	require.NoError(t, dec.Decode(&want))
	require.Equal(t, want, decodeScanGeneric(got), "values against encoding/json")
}

func TestDecodeScanSeeds(t *testing.T) {
	for _, s := range decodeScanSeeds {
		decodeScanCheck(t, []byte(s))
	}
}

func TestDecodeScanDepth(t *testing.T) {
	for _, n := range []int{decodeMaxDepth - 1, decodeMaxDepth, decodeMaxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			close := "]"
			if open != "[" {
				close = "}"
			}
			doc := strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
			_, ok := decodeParse([]byte(doc))
			require.Equal(t, n <= decodeMaxDepth, ok, "depth %d %s", n, open)
			require.Equal(t, json.Valid([]byte(doc)), ok, "depth %d %s", n, open)
		}
	}
}

// FuzzDecodeScan checks the scanner against encoding/json (validity and
// values) and against the json.Decoder-based reference parser (the exact
// tree, keys in order with duplicates).
func FuzzDecodeScan(f *testing.F) {
	decodeScanAddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeScanCheck(t, data)
	})
}

// BenchmarkDecodeOneServer decodes the one-server document a lone
// Host.Connect evaluates (bench-peers' and HostConnectHTTPVsRaw's), whose
// parse was one 256-value slab (18 KB) before slabs were sized to the
// document.
//
//	go test -run '^$' -bench DecodeOneServer -benchmem .
func BenchmarkDecodeOneServer(b *testing.B) {
	src := Source{Tier: ports.TierUser, Origin: "bench", Data: []byte(`{"mcpServers": {"s": {"type": "http", "url": "http://127.0.0.1:40000/mcp"}}}`)}
	b.ReportAllocs()
	for b.Loop() {
		if d := Decode(src); d.Problem != nil {
			b.Fatal(d.Problem.Kind)
		}
	}
}
