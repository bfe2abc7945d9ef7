package composition

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/adapters/filestore"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// The benchmarks of this file put a Gateway (what "mcpward serve NAME"
// runs) in this process, so that its CPU and allocation profiles are
// serve's own: a go-sdk client speaks to it over two OS pipes (the
// downstream stdio hop), and it forwards to the example server, a child
// process (the upstream stdio hop). The direct call is the same client
// speaking to the example server over stdio. The client's own cost is in
// every variant alike.
//
//	cd composition
//	go test -run '^$' -bench 'GatewayStdioCall' -benchtime 3000x .
//	go test -run '^$' -bench 'GatewayStdioCallAlone/serve$' -benchtime 5000x -cpuprofile cpu.out .
//	go test -run '^$' -bench 'GatewayStdioCallParallel' -benchtime 8000x .

// discardAudit is an AuditLog that keeps nothing: the benchmark line
// without the audit append's write and sync.
type discardAudit struct{}

func (discardAudit) Append(context.Context, ports.AuditRecord) error { return nil }
func (discardAudit) Records(context.Context) ([]ports.AuditRecord, error) {
	return nil, nil
}

// slowAudit is an AuditLog whose Append blocks its thread in a
// nanosleep(2) of d, as an fsync of d would (time.Sleep would take the
// runtime's timer path, 1 ms and more on a loaded machine), and keeps
// nothing: the benchmark line of an audit whose sync costs d whatever the
// disk and its load.
type slowAudit struct{ d time.Duration }

func (a slowAudit) Append(context.Context, ports.AuditRecord) error {
	ts := syscall.NsecToTimespec(a.d.Nanoseconds())
	_ = syscall.Nanosleep(&ts, nil)
	return nil
}
func (slowAudit) Enqueue(ports.AuditRecord) error { return nil }
func (slowAudit) Flush(context.Context) error     { return nil }
func (slowAudit) Records(context.Context) ([]ports.AuditRecord, error) {
	return nil, nil
}

// gatewayClient returns a go-sdk client session to a Gateway fronting
// the example server alone (as "mcpward serve example" does), with audit
// as the audit log, and its close.
func gatewayClient(b testing.TB, audit ports.AuditLog) (*mcp.ClientSession, func()) {
	b.Helper()
	bin, err := exampleServer()
	if err != nil {
		b.Fatal(err)
	}
	h, err := Custom(Ports{
		Approvals: portstest.NewApprovalStore(),
		Audit:     audit,
		Trust:     portstest.NewWorkspaceTrust(ports.WorkspaceFacts{Repository: "https://example.com/r.git", Generation: "g1"}),
	}, Config{Authority: NewRootAuthority(b.TempDir(), map[string]string{"LANG": "C"})})
	if err != nil {
		b.Fatal(err)
	}
	q, _ := json.Marshal(bin)
	f := h.Connect(context.Background(), userSrc(`{"mcpServers": {"example": {"command": `+string(q)+`}}}`), nil)
	if s := f.Servers(); len(s) != 1 || s[0].State != StateConnected {
		b.Fatalf("not connected: %+v", s)
	}
	g := f.Gateway(&GatewayOptions{Server: "example"})
	// Two OS pipes: client → gateway and gateway → client.
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = g.ServeStdio(ctx, inR, outW)
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return cs, func() {
		_ = cs.Close()
		cancel()
		_ = inW.Close()
		<-served
		_ = outW.Close()
		_ = outR.Close()
		_ = inR.Close()
		g.Close()
		_ = f.Close()
	}
}

// directClient returns a go-sdk client session to the example server
// over stdio.
func directClient(b testing.TB) *mcp.ClientSession {
	b.Helper()
	bin, err := exampleServer()
	if err != nil {
		b.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(bin)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

// fileAudit is the file store in a temporary directory, as serve uses it.
func fileAudit(b testing.TB) *filestore.Store {
	b.Helper()
	s, err := filestore.Open(filepath.Join(b.TempDir(), "state"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

var benchParams = &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "benchmark"}}

// benchCall makes one echo call on cs and returns how long it took.
func benchCall(b testing.TB, cs *mcp.ClientSession) time.Duration {
	start := time.Now()
	r, err := cs.CallTool(context.Background(), benchParams)
	d := time.Since(start)
	if err != nil || r.IsError {
		b.Fatalf("call failed: %v", err)
	}
	return d
}

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkGatewayStdioCall makes, in every op, one echo call directly,
// one through a Gateway on the file store (durable audit), one through a
// Gateway whose audit log keeps nothing, and one through a Gateway whose
// audit append takes 0.3 ms (an fsync on this machine when it is quiet),
// interleaved so that
// the machine's load moves the three alike; it reports each one's median
// and the two ratios to the direct median.
func BenchmarkGatewayStdioCall(b *testing.B) {
	direct := directClient(b)
	defer direct.Close()
	serve, closeServe := gatewayClient(b, fileAudit(b))
	defer closeServe()
	noaudit, closeNoaudit := gatewayClient(b, discardAudit{})
	defer closeNoaudit()
	sync300, closeSync300 := gatewayClient(b, slowAudit{300 * time.Microsecond})
	defer closeSync300()
	all := []*mcp.ClientSession{direct, serve, noaudit, sync300}
	for range 20 {
		for _, cs := range all {
			benchCall(b, cs)
		}
	}
	ds := make([][]time.Duration, len(all))
	for b.Loop() {
		for i, cs := range all {
			ds[i] = append(ds[i], benchCall(b, cs))
		}
	}
	d, s, n, w := p50(ds[0]), p50(ds[1]), p50(ds[2]), p50(ds[3])
	b.ReportMetric(float64(d.Nanoseconds()), "direct-p50-ns")
	b.ReportMetric(float64(s.Nanoseconds()), "serve-p50-ns")
	b.ReportMetric(float64(n.Nanoseconds()), "noaudit-p50-ns")
	b.ReportMetric(float64(s)/float64(d), "serve/direct")
	b.ReportMetric(float64(n)/float64(d), "noaudit/direct")
	b.ReportMetric(float64(w)/float64(d), "sync300us/direct")
}

// BenchmarkGatewayStdioCallAlone is each variant alone, for profiles
// (-cpuprofile, -memprofile) and this process's CPU time per call
// (cpu-ns/op: the client's and, through serve, the Gateway's; the
// example server is a child, not counted) and goroutines started per
// call (goroutines/op, the client's included).
func BenchmarkGatewayStdioCallAlone(b *testing.B) {
	for _, v := range []string{"direct", "serve", "noaudit"} {
		b.Run(v, func(b *testing.B) {
			var cs *mcp.ClientSession
			switch v {
			case "direct":
				cs = directClient(b)
				defer cs.Close()
			case "serve":
				s, done := gatewayClient(b, fileAudit(b))
				defer done()
				cs = s
			default:
				s, done := gatewayClient(b, discardAudit{})
				defer done()
				cs = s
			}
			for range 20 {
				benchCall(b, cs)
			}
			b.ReportAllocs()
			ds := make([]time.Duration, 0, b.N)
			cpu, gr := hostCPU(b), goroutinesCreated()
			for b.Loop() {
				ds = append(ds, benchCall(b, cs))
			}
			b.ReportMetric(float64(hostCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(goroutinesCreated()-gr)/float64(b.N), "goroutines/op")
			b.ReportMetric(float64(p50(ds).Nanoseconds()), "p50-ns")
		})
	}
}

// BenchmarkGatewayStdioCallParallel is 8 callers per CPU sharing one
// client session through a Gateway, on the file store (durable audit)
// and with the audit discarded: ns/op is wall time over calls, so its
// inverse is the calls per second serve forwards, each still audited
// durably before it returns (concurrent records share an fsync).
func BenchmarkGatewayStdioCallParallel(b *testing.B) {
	for _, v := range []string{"serve", "noaudit"} {
		b.Run(v, func(b *testing.B) {
			var audit ports.AuditLog = discardAudit{}
			if v == "serve" {
				audit = fileAudit(b)
			}
			cs, done := gatewayClient(b, audit)
			defer done()
			for range 20 {
				benchCall(b, cs)
			}
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r, err := cs.CallTool(context.Background(), benchParams)
					if err != nil || r.IsError {
						b.Error("call failed")
						return
					}
				}
			})
		})
	}
}

// goroutinesCreated is the number of goroutines this process started so
// far (runtime/metrics).
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// heapAfterGC is the heap in use after two collections.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// openFDs is the number of this process's open file descriptors (-1
// where /proc is missing).
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// BenchmarkGatewayMemory100k makes 100,000 forwarded calls through a
// Gateway on the file store (b.N is ignored: run it with -benchtime 1x)
// and reports the heap in use after GC, the goroutines and the open
// descriptors after 10,000 and after 100,000 calls, and the heap's growth
// per call between the two. It takes minutes: make test does not run it.
//
//	go test -run '^$' -bench GatewayMemory100k -benchtime 1x .
func BenchmarkGatewayMemory100k(b *testing.B) {
	cs, done := gatewayClient(b, fileAudit(b))
	defer done()
	for b.Loop() {
		var heap10k uint64
		var gor10k, fds10k int
		for i := 1; i <= 100_000; i++ {
			benchCall(b, cs)
			if i == 10_000 {
				heap10k, gor10k, fds10k = heapAfterGC(), runtime.NumGoroutine(), openFDs()
			}
		}
		heap100k := heapAfterGC()
		b.ReportMetric(float64(heap10k), "heap-10k-B")
		b.ReportMetric(float64(heap100k), "heap-100k-B")
		b.ReportMetric((float64(heap100k)-float64(heap10k))/90_000, "growth-B/call")
		b.ReportMetric(float64(gor10k), "goroutines-10k")
		b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines-100k")
		b.ReportMetric(float64(fds10k), "fds-10k")
		b.ReportMetric(float64(openFDs()), "fds-100k")
	}
}
