package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mcpward/mcpward/ports"
)

// auditBatch is the lines of the Appends that waited for the audit
// writer together: the next writer writes them in one write and syncs
// them with one fsync. err is their common outcome, set before done is
// closed.
type auditBatch struct {
	lines    [][]byte // a withdrawn line is nil
	deferred int      // how many lines came from Enqueue
	done     chan struct{}
	err      error
}

// auditQueue is a Store's batch waiting for the audit writer.
type auditQueue struct {
	mu      sync.Mutex
	pending *auditBatch // nil when no Append waits
	// sync makes the written lines durable; nil means (*os.File).Sync
	// (tests replace it to count or fail syncs).
	sync func(*os.File) error
	// lock and log are audit.lock and the log, held between writes by
	// the holder of auditMu.
	lock, log heldFile

	// delay is how long an enqueued record may wait for a write before
	// the Store writes it on its own; 0 means deferredDelay.
	delay time.Duration
	// timer is the Store's own write of enqueued records (nil until the
	// first Enqueue); armed says it is scheduled: from the Enqueue that
	// found no write scheduled until a write takes the pending batch,
	// which carries every enqueued record, so that the Store writes on
	// its own only records that waited delay for another write.
	timer *time.Timer
	armed bool
	// lost is set when a write that carried enqueued records failed,
	// until Flush reports it.
	lost bool
	// closed refuses Enqueue once Close began.
	closed bool
}

// deferredDelay bounds how long an enqueued audit record waits for a
// later Append's write before the Store writes it on its own.
const deferredDelay = 5 * time.Millisecond

// enqueue adds line to the pending batch (made when there is none) and
// returns the batch and the line's index in it.
func (q *auditQueue) enqueue(line []byte) (*auditBatch, int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == nil {
		q.pending = &auditBatch{done: make(chan struct{})}
	}
	b := q.pending
	b.lines = append(b.lines, line)
	return b, len(b.lines) - 1
}

// withdraw takes line i out of b when b is still pending (no writer has
// taken it) and reports whether it did.
func (q *auditQueue) withdraw(b *auditBatch, i int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending != b {
		return false
	}
	b.lines[i] = nil
	return true
}

// take returns the pending batch and makes a new one start; only the
// holder of the Store's auditMu calls it. The batch carries every
// enqueued record, so the Store's own write is no longer needed: it is
// called off (one that fired already finds it so and writes nothing).
func (q *auditQueue) take() *auditBatch {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.pending
	q.pending = nil
	if q.armed {
		q.armed = false
		q.timer.Stop()
	}
	return b
}

// enqueueDeferred adds line to the pending batch without waiting for
// it and makes sure a write of it is scheduled.
func (s *Store) enqueueDeferred(line []byte) error {
	q := &s.auditQ
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return unavailable("store closed")
	}
	if q.pending == nil {
		q.pending = &auditBatch{done: make(chan struct{})}
	}
	q.pending.lines = append(q.pending.lines, line)
	q.pending.deferred++
	if !q.armed {
		d := q.delay
		if d <= 0 {
			d = deferredDelay
		}
		q.armed = true
		if q.timer == nil {
			q.timer = time.AfterFunc(d, s.writeDeferred)
		} else {
			q.timer.Reset(d)
		}
	}
	return nil
}

// writeDeferred is the Store's own write of the pending batch, when
// enqueued records waited deferredDelay for another write; it writes
// nothing when a write took them since it was scheduled.
func (s *Store) writeDeferred() {
	s.auditMu <- struct{}{}
	defer func() { <-s.auditMu }()
	s.auditQ.mu.Lock()
	armed := s.auditQ.armed
	s.auditQ.mu.Unlock()
	if !armed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), deferredWriteTimeout)
	defer cancel()
	s.commit(ctx, s.auditQ.take())
}

// deferredWriteTimeout bounds the wait of the Store's own writes (for
// the cross-process flock).
const deferredWriteTimeout = 30 * time.Second

// commit writes batch b (nil: nothing pending) and settles it; only the
// holder of auditMu calls it. A failed write of enqueued records is
// remembered for Flush.
func (s *Store) commit(ctx context.Context, b *auditBatch) error {
	if b == nil {
		return nil
	}
	b.err = s.writeAudit(ctx, b.lines)
	if b.err != nil && b.deferred > 0 {
		s.auditQ.mu.Lock()
		s.auditQ.lost = true
		s.auditQ.mu.Unlock()
	}
	close(b.done)
	return b.err
}

// flush makes every line enqueued before it durable: it joins the pending
// batch with no line of its own, so the batch is written (or was) before
// it returns, after every earlier batch (batches are written in turn under
// auditMu). It then reports, once, a lost enqueued record.
func (s *Store) flush(ctx context.Context) error {
	if err := s.appendLine(ctx, nil); err != nil {
		return err
	}
	q := &s.auditQ
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.lost {
		q.lost = false
		return unavailable("an enqueued audit record could not be written")
	}
	return nil
}

// appendLine makes line durable in the audit log: it joins the pending
// batch; the first of the batch's Appends to get the audit writer
// (auditMu) writes the whole batch in one write under the cross-process
// flock and fsyncs it once, and every Append of the batch returns the
// batch's outcome, only after that fsync. When ctx ends before a writer
// took the line, the line is withdrawn (never written) and the error is
// the lock wait's; when it ends while another Append writes the line,
// the error is the same but the line may still be written.
func (s *Store) appendLine(ctx context.Context, line []byte) error {
	b, i := s.auditQ.enqueue(line)
	if err := acquire(ctx, s.auditMu); err != nil {
		if s.auditQ.withdraw(b, i) {
			return lockWaitError(err)
		}
		// A writer has taken the batch: its outcome is this line's, unless
		// ctx ends first (that writer waits with its own ctx, which may
		// have no deadline); the line may then still be written.
		select {
		case <-b.done:
			return b.err
		case <-ctx.Done():
			return lockWaitError(ctx.Err())
		}
	}
	defer func() { <-s.auditMu }()
	select {
	case <-b.done: // written by the writer before this one
		return b.err
	default:
	}
	// b is not done, so it is still pending: a writer completes the
	// batch it takes before it lets go of auditMu.
	return s.commit(ctx, s.auditQ.take())
}

// heldFile is a file of the store kept open between audit writes, with
// its identity when opened.
type heldFile struct {
	f  *os.File
	fi fs.FileInfo
	// end is the file's size after this Store's last write to it, 0
	// before one: a log still that size ends in that write's newline.
	end int64
}

// drop closes h's file, if any.
func (h *heldFile) drop() {
	if h.f != nil {
		_ = h.f.Close()
	}
	*h = heldFile{}
}

// held returns h's file when name still names it (and the path's current
// info: its size is the file's), else opens name afresh (creating it when
// missing) and holds that one. Only the holder of auditMu calls it.
func (s *Store) held(h *heldFile, name string, flag int) (*os.File, fs.FileInfo, error) {
	now, err := s.root.Stat(name)
	if err == nil && h.f != nil && os.SameFile(h.fi, now) {
		return h.f, now, nil
	}
	h.drop()
	f, err := s.openOrCreate(name, flag)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	*h = heldFile{f: f, fi: fi}
	return f, fi, nil
}

// writeAudit appends lines (nil ones skipped) to the audit log in one
// write under an exclusive flock on audit.lock, then fsyncs the log.
// audit.lock and the log stay open between writes (a file that the name
// no longer names, such as a rotated log, is closed and the name opened
// again), so a write costs a stat of each name, the flock, the write and
// the fsync (and a read of the log's last byte when its size is not the
// one this Store's last write left).
func (s *Store) writeAudit(ctx context.Context, lines [][]byte) error {
	var data []byte
	for _, l := range lines {
		if data == nil {
			data = l // one line alone is written as it is
		} else if l != nil {
			data = append(slices.Clip(data), l...)
		}
	}
	if len(data) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return lockWaitError(err)
	}
	q := &s.auditQ
	lk, _, err := s.held(&q.lock, auditLock, os.O_RDWR)
	if err != nil {
		return unavailable("cannot open store lock")
	}
	if err := waitFlock(ctx, lk, true); err != nil {
		q.lock.drop()
		if errors.Is(err, errWaitEnded) {
			return lockWaitError(ctx.Err())
		}
		return unavailable("cannot take store lock")
	}
	defer funlock(lk)
	err = s.writeLog(data)
	if err != nil {
		q.log.drop() // opened afresh next time
	}
	return err
}

// writeLog appends data to the audit log (ending a torn last line first)
// and syncs it; the caller holds the flock.
func (s *Store) writeLog(data []byte) error {
	q := &s.auditQ
	f, fi, err := s.held(&q.log, auditFile, os.O_RDWR|os.O_APPEND)
	if err != nil {
		return unavailable("cannot open audit log")
	}
	if !fi.Mode().IsRegular() {
		return unavailable("audit log is not a regular file")
	}
	// A log of the size this Store's last write left it at ends in that
	// write's newline (every writer appends, under the flock); any other
	// size, a crashed writer's torn line included, is checked.
	size := fi.Size()
	if size > 0 && size != q.log.end {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return unavailable("cannot read audit log")
		}
		if last[0] != '\n' {
			data = append([]byte{'\n'}, data...)
		}
	}
	if _, err := f.Write(data); err != nil {
		return unavailable("cannot write audit log")
	}
	q.log.end = size + int64(len(data))
	sync := q.sync
	if sync == nil {
		sync = (*os.File).Sync
	}
	if err := sync(f); err != nil {
		return unavailable("cannot sync audit log")
	}
	return nil
}

// closeAudit writes the enqueued records still pending (the write in
// progress, if any, first), refuses later ones and closes the files held
// for audit writes. It returns that write's error.
func (s *Store) closeAudit() error {
	s.auditMu <- struct{}{}
	defer func() { <-s.auditMu }()
	q := &s.auditQ
	q.mu.Lock()
	q.closed = true
	if q.armed {
		q.armed = false
		q.timer.Stop() // a writeDeferred already started writes nothing
	}
	q.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), deferredWriteTimeout)
	defer cancel()
	err := s.commit(ctx, q.take())
	q.lock.drop()
	q.log.drop()
	return err
}

// lockWaitError is the error of a wait for the audit writer cut short by
// ctx (err is ctx's).
func lockWaitError(err error) error {
	return fmt.Errorf("filestore: store lock wait: %w: %w", ports.ErrUnavailable, err)
}
