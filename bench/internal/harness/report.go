package harness

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mcpward/mcpward/bench/internal/clientkit"
	"github.com/mcpward/mcpward/bench/internal/fixture"
)

// Median returns the median of the figure get reads from every run of
// key (0 with no run).
func Median(runs []clientkit.Figures, get func(clientkit.Figures) float64) float64 {
	if len(runs) == 0 {
		return 0
	}
	v := make([]float64, len(runs))
	for i, f := range runs {
		v[i] = get(f)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// column is one column of the tables: a figure and how to print it. A
// column without get is the paired connect measure (Results.Connects, see
// pairedCell) instead of a figure of the runs.
type column struct {
	name   string
	get    func(clientkit.Figures) float64
	format func(float64) string
}

func dur(v float64) string {
	d := time.Duration(v)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	}
}

func size(v float64) string {
	switch {
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", v)
	}
}

func rate(v float64) string { return fmt.Sprintf("%.0f/s", v) }

var callColumns = []column{
	{"call p50", func(f clientkit.Figures) float64 { return float64(f.CallP50NS) }, dur},
	{"CPU/call", func(f clientkit.Figures) float64 { return float64(f.CPUPerCallNS) }, dur},
	{"bytes/call", func(f clientkit.Figures) float64 { return float64(f.BytesPerCall) }, size},
	{"p99", func(f clientkit.Figures) float64 { return float64(f.CallP99NS) }, dur},
	{"connect", nil, nil},
	{"10k listing", func(f clientkit.Figures) float64 { return float64(f.ListNS) }, dur},
	{"10k listing from ready", func(f clientkit.Figures) float64 { return float64(f.ListReadyNS) }, dur},
	{"retained", func(f clientkit.Figures) float64 { return float64(f.RetainedBytes) }, size},
	{"RSS", func(f clientkit.Figures) float64 { return float64(f.RSSBytes) }, size},
	{"8 callers", func(f clientkit.Figures) float64 { return f.CallsPerSec }, rate},
}

// listColumns are the full server's connect and listing alone: time, the
// client process's CPU (getrusage, a stdio server's own start excluded),
// and what it allocated.
var listColumns = []column{
	{"listing", func(f clientkit.Figures) float64 { return float64(f.ListNS) }, dur},
	{"listing from ready", func(f clientkit.Figures) float64 { return float64(f.ListReadyNS) }, dur},
	{"listing CPU", func(f clientkit.Figures) float64 { return float64(f.ListCPUNS) }, dur},
	{"listing bytes", func(f clientkit.Figures) float64 { return float64(f.ListBytes) }, size},
	{"listing allocs", func(f clientkit.Figures) float64 { return float64(f.ListAllocs) }, count},
}

func count(v float64) string { return fmt.Sprintf("%.0f", v) }

var fleetColumns = []column{
	{"heap", func(f clientkit.Figures) float64 { return float64(f.FleetHeapBytes) }, size},
	{"RSS", func(f clientkit.Figures) float64 { return float64(f.FleetRSSBytes) }, size},
	{"connect all", func(f clientkit.Figures) float64 { return float64(f.FleetConnectNS) }, dur},
	{"close all", func(f clientkit.Figures) float64 { return float64(f.FleetCloseNS) }, dur},
}

// table writes one markdown table of cols over runs: the go-sdk row in
// absolute figures, every other row as its ratio to go-sdk's median over
// the same transport in the same era, then its own median in brackets.
func (r *Results) table(w io.Writer, runs map[Key][]clientkit.Figures, cols []column) {
	fmt.Fprint(w, "| client | era | transport |")
	for _, c := range cols {
		name := c.name
		if r.Config.Tools != 10_000 {
			name = strings.TrimPrefix(name, "10k ")
		}
		fmt.Fprintf(w, " %s |", name)
	}
	fmt.Fprint(w, "\n|---|---|---|")
	for range cols {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, tr := range r.Config.Transports {
		for _, era := range r.Config.Eras {
			r.rows(w, runs, cols, tr, era)
		}
	}
}

// rows writes the rows of table over transport tr in era.
func (r *Results) rows(w io.Writer, runs map[Key][]clientkit.Figures, cols []column, tr, era string) {
	{
		base := runs[Key{Kinds[0], tr, era}]
		for _, kind := range Kinds {
			own := runs[Key{kind, tr, era}]
			if len(own) == 0 {
				continue
			}
			fmt.Fprintf(w, "| %s | %s %s | %s |", kind, era, fixture.Version(era), tr)
			for _, c := range cols {
				if c.get == nil {
					fmt.Fprintf(w, " %s |", r.pairedCell(Key{kind, tr, era}))
					continue
				}
				m, b := Median(own, c.get), Median(base, c.get)
				switch {
				case kind == Kinds[0]:
					fmt.Fprintf(w, " %s |", c.format(m))
				case b > 0:
					fmt.Fprintf(w, " **%.2f×** (%s) |", m/b, c.format(m))
				default:
					fmt.Fprintf(w, " (%s) |", c.format(m))
				}
			}
			fmt.Fprintln(w)
		}
	}
}

// PairedExcess returns the median over the paired connect measure's
// rounds of k's connect minus the baseline kind's in the same round, and
// k's own median; ok is false when k or the baseline has no round.
func (r *Results) PairedExcess(k Key) (excess, own time.Duration, ok bool) {
	diffs := r.diffs(k)
	if len(diffs) == 0 {
		return 0, 0, false
	}
	return medianDur(diffs), medianDur(slices.Clone(r.Connects[k])), true
}

// PairedInterval returns a 95% confidence interval of PairedExcess's
// median, by order statistics (the ranks n/2 ∓ 0.98·√n of the sorted
// differences, which hold the median with probability about 0.95
// whatever the differences' distribution); ok as PairedExcess's. On a
// loaded machine a connect's time varies by tens of milliseconds and the
// interval says whether the rounds resolved the excess.
func (r *Results) PairedInterval(k Key) (lo, hi time.Duration, ok bool) {
	diffs := r.diffs(k)
	n := len(diffs)
	if n == 0 {
		return 0, 0, false
	}
	slices.Sort(diffs)
	half := 0.98 * math.Sqrt(float64(n))
	i := max(int(math.Floor(float64(n)/2-half)), 0)
	j := min(int(math.Ceil(float64(n)/2+half)), n-1)
	return diffs[i], diffs[j], true
}

// diffs are k's paired differences, round by round.
func (r *Results) diffs(k Key) []time.Duration {
	mine, base := r.Connects[k], r.Connects[Key{Kinds[0], k.Transport, k.Era}]
	n := min(len(mine), len(base))
	d := make([]time.Duration, n)
	for i := range n {
		d[i] = mine[i] - base[i]
	}
	return d
}

// medianDur is the median of d (which it sorts).
func medianDur(d []time.Duration) time.Duration {
	slices.Sort(d)
	if len(d)%2 == 1 {
		return d[len(d)/2]
	}
	return (d[len(d)/2-1] + d[len(d)/2]) / 2
}

// pairedCell is k's cell of the connect column: the baseline's median
// connect, every other kind's paired excess over it, its 95% interval
// and its own median.
func (r *Results) pairedCell(k Key) string {
	excess, own, ok := r.PairedExcess(k)
	switch {
	case !ok:
		return "—"
	case k.Kind == Kinds[0]:
		return dur(float64(own))
	}
	lo, hi, _ := r.PairedInterval(k)
	return fmt.Sprintf("**%+.2f ms** [%+.2f, %+.2f] (%s)", excess.Seconds()*1e3, lo.Seconds()*1e3, hi.Seconds()*1e3, dur(float64(own)))
}

// Markdown writes the results as markdown: the per-call table and, when
// measured, the table of memory with Fleet servers connected.
func (r *Results) Markdown(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "Medians of %d interleaved rounds (one process per client kind, transport and round); "+
		"go-sdk in absolute figures, every other client as its ratio to go-sdk in the same protocol era (its own median in brackets); "+
		"mcp-go in the legacy era alone, the memory measurement in the first era alone. "+
		"%d sequential echo calls, %d calls shared by %d concurrent callers (calls/s), a listing of %d tools + echo. "+
		"Connect (to a server of one tool, its listing included) is paired: one process per client kind, asked in turns for one connect each, "+
		"the first kind rotating, %d rounds after %d not kept; go-sdk's median connect, every other client's median of its connect minus go-sdk's in the same round, "+
		"a 95%% confidence interval of that median, and its own median in brackets.\n\n",
		c.Rounds, c.Calls, c.ConcCalls, clientkit.Concurrency, c.Tools, c.ConnectRounds, c.ConnectWarmup)
	r.table(w, r.Runs, callColumns)
	if len(r.ServerStarts) > 0 {
		ds := slices.Clone(r.ServerStarts)
		slices.Sort(ds)
		fmt.Fprintf(w, "\nEvery stdio connect starts the server: the stdio 10k listing includes the full server's own start "+
			"(building its tools; median %s, the same for every client); "+
			"\"from ready\" times the same listing from the moment the server reports it has built its tools and reads stdin "+
			"(over HTTP, where the server is already running, it is the listing itself).\n", dur(float64(ds[len(ds)/2])))
	}
	fmt.Fprintf(w, "\nThe listing of %d tools + echo alone (connect included): the client process's CPU (getrusage; "+
		"a stdio server's start is its child's, not counted), bytes and allocations (runtime.MemStats).\n\n", c.Tools)
	r.table(w, r.Runs, listColumns)
	if len(r.Fleets) > 0 {
		fmt.Fprintf(w, "\n%d servers connected at once (echo only; stdio: %d child processes), medians of %d rounds; "+
			"heap is HeapAlloc after GC, RSS the client process's alone.\n\n", c.Fleet, c.Fleet, c.FleetRounds)
		r.table(w, r.Fleets, fleetColumns)
	}
}
