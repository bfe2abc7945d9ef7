package filestore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/mcpward/mcpward/ports"
)

// auditBatch is the lines of the Appends that waited for the audit
// writer together: the next writer writes them in one write and syncs
// them with one fsync. err is their common outcome, set before done is
// closed.
type auditBatch struct {
	lines [][]byte // a withdrawn line is nil
	done  chan struct{}
	err   error
}

// auditQueue is a Store's batch waiting for the audit writer.
type auditQueue struct {
	mu      sync.Mutex
	pending *auditBatch // nil when no Append waits
	// sync makes the written lines durable; nil means (*os.File).Sync
	// (tests replace it to count or fail syncs).
	sync func(*os.File) error
}

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
// holder of the Store's auditMu calls it.
func (q *auditQueue) take() *auditBatch {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.pending
	q.pending = nil
	return b
}

// appendLine makes line durable in the audit log: it joins the pending
// batch; the first of the batch's Appends to get the audit writer
// (auditMu) writes the whole batch in one write under the cross-process
// flock and fsyncs it once, and every Append of the batch returns the
// batch's outcome, only after that fsync. When ctx ends before a writer
// took the line, the line is withdrawn (never written) and the error is
// the lock wait's.
func (s *Store) appendLine(ctx context.Context, line []byte) error {
	b, i := s.auditQ.enqueue(line)
	if err := acquire(ctx, s.auditMu); err != nil {
		if s.auditQ.withdraw(b, i) {
			return lockWaitError(err)
		}
		// A writer has taken the batch: its outcome is this line's.
		<-b.done
		return b.err
	}
	defer func() { <-s.auditMu }()
	select {
	case <-b.done: // written by the writer before this one
		return b.err
	default:
	}
	// b is not done, so it is still pending: a writer completes the
	// batch it takes before it lets go of auditMu.
	batch := s.auditQ.take()
	batch.err = s.writeAudit(ctx, batch.lines)
	close(batch.done)
	return batch.err
}

// writeAudit appends lines (nil ones skipped) to the audit log in one
// write under an exclusive flock on audit.lock, then fsyncs the log.
func (s *Store) writeAudit(ctx context.Context, lines [][]byte) error {
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
	}
	if buf.Len() == 0 {
		return nil
	}
	data := buf.Bytes()
	return s.withFileLock(ctx, auditLock, true, func() error {
		f, err := s.openOrCreate(auditFile, os.O_RDWR|os.O_APPEND)
		if err != nil {
			return unavailable("cannot open audit log")
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return unavailable("cannot inspect audit log")
		}
		if !fi.Mode().IsRegular() {
			return unavailable("audit log is not a regular file")
		}
		if size := fi.Size(); size > 0 {
			last := make([]byte, 1)
			if _, err := f.ReadAt(last, size-1); err != nil {
				return unavailable("cannot read audit log")
			}
			if last[0] != '\n' {
				data = append([]byte{'\n'}, data...)
			}
		}
		if _, err := f.Write(data); err != nil {
			return unavailable("cannot write audit log")
		}
		sync := s.auditQ.sync
		if sync == nil {
			sync = (*os.File).Sync
		}
		if err := sync(f); err != nil {
			return unavailable("cannot sync audit log")
		}
		return nil
	})
}

// lockWaitError is the error of a wait for the audit writer cut short by
// ctx (err is ctx's).
func lockWaitError(err error) error {
	return fmt.Errorf("filestore: store lock wait: %w: %w", ports.ErrUnavailable, err)
}
