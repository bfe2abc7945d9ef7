//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

func TestLockIsNotReentrantAndTimesOutClosed(t *testing.T) {
	s, dir := newStore(t)
	other, err := Open(dir)
	require.NoError(t, err)
	defer other.Close()

	unlock, err := s.Lock(t.Context(), "cred")
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		store *Store
	}{
		{"same handle", s},
		{"another handle", other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 80*time.Millisecond)
			defer cancel()
			start := time.Now()
			u, err := tc.store.Lock(ctx, "cred")
			assert.Nil(t, u)
			require.ErrorIs(t, err, ports.ErrLockTimeout)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.GreaterOrEqual(t, time.Since(start), 70*time.Millisecond)
			assert.Less(t, time.Since(start), 2*time.Second)
		})
	}

	// Another key is independent.
	u2, err := other.Lock(t.Context(), "other-cred")
	require.NoError(t, err)
	require.NoError(t, u2())

	// Unlock is idempotent; after it the key is free.
	require.NoError(t, unlock())
	require.NoError(t, unlock())
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	u3, err := other.Lock(ctx, "cred")
	require.NoError(t, err)
	require.NoError(t, u3())
}

func TestLockWithEndedContext(t *testing.T) {
	s, _ := newStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	u, err := s.Lock(ctx, "free-key")
	assert.Nil(t, u)
	require.ErrorIs(t, err, ports.ErrLockTimeout)
	require.ErrorIs(t, err, context.Canceled)
}

func TestLockWaiterGetsTheLockWhenReleased(t *testing.T) {
	s, _ := newStore(t)
	unlock, err := s.Lock(t.Context(), "k")
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		u, err := s.Lock(ctx, "k")
		if err == nil {
			err = u()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("second Lock returned while the first was held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, unlock())
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("waiter did not get the released lock")
	}
}

func TestLockExcludesConcurrentHolders(t *testing.T) {
	_, dir := newStore(t)
	var stores []*Store
	for range 3 {
		s, err := Open(dir)
		require.NoError(t, err)
		defer s.Close()
		stores = append(stores, s)
	}
	var inside, overlaps, total atomic.Int32
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			s := stores[g%len(stores)]
			for range 10 {
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				unlock, err := s.Lock(ctx, "shared")
				cancel()
				if !assert.NoError(t, err) {
					return
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				time.Sleep(100 * time.Microsecond)
				total.Add(1)
				inside.Add(-1)
				assert.NoError(t, unlock())
			}
		})
	}
	wg.Wait()
	assert.Zero(t, overlaps.Load(), "two holders at once")
	assert.Equal(t, int32(80), total.Load())
}

func TestLockFilesStayAndArePrivate(t *testing.T) {
	s, dir := newStore(t)
	unlock, err := s.Lock(t.Context(), "k")
	require.NoError(t, err)
	p := filepath.Join(dir, "locks", keyName("k"))
	assert.Equal(t, os.FileMode(0o600), perm(t, p))
	require.NoError(t, unlock())
	assert.FileExists(t, p, "lock files are never deleted")
}

func TestLockFileReplacedWhileWaitingIsNotTrusted(t *testing.T) {
	s, dir := newStore(t)
	unlock, err := s.Lock(t.Context(), "k")
	require.NoError(t, err)
	p := filepath.Join(dir, "locks", keyName("k"))

	got := make(chan func() error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		u, err := s.Lock(ctx, "k")
		assert.NoError(t, err)
		got <- u
	}()
	time.Sleep(50 * time.Millisecond) // the waiter polls the old file
	// Something outside the store replaces the lock file, then a third
	// party locks the new one.
	require.NoError(t, os.Remove(p))
	third, err := s.Lock(t.Context(), "k")
	require.NoError(t, err)
	require.NoError(t, unlock()) // the waiter's flock on the old inode is now free

	select {
	case u := <-got:
		t.Fatalf("waiter took a lock on a replaced file while the new one is held (unlock %p)", u)
	case <-time.After(150 * time.Millisecond):
	}
	require.NoError(t, third())
	select {
	case u := <-got:
		require.NotNil(t, u)
		require.NoError(t, u())
	case <-time.After(2 * time.Second):
		t.Fatal("waiter never got the lock")
	}
}
