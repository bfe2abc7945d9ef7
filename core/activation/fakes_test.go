package activation

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/mcpward/mcpward/ports"
)

// fakeStore is an in-memory ports.ApprovalStore with failure knobs. It
// honours ctx: a done ctx fails every call with ctx.Err().
type fakeStore struct {
	mu        sync.Mutex
	approvals []ports.Approval
	// loose makes List match server ids case-insensitively, like a buggy
	// store that widens a lookup.
	loose bool

	listErr  error
	grantErr error
	// revokeErr fails every Revoke after revokeOK successful ones.
	revokeErr error
	revokeOK  int

	lists, grants, revokes int
}

func (s *fakeStore) List(ctx context.Context, serverID string) ([]ports.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.listErr != nil {
		return nil, s.listErr
	}
	var out []ports.Approval
	for _, a := range s.approvals {
		if a.Identity.ServerID == serverID || (s.loose && strings.EqualFold(a.Identity.ServerID, serverID)) {
			out = append(out, a)
		}
	}
	return out, nil
}

func (s *fakeStore) Grant(ctx context.Context, a ports.Approval) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grants++
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.grantErr != nil {
		return s.grantErr
	}
	s.approvals = slices.DeleteFunc(s.approvals, func(b ports.Approval) bool { return b.Identity == a.Identity })
	s.approvals = append(s.approvals, a)
	return nil
}

func (s *fakeStore) Revoke(ctx context.Context, id ports.Identity) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revokes++
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.revokeErr != nil && s.revokeOK <= 0 {
		return s.revokeErr
	}
	i := slices.IndexFunc(s.approvals, func(b ports.Approval) bool { return b.Identity == id })
	if i < 0 {
		return ports.ErrNotFound
	}
	s.revokeOK--
	s.approvals = slices.Delete(s.approvals, i, i+1)
	return nil
}

func (s *fakeStore) snapshot() []ports.Approval {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.approvals)
}

func (s *fakeStore) mutations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants + s.revokes
}

// fakeAudit is an in-memory ports.AuditLog. onAppend, when set, runs before
// every append (to cancel a context, for example).
type fakeAudit struct {
	mu       sync.Mutex
	records  []ports.AuditRecord
	err      error
	onAppend func()
}

func (a *fakeAudit) Append(ctx context.Context, r ports.AuditRecord) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.onAppend != nil {
		a.onAppend()
	}
	if a.err != nil {
		return a.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	a.records = append(a.records, r)
	return nil
}

func (a *fakeAudit) Records(context.Context) ([]ports.AuditRecord, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.records), nil
}

func (a *fakeAudit) all() []ports.AuditRecord {
	r, _ := a.Records(context.Background())
	return r
}

func (a *fakeAudit) setErr(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.err = err
}

// fakeTrust is a ports.WorkspaceTrust returning fixed facts or an error.
type fakeTrust struct {
	mu    sync.Mutex
	facts ports.WorkspaceFacts
	err   error
	calls int
}

func (t *fakeTrust) Facts(context.Context) (ports.WorkspaceFacts, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls++
	return t.facts, t.err
}

func (t *fakeTrust) set(f ports.WorkspaceFacts) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.facts = f
}

func (t *fakeTrust) callCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.calls
}
