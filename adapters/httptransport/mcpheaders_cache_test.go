package httptransport

import (
	"encoding/json"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listedTool is a tool as a client decodes it from tools/list: a schema of
// eight properties, two of them (one nested) annotated with x-mcp-header.
func listedTool(t testing.TB) *mcp.Tool {
	var tool mcp.Tool
	require.NoError(t, json.Unmarshal([]byte(`{"name":"route","description":"Routes a request.","inputSchema":{
		"type":"object","required":["region","query"],
		"properties":{
			"region":{"type":"string","description":"Where.","x-mcp-header":"Region"},
			"zone":{"type":"object","properties":{"id":{"type":"integer","x-mcp-header":"Zone"},"label":{"type":"string"}}},
			"query":{"type":"string","description":"What."},
			"limit":{"type":"integer","minimum":1,"maximum":100},
			"cursor":{"type":"string"},
			"tags":{"type":"array","items":{"type":"string"}},
			"verbose":{"type":"boolean"},
			"since":{"type":"string","format":"date-time"}}}}`), &tool))
	return &tool
}

var routeParams = []byte(`{"name":"route","arguments":{"region":"us-west1","zone":{"id":7,"label":"b"},"query":"q","limit":10}}`)

// TestParamHeadersCachePerTool: a tool's bindings are derived once and
// kept under that tool only while it is reachable (so re-listings do not
// grow the cache), concurrent first calls agree, and every call still
// reads its own arguments.
func TestParamHeadersCachePerTool(t *testing.T) {
	want := map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-Zone": "7"}
	tool := listedTool(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { assert.Equal(t, want, paramHeaders(tool, routeParams)) })
	}
	wg.Wait()
	v, ok := toolBindings.Load(weak.Make(tool))
	require.True(t, ok, "the tool's bindings are kept")
	assert.ElementsMatch(t, bindings(tool), v)
	assert.Equal(t, map[string]string{"Mcp-Param-Region": "eu"},
		paramHeaders(tool, []byte(`{"name":"route","arguments":{"region":"eu"}}`)), "each call reads its own arguments")

	// A tool without annotations is kept too (as none), and a tool that is
	// no longer reachable leaves the cache: 100 re-listings leave nothing.
	plain := &mcp.Tool{Name: "plain", InputSchema: map[string]any{"type": "object"}}
	assert.Nil(t, paramHeaders(plain, routeParams))
	_, ok = toolBindings.Load(weak.Make(plain))
	assert.True(t, ok)
	runtime.KeepAlive(plain)
	count := func() (n int) {
		toolBindings.Range(func(_, _ any) bool { n++; return true })
		return n
	}
	base := count()
	for range 100 {
		assert.Len(t, paramHeaders(listedTool(t), routeParams), 2)
	}
	assert.Eventually(t, func() bool { runtime.GC(); return count() <= base }, 10*time.Second, 10*time.Millisecond,
		"entries of collected tools are dropped (%d before the re-listings)", base)
	runtime.KeepAlive(tool)
}

// BenchmarkParamHeaders: the Mcp-Param-* headers of one tools/call of an
// annotated tool, deriving the bindings from the schema on every call
// (before: a marshal and an unmarshal of the whole schema) and taken from
// the per-tool cache (after: only the arguments are read).
func BenchmarkParamHeaders(b *testing.B) {
	tool := listedTool(b)
	b.Run("derived-per-call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(bindingHeaders(bindings(tool), routeParams)) != 2 {
				b.Fatal("headers")
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(paramHeaders(tool, routeParams)) != 2 {
				b.Fatal("headers")
			}
		}
	})
}
