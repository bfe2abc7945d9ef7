package harness

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/bench/internal/clientkit"
)

// TestSmoke builds the programs and runs every client kind over every
// transport in every era it speaks once, with a few calls, a 200-tool listing and a fleet of two
// servers, and checks that each produced sane figures and that the report
// names every kind. It keeps the benchmark from rotting; it measures
// nothing (make bench-peers does).
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the benchmark's programs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	start := time.Now()
	require.NoError(t, Build(ctx, dir))
	t.Logf("built in %s", time.Since(start))
	// Leftovers sees a running server of dir (else the check below is void).
	var r *Results
	s, err := startHTTP(ctx, dir, 0, false)
	require.NoError(t, err)
	assert.Contains(t, Leftovers(dir), s.cmd.Process.Pid)
	s.stop()
	start = time.Now()
	r, err = Run(ctx, Config{Dir: dir, Rounds: 1, Calls: 3, Connects: 1, ConcCalls: 16, Tools: 200, Fleet: 2, FleetRounds: 1,
		ConnectRounds: 3, ConnectWarmup: 1})
	require.NoError(t, err)
	t.Logf("ran in %s", time.Since(start))
	// No server outlives its client (stdio) or the run (HTTP); a child
	// that saw its stdin close may take a moment to exit.
	require.Eventually(t, func() bool { return len(Leftovers(dir)) == 0 }, 5*time.Second, 50*time.Millisecond,
		"processes of the benchmark left running")
	for _, era := range Eras {
		for _, tr := range Transports {
			for _, kind := range Kinds {
				k := Key{kind, tr, era}
				if !speaks(kind, era) {
					assert.Empty(t, r.Runs[k], "%s/%s/%s", kind, era, tr)
					continue
				}
				smokeRun(t, r, k, era == Eras[0])
			}
		}
	}
	// The paired connect measure: every kind it speaks, three rounds each.
	for _, era := range Eras {
		for _, tr := range Transports {
			for _, kind := range Kinds {
				k := Key{kind, tr, era}
				if !speaks(kind, era) {
					assert.Empty(t, r.Connects[k], "%v", k)
					continue
				}
				require.Len(t, r.Connects[k], 3, "%v", k)
				for _, d := range r.Connects[k] {
					assert.Positive(t, d, "%v", k)
				}
				_, _, ok := r.PairedExcess(k)
				assert.True(t, ok, "%v", k)
			}
		}
	}
	var out bytes.Buffer
	r.Markdown(&out)
	assert.Regexp(t, `\| mcpward \| legacy 2025-11-25 \| stdio \|( [^|]+ \|){4} \*\*[+-]\d+\.\d\d ms\*\* \[[+-]\d+\.\d\d, [+-]\d+\.\d\d\] \(`, out.String(),
		"mcpward's connect cell is its paired excess over go-sdk")
	assert.Contains(t, out.String(), "| listing | listing from ready | listing CPU | listing bytes | listing allocs |")
	assert.Contains(t, out.String(), "| connect | listing | listing from ready | retained |")
	for _, kind := range Kinds {
		assert.Contains(t, out.String(), "| "+kind+" | legacy 2025-11-25 | stdio |")
		assert.Contains(t, out.String(), "| "+kind+" | legacy 2025-11-25 | http |")
	}
	for _, kind := range []string{"go-sdk", "mcpward"} {
		assert.Contains(t, out.String(), "| "+kind+" | modern 2026-07-28 | stdio |")
		assert.Contains(t, out.String(), "| "+kind+" | modern 2026-07-28 | http |")
	}
	assert.NotContains(t, out.String(), "| mcp-go | modern")
}

// smokeRun checks the figures of k's one run (and, when fleet, of its one
// fleet run).
func smokeRun(t *testing.T, r *Results, k Key, fleet bool) {
	kind, tr := k.Kind, k.Era+"/"+k.Transport
	{
		{
			require.Len(t, r.Runs[k], 1, "%s/%s", kind, tr)
			f := r.Runs[k][0]
			assert.Equal(t, 201, f.Tools, "%s/%s listed every tool and echo", kind, tr)
			assert.Equal(t, 3, f.Calls)
			for name, v := range map[string]float64{
				"connect": float64(f.ConnectNS), "listing": float64(f.ListNS), "retained": float64(f.RetainedBytes),
				"p50": float64(f.CallP50NS), "p99": float64(f.CallP99NS), "bytes/call": float64(f.BytesPerCall),
				"RSS": float64(f.RSSBytes), "calls/s": f.CallsPerSec,
				"listing bytes": float64(f.ListBytes), "listing allocs": float64(f.ListAllocs),
			} {
				assert.Positive(t, v, "%s/%s %s", kind, tr, name)
			}
			assert.GreaterOrEqual(t, f.CallP99NS, f.CallP50NS, "%s/%s", kind, tr)
			assert.GreaterOrEqual(t, f.CPUPerCallNS, int64(0), "%s/%s", kind, tr) // getrusage's tick may round 3 calls to 0
			assert.GreaterOrEqual(t, f.RSSBytes, f.RetainedBytes, "%s/%s", kind, tr)
			assert.GreaterOrEqual(t, f.ListCPUNS, int64(0), "%s/%s", kind, tr)
			// The listing from the server's readiness leaves out the spawn
			// and the server's start over stdio; over HTTP it is the listing.
			assert.Positive(t, f.ListReadyNS, "%s/%s listing from ready", kind, tr)
			if k.Transport == "http" {
				assert.Equal(t, f.ListNS, f.ListReadyNS, "%s/%s", kind, tr)
			} else {
				assert.Less(t, f.ListReadyNS, f.ListNS, "%s/%s", kind, tr)
			}

			assert.Equal(t, k.Era, f.Era)
			if !fleet {
				assert.Empty(t, r.Fleets[k])
				return
			}
			require.Len(t, r.Fleets[k], 1, "%s/%s", kind, tr)
			fl := r.Fleets[k][0]
			assert.Equal(t, 2, fl.Servers)
			assert.Positive(t, fl.FleetHeapBytes, "%s/%s", kind, tr)
			assert.Greater(t, fl.FleetRSSBytes, fl.FleetHeapBytes, "%s/%s", kind, tr)
			assert.Positive(t, fl.FleetConnectNS, "%s/%s", kind, tr)
			assert.Positive(t, fl.FleetCloseNS, "%s/%s", kind, tr)
		}
	}
}

// TestPairedExcess: the connect column is the median of the differences
// within rounds, not the difference of the two medians (which a load
// change between rounds moves), and needs both kinds' rounds.
func TestPairedExcess(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	base, mine := Key{"go-sdk", "stdio", "legacy"}, Key{"mcpward", "stdio", "legacy"}
	r := &Results{Connects: map[Key][]time.Duration{
		base: ms(10, 100, 50, 20),
		mine: ms(12, 101, 53, 21),
	}}
	excess, own, ok := r.PairedExcess(mine)
	require.True(t, ok)
	assert.Equal(t, 1500*time.Microsecond, excess, "the median of 2, 1, 3 and 1 ms")
	assert.Equal(t, 37*time.Millisecond, own, "mcpward's own median")
	assert.Equal(t, []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond, 20 * time.Millisecond},
		r.Connects[base], "the rounds keep their order")
	lo, hi, ok := r.PairedInterval(mine)
	require.True(t, ok)
	assert.Equal(t, time.Millisecond, lo, "4 rounds: the interval spans the sorted differences 1, 1, 2, 3")
	assert.Equal(t, 3*time.Millisecond, hi)
	_, own, ok = r.PairedExcess(base)
	require.True(t, ok)
	assert.Equal(t, 35*time.Millisecond, own)
	assert.Equal(t, "35.0 ms", r.pairedCell(base))
	assert.Equal(t, "**+1.50 ms** [+1.00, +3.00] (37.0 ms)", r.pairedCell(mine))
	// 400 rounds: the interval narrows to the ranks around the median.
	var many []time.Duration
	for i := range 400 {
		many = append(many, time.Duration(i)*time.Millisecond)
	}
	r.Connects[base] = make([]time.Duration, 400)
	r.Connects[mine] = many
	lo, hi, _ = r.PairedInterval(mine)
	assert.Equal(t, 180*time.Millisecond, lo, "rank 200 - 0.98·20")
	assert.Equal(t, 220*time.Millisecond, hi)
	_, _, ok = r.PairedExcess(Key{"mcp-go", "stdio", "legacy"})
	assert.False(t, ok)
	assert.Equal(t, "—", r.pairedCell(Key{"mcp-go", "stdio", "legacy"}))
}

func TestMedian(t *testing.T) {
	get := func(f clientkit.Figures) float64 { return float64(f.CallP50NS) }
	runs := func(v ...int64) []clientkit.Figures {
		var fs []clientkit.Figures
		for _, x := range v {
			fs = append(fs, clientkit.Figures{CallP50NS: x})
		}
		return fs
	}
	for _, c := range []struct {
		in   []clientkit.Figures
		want float64
	}{
		{nil, 0},
		{runs(5), 5},
		{runs(9, 1, 5), 5},
		{runs(4, 1, 3, 2), 2.5},
	} {
		assert.Equal(t, c.want, Median(c.in, get))
	}
}
