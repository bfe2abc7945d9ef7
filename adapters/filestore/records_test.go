//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

func ident(server, fp string) ports.Identity {
	return ports.Identity{
		ServerID:    server,
		Tier:        ports.TierProject,
		Origin:      "/repo/.mcp.json",
		Fingerprint: fp,
		Security:    "https://example.com:443/mcp",
		Repository:  "github.com/x/y",
		Generation:  "g1",
	}
}

func TestApprovalsGrantListRevoke(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))

	list, err := s.List(ctx, "a")
	require.NoError(t, err)
	assert.Nil(t, list)
	require.ErrorIs(t, s.Revoke(ctx, ident("a", "1")), ports.ErrNotFound)

	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: ident("a", "1"), GrantedAt: t0, GrantedBy: "cli"}))
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: ident("b", "1"), GrantedAt: t0}))
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: ident("a", "2"), GrantedAt: t0.Add(time.Second)}))

	list, err = s.List(ctx, "a")
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, ident("a", "1"), list[0].Identity)
	assert.True(t, t0.Equal(list[0].GrantedAt), "time round-trips to the nanosecond")
	assert.Equal(t, time.UTC, list[0].GrantedAt.Location())
	assert.Equal(t, "cli", list[0].GrantedBy)
	assert.Equal(t, ident("a", "2"), list[1].Identity)

	// Re-granting an identical identity replaces it and moves it last.
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: ident("a", "1"), GrantedAt: t0.Add(time.Hour), GrantedBy: "again"}))
	list, err = s.List(ctx, "a")
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, ident("a", "2"), list[0].Identity)
	assert.Equal(t, "again", list[1].GrantedBy)

	// Revoke is exact: an identity differing in one field is not found.
	near := ident("a", "1")
	near.Generation = "g2"
	require.ErrorIs(t, s.Revoke(ctx, near), ports.ErrNotFound)
	require.NoError(t, s.Revoke(ctx, ident("a", "1")))
	require.ErrorIs(t, s.Revoke(ctx, ident("a", "1")), ports.ErrNotFound)

	other, err := Open(dir)
	require.NoError(t, err)
	defer other.Close()
	list, err = other.List(ctx, "a")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, ident("a", "2"), list[0].Identity)
	list, err = other.List(ctx, "b")
	require.NoError(t, err)
	assert.Len(t, list, 1)
}

func TestNonUTF8StringsRoundTripExactly(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	id := ports.Identity{
		ServerID:    "srv\xff",
		Tier:        ports.Tier("odd\x00tier"),
		Origin:      "/home/\xc3\x28/.mcp.json",
		Fingerprint: `{"b64":"looks like the escape form"}`,
		Security:    "<&>\u2028",
	}
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: id, GrantedBy: "\xfe"}))
	list, err := s.List(ctx, "srv\xff")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, id, list[0].Identity)
	assert.Equal(t, "\xfe", list[0].GrantedBy)
	list, err = s.List(ctx, "srv\ufffd")
	require.NoError(t, err)
	assert.Empty(t, list, "no lossy matching")
	require.NoError(t, s.Revoke(ctx, id))

	rec := ports.AuditRecord{Action: "de\xffcide", Identity: id, Outcome: "denied", Reason: "r\n", Actor: "\x80"}
	require.NoError(t, s.Append(ctx, rec))
	recs, err := s.Records(ctx)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	rec.Time = rec.Time.UTC()
	assert.Equal(t, rec, recs[0])
}

func TestAuditAppendAndRecords(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	recs, err := s.Records(ctx)
	require.NoError(t, err)
	assert.Nil(t, recs)

	var want []ports.AuditRecord
	for i := range 5 {
		r := ports.AuditRecord{
			Time:     time.Unix(int64(i), 123).UTC(),
			Action:   ports.AuditDecide,
			Identity: ident("a", fmt.Sprint(i)),
			Outcome:  "allowed",
			Reason:   "approved",
			Actor:    "host",
		}
		want = append(want, r)
		require.NoError(t, s.Append(ctx, r))
	}
	other, err := Open(dir)
	require.NoError(t, err)
	defer other.Close()
	recs, err = other.Records(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, recs)

	b, err := os.ReadFile(filepath.Join(dir, auditFile))
	require.NoError(t, err)
	assert.Equal(t, 5, bytes.Count(b, []byte("\n")), "one line per record")
}

func TestOutOfRangeTimesAreRefusedNotMangled(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	bad := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	require.ErrorIs(t, s.Grant(ctx, ports.Approval{Identity: ident("a", "1"), GrantedAt: bad}), ports.ErrUnavailable)
	require.ErrorIs(t, s.Append(ctx, ports.AuditRecord{Time: bad}), ports.ErrUnavailable)
	list, err := s.List(ctx, "a")
	require.NoError(t, err)
	assert.Empty(t, list)
	recs, err := s.Records(ctx)
	require.NoError(t, err)
	assert.Empty(t, recs)
}

func TestCorruptApprovalsFileIsReportedAndKept(t *testing.T) {
	valid, err := encodeApprovals([]ports.Approval{{Identity: ident("a", "1")}})
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		content []byte
	}{
		{"empty", []byte{}},
		{"garbage", []byte("\x00\x01garbage")},
		{"truncated", valid[:len(valid)/2]},
		{"trailing data", append(bytes.Clone(valid), []byte(`{"version":1}`)...)},
		{"unknown version", []byte(`{"version":2,"approvals":[]}`)},
		{"missing version", []byte(`{"approvals":[]}`)},
		{"unknown field", []byte(`{"version":1,"approvals":[],"extra":true}`)},
		{"unknown identity field", []byte(`{"version":1,"approvals":[{"identity":{"serverId":"a","x":1}}]}`)},
		{"bad b64 form", []byte(`{"version":1,"approvals":[{"identity":{"serverId":{"b64":"!!"}}}]}`)},
		{"b64 form of valid UTF-8", []byte(`{"version":1,"approvals":[{"identity":{"serverId":{"b64":"YQ=="}}}]}`)},
		{"number for a string", []byte(`{"version":1,"approvals":[{"identity":{"serverId":7}}]}`)},
		{"bad time", []byte(`{"version":1,"approvals":[{"grantedAt":"yesterday"}]}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newStore(t)
			ctx := t.Context()
			p := filepath.Join(dir, approvalsFile)
			require.NoError(t, os.WriteFile(p, tc.content, 0o600))

			_, err := s.List(ctx, "a")
			assert.ErrorIs(t, err, ports.ErrCorrupt)
			assert.ErrorIs(t, s.Grant(ctx, ports.Approval{Identity: ident("a", "2")}), ports.ErrCorrupt)
			assert.ErrorIs(t, s.Revoke(ctx, ident("a", "1")), ports.ErrCorrupt)
			assert.ErrorIs(t, s.Revoke(ctx, ident("zzz", "1")), ports.ErrCorrupt, "not ErrNotFound")

			after, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, tc.content, after, "byte-identical")
			assertNoTemps(t, dir)
		})
	}
}

func TestCorruptAuditLogIsReportedAndAppendStillAppends(t *testing.T) {
	good, err := encodeRecord(ports.AuditRecord{Action: ports.AuditGrant, Outcome: "granted"})
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		content []byte
		// sep is what Append must put before its record.
		sep string
	}{
		{"garbage line in the middle", concat(good, []byte("garbage\n"), good), ""},
		{"empty line", concat(good, []byte("\n"), good), ""},
		{"unknown field", concat([]byte(`{"action":"grant","x":1}`+"\n"), good), ""},
		{"two records on one line", concat(bytes.TrimSuffix(good, []byte("\n")), good), ""},
		{"torn last line", concat(good, good[:len(good)/2]), "\n"},
		{"only a torn line", good[:10], "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newStore(t)
			ctx := t.Context()
			p := filepath.Join(dir, auditFile)
			require.NoError(t, os.WriteFile(p, tc.content, 0o600))

			recs, err := s.Records(ctx)
			require.ErrorIs(t, err, ports.ErrCorrupt)
			assert.Nil(t, recs)
			after, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, tc.content, after, "Records changes nothing")

			next := ports.AuditRecord{Action: ports.AuditRevoke, Outcome: "revoked", Actor: "cli"}
			require.NoError(t, s.Append(ctx, next))
			after, err = os.ReadFile(p)
			require.NoError(t, err)
			line, err := encodeRecord(next)
			require.NoError(t, err)
			assert.Equal(t, concat(tc.content, []byte(tc.sep), line), after,
				"the old bytes are kept and the new record is a whole line")
			_, err = s.Records(ctx)
			require.ErrorIs(t, err, ports.ErrCorrupt, "still corrupt: nothing was repaired")
		})
	}
}

func TestConcurrentWritersInOneProcessLoseNothing(t *testing.T) {
	_, dir := newStore(t)
	ctx := t.Context()
	const handles, goroutines, n = 3, 3, 9
	var stores []*Store
	for range handles {
		s, err := Open(dir)
		require.NoError(t, err)
		defer s.Close()
		stores = append(stores, s)
	}
	var wg sync.WaitGroup
	for h, s := range stores {
		for g := range goroutines {
			wg.Go(func() {
				for i := range n {
					fp := fmt.Sprintf("%d-%d-%d", h, g, i)
					assert.NoError(t, s.Grant(ctx, ports.Approval{Identity: ident("srv", fp)}))
					assert.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditGrant, Identity: ident("srv", fp)}))
					if i%3 == 0 {
						assert.NoError(t, s.Revoke(ctx, ident("srv", fp)))
					}
				}
			})
		}
	}
	wg.Wait()
	list, err := stores[0].List(ctx, "srv")
	require.NoError(t, err)
	assert.Len(t, list, handles*goroutines*(n-(n+2)/3))
	recs, err := stores[1].Records(ctx)
	require.NoError(t, err)
	assert.Len(t, recs, handles*goroutines*n)
}

func TestWaitingForAStoreLockEndsWithTheContext(t *testing.T) {
	s, dir := newStore(t)
	for _, tc := range []struct {
		name string
		lock string
		op   func(ctx context.Context) error
	}{
		{"grant", approvalsLock, func(ctx context.Context) error {
			return s.Grant(ctx, ports.Approval{Identity: ident("a", "1")})
		}},
		{"revoke", approvalsLock, func(ctx context.Context) error { return s.Revoke(ctx, ident("a", "1")) }},
		{"append", auditLock, func(ctx context.Context) error { return s.Append(ctx, ports.AuditRecord{}) }},
		{"records", auditLock, func(ctx context.Context) error { _, err := s.Records(ctx); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Someone else (another open file description) holds the lock.
			f, err := os.OpenFile(filepath.Join(dir, tc.lock), os.O_RDWR|os.O_CREATE, 0o600)
			require.NoError(t, err)
			defer f.Close()
			require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))

			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			err = tc.op(ctx)
			require.ErrorIs(t, err, ports.ErrUnavailable)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Less(t, time.Since(start), 2*time.Second)

			require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_UN))
			// Free again: the operation goes through (revoke finds grant's).
			require.NoError(t, tc.op(t.Context()))
		})
	}
}

func TestErrorsNameNoKeyValueOrPath(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	const key = "SECRET-KEY-7f3a"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokens", keyName(key)), []byte("junk"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, approvalsFile), []byte("junk"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, auditFile), []byte("junk"), 0o600))
	_, e1 := s.Get(ctx, key)
	e2 := s.Set(ctx, key, []byte("SECRET-VALUE"))
	_, e3 := s.List(ctx, "a")
	_, e4 := s.Records(ctx)
	require.NoError(t, os.RemoveAll(dir))
	e5 := s.Set(ctx, key+"2", []byte("SECRET-VALUE"))
	_, e6 := s.Lock(ctx, key)
	e7 := s.Grant(ctx, ports.Approval{Identity: ident(key, key)})
	for i, err := range []error{e1, e2, e3, e4, e5, e6, e7} {
		require.Error(t, err, i)
		msg := err.Error()
		for _, bad := range []string{key, "SECRET-VALUE", keyName(key), dir, "no such file", "/"} {
			assert.NotContains(t, msg, bad, "error %d: %q", i, msg)
		}
	}
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestTornLineAfterOwnAppendIsEnded: a Store that skips reading the log's
// last byte when the log is the size its own last write left still ends a
// line another writer tore after that write (the log grew), and one that
// another handle appended whole is left as it is.
func TestTornLineAfterOwnAppendIsEnded(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	p := filepath.Join(dir, auditFile)
	r1 := ports.AuditRecord{Action: ports.AuditGrant, Outcome: "granted", Reason: "one"}
	r2 := ports.AuditRecord{Action: ports.AuditRevoke, Outcome: "revoked", Reason: "two"}
	r3 := ports.AuditRecord{Action: ports.AuditGrant, Outcome: "granted", Reason: "three"}
	l1, _ := encodeRecord(r1)
	l2, _ := encodeRecord(r2)
	l3, _ := encodeRecord(r3)
	require.NoError(t, s.Append(ctx, r1))
	require.NoError(t, s.Append(ctx, r1)) // the log is as this Store left it
	torn := l2[:len(l2)/2]
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(torn)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, s.Append(ctx, r2))
	other, err := Open(dir)
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, other.Append(ctx, r3))
	require.NoError(t, s.Append(ctx, r3))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(concat(l1, l1, torn, []byte("\n"), l2, l3, l3)), string(got))
}
