package pgstore

import (
	"context"
	"sync"
	"time"

	"github.com/mcpward/mcpward/ports"
)

// Bounds of the audit queue (Enqueue).
const (
	// QueueLimit is how many enqueued audit records may wait for their
	// write at once; Enqueue refuses a record beyond it.
	QueueLimit = 4096
	// queueDelay bounds how long an enqueued record waits for another
	// write (an Append's) before the Store writes it on its own.
	queueDelay = 5 * time.Millisecond
	// queueWriteTimeout bounds one write the Store makes on its own
	// (its writer's, and Close's last one).
	queueWriteTimeout = 30 * time.Second
)

// auditQueue holds a Store's enqueued records until a write takes them.
// sem serializes the writes of one Store (Append's and the writer's), so
// records leave the queue in the order they entered it and every write
// that took some has ended before the next one starts.
type auditQueue struct {
	sem chan struct{}
	// wake asks the writer to write within queueDelay; now, at once.
	wake, now chan struct{}
	// quit ends the writer after its last write; done is closed then.
	quit, done chan struct{}
	stop       sync.Once

	mu      sync.Mutex
	pending [][]byte
	// enqueued counts the records Enqueue took; written those a write
	// took and ended (stored or lost), in the same order.
	enqueued, written uint64
	// lost is set when a write that carried enqueued records failed,
	// until Flush reports it.
	lost bool
	// closed refuses Enqueue once Close began.
	closed bool
	// moved is closed (and replaced) whenever written grows.
	moved chan struct{}
}

// startAuditQueue makes the queue of a Store and starts its writer, which
// Close ends.
func (s *Store) startAuditQueue() {
	s.aq = &auditQueue{
		sem:   make(chan struct{}, 1),
		wake:  make(chan struct{}, 1),
		now:   make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
		moved: make(chan struct{}),
	}
	go s.auditWriter()
}

// nudge sends on a buffered channel of one without waiting.
func nudge(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// auditWriter writes enqueued records queueDelay after they arrive (at
// once when Flush asks), until Close; then it writes what is left.
func (s *Store) auditWriter() {
	q := s.aq
	defer close(q.done)
	t := time.NewTimer(queueDelay)
	t.Stop()
	for {
		select {
		case <-q.quit:
			s.writeQueued()
			return
		case <-q.now:
		case <-q.wake:
			t.Reset(queueDelay)
			select {
			case <-t.C:
			case <-q.now:
				t.Stop()
			case <-q.quit:
				t.Stop()
				s.writeQueued()
				return
			}
		}
		s.writeQueued()
	}
}

// writeQueued writes, in one transaction, the records waiting, if any.
func (s *Store) writeQueued() {
	q := s.aq
	q.sem <- struct{}{}
	defer func() { <-q.sem }()
	recs := q.take()
	if len(recs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), queueWriteTimeout)
	defer cancel()
	q.settle(len(recs), s.appendRecords(ctx, recs) != nil)
}

// take removes and returns the records waiting. The caller holds sem.
func (q *auditQueue) take() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	recs := q.pending
	q.pending = nil
	return recs
}

// requeue puts back, first, records take returned that a write abandoned
// before storing them, and asks the writer for them. The caller holds
// sem.
func (q *auditQueue) requeue(recs [][]byte) {
	if len(recs) == 0 {
		return
	}
	q.mu.Lock()
	q.pending = append(recs, q.pending...)
	q.mu.Unlock()
	nudge(q.wake)
}

// settle counts n taken records as written (lost when failed) and wakes
// the Flush calls waiting. The caller holds sem.
func (q *auditQueue) settle(n int, failed bool) {
	if n == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.written += uint64(n)
	q.lost = q.lost || failed
	close(q.moved)
	q.moved = make(chan struct{})
}

// Enqueue implements ports.AuditQueue: it takes r to be stored after every
// record this Store appended or enqueued before it, and returns without
// waiting. The Store writes the records waiting in one transaction on the
// audit chain, as Append does: with its next Append (in Append's
// transaction, before Append's record) or on its own at most 5 ms later.
// It fails with ReasonUnavailable when the Store is closed or QueueLimit
// records are already waiting. A failed write of an enqueued record (it is
// then lost, not retried) is reported by the next Flush. Safe for
// concurrent use.
func (s *Store) Enqueue(r ports.AuditRecord) error {
	record := encodeRecord(r)
	q := s.aq
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return fail(ReasonUnavailable, "the store is closed")
	case len(q.pending) >= QueueLimit:
		return fail(ReasonUnavailable, "too many audit records are waiting to be written")
	}
	q.pending = append(q.pending, record)
	q.enqueued++
	nudge(q.wake)
	return nil
}

// Flush implements ports.AuditQueue: it asks for the records waiting to be
// written at once and returns when every record enqueued on this Store
// before the call has been written: nil, or ReasonUnavailable when a write
// that carried an enqueued record failed since the last Flush (reported
// once; the record is lost) or when ctx ends first (ctx.Err() wrapped
// too; the write goes on). Safe for concurrent use.
func (s *Store) Flush(ctx context.Context) error {
	q := s.aq
	q.mu.Lock()
	target := q.enqueued
	q.mu.Unlock()
	nudge(q.now)
	for {
		q.mu.Lock()
		if q.written >= target {
			lost := q.lost
			q.lost = false
			q.mu.Unlock()
			if lost {
				return fail(ReasonUnavailable, "an enqueued audit record could not be written")
			}
			return nil
		}
		moved := q.moved
		q.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
			e := fail(ReasonUnavailable, "the flush of enqueued audit records was abandoned")
			e.cause = ctx.Err()
			return e
		}
	}
}

// closeAuditQueue refuses further Enqueue calls, ends the writer after it
// wrote the records still waiting, and waits for it. Idempotent.
func (s *Store) closeAuditQueue() {
	q := s.aq
	q.stop.Do(func() {
		q.mu.Lock()
		q.closed = true
		q.mu.Unlock()
		close(q.quit)
	})
	<-q.done
}
