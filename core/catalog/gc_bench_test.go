package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/mcpward/mcpward/ports"
)

// gcMetrics are the runtime/metrics samples BenchmarkGCWithCatalog reads.
var gcMetrics = []string{
	"/gc/cycles/total:gc-cycles",
	"/cpu/classes/gc/mark/assist:cpu-seconds",
	"/cpu/classes/gc/mark/dedicated:cpu-seconds",
	"/cpu/classes/gc/mark/idle:cpu-seconds",
	"/gc/scan/heap:bytes",
}

func readGCMetrics() (cycles uint64, markSec, idleSec float64, scanHeap uint64) {
	s := make([]metrics.Sample, len(gcMetrics))
	for i, n := range gcMetrics {
		s[i].Name = n
	}
	metrics.Read(s)
	cycles = s[0].Value.Uint64()
	markSec = s[1].Value.Float64() + s[2].Value.Float64()
	idleSec = s[3].Value.Float64()
	scanHeap = s[4].Value.Uint64()
	return
}

var sinkGarbage any

// callerFunc is a Caller that keeps nothing.
type callerFunc func(context.Context, ports.CallRequest) (ports.CallResult, error)

func (f callerFunc) Call(ctx context.Context, r ports.CallRequest) (ports.CallResult, error) {
	return f(ctx, r)
}

// callGarbage allocates about what one call's decoding leaves behind: a
// 32 KiB read buffer and a decoded result, pointers and all.
func callGarbage(res []byte) {
	buf := make([]byte, 32<<10)
	var v any
	_ = json.Unmarshal(res, &v)
	sinkGarbage = v
	sinkGarbage = buf
}

// BenchmarkGCWithCatalog keeps a Set of one catalog of n realistic tools
// (every schema distinct, as bench-peers' server lists them) alive and
// then makes calls through its first tool, each allocating garbage like a
// call's decoding does, so that the collector runs many cycles with the
// catalog live. It reports the collector's mark CPU per cycle
// (runtime/metrics: assist + dedicated, and with idle workers' time), the scannable heap
// (/gc/scan/heap:bytes), and the heap objects and bytes the catalog keeps
// (runtime.MemStats after GC, before and after building). n=0 is the
// same loop with no catalog, for scale; the difference is what the live
// catalog costs every cycle.
func BenchmarkGCWithCatalog(b *testing.B) {
	for _, n := range []int{0, 10_000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			res := []byte(`{"content":[{"type":"text","text":"{\"records\":[{\"id\":1,\"kind\":\"a\"},{\"id\":2,\"kind\":\"b\"}]}"}],"_meta":{"a":[1,2,3],"b":{"c":"d"}}}`)
			c := callerFunc(func(context.Context, ports.CallRequest) (ports.CallResult, error) {
				callGarbage(res)
				return ports.CallResult{Content: json.RawMessage(`[{"type":"text","text":"ok"}]`)}, nil
			})
			var data []byte
			if n > 0 {
				data = realisticToolsJSON(n, true)
			} else {
				data = realisticToolsJSON(1, true)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			set := func() *Set {
				cat := Build("store", ports.SessionIdentity{}, Lists{Tools: decodeTools(b, data)}, c, nil)
				return NewSet([]*Catalog{cat}, nil)
			}()
			runtime.GC()
			runtime.ReadMemStats(&after)
			tool := set.Tools()[0]
			host := tool.HostName()
			args := json.RawMessage(`{"path":"/data/records","limit":50}`)
			ctx := context.Background()
			cyc0, mark0, idle0, _ := readGCMetrics()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				t, ok := set.Tool(host)
				if !ok {
					b.Fatal("no tool")
				}
				if _, err := t.Call(ctx, args); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cyc1, mark1, idle1, scan := readGCMetrics()
			runtime.KeepAlive(set)
			runtime.KeepAlive(data)
			if cyc1 > cyc0 {
				b.ReportMetric((mark1-mark0)/float64(cyc1-cyc0)*1e6, "mark-µs/cycle")
				b.ReportMetric((mark1-mark0+idle1-idle0)/float64(cyc1-cyc0)*1e6, "mark+idle-µs/cycle")
			}
			b.ReportMetric(float64(cyc1-cyc0), "cycles")
			b.ReportMetric(float64(scan), "scan-heap-B")
			b.ReportMetric(float64(after.HeapObjects)-float64(before.HeapObjects), "retained-objects")
			b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "retained-B")
		})
	}
}

// BenchmarkSmallCatalogs builds 100 catalogs of three small tools each, as
// 100 echo-sized servers leave them, and reports the heap the 100 keep
// (runtime.MemStats after GC).
func BenchmarkSmallCatalogs(b *testing.B) {
	data := []byte(`[{"name":"echo","description":"Returns its text argument.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}},` +
		`{"name":"add","description":"Adds two numbers.","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},` +
		`{"name":"now","description":"The current time.","inputSchema":{"type":"object"}}]`)
	var retained float64
	b.ReportAllocs()
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cats := make([]*Catalog, 100)
		for i := range cats {
			cats[i] = Build(fmt.Sprintf("srv%d", i), ports.SessionIdentity{}, Lists{Tools: decodeTools(b, data)}, nil, nil)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(cats)
		retained = float64(after.HeapAlloc) - float64(before.HeapAlloc)
	}
	b.ReportMetric(retained, "retained-B/100")
}

// BenchmarkLookup looks one tool up by host-facing name in a Set and in
// its Catalog of 10,000 tools: the lookup every call makes. "map" is a
// map[string]*Tool of the same tools, what both looked tools up in
// before the pointer-free store, for comparison in the same run.
func BenchmarkLookup(b *testing.B) {
	cat := Build("store", ports.SessionIdentity{}, Lists{Tools: decodeTools(b, realisticToolsJSON(10_000, true))}, nil, nil)
	set := NewSet([]*Catalog{cat}, nil)
	// A name as a call brings it: its own copy, not the catalog's string.
	host := strings.Clone(cat.Tools[4321].HostName())
	b.Run("Set.Tool", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := set.Tool(host); !ok {
				b.Fatal("not found")
			}
		}
	})
	b.Run("Catalog.Tool", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := cat.Tool(host); !ok {
				b.Fatal("not found")
			}
		}
	})
	// What Set.Tool and Catalog.Tool were before the pointer-free
	// store: a map by host-facing name.
	byHost := make(map[string]*Tool, len(cat.Tools))
	for _, t := range cat.Tools {
		byHost[t.HostName()] = t
	}
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := byHost[host]; !ok {
				b.Fatal("not found")
			}
		}
	})
	b.Run("map/missing", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := byHost["store__no_such_tool"]; ok {
				b.Fatal("found")
			}
		}
	})
	b.Run("Set.Tool/missing", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := set.Tool("store__no_such_tool"); ok {
				b.Fatal("found")
			}
		}
	})
}

// BenchmarkLookupInterleaved times Set.Tool, Catalog.Tool and a
// map[string]*Tool (the lookup before the pointer-free store) in
// alternating rounds of 1,000 lookups each, so that the load of a shared
// machine weighs on all three alike, and reports each one's ns per
// lookup and its ratio to the map's. Each round starts with another of
// the three.
func BenchmarkLookupInterleaved(b *testing.B) {
	cat := Build("store", ports.SessionIdentity{}, Lists{Tools: decodeTools(b, realisticToolsJSON(10_000, true))}, nil, nil)
	set := NewSet([]*Catalog{cat}, nil)
	byHost := make(map[string]*Tool, len(cat.Tools))
	for _, t := range cat.Tools {
		byHost[t.HostName()] = t
	}
	hosts := make([]string, 64)
	for i := range hosts {
		hosts[i] = strings.Clone(cat.Tools[i*151].HostName())
	}
	var sink *Tool
	kinds := []func(string) (*Tool, bool){
		func(h string) (*Tool, bool) { t, ok := byHost[h]; return t, ok },
		set.Tool,
		cat.Tool,
	}
	var spent [3]time.Duration
	rounds := 0
	for b.Loop() {
		for j := range kinds {
			k := (j + rounds) % len(kinds) // each kind first in turn
			f := kinds[k]
			start := time.Now()
			for i := range 1000 {
				t, ok := f(hosts[i&63])
				if !ok {
					b.Fatal("not found")
				}
				sink = t
			}
			spent[k] += time.Since(start)
		}
		rounds++
	}
	_ = sink
	for k, name := range []string{"map", "Set.Tool", "Catalog.Tool"} {
		b.ReportMetric(float64(spent[k].Nanoseconds())/float64(rounds*1000), name+"-ns")
	}
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "Set/map")
	b.ReportMetric(float64(spent[2])/float64(spent[0]), "Catalog/map")
}
