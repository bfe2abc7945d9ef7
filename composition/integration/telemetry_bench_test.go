package integration_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/memory"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// BenchmarkTelemetryCall is one Fleet.CallServerTool of the example server's echo
// tool over stdio (a child process), with telemetry off (Config without
// providers: the path a host without OpenTelemetry takes) and on (the
// SDK's TracerProvider, always sampling into an in-memory recorder, and
// its MeterProvider with a manual reader), over two fleets connected
// once; each -count runs off then on, so the sides alternate under the
// same machine load.
// cpu-ns/call is this process's CPU time per call (the server is a child,
// not counted).
//
//	cd composition/integration
//	go test -run '^$' -bench TelemetryCall -benchmem -count 6 .
func BenchmarkTelemetryCall(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "example-server")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..", "examples", "server")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building the example server: %v\n%s", err, out)
	}
	off := benchFleet(b, bin, composition.Config{})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	on := benchFleet(b, bin, composition.Config{TracerProvider: tp, MeterProvider: mp})

	for _, side := range []struct {
		name  string
		fleet *composition.Fleet
	}{{"off", off}, {"on", on}} {
		b.Run(side.name, func(b *testing.B) {
			ctx := context.Background()
			args := json.RawMessage(`{"text":"hello"}`)
			b.ReportAllocs()
			cpu := processCPU(b)
			calls := 0
			for b.Loop() {
				if _, err := side.fleet.CallServerTool(ctx, "example", "echo", args); err != nil {
					b.Fatal(err)
				}
				calls++
				if calls%4096 == 0 {
					rec.Reset() // the recorder keeps every span
				}
			}
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(calls), "cpu-ns/call")
		})
	}
}

func benchFleet(b *testing.B, bin string, cfg composition.Config) *composition.Fleet {
	b.Helper()
	cfg.Authority = composition.NewRootAuthority(b.TempDir(), map[string]string{"LANG": "C"})
	h, cleanup, err := memory.Open(context.Background(), memory.Config{Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cleanup)
	q, _ := json.Marshal(bin)
	src := []definition.Source{{Tier: ports.TierUser, Origin: "/home/u/mcp.json", Data: []byte(`{"mcpServers": {"example": {"command": ` + string(q) + `}}}`)}}
	f := h.Connect(context.Background(), src, nil)
	b.Cleanup(func() { _ = f.Close() })
	if s := f.Servers(); len(s) != 1 || s[0].State != composition.StateConnected {
		b.Fatalf("not connected: %+v", s)
	}
	return f
}

// processCPU is the user+system CPU time of this process so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal("getrusage failed")
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
