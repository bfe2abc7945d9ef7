package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// RunLocker runs the ports.Locker conformance suite: exclusion between
// goroutines and handles, a ctx-bounded wait failing closed with
// ErrLockTimeout, idempotent unlock, no reentrancy, independent and distinct
// keys, ErrInvalidKey, and — with a Location and Attach — exclusion between
// real OS processes and the release of the locks of a holder killed with
// SIGKILL.
//
// mk is called once per subtest and must return a Harness on a fresh backing
// store; every handle its Open returns must share that store's locks. For
// the cross-process subtests the suite re-executes the test binary (see the
// package doc), so call RunLocker from a test or subtest of its own:
//
//	func TestLocker(t *testing.T) {
//		conformance.RunLocker(t, func(t *testing.T) conformance.Harness[ports.Locker] {
//			dir := t.TempDir()
//			return conformance.Harness[ports.Locker]{
//				Open:     func(t *testing.T) ports.Locker { return mystore.NewLocker(dir) },
//				Location: dir,
//				Attach:   func(t *testing.T, dir string) ports.Locker { return mystore.NewLocker(dir) },
//			}
//		})
//	}
func RunLocker(t *testing.T, mk func(t *testing.T) Harness[ports.Locker]) {
	s := newSuite(t, "locker", mk)
	if runChild(t, s, lockerRoles) {
		return
	}
	ls := lockerSuite{s}
	t.Run("LockAndUnlock", ls.lockAndUnlock)
	t.Run("UnlockIsIdempotent", ls.unlockIsIdempotent)
	t.Run("ExcludesGoroutines", ls.excludesGoroutines)
	t.Run("ExcludesHandles", ls.excludesHandles)
	t.Run("WaiterGetsLockAfterUnlock", ls.waiterGetsLock)
	t.Run("DeadlineIsErrLockTimeout", ls.deadline)
	t.Run("CancelIsErrLockTimeout", ls.cancel)
	t.Run("NotReentrant", ls.notReentrant)
	t.Run("DifferentKeysIndependent", ls.differentKeys)
	t.Run("KeysAreDistinct", ls.keysAreDistinct)
	t.Run("InvalidKeys", ls.invalidKeys)
	t.Run("CrossProcessExclusion", ls.crossProcessExclusion)
	t.Run("CrossProcessMutualExclusion", ls.crossProcessMutualExclusion)
	t.Run("KilledHolderReleasesLock", ls.killedHolder)
}

type lockerSuite struct{ *suite[ports.Locker] }

// Timing of the Locker subtests.
const (
	// shortWait bounds a Lock that must time out because the key is held.
	shortWait = 150 * time.Millisecond
	// freeWait bounds a Lock of a key no one holds.
	freeWait = 3 * time.Second
	// longWait bounds a Lock that must succeed after waiting its turn.
	longWait = 10 * time.Second
	// hangGrace is how long after its ctx ended a Lock may take to return.
	hangGrace = 3 * time.Second
)

// lockWithin calls l.Lock with a ctx ending after wait, failing t if Lock
// does not return within hangGrace after that.
func lockWithin(t *testing.T, l ports.Locker, key string, wait time.Duration) (func() error, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	return lockCtx(t, l, ctx, key, wait)
}

func lockCtx(t *testing.T, l ports.Locker, ctx context.Context, key string, wait time.Duration) (func() error, error) {
	t.Helper()
	type result struct {
		unlock func() error
		err    error
	}
	ch := make(chan result, 1)
	go func() {
		u, err := l.Lock(ctx, key)
		ch <- result{u, err}
	}()
	timer := time.NewTimer(wait + hangGrace)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.err == nil && r.unlock == nil {
			t.Fatalf("Lock(%s) returned a nil unlock function and no error", quoteKey(key))
		}
		return r.unlock, r.err
	case <-timer.C:
		t.Fatalf("Lock(%s) had not returned %v after its context ended: Lock must stop waiting when ctx ends", quoteKey(key), hangGrace)
	}
	return nil, nil
}

// mustLock takes a free key within freeWait or fails t; the lock is
// released when t ends.
func mustLock(t *testing.T, l ports.Locker, key string) func() error {
	t.Helper()
	u, err := lockWithin(t, l, key, freeWait)
	require.NoError(t, err, "Lock(%s) of a free key", quoteKey(key))
	t.Cleanup(func() { _ = u() })
	return u
}

// mustTimeOut fails t unless Lock of key gives up with ErrLockTimeout.
func mustTimeOut(t *testing.T, l ports.Locker, key string, msg string) {
	t.Helper()
	u, err := lockWithin(t, l, key, shortWait)
	if err == nil {
		_ = u()
		t.Fatalf("Lock(%s) succeeded: %s", quoteKey(key), msg)
	}
	require.ErrorIs(t, err, ports.ErrLockTimeout, msg)
}

func (s lockerSuite) lockAndUnlock(t *testing.T) {
	l := s.harness(t).Open(t)
	for range 3 {
		u := mustLock(t, l, "k")
		require.NoError(t, u(), "unlock")
	}
}

// unlockIsIdempotent: a second unlock returns nil and releases nothing,
// in particular not a lock another holder took meanwhile.
func (s lockerSuite) unlockIsIdempotent(t *testing.T) {
	h := s.harness(t)
	a, b := h.Open(t), h.Open(t)
	u := mustLock(t, a, "k")
	require.NoError(t, u())
	require.NoError(t, u(), "a second unlock returns nil")
	mustLock(t, b, "k")
	require.NoError(t, u(), "a stale unlock returns nil")
	mustTimeOut(t, a, "k", "a stale unlock released a lock another holder took after it")
}

// exclude runs workers that each take the lock n times through lockers and
// checks no two were ever inside at once.
func exclude(t *testing.T, lockers []ports.Locker, workers, n int) {
	t.Helper()
	var (
		inside, overlaps, count atomic.Int64
		wg                      sync.WaitGroup
		errs                    = make(chan error, workers)
	)
	for w := range workers {
		wg.Go(func() {
			l := lockers[w%len(lockers)]
			for range n {
				ctx, cancel := context.WithTimeout(t.Context(), longWait)
				u, err := l.Lock(ctx, "k")
				cancel()
				if err != nil {
					errs <- err
					return
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				count.Add(1)
				time.Sleep(100 * time.Microsecond)
				inside.Add(-1)
				if err := u(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Zero(t, overlaps.Load(), "holders of the same key were inside at the same time")
	assert.Equal(t, int64(workers*n), count.Load())
}

func (s lockerSuite) excludesGoroutines(t *testing.T) {
	l := s.harness(t).Open(t)
	exclude(t, []ports.Locker{l}, 6, 25)
}

func (s lockerSuite) excludesHandles(t *testing.T) {
	h := s.harness(t)
	a, b := h.Open(t), h.Open(t)
	u := mustLock(t, a, "k")
	mustTimeOut(t, b, "k", "a key held through one handle must exclude another handle")
	require.NoError(t, u())
	exclude(t, []ports.Locker{h.Open(t), h.Open(t), h.Open(t)}, 6, 20)
}

func (s lockerSuite) waiterGetsLock(t *testing.T) {
	h := s.harness(t)
	a, b := h.Open(t), h.Open(t)
	u := mustLock(t, a, "k")
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		released <- time.Now()
		_ = u()
	}()
	ub, err := lockWithin(t, b, "k", longWait)
	require.NoError(t, err, "a waiting Lock takes the lock once it is released, before its ctx ends")
	at := <-released
	assert.False(t, time.Now().Before(at), "the waiter got the lock before it was released")
	require.NoError(t, ub())
}

func (s lockerSuite) deadline(t *testing.T) {
	h := s.harness(t)
	a, b := h.Open(t), h.Open(t)
	mustLock(t, a, "k")
	start := time.Now()
	u, err := lockWithin(t, b, "k", shortWait)
	if err == nil {
		_ = u()
		t.Fatal("Lock of a held key succeeded")
	}
	assert.ErrorIs(t, err, ports.ErrLockTimeout, "a wait ended by the deadline is ErrLockTimeout")
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a wait ended by the deadline wraps ctx.Err()")
	assert.GreaterOrEqual(t, time.Since(start), shortWait*9/10, "Lock must wait until its deadline, not give up at once")
}

func (s lockerSuite) cancel(t *testing.T) {
	h := s.harness(t)
	a, b := h.Open(t), h.Open(t)
	mustLock(t, a, "k")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(shortWait, cancel)
	u, err := lockCtx(t, b, ctx, "k", shortWait)
	if err == nil {
		_ = u()
		t.Fatal("Lock of a held key succeeded")
	}
	assert.ErrorIs(t, err, ports.ErrLockTimeout, "a wait ended by cancellation is ErrLockTimeout")
	assert.ErrorIs(t, err, context.Canceled, "a wait ended by cancellation wraps ctx.Err()")
}

func (s lockerSuite) notReentrant(t *testing.T) {
	l := s.harness(t).Open(t)
	mustLock(t, l, "k")
	mustTimeOut(t, l, "k", "locks are not reentrant: a second Lock through the same handle must wait")
}

func (s lockerSuite) differentKeys(t *testing.T) {
	h := s.harness(t)
	a, b := h.Open(t), h.Open(t)
	mustLock(t, a, "k1")
	u := mustLock(t, b, "k2")
	require.NoError(t, u())
	u = mustLock(t, a, "k2")
	require.NoError(t, u())
}

// keysAreDistinct holds every DistinctKeys key at once: a key that aliases
// another one would wait for it.
func (s lockerSuite) keysAreDistinct(t *testing.T) {
	l := s.harness(t).Open(t)
	for _, k := range DistinctKeys() {
		u, err := lockWithin(t, l, k, freeWait)
		require.NoError(t, err, "Lock(%s) while every other distinct key is held: it aliases one of them", quoteKey(k))
		t.Cleanup(func() { _ = u() })
	}
}

func (s lockerSuite) invalidKeys(t *testing.T) {
	l := s.harness(t).Open(t)
	for _, k := range []string{"", strings.Repeat("k", ports.MaxKeyLen+1)} {
		u, err := lockWithin(t, l, k, shortWait)
		if err == nil {
			_ = u()
		}
		assert.ErrorIs(t, err, ports.ErrInvalidKey, "Lock(%s)", quoteKey(k))
	}
	u := mustLock(t, l, strings.Repeat("\xff", ports.MaxKeyLen))
	require.NoError(t, u(), "a MaxKeyLen-byte key is valid")
}

// lockerRoles are the roles of a Locker child process.
var lockerRoles = map[string]childRole[ports.Locker]{
	// hold takes Key, says "locked", waits for its standard input to end,
	// unlocks and says "unlocked".
	"hold": func(t *testing.T, l ports.Locker, a childArg) {
		ctx, cancel := context.WithTimeout(t.Context(), a.Wait)
		defer cancel()
		u, err := l.Lock(ctx, string(a.Key))
		require.NoError(t, err, "child Lock")
		say("locked")
		_, _ = io.Copy(io.Discard, os.Stdin)
		require.NoError(t, u(), "child unlock")
		say("unlocked")
	},
	// try tries Key for Wait and says "timeout" or "acquired".
	"try": func(t *testing.T, l ports.Locker, a childArg) {
		ctx, cancel := context.WithTimeout(t.Context(), a.Wait)
		defer cancel()
		u, err := l.Lock(ctx, string(a.Key))
		if err != nil {
			if !errors.Is(err, ports.ErrLockTimeout) {
				say("error: %v", err)
				t.Fatalf("child Lock: %v", err)
			}
			say("timeout")
			return
		}
		say("acquired")
		require.NoError(t, u())
	},
	// count says "ready", waits for its standard input to end, then takes
	// Key N times; inside, it checks it is alone (a marker file
	// in Dir) and adds one to the counter file in Dir. It says "done".
	"count": func(t *testing.T, l ports.Locker, a childArg) {
		awaitGo()
		if err := countUnderLock(t.Context(), l, string(a.Key), a.Dir, a.N); err != nil {
			say("error: %v", err)
			t.Fatal(err)
		}
		say("done")
	},
}

// countUnderLock is the critical section of CrossProcessMutualExclusion: a
// read-modify-write of a counter file with a marker file that proves no one
// else is inside.
func countUnderLock(ctx context.Context, l ports.Locker, key, dir string, n int) error {
	marker, counter := filepath.Join(dir, "inside"), filepath.Join(dir, "counter")
	for range n {
		lctx, cancel := context.WithTimeout(ctx, longWait)
		u, err := l.Lock(lctx, key)
		cancel()
		if err != nil {
			return fmt.Errorf("Lock: %w", err)
		}
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			_ = u()
			return fmt.Errorf("another process was inside the lock at the same time (%v)", err)
		}
		_ = f.Close()
		b, err := os.ReadFile(counter)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		c, _ := strconv.Atoi(string(b))
		time.Sleep(time.Millisecond)
		if err := os.WriteFile(counter, []byte(strconv.Itoa(c+1)), 0o600); err != nil {
			return err
		}
		if err := os.Remove(marker); err != nil {
			return err
		}
		if err := u(); err != nil {
			return fmt.Errorf("unlock: %w", err)
		}
	}
	return nil
}

// crossProcessExclusion: a lock held by another process excludes this one
// (which fails closed with ErrLockTimeout) and is taken once released, and a
// lock held here excludes another process.
func (s lockerSuite) crossProcessExclusion(t *testing.T) {
	h := s.harness(t)
	crossProcess(t, h)
	l := h.Open(t)
	key := []byte("cross/process\x00\xff")

	holder := s.startChild(t, "hold", h.Location, childArg{Key: key, Wait: longWait})
	holder.expect("locked", childWait)
	mustTimeOut(t, l, string(key), "a key held by another process must exclude this one")
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), childWait)
		defer cancel()
		u, err := l.Lock(ctx, string(key))
		if err == nil {
			err = u()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	holder.release()
	holder.expect("unlocked", childWait)
	select {
	case err := <-got:
		require.NoError(t, err, "a waiter takes the lock once the other process released it")
	case <-time.After(childWait + hangGrace):
		t.Fatal("a waiter did not take the lock the other process released")
	}
	holder.finish(childWait)

	u := mustLock(t, l, string(key))
	try := s.startChild(t, "try", h.Location, childArg{Key: key, Wait: shortWait})
	try.expect("timeout", childWait)
	try.finish(childWait)
	require.NoError(t, u())
	try = s.startChild(t, "try", h.Location, childArg{Key: key, Wait: longWait})
	try.expect("acquired", childWait)
	try.finish(childWait)
}

// crossProcessMutualExclusion: two processes and this one take the same key
// many times, each doing a read-modify-write of a shared file inside.
func (s lockerSuite) crossProcessMutualExclusion(t *testing.T) {
	h := s.harness(t)
	crossProcess(t, h)
	const n = 15
	dir := t.TempDir()
	key := "cross/count"
	arg := childArg{Key: []byte(key), Dir: dir, N: n}
	children := startReady(t, s.suite, "count", h.Location, []childArg{arg, arg})
	require.NoError(t, countUnderLock(t.Context(), h.Open(t), key, dir, n))
	for _, c := range children {
		c.expect("done", childWait)
		c.finish(childWait)
	}
	b, err := os.ReadFile(filepath.Join(dir, "counter"))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(3*n), string(b), "increments under the lock were lost: processes were not excluded")
}

// killedHolder: a holder killed with SIGKILL releases its lock.
func (s lockerSuite) killedHolder(t *testing.T) {
	h := s.harness(t)
	crossProcess(t, h)
	l := h.Open(t)
	key := []byte("killed/holder")
	holder := s.startChild(t, "hold", h.Location, childArg{Key: key, Wait: longWait})
	holder.expect("locked", childWait)
	mustTimeOut(t, l, string(key), "a key held by another process must exclude this one")
	require.NoError(t, holder.cmd.Process.Kill(), "SIGKILL the holder")
	holder.wait(childWait)
	u, err := lockWithin(t, l, string(key), 5*time.Second)
	require.NoError(t, err, "the lock of a holder killed with SIGKILL must be released")
	require.NoError(t, u())
}
