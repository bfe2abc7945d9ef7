package filestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpward/mcpward/ports"
)

// BenchmarkAppend is one audit record appended (and fsynced) to an
// existing log, as every activation decision is before a server is used.
//
//	cd adapters/filestore
//	go test -run '^$' -bench Append -benchmem -count 8 .
func BenchmarkAppend(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "state"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rec := ports.AuditRecord{Time: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), Action: ports.AuditDecide,
		Identity: ports.Identity{ServerID: "example", Tier: ports.TierUser, Origin: "/home/u/mcp.json", Fingerprint: "sha256:0"},
		Outcome:  "allowed", Reason: "host_trusted_tier"}
	if err := s.Append(ctx, rec); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Append(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
}
