package composition

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcpward/mcpward/adapters/filestore"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// BenchmarkHostConnectStdio is Host.Connect of one user-tier stdio server
// (the example server) and Fleet.Close, with the file store as the
// approval and audit store, so the profile shows the whole connect path:
// evaluation, activation, the audit append, admission, spawn, initialize,
// discovery. cpu-ns/op is this process's CPU time per op (the server is
// a child, not counted).
//
//	cd composition
//	go test -run '^$' -bench HostConnectStdio -benchmem -count 8 .
func BenchmarkHostConnectStdio(b *testing.B) {
	bin, err := exampleServer()
	if err != nil {
		b.Fatal(err)
	}
	store, err := filestore.Open(filepath.Join(b.TempDir(), "state"))
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	h, err := Custom(Ports{
		Approvals: store,
		Audit:     store,
		Trust:     portstest.NewWorkspaceTrust(ports.WorkspaceFacts{Repository: "https://example.com/r.git", Generation: "g1"}),
	}, Config{Authority: NewRootAuthority(root, map[string]string{"LANG": "C"})})
	if err != nil {
		b.Fatal(err)
	}
	q, _ := json.Marshal(bin)
	srcs := userSrc(`{"mcpServers": {"example": {"command": ` + string(q) + `}}}`)
	ctx := context.Background()
	b.ReportAllocs()
	cpu := hostCPU(b)
	for b.Loop() {
		f := h.Connect(ctx, srcs, nil)
		if s := f.Servers(); len(s) != 1 || s[0].State != StateConnected {
			b.Fatalf("not connected: %+v", s)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(hostCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
	_ = os.Remove(bin)
}

// hostCPU is the user+system CPU time of this process so far.
func hostCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal("getrusage failed")
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fileStoreHost is a Host on a file store in a temporary state directory,
// with a workspace trust that knows its repository.
func fileStoreHost(b *testing.B) *Host {
	b.Helper()
	store, err := filestore.Open(filepath.Join(b.TempDir(), "state"))
	if err != nil {
		b.Fatal(err)
	}
	h, err := Custom(Ports{
		Approvals: store,
		Audit:     store,
		Trust:     portstest.NewWorkspaceTrust(ports.WorkspaceFacts{Repository: "https://example.com/r.git", Generation: "g1"}),
	}, Config{Authority: NewRootAuthority(b.TempDir(), map[string]string{"LANG": "C"})})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkHostEvaluateStdio is the Evaluate that Connect runs first
// (resolve, materialize, the activation decision and its audit append to
// the file store), alone.
func BenchmarkHostEvaluateStdio(b *testing.B) {
	h := fileStoreHost(b)
	srcs := userSrc(`{"mcpServers": {"example": {"command": "/bin/true"}}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r, ok := h.Evaluate(ctx, srcs).Server("example"); !ok || r.State != StateAllowed {
			b.Fatal("not allowed")
		}
	}
}

// BenchmarkHostEvaluateStdio10 is Evaluate of ten user-tier stdio
// servers on the file store: ten decisions, whose records go out in one
// write and one fsync (activation.Decider.DecideDeferred, then Flush),
// where each decision once waited for an fsync of its own.
func BenchmarkHostEvaluateStdio10(b *testing.B) {
	h := fileStoreHost(b)
	doc := `{"mcpServers": {`
	for i := range 10 {
		if i > 0 {
			doc += ","
		}
		doc += fmt.Sprintf(`"s%d": {"command": "/bin/true", "args": ["%d"]}`, i, i)
	}
	srcs := userSrc(doc + `}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ev := h.Evaluate(ctx, srcs)
		if len(ev.Servers) != 10 {
			b.Fatal("not ten servers")
		}
		for _, r := range ev.Servers {
			if r.State != StateAllowed {
				b.Fatal("not allowed")
			}
		}
	}
}
