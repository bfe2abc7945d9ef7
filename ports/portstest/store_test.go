package portstest_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

var testEpoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func TestTokenStoreKeys(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		name  string
		key   string
		valid bool
	}{
		{"plain", "server/token", true},
		{"one byte", "a", true},
		{"NUL", "a\x00b", true},
		{"only NUL", "\x00", true},
		{"dot dot", "..", true},
		{"slashes", "/../../etc/passwd", true},
		{"non UTF-8", "\xff\xfe\x80", true},
		{"max length", strings.Repeat("k", ports.MaxKeyLen), true},
		{"empty", "", false},
		{"too long", strings.Repeat("k", ports.MaxKeyLen+1), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := portstest.NewTokenStore()
			if !c.valid {
				_, err := s.Get(ctx, c.key)
				require.ErrorIs(t, err, ports.ErrInvalidKey)
				require.ErrorIs(t, s.Set(ctx, c.key, []byte("v")), ports.ErrInvalidKey)
				require.ErrorIs(t, s.Delete(ctx, c.key), ports.ErrInvalidKey)
				return
			}
			_, err := s.Get(ctx, c.key)
			require.ErrorIs(t, err, ports.ErrNotFound)
			require.NoError(t, s.Set(ctx, c.key, []byte("v1")))
			got, err := s.Get(ctx, c.key)
			require.NoError(t, err)
			assert.Equal(t, []byte("v1"), got)
			require.NoError(t, s.Set(ctx, c.key, []byte("v2")))
			got, err = s.Get(ctx, c.key)
			require.NoError(t, err)
			assert.Equal(t, []byte("v2"), got)
			require.NoError(t, s.Delete(ctx, c.key))
			_, err = s.Get(ctx, c.key)
			require.ErrorIs(t, err, ports.ErrNotFound)
			require.ErrorIs(t, s.Delete(ctx, c.key), ports.ErrNotFound)
		})
	}
}

func TestTokenStoreKeysDoNotAlias(t *testing.T) {
	ctx := t.Context()
	keys := []string{"a", "a\x00", "\x00a", "a/", "a/..", "A", "a\xff"}
	s := portstest.NewTokenStore()
	for i, k := range keys {
		require.NoError(t, s.Set(ctx, k, []byte{byte(i)}))
	}
	for i, k := range keys {
		got, err := s.Get(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, []byte{byte(i)}, got, "key %q", k)
	}
}

func TestTokenStoreValues(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		name    string
		value   []byte
		wantErr error
	}{
		{"nil", nil, nil},
		{"empty", []byte{}, nil},
		{"binary", []byte{0, 0xff, '\n', 0}, nil},
		{"max length", bytes.Repeat([]byte{7}, ports.MaxValueLen), nil},
		{"too large", bytes.Repeat([]byte{7}, ports.MaxValueLen+1), ports.ErrValueTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := portstest.NewTokenStore()
			require.NoError(t, s.Set(ctx, "k", []byte("old")))
			err := s.Set(ctx, "k", c.value)
			got, gerr := s.Get(ctx, "k")
			require.NoError(t, gerr)
			if c.wantErr != nil {
				require.ErrorIs(t, err, c.wantErr)
				assert.Equal(t, []byte("old"), got, "a refused Set leaves the old value")
				return
			}
			require.NoError(t, err)
			assert.True(t, bytes.Equal(c.value, got))
			assert.NotNil(t, got, "a stored value reads back non-nil")
		})
	}
}

func TestTokenStoreCopies(t *testing.T) {
	ctx := t.Context()
	s := portstest.NewTokenStore()
	in := []byte("secret")
	require.NoError(t, s.Set(ctx, "k", in))
	in[0] = 'X'
	got, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, []byte("secret"), got, "Set keeps a copy")
	got[0] = 'Y'
	again, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, []byte("secret"), again, "Get returns a copy")
}

func TestTokenStoreFailureHasNoEffect(t *testing.T) {
	ctx := t.Context()
	s := portstest.NewTokenStore()
	require.NoError(t, s.Set(ctx, "k", []byte("v")))
	s.Fail("Set", ports.ErrUnavailable)
	s.Fail("Delete", ports.ErrUnavailable)
	require.ErrorIs(t, s.Set(ctx, "k", []byte("new")), ports.ErrUnavailable)
	require.ErrorIs(t, s.Set(ctx, "other", []byte("new")), ports.ErrUnavailable)
	require.ErrorIs(t, s.Delete(ctx, "k"), ports.ErrUnavailable)
	s.FailOnce("Get", ports.ErrCorrupt)
	_, err := s.Get(ctx, "k")
	require.ErrorIs(t, err, ports.ErrCorrupt)
	got, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, []byte("v"), got)
	_, err = s.Get(ctx, "other")
	require.ErrorIs(t, err, ports.ErrNotFound)
}

// TestTokenStoreConcurrent hammers a few keys: every read sees a whole
// value (all bytes from one writer), never a mix.
func TestTokenStoreConcurrent(t *testing.T) {
	ctx := t.Context()
	s := portstest.NewTokenStore()
	const workers, rounds = 16, 200
	keys := []string{"a", "b", "c"}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				k := keys[(w+i)%len(keys)]
				switch i % 3 {
				case 0:
					assert.NoError(t, s.Set(ctx, k, bytes.Repeat([]byte{byte(w)}, 64+w)))
				case 1:
					v, err := s.Get(ctx, k)
					if err != nil {
						assert.ErrorIs(t, err, ports.ErrNotFound)
						continue
					}
					if assert.NotEmpty(t, v) {
						assert.Equal(t, bytes.Repeat(v[:1], 64+int(v[0])), v, "torn value")
						v[0] = 0xee // must not reach the store
					}
				case 2:
					if err := s.Delete(ctx, k); err != nil {
						assert.ErrorIs(t, err, ports.ErrNotFound)
					}
				}
			}
		})
	}
	wg.Wait()
	count := func(r int) int { // rounds i with i%3 == r
		return (rounds - r + 2) / 3
	}
	assert.Equal(t, workers*count(0), s.Calls("Set"))
	assert.Equal(t, workers*count(1), s.Calls("Get"))
	assert.Equal(t, workers*count(2), s.Calls("Delete"))
}

func TestLockerMutualExclusion(t *testing.T) {
	ctx := t.Context()
	l := portstest.NewLocker()
	const workers, rounds = 8, 50
	var inside, maxInside, total atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				unlock, err := l.Lock(ctx, "k")
				if !assert.NoError(t, err) {
					return
				}
				n := inside.Add(1)
				if n > maxInside.Load() {
					maxInside.Store(n)
				}
				total.Add(1)
				inside.Add(-1)
				assert.NoError(t, unlock())
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(1), maxInside.Load())
	assert.Equal(t, int64(workers*rounds), total.Load())
	assert.False(t, l.Held("k"))
}

func TestLockerWaitEnds(t *testing.T) {
	cases := []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		wantErr error
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 20*time.Millisecond)
		}, context.DeadlineExceeded},
		{"already cancelled", func() (context.Context, context.CancelFunc) { return errCtx(), func() {} }, context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := portstest.NewLocker()
			unlock, err := l.Lock(t.Context(), "k")
			require.NoError(t, err)
			ctx, cancel := c.ctx()
			defer cancel()
			// The same goroutine locking again waits too: not reentrant.
			u2, err := l.Lock(ctx, "k")
			require.Nil(t, u2)
			require.ErrorIs(t, err, ports.ErrLockTimeout)
			require.ErrorIs(t, err, c.wantErr)
			assert.True(t, l.Held("k"), "the holder keeps the lock")
			assert.Zero(t, l.Waiting("k"))
			require.NoError(t, unlock())
		})
	}
}

func TestLockerCancelWhileWaiting(t *testing.T) {
	l := portstest.NewLocker()
	unlock, err := l.Lock(t.Context(), "k")
	require.NoError(t, err)
	defer unlock()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := l.Lock(ctx, "k")
		errc <- err
	}()
	require.Eventually(t, func() bool { return l.Waiting("k") == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	err = <-errc
	require.ErrorIs(t, err, ports.ErrLockTimeout)
	require.ErrorIs(t, err, context.Canceled)
}

func TestLockerHandOver(t *testing.T) {
	ctx := t.Context()
	l := portstest.NewLocker()
	unlock, err := l.Lock(ctx, "k")
	require.NoError(t, err)
	got := make(chan func() error)
	go func() {
		u, err := l.Lock(ctx, "k")
		assert.NoError(t, err)
		got <- u
	}()
	require.Eventually(t, func() bool { return l.Waiting("k") == 1 }, 5*time.Second, time.Millisecond)
	select {
	case <-got:
		t.Fatal("second Lock returned while the lock was held")
	default:
	}
	require.NoError(t, unlock())
	u2 := <-got
	assert.True(t, l.Held("k"))
	require.NoError(t, unlock(), "unlock is idempotent")
	assert.True(t, l.Held("k"), "a stale unlock does not release the new holder's lock")
	require.NoError(t, u2())
	assert.False(t, l.Held("k"))
}

func TestLockerKeys(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		name    string
		key     string
		wantErr error
	}{
		{"NUL", "a\x00", nil},
		{"non UTF-8", "\xff", nil},
		{"max length", strings.Repeat("k", ports.MaxKeyLen), nil},
		{"empty", "", ports.ErrInvalidKey},
		{"too long", strings.Repeat("k", ports.MaxKeyLen+1), ports.ErrInvalidKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := portstest.NewLocker()
			held, err := l.Lock(ctx, "a")
			require.NoError(t, err)
			defer held()
			unlock, err := l.Lock(ctx, c.key)
			if c.wantErr != nil {
				require.ErrorIs(t, err, c.wantErr)
				require.Nil(t, unlock)
				return
			}
			require.NoError(t, err, "distinct keys lock independently")
			assert.True(t, l.Held(c.key))
			require.NoError(t, unlock())
			assert.False(t, l.Held(c.key))
		})
	}
}

func TestLockerFreeLockWithEndedContext(t *testing.T) {
	l := portstest.NewLocker()
	unlock, err := l.Lock(errCtx(), "k")
	require.NoError(t, err)
	require.NoError(t, unlock())
}

func TestLockerFailureHasNoEffect(t *testing.T) {
	l := portstest.NewLocker()
	l.FailOnce("Lock", ports.ErrUnavailable)
	unlock, err := l.Lock(t.Context(), "k")
	require.ErrorIs(t, err, ports.ErrUnavailable)
	require.Nil(t, unlock)
	assert.False(t, l.Held("k"))
}

func identity(server, fp string) ports.Identity {
	return ports.Identity{ServerID: server, Tier: ports.TierUser, Origin: "user.json", Fingerprint: fp, Security: "https://example.com/mcp"}
}

func approval(server, fp string, at int) ports.Approval {
	return ports.Approval{Identity: identity(server, fp), GrantedAt: testEpoch.Add(time.Duration(at) * time.Minute), GrantedBy: "cli"}
}

func TestApprovalStoreList(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		name   string
		grants []ports.Approval
		list   string
		want   []ports.Approval
	}{
		{"empty", nil, "a", nil},
		{"other server only", []ports.Approval{approval("b", "1", 0)}, "a", nil},
		{"oldest first", []ports.Approval{approval("a", "3", 3), approval("a", "1", 1), approval("b", "2", 2), approval("a", "2", 2)},
			"a", []ports.Approval{approval("a", "1", 1), approval("a", "2", 2), approval("a", "3", 3)}},
		{"equal times in grant order", []ports.Approval{approval("a", "2", 0), approval("a", "1", 0)},
			"a", []ports.Approval{approval("a", "2", 0), approval("a", "1", 0)}},
		{"identical identity replaced", []ports.Approval{approval("a", "1", 1), approval("a", "2", 2), approval("a", "1", 3)},
			"a", []ports.Approval{approval("a", "2", 2), approval("a", "1", 3)}},
		{"server id compared exactly", []ports.Approval{approval("a", "1", 0), approval("A", "1", 0), approval("a ", "1", 0)},
			"a", []ports.Approval{approval("a", "1", 0)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := portstest.NewApprovalStore()
			for _, a := range c.grants {
				require.NoError(t, s.Grant(ctx, a))
			}
			got, err := s.List(ctx, c.list)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestApprovalStoreRevokeExactIdentity(t *testing.T) {
	ctx := t.Context()
	base := identity("a", "f")
	cases := []struct {
		name   string
		change func(*ports.Identity)
	}{
		{"tier", func(id *ports.Identity) { id.Tier = ports.TierProject }},
		{"origin", func(id *ports.Identity) { id.Origin = "other.json" }},
		{"fingerprint", func(id *ports.Identity) { id.Fingerprint = "g" }},
		{"security", func(id *ports.Identity) { id.Security = "https://example.com/other" }},
		{"repository", func(id *ports.Identity) { id.Repository = "r" }},
		{"generation", func(id *ports.Identity) { id.Generation = "1" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := portstest.NewApprovalStore()
			require.NoError(t, s.Grant(ctx, ports.Approval{Identity: base, GrantedAt: testEpoch}))
			other := base
			c.change(&other)
			require.ErrorIs(t, s.Revoke(ctx, other), ports.ErrNotFound)
			require.NoError(t, s.Grant(ctx, ports.Approval{Identity: other, GrantedAt: testEpoch}))
			got, err := s.List(ctx, "a")
			require.NoError(t, err)
			require.Len(t, got, 2, "a differing identity is not replaced")
			require.NoError(t, s.Revoke(ctx, base))
			got, err = s.List(ctx, "a")
			require.NoError(t, err)
			require.Equal(t, []ports.Approval{{Identity: other, GrantedAt: testEpoch}}, got)
			require.ErrorIs(t, s.Revoke(ctx, base), ports.ErrNotFound)
		})
	}
}

func TestApprovalStoreFailureHasNoEffect(t *testing.T) {
	ctx := t.Context()
	s := portstest.NewApprovalStore()
	a := approval("a", "1", 0)
	s.FailOnce("Grant", ports.ErrUnavailable)
	require.ErrorIs(t, s.Grant(ctx, a), ports.ErrUnavailable)
	s.FailOnce("List", ports.ErrCorrupt)
	_, err := s.List(ctx, "a")
	require.ErrorIs(t, err, ports.ErrCorrupt)
	got, err := s.List(ctx, "a")
	require.NoError(t, err)
	require.Nil(t, got)
	require.NoError(t, s.Grant(ctx, a))
	s.FailOnce("Revoke", ports.ErrCorrupt)
	require.ErrorIs(t, s.Revoke(ctx, a.Identity), ports.ErrCorrupt)
	got, err = s.List(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, []ports.Approval{a}, got)
}

func TestApprovalStoreConcurrent(t *testing.T) {
	ctx := t.Context()
	s := portstest.NewApprovalStore()
	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				a := approval("a", fmt.Sprint(w, "-", i), i)
				assert.NoError(t, s.Grant(ctx, a))
				assert.NoError(t, s.Grant(ctx, a)) // replaces itself
				_, err := s.List(ctx, "a")
				assert.NoError(t, err)
				if i%2 == 1 {
					assert.NoError(t, s.Revoke(ctx, a.Identity))
				}
			}
		})
	}
	wg.Wait()
	got, err := s.List(ctx, "a")
	require.NoError(t, err)
	require.Len(t, got, workers*rounds/2, "no grant or revoke is lost")
	for i := 1; i < len(got); i++ {
		assert.False(t, got[i].GrantedAt.Before(got[i-1].GrantedAt), "oldest first")
	}
}

func TestAuditLog(t *testing.T) {
	ctx := t.Context()
	l := portstest.NewAuditLog()
	got, err := l.Records(ctx)
	require.NoError(t, err)
	require.Empty(t, got)
	var want []ports.AuditRecord
	for i, action := range []ports.AuditAction{ports.AuditDecide, ports.AuditGrant, ports.AuditRevoke, ports.AuditDecide} {
		r := ports.AuditRecord{Time: testEpoch.Add(-time.Duration(i) * time.Hour), Action: action, Identity: identity("a", fmt.Sprint(i)), Outcome: "allowed"}
		require.NoError(t, l.Append(ctx, r))
		want = append(want, r)
	}
	got, err = l.Records(ctx)
	require.NoError(t, err)
	require.Equal(t, want, got, "append order, not time order")
	got[0].Outcome = "denied"
	again, err := l.Records(ctx)
	require.NoError(t, err)
	require.Equal(t, want, again, "Records returns a copy")

	l.FailOnce("Append", ports.ErrUnavailable)
	require.ErrorIs(t, l.Append(ctx, ports.AuditRecord{Outcome: "lost"}), ports.ErrUnavailable)
	l.FailOnce("Records", ports.ErrCorrupt)
	got, err = l.Records(ctx)
	require.ErrorIs(t, err, ports.ErrCorrupt)
	require.Nil(t, got)
	got, err = l.Records(ctx)
	require.NoError(t, err)
	require.Equal(t, want, got, "a failed Append left nothing")
}

func TestAuditLogConcurrent(t *testing.T) {
	ctx := t.Context()
	l := portstest.NewAuditLog()
	const workers, rounds = 8, 100
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				assert.NoError(t, l.Append(ctx, ports.AuditRecord{Reason: fmt.Sprint(w), Actor: fmt.Sprint(i)}))
				if i%10 == 0 {
					_, err := l.Records(ctx)
					assert.NoError(t, err)
				}
			}
		})
	}
	wg.Wait()
	got, err := l.Records(ctx)
	require.NoError(t, err)
	require.Len(t, got, workers*rounds)
	next := map[string]int{}
	for _, r := range got {
		require.Equal(t, fmt.Sprint(next[r.Reason]), r.Actor, "each writer's records keep their order")
		next[r.Reason]++
	}
}
