package portstest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/mcpward/mcpward/ports"
)

var (
	_ ports.TokenStore    = (*TokenStore)(nil)
	_ ports.Locker        = (*Locker)(nil)
	_ ports.ApprovalStore = (*ApprovalStore)(nil)
	_ ports.AuditLog      = (*AuditLog)(nil)
)

// validKey reports whether key is a key every TokenStore and Locker accepts:
// non-empty and at most ports.MaxKeyLen bytes, any bytes at all.
func validKey(key string) bool {
	return key != "" && len(key) <= ports.MaxKeyLen
}

// TokenStore is an in-memory ports.TokenStore. Every handle is the same
// *TokenStore, so writes are visible to every handle at once; it keeps
// values of up to ports.MaxValueLen bytes and returns ErrCorrupt or
// ErrUnavailable only when injected. ctx is not consulted: no operation
// blocks. Fallible methods: "Get", "Set", "Delete".
type TokenStore struct {
	Faults
	mu     sync.RWMutex
	values map[string][]byte
}

// NewTokenStore returns an empty TokenStore.
func NewTokenStore() *TokenStore {
	s := &TokenStore{values: make(map[string][]byte)}
	s.setMethods("Get", "Set", "Delete")
	return s
}

// Get returns a copy of the value under key (non-nil, possibly empty):
// ports.ErrNotFound when there is none, ports.ErrInvalidKey for an empty or
// too long key.
func (s *TokenStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := s.hit("Get"); err != nil {
		return nil, err
	}
	if !validKey(key) {
		return nil, ports.ErrInvalidKey
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.values[key]
	if !ok {
		return nil, ports.ErrNotFound
	}
	return append([]byte{}, v...), nil
}

// Set stores a copy of value under key, replacing any previous value:
// ports.ErrInvalidKey for an empty or too long key, ports.ErrValueTooLarge
// for a value longer than ports.MaxValueLen.
func (s *TokenStore) Set(ctx context.Context, key string, value []byte) error {
	if err := s.hit("Set"); err != nil {
		return err
	}
	if !validKey(key) {
		return ports.ErrInvalidKey
	}
	if len(value) > ports.MaxValueLen {
		return ports.ErrValueTooLarge
	}
	v := append([]byte{}, value...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.values == nil {
		s.values = make(map[string][]byte)
	}
	s.values[key] = v
	return nil
}

// Delete removes key: ports.ErrNotFound when there is none,
// ports.ErrInvalidKey for an empty or too long key.
func (s *TokenStore) Delete(ctx context.Context, key string) error {
	if err := s.hit("Delete"); err != nil {
		return err
	}
	if !validKey(key) {
		return ports.ErrInvalidKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.values[key]; !ok {
		return ports.ErrNotFound
	}
	delete(s.values, key)
	return nil
}

// Locker is an in-process ports.Locker: it excludes every holder of a key
// among the goroutines sharing this *Locker, and cannot exclude other OS
// processes (the conformance suite skips its cross-process cases for it).
// Lock takes a free lock at once, even when ctx has already ended.
// Fallible method: "Lock".
type Locker struct {
	Faults
	mu      sync.Mutex
	held    map[string]chan struct{} // closed on release
	waiting map[string]int
}

// NewLocker returns a Locker with no lock held.
func NewLocker() *Locker {
	l := &Locker{}
	l.setMethods("Lock")
	return l
}

// Lock takes the lock for key, waiting until it is free or ctx ends. It is
// not reentrant: a second Lock of a held key waits like any other. The
// returned unlock is idempotent (later calls return nil). When ctx ends
// first the error wraps both ports.ErrLockTimeout and ctx.Err(); an empty or
// too long key is ports.ErrInvalidKey.
func (l *Locker) Lock(ctx context.Context, key string) (func() error, error) {
	if err := l.hit("Lock"); err != nil {
		return nil, err
	}
	if !validKey(key) {
		return nil, ports.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = make(map[string]chan struct{})
		l.waiting = make(map[string]int)
	}
	for {
		released, busy := l.held[key]
		if !busy {
			break
		}
		l.waiting[key]++
		l.mu.Unlock()
		var err error
		select {
		case <-released:
		case <-ctx.Done():
			err = ctx.Err()
		}
		l.mu.Lock()
		if l.waiting[key]--; l.waiting[key] == 0 {
			delete(l.waiting, key)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ports.ErrLockTimeout, err)
		}
	}
	released := make(chan struct{})
	l.held[key] = released
	var once sync.Once
	return func() error {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			delete(l.held, key)
			close(released)
		})
		return nil
	}, nil
}

// Held reports whether the lock for key is held.
func (l *Locker) Held(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.held[key]
	return ok
}

// Waiting reports how many Lock calls are waiting for key, so a test can
// wait until the code under test is blocked on a lock.
func (l *Locker) Waiting(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting[key]
}

// ApprovalStore is an in-memory ports.ApprovalStore. It matches identities
// only by exact equality of every field. ErrCorrupt and ErrUnavailable occur
// only when injected; ctx is not consulted. Fallible methods: "List",
// "Grant", "Revoke".
type ApprovalStore struct {
	Faults
	mu        sync.Mutex
	approvals []ports.Approval // in grant order
}

// NewApprovalStore returns an empty ApprovalStore.
func NewApprovalStore() *ApprovalStore {
	s := &ApprovalStore{}
	s.setMethods("List", "Grant", "Revoke")
	return s
}

// List returns every approval whose Identity.ServerID equals serverID,
// oldest first: by GrantedAt, and in grant order for equal times (a
// replacing Grant counts as the latest grant). It returns nil, nil when
// there is none.
func (s *ApprovalStore) List(ctx context.Context, serverID string) ([]ports.Approval, error) {
	if err := s.hit("List"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ports.Approval
	for _, a := range s.approvals {
		if a.Identity.ServerID == serverID {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b ports.Approval) int { return a.GrantedAt.Compare(b.GrantedAt) })
	return out, nil
}

// Grant adds a, replacing any approval with an identical Identity.
func (s *ApprovalStore) Grant(ctx context.Context, a ports.Approval) error {
	if err := s.hit("Grant"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.approvals = slices.DeleteFunc(s.approvals, func(b ports.Approval) bool { return b.Identity == a.Identity })
	s.approvals = append(s.approvals, a)
	return nil
}

// Revoke removes the approval with exactly identity id: ports.ErrNotFound
// when there is none.
func (s *ApprovalStore) Revoke(ctx context.Context, id ports.Identity) error {
	if err := s.hit("Revoke"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.approvals, func(b ports.Approval) bool { return b.Identity == id })
	if i < 0 {
		return ports.ErrNotFound
	}
	s.approvals = slices.Delete(s.approvals, i, i+1)
	return nil
}

// AuditLog is an in-memory ports.AuditLog. ErrCorrupt and ErrUnavailable
// occur only when injected; ctx is not consulted. Fallible methods:
// "Append", "Records".
type AuditLog struct {
	Faults
	mu      sync.Mutex
	records []ports.AuditRecord
}

// NewAuditLog returns an empty AuditLog.
func NewAuditLog() *AuditLog {
	l := &AuditLog{}
	l.setMethods("Append", "Records")
	return l
}

// Append adds r at the end.
func (l *AuditLog) Append(ctx context.Context, r ports.AuditRecord) error {
	if err := l.hit("Append"); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r)
	return nil
}

// Records returns a copy of every record in append order (nil when there
// is none).
func (l *AuditLog) Records(ctx context.Context) ([]ports.AuditRecord, error) {
	if err := l.hit("Records"); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.records), nil
}

// AuditQueue is an in-memory ports.AuditQueue that tells what a crash
// would keep: Records returns the durable records (appended, or enqueued
// and then flushed), Pending the enqueued ones a crash would lose.
// ErrUnavailable occurs only when injected; ctx is not consulted.
// Fallible methods: "Append", "Enqueue", "Flush", "Records" (a failed
// Flush loses the pending records, as a failed write does).
type AuditQueue struct {
	Faults
	mu               sync.Mutex
	durable, pending []ports.AuditRecord
}

// NewAuditQueue returns an empty AuditQueue.
func NewAuditQueue() *AuditQueue {
	q := &AuditQueue{}
	q.setMethods("Append", "Enqueue", "Flush", "Records")
	return q
}

// Append makes the pending records and r durable, in that order.
func (q *AuditQueue) Append(ctx context.Context, r ports.AuditRecord) error {
	if err := q.hit("Append"); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.durable = append(q.durable, q.pending...)
	q.pending = nil
	q.durable = append(q.durable, r)
	return nil
}

// Enqueue adds r to the pending records.
func (q *AuditQueue) Enqueue(r ports.AuditRecord) error {
	if err := q.hit("Enqueue"); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(q.pending, r)
	return nil
}

// Flush makes the pending records durable, or drops them when a failure
// is injected.
func (q *AuditQueue) Flush(ctx context.Context) error {
	err := q.hit("Flush")
	q.mu.Lock()
	defer q.mu.Unlock()
	if err == nil {
		q.durable = append(q.durable, q.pending...)
	}
	q.pending = nil
	return err
}

// Records returns a copy of the durable records in order (nil when there
// is none).
func (q *AuditQueue) Records(ctx context.Context) ([]ports.AuditRecord, error) {
	if err := q.hit("Records"); err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.durable), nil
}

// Pending returns a copy of the records enqueued and not yet durable.
func (q *AuditQueue) Pending() []ports.AuditRecord {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.pending)
}
