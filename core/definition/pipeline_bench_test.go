package definition_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// pipelineSources builds n servers spread over the five tiers (one document
// per tier), a realistic mix of stdio and http entries with templates,
// secrets under credential-shaped keys and plain values.
func pipelineSources(n int) []definition.Source {
	per := map[ports.Tier]*strings.Builder{}
	for _, t := range ports.Tiers {
		b := &strings.Builder{}
		b.WriteString(`{"mcpServers":{`)
		per[t] = b
	}
	count := map[ports.Tier]int{}
	for i := 0; i < n; i++ {
		t := ports.Tiers[i%len(ports.Tiers)]
		b := per[t]
		if count[t] > 0 {
			b.WriteByte(',')
		}
		count[t]++
		if i%2 == 0 {
			fmt.Fprintf(b, `"srv-%d":{"type":"stdio","command":"npx","args":["-y","@scope/server-%d","--root","${HOME}/work/%d","--verbose"],"env":{"GITHUB_TOKEN":"${GITHUB_TOKEN}","NODE_OPTIONS":"--max-old-space-size=%d","LOG_LEVEL":"info"},"cwd":"${HOME}/work"}`, i, i, i, 1024+i)
		} else {
			fmt.Fprintf(b, `"srv-%d":{"type":"http","url":"https://mcp%d.example.com/v1/mcp?tenant=${TENANT}","headers":{"Authorization":"Bearer ${API_TOKEN}","X-Request-Source":"mcpward-%d"}}`, i, i, i)
		}
	}
	var srcs []definition.Source
	for _, t := range ports.Tiers {
		per[t].WriteString(`}}`)
		srcs = append(srcs, definition.Source{Tier: t, Origin: string(t) + ".json", Data: []byte(per[t].String())})
	}
	return srcs
}

func pipelineLookup(name string) (string, bool) {
	switch name {
	case "HOME":
		return "/home/dev", true
	case "GITHUB_TOKEN":
		return "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", true
	case "API_TOKEN":
		return "tok-0123456789", true
	case "TENANT":
		return "acme", true
	}
	return "", false
}

// runPipeline is the whole definitions flow a host runs on start-up:
// decode every source, resolve, then materialize, fingerprint and project
// every resolved server.
func runPipeline(tb testing.TB, srcs []definition.Source) int {
	docs := make([]definition.Document, 0, len(srcs))
	for _, s := range srcs {
		docs = append(docs, definition.Decode(s))
	}
	res := definition.Resolve(docs)
	n := 0
	for _, s := range res.Servers {
		if s.State != definition.StateResolved {
			tb.Fatalf("server %s: %s %s", s.Name, s.State, s.Reason)
		}
		m, err := definition.Materialize(s.Def, pipelineLookup)
		if err != nil {
			tb.Fatal(err)
		}
		_ = definition.Fingerprint(m)
		_ = definition.Project(m)
		n++
	}
	return n
}

// BenchmarkPipeline1000 runs decode + resolve + materialize + fingerprint +
// project for 1,000 servers across all five tiers; BenchmarkUnmarshal1000
// is json.Unmarshal of the same bytes into generic values, the baseline the
// ratio in BENCHMARKS.md is taken against.
func BenchmarkPipeline1000(b *testing.B) {
	srcs := pipelineSources(1000)
	b.Run("mcpward", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n := runPipeline(b, srcs); n != 1000 {
				b.Fatalf("resolved %d servers", n)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, s := range srcs {
				var v map[string]any
				if err := json.Unmarshal(s.Data, &v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func TestPipelineSourcesResolveWhole(t *testing.T) {
	if n := runPipeline(t, pipelineSources(50)); n != 50 {
		t.Fatalf("resolved %d of 50 servers", n)
	}
}
