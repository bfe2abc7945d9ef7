// Package clientkit is the measuring half of every client program of the
// peer benchmark: a client kind supplies a Driver (how it connects, lists
// and calls), and Main measures it the same way for every kind and prints
// the figures as one JSON object on stdout, for the harness to read back.
//
// One client program runs in one process, so a client kind's retained
// heap, RSS and CPU are its own (the server is another process: a child
// for stdio, a process the harness started for Streamable HTTP).
package clientkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpward/mcpward/bench/internal/fixture"
)

// Target is one server to connect to.
type Target struct {
	// Name is the server's id (distinct across the targets of ConnectMany).
	Name string
	// Transport is "stdio" or "http".
	Transport string
	// Command and Args start a stdio server.
	Command string
	Args    []string
	// URL is a Streamable HTTP server's endpoint.
	URL string
	// Era is the protocol era to speak: "legacy" (fixture.LegacyVersion)
	// or "modern" (fixture.ModernVersion).
	Era string
}

// Conn is one connected server whose tools have been listed.
type Conn interface {
	// Tools is how many tools the listing kept.
	Tools() int
	// Call calls fixture.Echo with fixture.EchoArgs; it fails when the
	// call does or the result is an error result. Safe for concurrent use.
	Call(ctx context.Context) error
	// Close ends the session (and a stdio server's process).
	Close() error
}

// Driver is one client kind.
type Driver interface {
	// Connect connects to t and lists all of its tools, keeping the
	// listing as a host would (until Close).
	Connect(ctx context.Context, t Target) (Conn, error)
	// ConnectMany connects to every target (and lists its tools); the
	// closer ends them all.
	ConnectMany(ctx context.Context, ts []Target) (io.Closer, error)
}

// Figures are what one client process measured. Durations are in
// nanoseconds, sizes in bytes. A figure a mode does not measure is 0.
type Figures struct {
	Kind      string `json:"kind"`
	Transport string `json:"transport"`
	Era       string `json:"era"`

	// ConnectNS is the median time to connect to the small server (echo
	// only) and list its tools, over Connects connects.
	ConnectNS int64 `json:"connect_ns,omitempty"`
	// ListNS is the time to connect to the full server and list all of
	// its tools; Tools is how many the listing kept.
	ListNS int64 `json:"list_ns,omitempty"`
	Tools  int   `json:"tools,omitempty"`
	// ListReadyNS is the same listing timed from the moment the server
	// was ready: over stdio, from the time the full server reports
	// (benchserver -readyfile) it has built its tools and starts reading
	// stdin, so the spawn and the server's own start, the same for every
	// client, are left out; over HTTP, where the server is already
	// running, it equals ListNS.
	ListReadyNS int64 `json:"list_ready_ns,omitempty"`
	// ListCPUNS is the process's user+sys time (getrusage) over that
	// connect and listing (a stdio server's start is its child's, not
	// counted); ListBytes and ListAllocs are its TotalAlloc and Mallocs
	// growth.
	ListCPUNS  int64 `json:"list_cpu_ns,omitempty"`
	ListBytes  int64 `json:"list_bytes,omitempty"`
	ListAllocs int64 `json:"list_allocs,omitempty"`
	// RetainedBytes is HeapAlloc after two GCs with the full server
	// connected and its listing held.
	RetainedBytes int64 `json:"retained_bytes,omitempty"`
	// CallP50NS and CallP99NS are percentiles of Calls sequential echo
	// calls; CPUPerCallNS is the process's user+sys time (getrusage) over
	// them divided by Calls, BytesPerCall its TotalAlloc growth.
	Calls        int   `json:"calls,omitempty"`
	CallP50NS    int64 `json:"call_p50_ns,omitempty"`
	CallP99NS    int64 `json:"call_p99_ns,omitempty"`
	CPUPerCallNS int64 `json:"cpu_per_call_ns,omitempty"`
	BytesPerCall int64 `json:"bytes_per_call,omitempty"`
	// CallsPerSec is the throughput of Concurrency callers sharing the
	// connection.
	Concurrency int     `json:"concurrency,omitempty"`
	CallsPerSec float64 `json:"calls_per_sec,omitempty"`
	// RSSBytes is the process's resident set (VmRSS) at the end, the full
	// server's listing still held.
	RSSBytes int64 `json:"rss_bytes,omitempty"`

	// Servers, in fleet mode, is how many small servers were connected
	// at once; FleetHeapBytes and FleetRSSBytes are HeapAlloc after two GCs
	// and VmRSS with all of them connected; FleetConnectNS is how long
	// connecting them all took, FleetCloseNS closing them all.
	Servers        int   `json:"servers,omitempty"`
	FleetHeapBytes int64 `json:"fleet_heap_bytes,omitempty"`
	FleetRSSBytes  int64 `json:"fleet_rss_bytes,omitempty"`
	FleetConnectNS int64 `json:"fleet_connect_ns,omitempty"`
	FleetCloseNS   int64 `json:"fleet_close_ns,omitempty"`
}

// Options are the command line of a client program.
type Options struct {
	Transport string
	Era       string // "legacy" or "modern"
	Server    string // stdio: the server binary
	URL       string // http: the full server's endpoint
	SmallURL  string // http: the small server's endpoint
	Calls     int
	Connects  int
	ConcCalls int
	Fleet     int
	Tools     int // stdio: the full server's tools besides echo
	// CPUProfile, when set, is a file to write a CPU profile of the
	// sequential calls to (to see where a client's time goes).
	CPUProfile string
	// MemProfile, when set, is a file to write a heap profile to, taken
	// where the retained heap is measured.
	MemProfile string
	// ListProfile, when set, is a file to write a CPU profile of the
	// connect and listing of the full server to.
	ListProfile string
	// CallMemProfile, when set, is a file to write a heap profile to
	// right after the sequential calls, and CallMemProfile+".base" one
	// taken right before them: go tool pprof -sample_index=alloc_space
	// -base FILE.base FILE shows what the calls allocated.
	CallMemProfile string
	// ConnectServe, when set, makes the program a connect server for the
	// harness's paired connect measure instead (ServeConnects).
	ConnectServe bool
}

// Main parses the command line, measures d and prints its Figures as JSON;
// it exits 1 on any failure (with the error on stderr).
func Main(kind string, d Driver) {
	var o Options
	flag.StringVar(&o.Transport, "transport", "stdio", "stdio or http")
	flag.StringVar(&o.Era, "era", "legacy", "protocol era: legacy ("+fixture.LegacyVersion+") or modern ("+fixture.ModernVersion+")")
	flag.StringVar(&o.Server, "server", "", "stdio: the benchserver binary")
	flag.StringVar(&o.URL, "url", "", "http: the full server's endpoint")
	flag.StringVar(&o.SmallURL, "small-url", "", "http: the small server's endpoint")
	flag.IntVar(&o.Calls, "calls", 2000, "sequential echo calls")
	flag.IntVar(&o.Connects, "connects", 5, "connects to the small server")
	flag.IntVar(&o.ConcCalls, "conc-calls", 2000, "echo calls shared by 8 concurrent callers")
	flag.IntVar(&o.Tools, "tools", fixture.Tools, "stdio: the full server's tools besides echo")
	flag.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the sequential calls to this file")
	flag.StringVar(&o.MemProfile, "memprofile", "", "write a heap profile to this file where the retained heap is measured")
	flag.StringVar(&o.ListProfile, "listprofile", "", "write a CPU profile of the full server's connect and listing to this file")
	flag.StringVar(&o.CallMemProfile, "callmemprofile", "", "write heap profiles before (FILE.base) and after (FILE) the sequential calls")
	flag.IntVar(&o.Fleet, "fleet", 0, "when > 0, only connect this many small servers at once and measure memory")
	flag.BoolVar(&o.ConnectServe, "connect-serve", false, "only connect to the small server once per line on stdin, printing each connect's time (ServeConnects)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if o.ConnectServe {
		if err := ServeConnects(ctx, d, o, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "%s/%s/%s: %v\n", kind, o.Era, o.Transport, err)
			os.Exit(1)
		}
		return
	}
	f, err := Measure(ctx, kind, d, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s/%s/%s: %v\n", kind, o.Era, o.Transport, err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(f); err != nil {
		os.Exit(1)
	}
}

// newReadyFile returns the path of a file that does not exist yet, for
// benchserver -readyfile to write.
func newReadyFile() (string, error) {
	fh, err := os.CreateTemp("", "benchserver-ready-")
	if err != nil {
		return "", err
	}
	name := fh.Name()
	_ = fh.Close()
	return name, os.Remove(name)
}

// sinceReady is end minus the later of start and the time the server
// wrote to readyFile (Unix nanoseconds).
func sinceReady(readyFile string, start, end time.Time) (int64, error) {
	b, err := os.ReadFile(readyFile)
	if err != nil {
		return 0, fmt.Errorf("the full server reported no ready time: %w", err)
	}
	ready, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the full server's ready time %q: %w", b, err)
	}
	from := max(ready, start.UnixNano())
	if end.UnixNano() < from {
		return 0, fmt.Errorf("the full server was ready %s after the listing ended", time.Duration(from-end.UnixNano()))
	}
	return end.UnixNano() - from, nil
}

func (o Options) target(name string, full bool) Target {
	if o.Transport == "http" {
		u := o.SmallURL
		if full {
			u = o.URL
		}
		return Target{Name: name, Transport: "http", URL: u, Era: o.Era}
	}
	n := 0
	if full {
		n = o.Tools
	}
	return Target{Name: name, Transport: "stdio", Command: o.Server, Args: []string{"-tools", strconv.Itoa(n)}, Era: o.Era}
}

// ServeConnects is the client's half of the paired connect measure: for
// every line it reads from in, it connects to the small server (and lists
// its tools), as Measure's connects do, writes the connect's time in
// nanoseconds as one line to out, and closes the connection (not timed).
// It returns nil at the end of in. The harness runs one such process per
// client kind and asks them in turns, so that the connects it compares are
// made back to back, each kind going first in turn.
func ServeConnects(ctx context.Context, d Driver, o Options, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		start := time.Now()
		c, err := d.Connect(ctx, o.target("bench", false))
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		took := time.Since(start)
		if err := c.Close(); err != nil {
			return fmt.Errorf("close: %w", err)
		}
		fmt.Fprintln(w, int64(took))
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Concurrency is how many callers share one connection in the throughput
// measurement.
const Concurrency = 8

// Measure runs the measurements of o on d.
func Measure(ctx context.Context, kind string, d Driver, o Options) (Figures, error) {
	if o.Era == "" {
		o.Era = "legacy"
	}
	f := Figures{Kind: kind, Transport: o.Transport, Era: o.Era}
	if o.Transport != "stdio" && o.Transport != "http" {
		return f, fmt.Errorf("unknown transport %q", o.Transport)
	}
	if !slices.Contains(fixture.Eras, o.Era) {
		return f, fmt.Errorf("unknown era %q", o.Era)
	}
	if o.Fleet > 0 {
		return measureFleet(ctx, d, o, f)
	}

	// Connect (and list) the small server, Connects times.
	var connects []time.Duration
	for range max(o.Connects, 1) {
		start := time.Now()
		c, err := d.Connect(ctx, o.target("bench", false))
		if err != nil {
			return f, fmt.Errorf("connect: %w", err)
		}
		connects = append(connects, time.Since(start))
		if err := c.Close(); err != nil {
			return f, fmt.Errorf("close: %w", err)
		}
	}
	f.ConnectNS = int64(percentile(connects, 50))

	// Connect to the full server and list its 10,000 tools.
	runtime.GC()
	stopList, err := startCPUProfile(o.ListProfile)
	if err != nil {
		return f, err
	}
	full := o.target("bench", true)
	var readyFile string
	if o.Transport == "stdio" {
		readyFile, err = newReadyFile()
		if err != nil {
			stopList()
			return f, err
		}
		defer os.Remove(readyFile)
		full.Args = append(full.Args, "-readyfile", readyFile)
	}
	var lms0, lms1 runtime.MemStats
	runtime.ReadMemStats(&lms0)
	lcpu0 := cpuTime()
	start := time.Now()
	c, err := d.Connect(ctx, full)
	if err != nil {
		stopList()
		return f, fmt.Errorf("connect (full): %w", err)
	}
	defer c.Close()
	f.ListNS = int64(time.Since(start))
	f.ListCPUNS = int64(cpuTime() - lcpu0)
	runtime.ReadMemStats(&lms1)
	stopList()
	f.ListReadyNS = f.ListNS
	if readyFile != "" {
		end := start.Add(time.Duration(f.ListNS))
		if f.ListReadyNS, err = sinceReady(readyFile, start, end); err != nil {
			return f, err
		}
	}
	f.ListBytes = int64(lms1.TotalAlloc - lms0.TotalAlloc)
	f.ListAllocs = int64(lms1.Mallocs - lms0.Mallocs)
	f.Tools = c.Tools()
	f.RetainedBytes = int64(heapAfterGC())
	if err := writeHeapProfile(o.MemProfile); err != nil {
		return f, err
	}

	// Sequential calls, after a warm-up.
	for range 20 {
		if err := c.Call(ctx); err != nil {
			return f, fmt.Errorf("call: %w", err)
		}
	}
	n := max(o.Calls, 1)
	calls := make([]time.Duration, 0, n)
	var ms0, ms1 runtime.MemStats
	if o.CPUProfile != "" {
		fh, err := os.Create(o.CPUProfile)
		if err != nil {
			return f, err
		}
		defer fh.Close()
		if err := pprof.StartCPUProfile(fh); err != nil {
			return f, err
		}
	}
	if o.CallMemProfile != "" {
		if err := writeHeapProfile(o.CallMemProfile + ".base"); err != nil {
			return f, err
		}
	}
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	for range n {
		start := time.Now()
		if err := c.Call(ctx); err != nil {
			return f, fmt.Errorf("call: %w", err)
		}
		calls = append(calls, time.Since(start))
	}
	cpu1 := cpuTime()
	runtime.ReadMemStats(&ms1)
	if o.CPUProfile != "" {
		pprof.StopCPUProfile()
	}
	if o.CallMemProfile != "" {
		if err := writeHeapProfile(o.CallMemProfile); err != nil {
			return f, err
		}
	}
	f.Calls = n
	f.CallP50NS = int64(percentile(calls, 50))
	f.CallP99NS = int64(percentile(calls, 99))
	f.CPUPerCallNS = int64(cpu1-cpu0) / int64(n)
	f.BytesPerCall = int64(ms1.TotalAlloc-ms0.TotalAlloc) / int64(n)

	// Concurrency callers sharing the connection.
	total := max(o.ConcCalls, Concurrency)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, Concurrency)
	start = time.Now()
	for i := range Concurrency {
		wg.Go(func() {
			for next.Add(1) <= int64(total) {
				if err := c.Call(ctx); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return f, fmt.Errorf("concurrent call: %w", err)
	}
	f.Concurrency = Concurrency
	f.CallsPerSec = float64(total) / time.Since(start).Seconds()
	f.RSSBytes = rss()
	runtime.KeepAlive(c)
	return f, c.Close()
}

func measureFleet(ctx context.Context, d Driver, o Options, f Figures) (Figures, error) {
	ts := make([]Target, o.Fleet)
	for i := range ts {
		ts[i] = o.target(fmt.Sprintf("s%03d", i), false)
	}
	start := time.Now()
	closer, err := d.ConnectMany(ctx, ts)
	if err != nil {
		return f, fmt.Errorf("connect %d servers: %w", len(ts), err)
	}
	f.FleetConnectNS = int64(time.Since(start))
	f.Servers = len(ts)
	f.FleetHeapBytes = int64(heapAfterGC())
	if err := writeHeapProfile(o.MemProfile); err != nil {
		return f, err
	}
	f.FleetRSSBytes = rss()
	start = time.Now()
	err = closer.Close()
	f.FleetCloseNS = int64(time.Since(start))
	return f, err
}

// startCPUProfile starts a CPU profile into path ("": nothing) and returns
// the function that stops it.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	fh, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		fh.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		fh.Close()
	}, nil
}

// writeHeapProfile writes a heap profile to path ("": nothing).
func writeHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(fh, 0); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// percentile returns the p-th percentile of d (sorted in place).
func percentile(d []time.Duration, p int) time.Duration {
	slices.Sort(d)
	i := (len(d)*p + 99) / 100
	return d[min(max(i-1, 0), len(d)-1)]
}

// heapAfterGC is HeapAlloc after two collections.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// cpuTime is the process's user+sys time (its children excluded).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rss is VmRSS of /proc/self/status in bytes (0 where there is none).
func rss() int64 {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			kb, _ := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// Closers closes every closer, returning the first failure.
type Closers []io.Closer

// Close closes them all.
func (cs Closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ConnectEach is ConnectMany for a client kind without a fleet of its
// own: one Connect per target, in order.
func ConnectEach(ctx context.Context, d Driver, ts []Target) (io.Closer, error) {
	var cs Closers
	for _, t := range ts {
		c, err := d.Connect(ctx, t)
		if err != nil {
			_ = cs.Close()
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}
