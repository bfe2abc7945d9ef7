package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// lockHolderPID returns the pid of the one session holding an advisory
// lock in the test database.
func lockHolderPID(t *testing.T) int {
	t.Helper()
	var pids []int
	rows, err := admin(t).Query(t.Context(), `SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND a.datname = $1`, testDB)
	require.NoError(t, err)
	for rows.Next() {
		var p int
		require.NoError(t, rows.Scan(&p))
		pids = append(pids, p)
	}
	require.NoError(t, rows.Err())
	require.Len(t, pids, 1, "exactly one session holds an advisory lock")
	return pids[0]
}

func terminate(t *testing.T, pid int) {
	t.Helper()
	var ok bool
	require.NoError(t, admin(t).QueryRow(t.Context(), `SELECT pg_terminate_backend($1)`, pid).Scan(&ok))
	require.True(t, ok)
}

func lockWithin(s *pgstore.Store, key string, d time.Duration) (func() error, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.Lock(ctx, key)
}

// TestHolderConnectionKilled: the lock lives as long as its session: when
// the server ends the holder's lock connection, the holder's context is
// cancelled with ErrLockLost at once, another holder takes the lock, the
// first holder's unlock says the lock was lost, and its Store locks again
// later on a new connection.
func TestHolderConnectionKilled(t *testing.T) {
	schema := newSchema()
	a, b := openStore(t, schema, nil), openStore(t, schema, nil)
	ctx := t.Context()
	held, unlockA, err := a.Hold(ctx, "oauth/srv/abc.refresh")
	require.NoError(t, err)
	_, err = lockWithin(b, "oauth/srv/abc.refresh", 150*time.Millisecond)
	requireReason(t, err, pgstore.ReasonLockTimeout, refusal.Transient, ports.ErrLockTimeout, "the lock excludes another Store")
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	terminate(t, lockHolderPID(t))
	select {
	case <-held.Done():
		assert.ErrorIs(t, context.Cause(held), pgstore.ErrLockLost, "the holder is told why")
	case <-time.After(10 * time.Second):
		t.Fatal("the holder's context was not cancelled when its lock connection was killed")
	}
	unlockB, err := lockWithin(b, "oauth/srv/abc.refresh", 10*time.Second)
	require.NoError(t, err, "another holder takes the lock the killed session held")
	err = unlockA()
	assert.ErrorIs(t, err, pgstore.ErrLockLost, "the first holder's unlock reports the loss")
	assert.Equal(t, pgstore.ReasonLockLost, refusal.ReasonOf(err))
	assert.NoError(t, unlockA(), "a second unlock returns nil")

	_, err = lockWithin(a, "oauth/srv/abc.refresh", 150*time.Millisecond)
	requireReason(t, err, pgstore.ReasonLockTimeout, refusal.Transient, ports.ErrLockTimeout, "the first Store is excluded now")
	require.NoError(t, unlockB())
	u, err := lockWithin(a, "oauth/srv/abc.refresh", 10*time.Second)
	require.NoError(t, err, "the first Store locks again on a new connection")
	require.NoError(t, u())
}

// TestHoldContext: the holder's context ends when it unlocks, and with
// ErrLockLost when its Store closes (which releases the lock).
func TestHoldContext(t *testing.T) {
	schema := newSchema()
	ctx := t.Context()
	a := openStore(t, schema, nil)
	held, unlock, err := a.Hold(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, held.Err())
	require.NoError(t, unlock())
	assert.ErrorIs(t, held.Err(), context.Canceled, "unlock ends the holder's context")

	c := openStore(t, schema, nil)
	held, unlock, err = c.Hold(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, c.Close())
	<-held.Done()
	assert.ErrorIs(t, context.Cause(held), pgstore.ErrLockLost)
	assert.ErrorIs(t, unlock(), pgstore.ErrLockLost)
	u, err := lockWithin(a, "k", 10*time.Second)
	require.NoError(t, err, "closing a Store released its locks")
	require.NoError(t, u())

	_, err = lockWithin(c, "k", time.Second)
	requireReason(t, err, pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable, "Lock on a closed Store")
	_, err = lockWithin(a, "", time.Second)
	requireReason(t, err, pgstore.ReasonInvalidKey, refusal.Config, ports.ErrInvalidKey)
	_, err = lockWithin(a, strings.Repeat("k", ports.MaxKeyLen+1), time.Second)
	requireReason(t, err, pgstore.ReasonInvalidKey, refusal.Config, ports.ErrInvalidKey)
}

// TestLocksAreBySchema: the same key in two schemas are two locks.
func TestLocksAreBySchema(t *testing.T) {
	a, b := openStore(t, newSchema(), nil), openStore(t, newSchema(), nil)
	ua, err := lockWithin(a, "k", 5*time.Second)
	require.NoError(t, err)
	ub, err := lockWithin(b, "k", 5*time.Second)
	require.NoError(t, err, "another schema's lock of the same key is another lock")
	require.NoError(t, ua())
	require.NoError(t, ub())
}

// ---- the refresh rules of adapters/oauth, on this store ----

// The OAuth client (adapters/oauth, Client.refresh) keeps a late writer
// harmless with three rules, using nothing but the TokenStore and Locker
// ports: under the refresh lock it re-reads the credential; after its token
// request it saves only if the store still holds the credential it spent
// (otherwise it adopts what is there); after a refused refresh
// (invalid_grant) it deletes only if the store still holds the credential
// it spent. saveRefreshed and forgetSpent below follow them.

func saveRefreshed(ctx context.Context, ts ports.TokenStore, key string, spent, next []byte) (adopted []byte, err error) {
	cur, err := ts.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(cur, spent) {
		return cur, nil
	}
	return next, ts.Set(ctx, key, next)
}

func forgetSpent(ctx context.Context, ts ports.TokenStore, key string, spent []byte) error {
	cur, err := ts.Get(ctx, key)
	if err != nil || !bytes.Equal(cur, spent) {
		return err
	}
	return ts.Delete(ctx, key)
}

// TestLateWriterCannotClobberARotatedToken: machine A takes the refresh
// lock and reads the credential it will spend; its lock connection is
// killed (its context says so); machine B takes the lock, refreshes and
// stores the rotated credential. Whatever A does late — gives up on its
// context, or carries on and saves its own answer, or had its refresh
// refused and "forgets" the credential — the rotated credential B stored
// stays, because every Store sees B's Set at once and the rules compare
// before they write.
func TestLateWriterCannotClobberARotatedToken(t *testing.T) {
	schema := newSchema()
	ctx := t.Context()
	a, b := openStore(t, schema, nil), openStore(t, schema, nil)
	const key, lockKey = "oauth/srv/abc", "oauth/srv/abc.refresh"
	t1 := []byte(`{"access_token":"a1","refresh_token":"r1"}`)
	t2 := []byte(`{"access_token":"a2","refresh_token":"r2"}`)
	late := []byte(`{"access_token":"a2-late","refresh_token":"r2-late"}`)
	require.NoError(t, a.Set(ctx, key, t1))

	heldA, unlockA, err := a.Hold(ctx, lockKey)
	require.NoError(t, err)
	spentA, err := a.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, t1, spentA)

	terminate(t, lockHolderPID(t))
	select {
	case <-heldA.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("A was not told it lost the lock")
	}

	unlockB, err := lockWithin(b, lockKey, 10*time.Second)
	require.NoError(t, err)
	spentB, err := b.Get(ctx, key)
	require.NoError(t, err)
	got, err := saveRefreshed(ctx, b, key, spentB, t2)
	require.NoError(t, err)
	require.Equal(t, t2, got, "B rotated the credential in")
	require.NoError(t, unlockB())

	// A, well behaved, sees its context ended and writes nothing.
	require.ErrorIs(t, context.Cause(heldA), pgstore.ErrLockLost)
	// A, late anyway, with a token answer of its own: it adopts B's.
	got, err = saveRefreshed(ctx, a, key, spentA, late)
	require.NoError(t, err)
	assert.Equal(t, t2, got, "a late writer adopts the rotated credential instead of saving its own")
	// A, late, whose refresh was refused: it forgets nothing.
	require.NoError(t, forgetSpent(ctx, a, key, spentA))
	assert.True(t, errors.Is(unlockA(), pgstore.ErrLockLost))

	for name, st := range map[string]*pgstore.Store{"A": a, "B": b} {
		v, err := st.Get(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, string(t2), string(v), "machine %s reads the credential B rotated in", name)
	}
}
