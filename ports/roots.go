package ports

import (
	"context"
	"slices"
	"sync"
)

// Root is one filesystem root the host lets servers know about.
type Root struct {
	// URI is a file:// URI; a session leaves out any other (and any
	// longer than MaxElicitURL bytes) from what it answers.
	URI string
	// Name is an optional label.
	Name string
}

// MaxRoots bounds how many roots a session answers roots/list with: the
// first MaxRoots valid roots, in the host's order.
const MaxRoots = 256

// Roots is the host's roots port. A session declares the roots capability
// (with listChanged) only to a server the host gave a Roots for, answers
// roots/list with what List returns, and sends
// notifications/roots/list_changed to it when the roots change. Safe for
// concurrent use.
type Roots interface {
	// List returns the current roots. It should return quickly (the
	// session bounds it); an error answers roots/list with a refusal.
	List(ctx context.Context) ([]Root, error)
	// Subscribe registers changed, called (it must not block) every time
	// the roots change, until the returned cancel is called; cancel is
	// idempotent and changed is never called once cancel has returned.
	Subscribe(changed func()) (cancel func())
}

// RootSet is a Roots whose list the host sets: the in-memory
// implementation of the port, for hosts and tests. The zero value is an
// empty set. Safe for concurrent use.
type RootSet struct {
	mu    sync.Mutex
	roots []Root
	subs  map[int]func()
	next  int
}

// NewRootSet returns a RootSet holding roots.
func NewRootSet(roots ...Root) *RootSet {
	return &RootSet{roots: slices.Clone(roots)}
}

// List returns a copy of the current roots. It never fails.
func (s *RootSet) List(context.Context) ([]Root, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.roots), nil
}

// Set replaces the roots and, when they differ from the current ones,
// calls every subscriber (outside the set's lock).
func (s *RootSet) Set(roots ...Root) {
	s.mu.Lock()
	if slices.Equal(s.roots, roots) {
		s.mu.Unlock()
		return
	}
	s.roots = slices.Clone(roots)
	subs := make([]func(), 0, len(s.subs))
	for _, f := range s.subs {
		subs = append(subs, f)
	}
	s.mu.Unlock()
	for _, f := range subs {
		f()
	}
}

// Subscribe registers changed (see Roots). A Set racing with cancel may
// still call changed before cancel returns, never after.
func (s *RootSet) Subscribe(changed func()) func() {
	s.mu.Lock()
	if s.subs == nil {
		s.subs = map[int]func(){}
	}
	id := s.next
	s.next++
	var live sync.Mutex
	done := false
	s.subs[id] = func() {
		live.Lock()
		defer live.Unlock()
		if !done {
			changed()
		}
	}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.subs, id)
		s.mu.Unlock()
		live.Lock()
		done = true
		live.Unlock()
	}
}
