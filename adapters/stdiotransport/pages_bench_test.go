package stdiotransport

import (
	"fmt"
	"strings"
	"testing"
)

// pageLine is a tools/list answer of 100 tools, about 75 KiB, shaped as
// the bench server's pages (a description and an object schema each).
func pageLine(id int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"result":{"tools":[`, id)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"tool_%d_%d","description":"A tool that does something useful, number %d of the page, for the benchmark","inputSchema":{"type":"object","properties":{"a":{"type":"string","description":"the first argument of this tool, a string of some length"},"b":{"type":"integer","minimum":0,"maximum":1000},"c":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"boolean"},"z":{"type":"string","enum":["one","two","three","four"]}}}},"d":{"type":"object","additionalProperties":{"type":"string"}},"e":{"type":"string","format":"date-time"},"f":{"type":"string","pattern":"^[a-z]+$"}},"required":["a","b"]}}`, id, i, i)
	}
	fmt.Fprintf(&b, `],"nextCursor":"c%d"}}`+"\n", id)
	return []byte(b.String())
}

// pipeReader serves each segment in reads of at most 64 KiB (a pipe's
// capacity), a read never crossing into the next segment: a server that
// writes a page only when asked for it.
type pipeReader struct{ segs [][]byte }

func (r *pipeReader) Read(p []byte) (int, error) {
	for len(r.segs) > 0 && len(r.segs[0]) == 0 {
		r.segs = r.segs[1:]
	}
	if len(r.segs) == 0 {
		return 0, fmt.Errorf("drained")
	}
	n := copy(p[:min(len(p), 64<<10)], r.segs[0])
	r.segs[0] = r.segs[0][n:]
	return n, nil
}

// BenchmarkFramerPages frames and decodes the 100 pages of a 10k listing
// as a child's pipe delivers them, holding every message until the
// listing is read (as the catalog holds a page's schemas).
func BenchmarkFramerPages(b *testing.B) {
	pages := make([][]byte, 100)
	total := 0
	for i := range pages {
		pages[i] = pageLine(i)
		total += len(pages[i])
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	segs := make([][]byte, len(pages))
	held := make([]any, len(pages))
	for b.Loop() {
		copy(segs, pages)
		f := &framer{r: &pipeReader{segs: segs}}
		for i := range pages {
			m, err := f.next()
			if err != nil {
				b.Fatal(err)
			}
			held[i] = m
		}
		f.release()
		clear(held)
	}
}
