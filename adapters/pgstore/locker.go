package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrLockLost is the cause (context.Cause) of a Hold context whose lock was
// lost, and what an unlock returns for such a lock: the lock connection
// dropped (the database ended the session, the network failed, the Store
// was closed), so the database released the lock and another holder may
// have taken it. Its Reason is ReasonLockLost.
var ErrLockLost error = fail(ReasonLockLost, "the lock connection dropped; the lock was released")

// Timing of the locker.
const (
	// lockOpTimeout bounds one statement (or the connection attempt) on
	// the lock connection; a statement that takes longer is a lost
	// connection.
	lockOpTimeout = 10 * time.Second
	// pollStart and pollMax bound the backoff between tries of a lock
	// another session holds.
	pollStart = time.Millisecond
	pollMax   = 25 * time.Millisecond
)

// lease is one held lock. lost is owned by the locker's goroutine.
type lease struct {
	id     int64
	cancel context.CancelCauseFunc
	lost   bool
}

type lockOp int

const (
	opTry lockOp = iota
	opRelease
)

type lockReq struct {
	op    lockOp
	lease *lease
	reply chan lockReply
}

type lockReply struct {
	ok  bool
	err error
}

// slot excludes the holders of one key inside this Store: session-level
// advisory locks are reentrant within their session, Locks are not.
type slot struct {
	ch   chan struct{}
	refs int
}

// locker owns the Store's lock connection: one session, dedicated to
// advisory locks, on which every lock of the Store is held. One goroutine
// (run) owns the connection and serves tries and releases in turn; while
// locks are held and nothing is asked, it waits on the connection's socket,
// so a connection the server ends (pg_terminate_backend, a restart) is
// noticed at once and every holder's context is cancelled with ErrLockLost.
type locker struct {
	cfg    *pgx.ConnConfig
	schema string
	reqs   chan lockReq
	quit   chan struct{}
	done   chan struct{}
	stop   sync.Once

	mu    sync.Mutex
	slots map[string]*slot
}

func newLocker(cfg *pgx.ConnConfig, schema string) *locker {
	l := &locker{
		cfg: cfg, schema: schema,
		reqs: make(chan lockReq), quit: make(chan struct{}), done: make(chan struct{}),
		slots: map[string]*slot{},
	}
	go l.run()
	return l
}

// close ends the lock connection (releasing every lock) and the goroutine.
func (l *locker) close() {
	l.stop.Do(func() { close(l.quit) })
	<-l.done
}

// run is the goroutine that owns the lock connection.
func (l *locker) run() {
	defer close(l.done)
	var conn *pgx.Conn
	held := map[*lease]struct{}{}
	lose := func() {
		if conn != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.Close(ctx)
			cancel()
			conn = nil
		}
		for ls := range held {
			ls.lost = true
			ls.cancel(ErrLockLost)
		}
		clear(held)
	}
	for {
		var req lockReq
		if conn != nil && len(held) > 0 {
			// Wait on the socket: a server that ends the session sends
			// an error and closes, which ends the wait with an error.
			wctx, cancel := context.WithCancel(context.Background())
			werr := make(chan error, 1)
			c := conn
			go func() { werr <- c.PgConn().WaitForNotification(wctx) }()
			select {
			case req = <-l.reqs:
				cancel()
				if err := <-werr; err != nil && !errors.Is(err, context.Canceled) {
					lose()
				}
			case err := <-werr:
				cancel()
				if err != nil {
					lose()
				}
				continue
			case <-l.quit:
				cancel()
				<-werr
				lose()
				return
			}
		} else {
			select {
			case req = <-l.reqs:
			case <-l.quit:
				lose()
				return
			}
		}
		req.reply <- l.serve(&conn, held, req, lose)
	}
}

// serve performs one request on the lock connection, connecting first when
// there is none.
func (l *locker) serve(conn **pgx.Conn, held map[*lease]struct{}, req lockReq, lose func()) lockReply {
	ctx, cancel := context.WithTimeout(context.Background(), lockOpTimeout)
	defer cancel()
	switch req.op {
	case opTry:
		if *conn == nil {
			c, err := pgx.ConnectConfig(ctx, l.cfg)
			if err != nil {
				return lockReply{err: dbFail(err, "lock")}
			}
			*conn = c
		}
		var ok bool
		if err := (*conn).QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, req.lease.id).Scan(&ok); err != nil {
			lose()
			return lockReply{err: dbFail(err, "lock")}
		}
		if ok {
			held[req.lease] = struct{}{}
		}
		return lockReply{ok: ok}
	case opRelease:
		if req.lease.lost {
			return lockReply{err: ErrLockLost}
		}
		delete(held, req.lease)
		var ok bool
		if err := (*conn).QueryRow(ctx, `SELECT pg_advisory_unlock($1)`, req.lease.id).Scan(&ok); err != nil {
			// Ending the session releases the lock as surely; the
			// Store's other holders lose theirs and are told.
			lose()
			return lockReply{}
		}
		if !ok {
			// The session did not hold it: the bookkeeping and the
			// server disagree, so trust neither.
			lose()
			return lockReply{err: ErrLockLost}
		}
		return lockReply{}
	}
	return lockReply{err: fail(ReasonUnavailable, "unknown lock request")}
}

// call hands req to the goroutine and waits for its answer (each request is
// bounded by lockOpTimeout there). A closed Store answers
// ReasonUnavailable.
func (l *locker) call(op lockOp, ls *lease) (bool, error) {
	req := lockReq{op: op, lease: ls, reply: make(chan lockReply, 1)}
	select {
	case l.reqs <- req:
	case <-l.done:
		if op == opRelease {
			return false, ErrLockLost
		}
		return false, fail(ReasonUnavailable, "the store is closed")
	}
	select {
	case r := <-req.reply:
		return r.ok, r.err
	case <-l.done:
		if op == opRelease {
			// Closing ended the lock connection: the lock is gone.
			return false, ErrLockLost
		}
		return false, fail(ReasonUnavailable, "the store is closed")
	}
}

// enter takes key's in-process slot, or fails when ctx ends.
func (l *locker) enter(ctx context.Context, key string) error {
	l.mu.Lock()
	s, ok := l.slots[key]
	if !ok {
		s = &slot{ch: make(chan struct{}, 1)}
		l.slots[key] = s
	}
	s.refs++
	l.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		l.leave(key, false)
		return lockTimeout(ctx)
	}
}

// leave drops a reference to key's slot, releasing it when taken.
func (l *locker) leave(key string, taken bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.slots[key]
	if taken {
		<-s.ch
	}
	s.refs--
	if s.refs == 0 {
		delete(l.slots, key)
	}
}

// Lock takes the lock for key: a session-level advisory lock on the Store's
// lock connection, so it excludes every Lock of key on the same database
// and schema, in this Store (locks are not reentrant), another Store, or
// another process or machine. It waits (polling, 1 ms doubling to 25 ms)
// until the lock is free or ctx ends, returning then an *Error of
// ReasonLockTimeout that wraps ports.ErrLockTimeout and ctx.Err() (also when
// ctx has already ended). Other failures: ReasonInvalidKey, and
// ReasonUnavailable when the lock connection cannot be made or fails.
//
// The returned unlock releases the lock; it is idempotent and safe for
// concurrent use (later calls return nil). It returns ErrLockLost when the
// lock connection dropped while the lock was held: the database had
// released it already. A process that dies, even by SIGKILL, releases its
// locks (its session ends). Safe for concurrent use.
func (s *Store) Lock(ctx context.Context, key string) (func() error, error) {
	_, unlock, err := s.hold(ctx, key, context.Background())
	return unlock, err
}

// Hold is Lock that also returns the holder's context: a child of ctx,
// cancelled with cause ErrLockLost (see context.Cause) as soon as the lock
// is lost — the lock connection dropped, the Store was closed — and
// cancelled when unlock is called. A holder does its work under that
// context so that it stops when another holder may have taken the lock.
// Note that ctx then bounds both the wait and the work.
func (s *Store) Hold(ctx context.Context, key string) (context.Context, func() error, error) {
	return s.hold(ctx, key, ctx)
}

func (s *Store) hold(ctx context.Context, key string, parent context.Context) (context.Context, func() error, error) {
	if err := checkKey(key); err != nil {
		return nil, nil, err
	}
	if ctx.Err() != nil {
		return nil, nil, lockTimeout(ctx)
	}
	l := s.locks
	if err := l.enter(ctx, key); err != nil {
		return nil, nil, err
	}
	hctx, cancel := context.WithCancelCause(parent)
	ls := &lease{id: advisoryID("lock", s.schema, key), cancel: cancel}
	delay := pollStart
	for {
		ok, err := l.call(opTry, ls)
		if err != nil {
			cancel(err)
			l.leave(key, true)
			return nil, nil, err
		}
		if ok {
			break
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			cancel(context.Canceled)
			l.leave(key, true)
			return nil, nil, lockTimeout(ctx)
		case <-t.C:
		}
		delay = min(2*delay, pollMax)
	}
	var once sync.Once
	unlock := func() error {
		var err error
		once.Do(func() {
			_, err = l.call(opRelease, ls)
			cancel(context.Canceled)
			l.leave(key, true)
		})
		return err
	}
	return hctx, unlock, nil
}
