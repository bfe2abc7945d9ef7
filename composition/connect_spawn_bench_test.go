package composition

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// BenchmarkHostConnectStdioToSpawn is Host.Connect of the example server
// (user tier, so it runs in a neutral directory) on in-memory stores, timed
// from the call to the process authority's last ask, which the launcher
// makes right before the spawn: the evaluation (its admission), the Fleet's
// set-up, the dial and the launch's checks, without the child's start and
// handshake whose noise hides them in a whole connect. It reports that
// part's p50 (to-spawn-µs) and the whole connect's (connect-µs).
//
//	cd composition
//	go test -run '^$' -bench 'HostConnectStdioToSpawn' -benchtime 300x .
func BenchmarkHostConnectStdioToSpawn(b *testing.B) {
	_, _, srcs, done := connectTarget(b, "stdio", connectEras[0])
	defer done()
	root := NewRootAuthority(b.TempDir(), map[string]string{"LANG": "C"})
	var mu sync.Mutex
	var last time.Time
	auth := AuthorityFunc(func(ctx context.Context, r ports.LaunchRequest) (ports.ProcessGrant, error) {
		mu.Lock()
		last = time.Now()
		mu.Unlock()
		return root.Authorize(ctx, r)
	})
	h, err := New(Ports{Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog(),
		Trust: portstest.NewWorkspaceTrust(ports.WorkspaceFacts{Repository: "https://example.com/r.git", Generation: "g1"})},
		Config{Authority: auth})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var toSpawn, whole []time.Duration
	for b.Loop() {
		t0 := time.Now()
		f := h.Connect(ctx, srcs, nil)
		whole = append(whole, time.Since(t0))
		if s := f.Servers(); len(s) != 1 || s[0].State != StateConnected {
			b.Fatalf("not connected: %v", s[0].State)
		}
		mu.Lock()
		toSpawn = append(toSpawn, last.Sub(t0))
		mu.Unlock()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(p50(toSpawn).Microseconds()), "to-spawn-µs")
	b.ReportMetric(float64(p50(whole).Microseconds()), "connect-µs")
}
