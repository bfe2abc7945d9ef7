package pgstore_test

// Benchmarks of BENCHMARKS.md ("Stores on PostgreSQL and on files"): each
// runs against this package's Store on the test cluster and, beside it,
// against adapters/filestore on a temporary directory of the same machine,
// in the same run. The file store is imported by this test file only (the
// dependency rule counts no test import); it is the baseline the figures
// are read against.

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/filestore"
	"github.com/mcpward/mcpward/ports"
)

// store is what the benchmarks need of a backing store.
type store interface {
	ports.TokenStore
	ports.ApprovalStore
	ports.Locker
}

// backends opens, for each backend, n handles on one fresh backing store.
func backends(b *testing.B, n int) map[string][]store {
	b.Helper()
	needPG(b)
	schema := newSchema()
	dir := filepath.Join(b.TempDir(), "store")
	out := map[string][]store{}
	for range n {
		out["postgres"] = append(out["postgres"], openStore(b, schema, nil))
		fs, err := filestore.Open(dir)
		require.NoError(b, err)
		b.Cleanup(func() { _ = fs.Close() })
		out["files"] = append(out["files"], fs)
	}
	return out
}

// latencies collects per-operation durations and reports their median and
// 99th percentile.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B) {
	b.Helper()
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	b.ReportMetric(float64(l.d[len(l.d)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(l.d[min(len(l.d)-1, len(l.d)*99/100)].Nanoseconds()), "p99-ns")
}

// BenchmarkApprovalList: one List of a server with 5 approvals among 200,
// the lookup activation makes for every server it evaluates.
func BenchmarkApprovalList(b *testing.B) {
	for _, name := range []string{"postgres", "files"} {
		b.Run(name, func(b *testing.B) {
			st := backends(b, 1)[name][0]
			ctx := context.Background()
			for i := range 200 {
				id := grantedID
				id.ServerID = fmt.Sprintf("srv-%d", i%40)
				id.Origin = fmt.Sprintf("/work/repo-%d/.mcp.json", i)
				require.NoError(b, st.Grant(ctx, ports.Approval{Identity: id, GrantedAt: at, GrantedBy: "cli"}))
			}
			var lat latencies
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				got, err := st.List(ctx, "srv-7")
				lat.add(time.Since(start))
				if err != nil || len(got) != 5 {
					b.Fatalf("List: %d approvals, %v", len(got), err)
				}
			}
			lat.report(b)
		})
	}
}

// BenchmarkTokenGet: one Get of a 2 KiB credential.
func BenchmarkTokenGet(b *testing.B) {
	for _, name := range []string{"postgres", "files"} {
		b.Run(name, func(b *testing.B) {
			st := backends(b, 1)[name][0]
			ctx := context.Background()
			require.NoError(b, st.Set(ctx, "oauth/srv/abc", make([]byte, 2048)))
			var lat latencies
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				_, err := st.Get(ctx, "oauth/srv/abc")
				lat.add(time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
			}
			lat.report(b)
		})
	}
}

// BenchmarkTokenGet32x1000: one op is 32 concurrent workers (on 4 handles,
// as 4 processes would be) each reading 1,000 times; reads/s is the
// throughput, p50/p99 the latency of one read.
func BenchmarkTokenGet32x1000(b *testing.B) {
	const workers, reads = 32, 1000
	for _, name := range []string{"postgres", "files"} {
		b.Run(name, func(b *testing.B) {
			handles := backends(b, 4)[name]
			ctx := context.Background()
			for i := range 8 {
				require.NoError(b, handles[0].Set(ctx, fmt.Sprintf("oauth/srv-%d/abc", i), make([]byte, 2048)))
			}
			var lat latencies
			var total time.Duration
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				var wg sync.WaitGroup
				for w := range workers {
					wg.Go(func() {
						st := handles[w%len(handles)]
						mine := make([]time.Duration, 0, reads)
						for i := range reads {
							s := time.Now()
							if _, err := st.Get(ctx, fmt.Sprintf("oauth/srv-%d/abc", (w+i)%8)); err != nil {
								b.Error(err)
								return
							}
							mine = append(mine, time.Since(s))
						}
						lat.mu.Lock()
						lat.d = append(lat.d, mine...)
						lat.mu.Unlock()
					})
				}
				wg.Wait()
				total += time.Since(start)
			}
			b.ReportMetric(float64(b.N*workers*reads)/total.Seconds(), "reads/s")
			lat.report(b)
		})
	}
}

// BenchmarkLockContention: 8 goroutines (4 per GOMAXPROCS on 2 cores) on
// 2 handles (two processes) take and release one key in turn; one op is
// one acquire and release, p50/p99 the time from asking to holding.
func BenchmarkLockContention(b *testing.B) {
	for _, name := range []string{"postgres", "files"} {
		b.Run(name, func(b *testing.B) {
			handles := backends(b, 2)[name]
			var (
				lat  latencies
				next atomic.Int64
			)
			b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				st := handles[next.Add(1)%2]
				for pb.Next() {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					start := time.Now()
					unlock, err := st.Lock(ctx, "oauth/srv/abc.refresh")
					waited := time.Since(start)
					cancel()
					if err != nil {
						b.Error(err)
						return
					}
					lat.add(waited)
					if err := unlock(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			lat.report(b)
		})
	}
}

// BenchmarkAudit32: one op stores 32 audit records on PostgreSQL, either
// with 32 Appends (one transaction each, the baseline) or with 32 Enqueues
// and one Flush (the records waiting share a transaction).
func BenchmarkAudit32(b *testing.B) {
	rec := ports.AuditRecord{Action: ports.AuditCall, Outcome: "ok", Reason: "bench"}
	for _, name := range []string{"append", "enqueue+flush"} {
		b.Run(name, func(b *testing.B) {
			needPG(b)
			s := openStore(b, newSchema(), nil)
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				for range 32 {
					var err error
					if name == "append" {
						err = s.Append(ctx, rec)
					} else {
						err = s.Enqueue(rec)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if name != "append" {
					if err := s.Flush(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
