package conformance

// Reference implementations of the store ports, written to be obviously
// correct, each with bug switches: bug "" is correct; any other value breaks
// exactly one behaviour (see brokenImpls in conformance_test.go for which
// subtest each one must fail). The in-memory ones cannot cross processes;
// the file ones (flock, rename, O_APPEND) can.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpward/mcpward/ports"
)

func validKey(k string) error {
	if k == "" || len(k) > ports.MaxKeyLen {
		return ports.ErrInvalidKey
	}
	return nil
}

// encodeKey applies a key bug; the correct encoding is the identity (a map
// key) or sha256 (a file name).
func encodeKey(bug, k string) (string, error) {
	switch bug {
	case "accepts-empty-key":
		if k == "" {
			return "empty", nil
		}
	case "rejects-max-key":
		if len(k) >= ports.MaxKeyLen {
			return "", ports.ErrInvalidKey
		}
	}
	if err := validKey(k); err != nil {
		return "", err
	}
	switch bug {
	case "key-fold-case":
		return strings.ToLower(k), nil
	case "key-slash-escape":
		return strings.ReplaceAll(k, "/", "_"), nil
	case "key-cut-at-nul":
		k, _, _ = strings.Cut(k, "\x00")
		return k, nil
	case "key-truncate":
		return k[:min(len(k), 255)], nil
	case "key-sanitize-utf8":
		return strings.ToValidUTF8(k, "\ufffd"), nil
	case "key-clean-path":
		return path.Clean(k), nil
	}
	return k, nil
}

// ---- TokenStore in memory ----

type memTokens struct {
	bug string
	mu  sync.Mutex
	m   map[string][]byte
}

func newMemTokens(bug string) *memTokens { return &memTokens{bug: bug, m: map[string][]byte{}} }

func (s *memTokens) Get(_ context.Context, key string) ([]byte, error) {
	k, err := encodeKey(s.bug, key)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	if !ok {
		if s.bug == "get-missing-nil" {
			return nil, nil
		}
		return nil, ports.ErrNotFound
	}
	if s.bug == "get-aliases" {
		return v, nil
	}
	return bytes.Clone(v), nil
}

func (s *memTokens) Set(_ context.Context, key string, value []byte) error {
	k, err := encodeKey(s.bug, key)
	if err != nil {
		return err
	}
	limit := 2 * ports.MaxValueLen
	if s.bug == "small-value-limit" {
		limit = 4096
	}
	if len(value) > limit {
		if s.bug == "oversize-wrong-error" {
			return errors.New("value is too big")
		}
		return fmt.Errorf("%d bytes: %w", len(value), ports.ErrValueTooLarge)
	}
	v := append([]byte{}, value...)
	switch s.bug {
	case "set-noop":
		return nil
	case "value-cut-at-nul":
		v, _, _ = bytes.Cut(v, []byte{0})
	case "set-aliases":
		v = value
	case "empty-is-delete":
		if len(value) == 0 {
			s.mu.Lock()
			delete(s.m, k)
			s.mu.Unlock()
			return nil
		}
	case "overwrite-keeps-old":
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.m[k]; !ok {
			s.m[k] = v
		}
		return nil
	case "non-atomic-set":
		// Write over the old value in place, a chunk at a time.
		s.mu.Lock()
		cur, ok := s.m[k]
		if !ok || len(cur) != len(v) {
			s.m[k] = v
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
		for off := 0; off < len(v); off += 256 {
			s.mu.Lock()
			copy(cur[off:], v[off:min(off+256, len(v))])
			s.mu.Unlock()
			runtime.Gosched()
		}
		return nil
	case "lost-writes":
		// Copy, change and put back the whole map: a racing write is lost.
		s.mu.Lock()
		m := maps.Clone(s.m)
		s.mu.Unlock()
		m[k] = v
		time.Sleep(50 * time.Microsecond)
		s.mu.Lock()
		s.m = m
		s.mu.Unlock()
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
	return nil
}

func (s *memTokens) Delete(_ context.Context, key string) error {
	k, err := encodeKey(s.bug, key)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[k]; !ok {
		if s.bug == "delete-missing-nil" {
			return nil
		}
		return ports.ErrNotFound
	}
	if s.bug != "delete-noop" {
		delete(s.m, k)
	}
	return nil
}

// memTokenHarness: bug "handles-not-shared" gives every handle its own
// store, "location-not-shared" claims a Location it cannot share.
func memTokenHarness(bug string) func(*testing.T) Harness[ports.TokenStore] {
	return func(*testing.T) Harness[ports.TokenStore] {
		st := newMemTokens(bug)
		h := Harness[ports.TokenStore]{Open: func(*testing.T) ports.TokenStore { return st }}
		switch bug {
		case "handles-not-shared":
			h.Open = func(*testing.T) ports.TokenStore { return newMemTokens(bug) }
		case "location-not-shared":
			h.Location = "memory"
			h.Attach = func(*testing.T, string) ports.TokenStore { return newMemTokens(bug) }
		}
		return h
	}
}

// ---- TokenStore on files ----

// fileTokens keeps each value in a file named by the sha256 of its key,
// replaced atomically by rename.
type fileTokens struct{ dir string }

func (s fileTokens) file(key string) (string, error) {
	if err := validKey(key); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:])), nil
}

func (s fileTokens) Get(_ context.Context, key string) ([]byte, error) {
	f, err := s.file(key)
	if err != nil {
		return nil, err
	}
	v, err := os.ReadFile(f)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ports.ErrNotFound
	}
	return v, err
}

func (s fileTokens) Set(_ context.Context, key string, value []byte) error {
	f, err := s.file(key)
	if err != nil {
		return err
	}
	if len(value) > 2*ports.MaxValueLen {
		return ports.ErrValueTooLarge
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(value); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f)
}

func (s fileTokens) Delete(_ context.Context, key string) error {
	f, err := s.file(key)
	if err != nil {
		return err
	}
	if err := os.Remove(f); errors.Is(err, fs.ErrNotExist) {
		return ports.ErrNotFound
	} else {
		return err
	}
}

func fileTokenHarness(t *testing.T) Harness[ports.TokenStore] {
	open := func(_ *testing.T, dir string) ports.TokenStore { return fileTokens{dir} }
	dir := t.TempDir()
	return Harness[ports.TokenStore]{
		Open:     func(t *testing.T) ports.TokenStore { return open(t, dir) },
		Location: dir,
		Attach:   open,
	}
}

// ---- Locker in memory ----

type lockTable struct {
	mu    sync.Mutex
	slots map[string]chan struct{}
}

func (lt *lockTable) slot(k string) chan struct{} {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.slots == nil {
		lt.slots = map[string]chan struct{}{}
	}
	c, ok := lt.slots[k]
	if !ok {
		c = make(chan struct{}, 1)
		lt.slots[k] = c
	}
	return c
}

// memLocker is one handle on a lockTable.
type memLocker struct {
	bug   string
	table *lockTable
	mu    sync.Mutex
	held  map[string]bool // for bug "reentrant"
}

func (l *memLocker) Lock(ctx context.Context, key string) (func() error, error) {
	k, err := encodeKey(l.bug, key)
	if err != nil {
		return nil, err
	}
	if l.bug == "one-global-lock" {
		k = "global"
	}
	if l.bug == "no-exclusion" {
		return func() error { return nil }, nil
	}
	if l.bug == "reentrant" {
		l.mu.Lock()
		held := l.held[k]
		l.mu.Unlock()
		if held {
			return func() error { return nil }, nil
		}
	}
	slot := l.table.slot(k)
	switch l.bug {
	case "ignores-ctx":
		slot <- struct{}{}
	case "no-wait":
		select {
		case slot <- struct{}{}:
		default:
			return nil, fmt.Errorf("%w: busy", ports.ErrLockTimeout)
		}
	default:
		select {
		case slot <- struct{}{}:
		case <-ctx.Done():
			switch l.bug {
			case "timeout-not-sentinel":
				return nil, ctx.Err()
			case "timeout-hides-ctx-err":
				return nil, ports.ErrLockTimeout
			}
			return nil, fmt.Errorf("%w: %w", ports.ErrLockTimeout, ctx.Err())
		}
	}
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[k] = true
	l.mu.Unlock()
	var once sync.Once
	return func() error {
		if l.bug == "unlock-not-idempotent" {
			select { // releases whoever holds the key now
			case <-slot:
			default:
			}
			return nil
		}
		if l.bug == "unlock-errors" {
			once.Do(func() { <-slot })
			return errors.New("unlock failed")
		}
		once.Do(func() {
			l.mu.Lock()
			delete(l.held, k)
			l.mu.Unlock()
			<-slot
		})
		return nil
	}, nil
}

// memLockerHarness: bug "handles-not-shared" gives every handle its own
// table, "location-not-shared" claims a Location it cannot share.
func memLockerHarness(bug string) func(*testing.T) Harness[ports.Locker] {
	return func(*testing.T) Harness[ports.Locker] {
		table := &lockTable{}
		h := Harness[ports.Locker]{Open: func(*testing.T) ports.Locker { return &memLocker{bug: bug, table: table} }}
		switch bug {
		case "handles-not-shared":
			h.Open = func(*testing.T) ports.Locker { return &memLocker{bug: bug, table: &lockTable{}} }
		case "location-not-shared":
			h.Location = "memory"
			h.Attach = func(*testing.T, string) ports.Locker { return &memLocker{bug: bug, table: &lockTable{}} }
		}
		return h
	}
}

// ---- Locker on files ----

// fileLocker takes flock(2) on a file per key, polling so ctx bounds the
// wait. Bug "stale-on-kill" uses an O_EXCL lock file instead, which a
// killed holder leaves behind.
type fileLocker struct {
	bug string
	dir string
}

func (l fileLocker) Lock(ctx context.Context, key string) (func() error, error) {
	if err := validKey(key); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(key))
	name := filepath.Join(l.dir, hex.EncodeToString(sum[:])+".lock")
	take := func() (func() error, bool, error) {
		if l.bug == "stale-on-kill" {
			f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if errors.Is(err, fs.ErrExist) {
				return nil, false, nil
			}
			if err != nil {
				return nil, false, err
			}
			_ = f.Close()
			var once sync.Once
			return func() error { once.Do(func() { _ = os.Remove(name) }); return nil }, true, nil
		}
		f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, false, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, false, nil
			}
			return nil, false, err
		}
		var once sync.Once
		return func() error { once.Do(func() { _ = f.Close() }); return nil }, true, nil
	}
	for {
		u, ok, err := take()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ports.ErrUnavailable, err)
		}
		if ok {
			return u, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ports.ErrLockTimeout, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func fileLockerHarness(bug string) func(*testing.T) Harness[ports.Locker] {
	return func(t *testing.T) Harness[ports.Locker] {
		open := func(_ *testing.T, dir string) ports.Locker { return fileLocker{bug: bug, dir: dir} }
		dir := t.TempDir()
		return Harness[ports.Locker]{
			Open:     func(t *testing.T) ports.Locker { return open(t, dir) },
			Location: dir,
			Attach:   open,
		}
	}
}

// ---- ApprovalStore in memory ----

type memApprovals struct {
	bug  string
	mu   sync.Mutex
	list []ports.Approval
}

func (s *memApprovals) List(_ context.Context, server string) ([]ports.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ports.Approval
	for _, a := range s.list {
		match := a.Identity.ServerID == server
		switch s.bug {
		case "list-prefix":
			match = strings.HasPrefix(a.Identity.ServerID, server)
		case "list-fold-case":
			match = strings.EqualFold(a.Identity.ServerID, server)
		}
		if match {
			out = append(out, a)
		}
	}
	switch s.bug {
	case "list-none-not-found":
		if len(out) == 0 {
			return nil, ports.ErrNotFound
		}
	case "list-newest-first":
		slices.Reverse(out)
	case "list-aliases":
		if len(out) == len(s.list) {
			return s.list, nil
		}
	}
	return out, nil
}

func (s *memApprovals) Grant(_ context.Context, a ports.Approval) error {
	if s.bug == "lost-grants" {
		s.mu.Lock()
		list := slices.Clone(s.list)
		s.mu.Unlock()
		list = append(list, a)
		time.Sleep(50 * time.Microsecond)
		s.mu.Lock()
		s.list = list
		s.mu.Unlock()
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.bug {
	case "grant-duplicates":
	case "grant-replaces-loose":
		s.list = slices.DeleteFunc(s.list, func(b ports.Approval) bool {
			return b.Identity.ServerID == a.Identity.ServerID && b.Identity.Fingerprint == a.Identity.Fingerprint
		})
	default:
		s.list = slices.DeleteFunc(s.list, func(b ports.Approval) bool { return b.Identity == a.Identity })
	}
	if s.bug == "grant-drops-granted-by" {
		a.GrantedBy = ""
	}
	if s.bug == "grant-drops-nanos" {
		a.GrantedAt = a.GrantedAt.Truncate(time.Second)
	}
	s.list = append(s.list, a)
	return nil
}

func (s *memApprovals) Revoke(_ context.Context, id ports.Identity) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	match := func(b ports.Approval) bool { return b.Identity == id }
	if s.bug == "revoke-loose" {
		match = func(b ports.Approval) bool {
			return b.Identity.ServerID == id.ServerID && b.Identity.Fingerprint == id.Fingerprint
		}
	}
	n := len(s.list)
	s.list = slices.DeleteFunc(s.list, match)
	if len(s.list) == n && s.bug != "revoke-missing-nil" {
		return ports.ErrNotFound
	}
	return nil
}

func memApprovalHarness(bug string) func(*testing.T) Harness[ports.ApprovalStore] {
	return func(*testing.T) Harness[ports.ApprovalStore] {
		st := &memApprovals{bug: bug}
		h := Harness[ports.ApprovalStore]{Open: func(*testing.T) ports.ApprovalStore { return st }}
		if bug == "handles-not-shared" {
			h.Open = func(*testing.T) ports.ApprovalStore { return &memApprovals{bug: bug} }
		}
		return h
	}
}

// ---- ApprovalStore on files ----

// fileApprovals keeps every approval in one JSON file, changed under an
// flock and replaced by rename. Bug "no-lock" skips the flock.
type fileApprovals struct {
	bug string
	dir string
}

func (s fileApprovals) read() ([]ports.Approval, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "approvals.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list []ports.Approval
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("%w: %v", ports.ErrCorrupt, err)
	}
	return list, nil
}

func (s fileApprovals) update(change func([]ports.Approval) ([]ports.Approval, error)) error {
	if s.bug != "no-lock" {
		f, err := os.OpenFile(filepath.Join(s.dir, "approvals.lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			return err
		}
	}
	list, err := s.read()
	if err != nil {
		return err
	}
	if list, err = change(list); err != nil {
		return err
	}
	if s.bug == "no-lock" {
		time.Sleep(time.Millisecond)
	}
	b, err := json.Marshal(list)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(s.dir, "approvals.json"))
}

func (s fileApprovals) List(_ context.Context, server string) ([]ports.Approval, error) {
	list, err := s.read()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list, func(a ports.Approval) bool { return a.Identity.ServerID != server }), nil
}

func (s fileApprovals) Grant(_ context.Context, a ports.Approval) error {
	return s.update(func(list []ports.Approval) ([]ports.Approval, error) {
		list = slices.DeleteFunc(list, func(b ports.Approval) bool { return b.Identity == a.Identity })
		return append(list, a), nil
	})
}

func (s fileApprovals) Revoke(_ context.Context, id ports.Identity) error {
	return s.update(func(list []ports.Approval) ([]ports.Approval, error) {
		n := len(list)
		list = slices.DeleteFunc(list, func(b ports.Approval) bool { return b.Identity == id })
		if len(list) == n {
			return nil, ports.ErrNotFound
		}
		return list, nil
	})
}

func fileApprovalHarness(bug string) func(*testing.T) Harness[ports.ApprovalStore] {
	return func(t *testing.T) Harness[ports.ApprovalStore] {
		open := func(_ *testing.T, dir string) ports.ApprovalStore { return fileApprovals{bug: bug, dir: dir} }
		dir := t.TempDir()
		return Harness[ports.ApprovalStore]{
			Open:     func(t *testing.T) ports.ApprovalStore { return open(t, dir) },
			Location: dir,
			Attach:   open,
		}
	}
}

// ---- AuditLog in memory ----

type memAudit struct {
	bug  string
	mu   sync.Mutex
	recs []ports.AuditRecord
}

func (l *memAudit) Append(_ context.Context, r ports.AuditRecord) error {
	if l.bug == "drops-actor" {
		r.Actor = ""
	}
	if l.bug == "lost-appends" {
		l.mu.Lock()
		recs := slices.Clone(l.recs)
		l.mu.Unlock()
		recs = append(recs, r)
		time.Sleep(50 * time.Microsecond)
		l.mu.Lock()
		l.recs = recs
		l.mu.Unlock()
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r)
	return nil
}

func (l *memAudit) Records(context.Context) ([]ports.AuditRecord, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.bug {
	case "records-none-not-found":
		if len(l.recs) == 0 {
			return nil, ports.ErrNotFound
		}
	case "records-aliases":
		return l.recs, nil
	case "sorted-by-time":
		out := slices.Clone(l.recs)
		slices.SortStableFunc(out, func(a, b ports.AuditRecord) int { return a.Time.Compare(b.Time) })
		return out, nil
	}
	return slices.Clone(l.recs), nil
}

func memAuditHarness(bug string) func(*testing.T) Harness[ports.AuditLog] {
	return func(*testing.T) Harness[ports.AuditLog] {
		l := &memAudit{bug: bug}
		h := Harness[ports.AuditLog]{Open: func(*testing.T) ports.AuditLog { return l }}
		if bug == "handles-not-shared" {
			h.Open = func(*testing.T) ports.AuditLog { return &memAudit{bug: bug} }
		}
		return h
	}
}

// ---- AuditLog on files ----

// fileAudit appends one JSON line per record with O_APPEND. Bug
// "seek-append" writes at the size it read a moment before instead, so
// racing appends overwrite each other.
type fileAudit struct {
	bug string
	dir string
}

func (l fileAudit) Append(_ context.Context, r ports.AuditRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	name := filepath.Join(l.dir, "audit.jsonl")
	if l.bug == "seek-append" {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		time.Sleep(time.Millisecond)
		_, err = f.WriteAt(b, fi.Size())
		return err
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(b)
	return err
}

func (l fileAudit) Records(context.Context) ([]ports.AuditRecord, error) {
	b, err := os.ReadFile(filepath.Join(l.dir, "audit.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []ports.AuditRecord
	for line := range bytes.Lines(b) {
		var r ports.AuditRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%w: %v", ports.ErrCorrupt, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func fileAuditHarness(bug string) func(*testing.T) Harness[ports.AuditLog] {
	return func(t *testing.T) Harness[ports.AuditLog] {
		open := func(_ *testing.T, dir string) ports.AuditLog { return fileAudit{bug: bug, dir: dir} }
		dir := t.TempDir()
		return Harness[ports.AuditLog]{
			Open:     func(t *testing.T) ports.AuditLog { return open(t, dir) },
			Location: dir,
			Attach:   open,
		}
	}
}
