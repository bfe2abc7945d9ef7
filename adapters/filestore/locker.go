package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"sync"
	"time"

	"github.com/mcpward/mcpward/ports"
)

// The backoff between flock attempts.
const (
	pollStart = time.Millisecond
	pollMax   = 25 * time.Millisecond
)

// errWaitEnded reports that ctx ended before the flock was free.
var errWaitEnded = errors.New("wait ended")

// waitFlock polls a non-blocking flock on f until it is taken, ctx ends
// (errWaitEnded joined with ctx.Err()), or flock fails.
func waitFlock(ctx context.Context, f *os.File, exclusive bool) error {
	delay := pollStart
	for {
		if err := ctx.Err(); err != nil {
			return errors.Join(errWaitEnded, err)
		}
		ok, err := tryFlock(f, exclusive)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(errWaitEnded, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, pollMax)
	}
}

// Lock takes the cross-process lock for key: an exclusive flock on a fresh
// descriptor of locks/<name>, so it excludes every other Lock of key, in
// this process (not reentrant) or another. It waits until the lock is free
// or ctx ends, returning then an error wrapping both ports.ErrLockTimeout and
// ctx.Err() (also when ctx has already ended). It returns ErrInvalidKey for
// an invalid key and ErrUnavailable when the lock file cannot be opened or
// locked. The returned unlock releases the lock; it is idempotent and safe
// for concurrent use (later calls return nil). A process that exits, even by
// SIGKILL, releases its locks. Safe for concurrent use.
func (s *Store) Lock(ctx context.Context, key string) (func() error, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	name := path.Join(locksDir, keyName(key))
	for {
		f, err := s.lockFile(ctx, name)
		if err != nil {
			return nil, err
		}
		// Lock files are never deleted by the store; if something else
		// replaced this one while we waited, our flock excludes nobody:
		// start again on the file now at the name.
		held, herr := f.Stat()
		now, nerr := s.root.Stat(name)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return unlockFunc(f), nil
		}
		funlock(f)
		f.Close()
		if herr != nil || (nerr != nil && !errors.Is(nerr, os.ErrNotExist)) {
			return nil, unavailable("cannot inspect lock file")
		}
	}
}

// lockFile opens name and waits for its exclusive flock.
func (s *Store) lockFile(ctx context.Context, name string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("filestore: lock: %w: %w", ports.ErrLockTimeout, err)
	}
	f, err := s.openOrCreate(name, os.O_RDWR)
	if err != nil {
		return nil, unavailable("cannot open lock file")
	}
	if err := waitFlock(ctx, f, true); err != nil {
		f.Close()
		if errors.Is(err, errWaitEnded) {
			return nil, fmt.Errorf("filestore: lock: %w: %w", ports.ErrLockTimeout, ctx.Err())
		}
		return nil, unavailable("cannot lock lock file")
	}
	return f, nil
}

// unlockFunc returns the idempotent release of f's flock.
func unlockFunc(f *os.File) func() error {
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			uerr := funlock(f)
			cerr := f.Close()
			if uerr != nil || cerr != nil {
				err = unavailable("cannot release lock")
			}
		})
		return err
	}
}
