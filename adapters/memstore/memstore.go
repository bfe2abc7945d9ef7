// Package memstore keeps mcpward's stores in the memory of one process: the
// approvals, the audit trail, the locks and (for a host that wants them)
// tokens. Nothing is written anywhere and everything is gone when the
// process exits.
//
// It is the store of a host that needs no files: one that uses only
// servers needing no approval (managed and user tiers), tests, ephemeral
// agents. Its Locker excludes goroutines of this process only, so it
// cannot coordinate anything across processes (an OAuth refresh, for
// one: composition's in-memory profile refuses OAuth for that reason).
//
// A Store is safe for concurrent use. Every method honours its port's
// contract (see the conformance suites) except across processes, and the
// audit trail is bounded (Options.MaxAuditRecords): past the bound the
// oldest records go.
package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/mcpward/mcpward/ports"
)

var (
	_ ports.TokenStore    = (*Store)(nil)
	_ ports.Locker        = (*Store)(nil)
	_ ports.ApprovalStore = (*Store)(nil)
	_ ports.AuditLog      = (*Store)(nil)
	_ ports.AuditQueue    = (*Store)(nil)
)

// DefaultMaxAuditRecords is how many audit records a Store keeps when
// Options.MaxAuditRecords is 0: every evaluation appends one record per
// server it decides, so an unbounded trail would grow for as long as the
// process runs.
const DefaultMaxAuditRecords = 10000

// Options configure a Store. A nil *Options means every default.
type Options struct {
	// MaxAuditRecords bounds the audit trail: when an Append would exceed
	// it, the oldest record is forgotten. 0 (or less) means
	// DefaultMaxAuditRecords.
	MaxAuditRecords int
}

// Store is an in-memory TokenStore, Locker, ApprovalStore and AuditLog.
// The zero value is not usable: call New.
type Store struct {
	maxAudit int

	mu        sync.Mutex
	tokens    map[string][]byte
	approvals []ports.Approval // in grant order
	audit     []ports.AuditRecord
	locks     map[string]chan struct{} // held key → closed on release
}

// New returns an empty Store.
func New(opts *Options) *Store {
	s := &Store{maxAudit: DefaultMaxAuditRecords, tokens: map[string][]byte{}, locks: map[string]chan struct{}{}}
	if opts != nil && opts.MaxAuditRecords > 0 {
		s.maxAudit = opts.MaxAuditRecords
	}
	return s
}

// validKey reports whether key is non-empty and at most ports.MaxKeyLen
// bytes (any bytes at all).
func validKey(key string) bool { return key != "" && len(key) <= ports.MaxKeyLen }

// Get returns a copy of the value under key: ports.ErrNotFound when there
// is none, ports.ErrInvalidKey for an empty or too long key.
func (s *Store) Get(_ context.Context, key string) ([]byte, error) {
	if !validKey(key) {
		return nil, ports.ErrInvalidKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.tokens[key]
	if !ok {
		return nil, ports.ErrNotFound
	}
	return append([]byte{}, v...), nil
}

// Set stores a copy of value under key: ports.ErrInvalidKey,
// ports.ErrValueTooLarge beyond ports.MaxValueLen.
func (s *Store) Set(_ context.Context, key string, value []byte) error {
	if !validKey(key) {
		return ports.ErrInvalidKey
	}
	if len(value) > ports.MaxValueLen {
		return ports.ErrValueTooLarge
	}
	v := append([]byte{}, value...)
	s.mu.Lock()
	s.tokens[key] = v
	s.mu.Unlock()
	return nil
}

// Delete removes key: ports.ErrNotFound when there is none,
// ports.ErrInvalidKey.
func (s *Store) Delete(_ context.Context, key string) error {
	if !validKey(key) {
		return ports.ErrInvalidKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tokens[key]; !ok {
		return ports.ErrNotFound
	}
	delete(s.tokens, key)
	return nil
}

// Lock takes the lock for key among the goroutines of this process that
// share s, waiting until it is free or ctx ends (then the error wraps
// ports.ErrLockTimeout and ctx.Err()). A free lock is taken at once, even
// when ctx has ended. The unlock is idempotent. ports.ErrInvalidKey for an
// empty or too long key.
func (s *Store) Lock(ctx context.Context, key string) (func() error, error) {
	if !validKey(key) {
		return nil, ports.ErrInvalidKey
	}
	s.mu.Lock()
	for {
		released, busy := s.locks[key]
		if !busy {
			break
		}
		s.mu.Unlock()
		select {
		case <-released:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ports.ErrLockTimeout, ctx.Err())
		}
		s.mu.Lock()
	}
	released := make(chan struct{})
	s.locks[key] = released
	s.mu.Unlock()
	var once sync.Once
	return func() error {
		once.Do(func() {
			s.mu.Lock()
			delete(s.locks, key)
			s.mu.Unlock()
			close(released)
		})
		return nil
	}, nil
}

// List returns every approval of serverID, oldest first (by GrantedAt,
// then in grant order); nil, nil when there is none.
func (s *Store) List(_ context.Context, serverID string) ([]ports.Approval, error) {
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

// Grant adds a, replacing an approval with an identical Identity.
func (s *Store) Grant(_ context.Context, a ports.Approval) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.approvals = slices.DeleteFunc(s.approvals, func(b ports.Approval) bool { return b.Identity == a.Identity })
	s.approvals = append(s.approvals, a)
	return nil
}

// Revoke removes the approval with exactly identity id: ports.ErrNotFound
// when there is none.
func (s *Store) Revoke(_ context.Context, id ports.Identity) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.approvals, func(b ports.Approval) bool { return b.Identity == id })
	if i < 0 {
		return ports.ErrNotFound
	}
	s.approvals = slices.Delete(s.approvals, i, i+1)
	return nil
}

// Append adds r at the end of the audit trail, forgetting the oldest
// record when the trail holds Options.MaxAuditRecords already.
func (s *Store) Append(_ context.Context, r ports.AuditRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.audit) >= s.maxAudit {
		n := len(s.audit) - s.maxAudit + 1
		s.audit = slices.Delete(s.audit, 0, n)
	}
	s.audit = append(s.audit, r)
	return nil
}

// Enqueue implements ports.AuditQueue: the trail is in memory, so r is
// appended at once, as Append does. It never fails.
func (s *Store) Enqueue(r ports.AuditRecord) error {
	return s.Append(context.Background(), r)
}

// Flush implements ports.AuditQueue: every enqueued record is already
// appended; it returns nil.
func (s *Store) Flush(context.Context) error { return nil }

// Records returns a copy of the kept audit records in append order (nil
// when there is none).
func (s *Store) Records(context.Context) ([]ports.AuditRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.audit), nil
}
