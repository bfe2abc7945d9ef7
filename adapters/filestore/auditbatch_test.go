//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// pendingLines is how many lines wait in s's pending audit batch.
func pendingLines(s *Store) int {
	s.auditQ.mu.Lock()
	defer s.auditQ.mu.Unlock()
	if s.auditQ.pending == nil {
		return 0
	}
	return len(s.auditQ.pending.lines)
}

// syncRecorder replaces s's audit sync: every sync counts, returns fail
// when it is not nil (else it is the real fsync), and after each
// successful one the log's content is kept as what is durable.
type syncRecorder struct {
	mu      sync.Mutex
	syncs   int
	durable string
}

func (r *syncRecorder) install(s *Store, dir string, fail error) {
	s.auditQ.sync = func(f *os.File) error {
		r.mu.Lock()
		r.syncs++
		r.mu.Unlock()
		if fail != nil {
			return fail
		}
		if err := f.Sync(); err != nil {
			return err
		}
		data, err := os.ReadFile(filepath.Join(dir, auditFile))
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.durable = string(data)
		r.mu.Unlock()
		return nil
	}
}

// appendAllWhileBusy runs n Appends (records 1..n) while the audit
// writer is held elsewhere, lets it go once all n wait, and returns
// each one's error and whether its record was durable when it returned.
func appendAllWhileBusy(t *testing.T, s *Store, rec *syncRecorder, n int) ([]error, []bool) {
	s.auditMu <- struct{}{} // a write in progress elsewhere
	var wg sync.WaitGroup
	errs := make([]error, n)
	seen := make([]bool, n)
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			errs[i-1] = s.Append(t.Context(), callRecord(i))
			rec.mu.Lock()
			seen[i-1] = strings.Contains(rec.durable, fmt.Sprintf("n=%03d;", i))
			rec.mu.Unlock()
		})
	}
	require.Eventually(t, func() bool { return pendingLines(s) == n }, 10*time.Second, time.Millisecond)
	<-s.auditMu
	wg.Wait()
	return errs, seen
}

func callRecord(i int) ports.AuditRecord {
	return ports.AuditRecord{Time: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), Action: ports.AuditCall,
		Identity: ports.Identity{ServerID: "ex"}, Outcome: "ok", Reason: fmt.Sprintf("tool=echo n=%03d;", i), Actor: "serve"}
}

// TestAuditAppendGroupsConcurrentRecords: Appends that wait while a
// write is in progress go out in the next write and share one fsync,
// and each returns only once the fsync covering its own record is done.
func TestAuditAppendGroupsConcurrentRecords(t *testing.T) {
	s, dir := newStore(t)
	const n = 20
	var rec syncRecorder
	rec.install(s, dir, nil)
	errs, seen := appendAllWhileBusy(t, s, &rec, n)
	for i := range n {
		require.NoError(t, errs[i])
		assert.True(t, seen[i], "Append %d returned before its record was synced", i+1)
	}
	assert.Equal(t, 1, rec.syncs, "one write and one fsync for the %d records that waited", n)
	recs, err := s.Records(t.Context())
	require.NoError(t, err)
	require.Len(t, recs, n, "every record whole")
	got := map[string]bool{}
	for _, r := range recs {
		got[r.Reason] = true
	}
	for i := 1; i <= n; i++ {
		assert.True(t, got[callRecord(i).Reason], "record %d", i)
	}
}

// TestAuditAppendFailedSyncFailsItsGroup: a failed fsync is
// ErrUnavailable for the Append alone, and for every Append whose record
// the failed write carried.
func TestAuditAppendFailedSyncFailsItsGroup(t *testing.T) {
	s, dir := newStore(t)
	boom := errors.New("disk gone")
	s.auditQ.sync = func(*os.File) error { return boom }
	err := s.Append(t.Context(), callRecord(0))
	require.ErrorIs(t, err, ports.ErrUnavailable)
	assert.NotContains(t, err.Error(), "disk gone", "no operating-system text")

	const n = 10
	var rec syncRecorder
	rec.install(s, dir, boom)
	errs, _ := appendAllWhileBusy(t, s, &rec, n)
	for i := range n {
		assert.ErrorIs(t, errs[i], ports.ErrUnavailable, "Append %d", i+1)
	}
	assert.Equal(t, 1, rec.syncs)
}

// TestAuditAppendWithdrawnWhenCtxEnds: an Append whose ctx ends while it
// waits for the audit writer fails and its record is never written,
// also not by a later writer.
func TestAuditAppendWithdrawnWhenCtxEnds(t *testing.T) {
	s, _ := newStore(t)
	s.auditMu <- struct{}{} // a writer busy elsewhere
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Append(ctx, callRecord(1)) }()
	require.Eventually(t, func() bool { return pendingLines(s) == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	err := <-done
	require.ErrorIs(t, err, ports.ErrUnavailable)
	require.ErrorIs(t, err, context.Canceled)
	<-s.auditMu

	require.NoError(t, s.Append(t.Context(), callRecord(2)))
	recs, err := s.Records(t.Context())
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, callRecord(2).Reason, recs[0].Reason)
}

// openFDs is the number of this process's open descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/dev/fd")
	require.NoError(t, err)
	return len(ents)
}

// TestAuditAppendFollowsARotatedLog: the log is kept open between
// Appends, but once its name names another file (the old one renamed
// away), records go to the file at the name.
func TestAuditAppendFollowsARotatedLog(t *testing.T) {
	s, dir := newStore(t)
	require.NoError(t, s.Append(t.Context(), callRecord(1)))
	held := s.auditQ.log.f
	require.NoError(t, s.Append(t.Context(), callRecord(2)))
	assert.Same(t, held, s.auditQ.log.f, "kept open between Appends")

	require.NoError(t, os.Rename(filepath.Join(dir, auditFile), filepath.Join(dir, "audit.jsonl.1")))
	require.NoError(t, s.Append(t.Context(), callRecord(3)))
	recs, err := s.Records(t.Context())
	require.NoError(t, err)
	require.Len(t, recs, 1, "the new log holds the new record alone")
	assert.Equal(t, callRecord(3).Reason, recs[0].Reason)
	old, err := os.ReadFile(filepath.Join(dir, "audit.jsonl.1"))
	require.NoError(t, err)
	assert.NotContains(t, string(old), "n=003;")
}

// TestAuditAppendLocksTheLockFileAtItsName: audit.lock is kept open, but
// when it is replaced, Append locks the file now at the name, so it
// still excludes another process's writer.
func TestAuditAppendLocksTheLockFileAtItsName(t *testing.T) {
	s, dir := newStore(t)
	require.NoError(t, s.Append(t.Context(), callRecord(1)))
	lockPath := filepath.Join(dir, auditLock)
	require.NoError(t, os.Remove(lockPath))
	require.NoError(t, os.WriteFile(lockPath, nil, 0o600))
	other, err := os.Open(lockPath)
	require.NoError(t, err)
	defer other.Close()
	ok, err := tryFlock(other, true) // another writer holds the new lock file
	require.NoError(t, err)
	require.True(t, ok)

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err = s.Append(ctx, callRecord(2))
	require.ErrorIs(t, err, ports.ErrUnavailable, "waited for the lock at the name")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, funlock(other))
	require.NoError(t, s.Append(t.Context(), callRecord(3)))
	recs, err := s.Records(t.Context())
	require.NoError(t, err)
	require.Len(t, recs, 2)
}

// TestStoreCloseReleasesTheAuditFiles: the descriptors held for audit
// writes are closed by Close, and an Append after Close is ErrUnavailable.
func TestStoreCloseReleasesTheAuditFiles(t *testing.T) {
	before := openFDs(t)
	s, err := Open(filepath.Join(t.TempDir(), "store"))
	require.NoError(t, err)
	require.NoError(t, s.Append(t.Context(), callRecord(1)))
	require.NoError(t, s.Close())
	assert.Equal(t, before, openFDs(t))
	assert.ErrorIs(t, s.Append(t.Context(), callRecord(2)), ports.ErrUnavailable)
}

// BenchmarkAppendConcurrent is 8 goroutines per CPU appending audit
// records at once, as concurrent calls through "mcpward serve" do; each
// Append returns after the fsync covering its record. fsyncs/op is how
// many fsyncs each record cost (1 without group commit).
//
//	cd adapters/filestore
//	go test -run '^$' -bench AppendConcurrent -benchtime 4000x .
func BenchmarkAppendConcurrent(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "state"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var syncs sync.Mutex
	n := 0
	s.auditQ.sync = func(f *os.File) error {
		syncs.Lock()
		n++
		syncs.Unlock()
		return f.Sync()
	}
	rec := callRecord(1)
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Append(context.Background(), rec); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(n)/float64(b.N), "fsyncs/op")
}

// TestAuditAppendReturnsAtItsCtxWhileAnotherWrites: an Append whose
// record another Append has taken to write (and that waits, perhaps
// without a deadline, for another process's lock) still returns when its
// own ctx ends.
func TestAuditAppendReturnsAtItsCtxWhileAnotherWrites(t *testing.T) {
	s, _ := newStore(t)
	s.auditMu <- struct{}{} // this test is the writer
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Append(ctx, callRecord(1)) }()
	require.Eventually(t, func() bool { return pendingLines(s) == 1 }, 10*time.Second, time.Millisecond)
	b := s.auditQ.take() // taken to be written, and the write is stuck
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ports.ErrUnavailable)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(10 * time.Second):
		t.Error("an Append outlived its ctx while another Append held its record")
	}
	close(b.done)
	<-s.auditMu
}

// TestAuditEnqueueWrittenOnItsOwn: an enqueued record that no later
// Append carries is written and synced by the Store within its delay;
// Close writes one still waiting.
func TestAuditEnqueueWrittenOnItsOwn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir)
	require.NoError(t, err)
	rec := &syncRecorder{}
	rec.install(s, dir, nil)
	require.NoError(t, s.Enqueue(callRecord(1)))
	require.Eventually(t, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return strings.Contains(rec.durable, "n=001;")
	}, 10*time.Second, time.Millisecond, "written and synced without a Flush")

	s.auditQ.delay = time.Hour
	require.NoError(t, s.Enqueue(callRecord(2)))
	require.NoError(t, s.Close())
	rec.mu.Lock()
	assert.Contains(t, rec.durable, "n=002;", "Close writes what is enqueued")
	rec.mu.Unlock()
	assert.ErrorIs(t, s.Enqueue(callRecord(3)), ports.ErrUnavailable, "Enqueue after Close")
}

// TestAuditEnqueueFailedWriteReportedByFlush: a failed write of an
// enqueued record is reported by the next Flush, once; an Append that
// carried it fails with it.
func TestAuditEnqueueFailedWriteReportedByFlush(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir)
	require.NoError(t, err)
	defer s.Close()
	s.auditQ.delay = time.Hour
	bad := &syncRecorder{}
	bad.install(s, dir, errors.New("injected fsync failure"))
	require.NoError(t, s.Enqueue(callRecord(1)))
	assert.ErrorIs(t, s.Append(t.Context(), callRecord(2)), ports.ErrUnavailable, "the write carrying both failed")
	good := &syncRecorder{}
	good.install(s, dir, nil)
	assert.ErrorIs(t, s.Flush(t.Context()), ports.ErrUnavailable, "the lost enqueued record is reported")
	assert.NoError(t, s.Flush(t.Context()), "once")
	require.NoError(t, s.Enqueue(callRecord(3)))
	require.NoError(t, s.Flush(t.Context()))
	good.mu.Lock()
	assert.Contains(t, good.durable, "n=003;")
	good.mu.Unlock()
	assert.Equal(t, 1, good.syncs, "an empty Flush writes nothing")
}

// TestAuditEnqueueOwnWriteCalledOffByAWrite: a write that carries the
// enqueued records calls the Store's own write off, so a record enqueued
// after it waits the whole delay for another write, as the first did
// (serve enqueues each call's outcome and the next call's start record
// carries it: the Store's own fsync would otherwise come every delay and
// hold up a call's start record behind it).
func TestAuditEnqueueOwnWriteCalledOffByAWrite(t *testing.T) {
	s, dir := newStore(t)
	const delay = 300 * time.Millisecond
	s.auditQ.delay = delay
	var rec syncRecorder
	rec.install(s, dir, nil)
	require.NoError(t, s.Enqueue(callRecord(1)))
	require.NoError(t, s.Append(t.Context(), callRecord(2)), "carries record 1")
	time.Sleep(delay * 2 / 3)
	require.NoError(t, s.Enqueue(callRecord(3)))
	enqueued := time.Now()
	time.Sleep(delay / 2) // past the first record's delay, within the third's
	rec.mu.Lock()
	syncs, durable := rec.syncs, rec.durable
	rec.mu.Unlock()
	if time.Since(enqueued) < delay { // else the machine stalled: nothing to tell
		assert.Equal(t, 1, syncs, "no write on its own before record 3 waited the delay")
		assert.NotContains(t, durable, "n=003;")
	}
	require.Eventually(t, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return strings.Contains(rec.durable, "n=003;")
	}, 10*time.Second, time.Millisecond, "written on its own once it waited the delay")
}
