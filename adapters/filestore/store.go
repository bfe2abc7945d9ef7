package filestore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/mcpward/mcpward/ports"
)

// Names inside the store directory.
const (
	tokensDir     = "tokens"
	locksDir      = "locks"
	approvalsFile = "approvals.json"
	approvalsLock = "approvals.lock"
	auditFile     = "audit.jsonl"
	auditLock     = "audit.lock"
	tempPrefix    = ".tmp-"
)

// Modes of everything the store creates, applied whatever the umask.
const (
	dirMode  fs.FileMode = 0o700
	fileMode fs.FileMode = 0o600
)

// Compile-time proof that *Store implements the four ports.
var (
	_ ports.TokenStore    = (*Store)(nil)
	_ ports.Locker        = (*Store)(nil)
	_ ports.ApprovalStore = (*Store)(nil)
	_ ports.AuditLog      = (*Store)(nil)
	_ ports.AuditQueue    = (*Store)(nil)
)

// ErrUnsupportedPlatform is returned by Open on systems without flock
// (anything but Linux, macOS and the BSDs). It wraps ports.ErrUnavailable.
var ErrUnsupportedPlatform = fmt.Errorf("filestore: platform not supported: %w", ports.ErrUnavailable)

// DirReason says why Open refused a directory.
type DirReason string

// The reasons Open refuses a directory.
const (
	// DirSymlink: the directory (or a subdirectory) is a symbolic link.
	DirSymlink DirReason = "symlink"
	// DirNotDirectory: the path names something other than a directory.
	DirNotDirectory DirReason = "not_directory"
	// DirOpenPermissions: group or others have some access to it.
	DirOpenPermissions DirReason = "group_or_world_access"
	// DirForeignOwner: it is not owned by the effective user.
	DirForeignOwner DirReason = "foreign_owner"
	// DirMissingParent: the directory is missing and so is its parent.
	DirMissingParent DirReason = "missing_parent"
	// DirInaccessible: it could not be created, inspected or opened.
	DirInaccessible DirReason = "inaccessible"
	// DirReplaced: it changed while Open was inspecting it.
	DirReplaced DirReason = "replaced"
)

// DirError is the error Open returns when it refuses or cannot use the store
// directory or one of its subdirectories. It wraps ports.ErrUnavailable and
// names neither the path nor the operating-system error. Open never changes
// the mode or owner of a directory it did not create.
type DirError struct {
	Reason DirReason
}

// Error returns a fixed phrase naming the reason.
func (e *DirError) Error() string {
	return "filestore: store directory refused: " + string(e.Reason) + ": " + ports.ErrUnavailable.Error()
}

// Unwrap returns ports.ErrUnavailable.
func (e *DirError) Unwrap() error { return ports.ErrUnavailable }

// Store is a TokenStore, Locker, ApprovalStore and AuditLog on one
// directory. It is safe for concurrent use by multiple goroutines, and any
// number of Stores in any number of processes may share the directory. Make
// one with Open; the zero Store is not usable.
type Store struct {
	root *os.Root
	// approvalsMu and auditMu serialize this Store's own writers before
	// they contend for the cross-process flock, so goroutines do not poll.
	approvalsMu chan struct{}
	auditMu     chan struct{}
	// auditQ groups concurrent Appends (auditbatch.go).
	auditQ auditQueue
}

// Open opens the store in dir, creating dir (mode 0700) when it is missing;
// dir's parent must exist. It refuses, with a *DirError, a directory or
// subdirectory that is a symlink, not a directory, not owned by the effective
// user, or accessible to group or others; it never changes the mode or owner
// of an existing directory. On an unsupported platform it returns
// ErrUnsupportedPlatform. The caller closes the Store with Close.
func Open(dir string) (*Store, error) {
	if !platformSupported {
		return nil, ErrUnsupportedPlatform
	}
	if dir == "" {
		return nil, &DirError{Reason: DirInaccessible}
	}
	before, err := prepareDir(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &DirError{Reason: DirInaccessible}
	}
	// The directory opened must be the one inspected.
	after, err := root.Stat(".")
	if err != nil || !os.SameFile(before, after) {
		root.Close()
		return nil, &DirError{Reason: DirReplaced}
	}
	if err := prepareSubdirs(root, tokensDir, locksDir); err != nil {
		root.Close()
		return nil, err
	}
	return &Store{
		root:        root,
		approvalsMu: make(chan struct{}, 1),
		auditMu:     make(chan struct{}, 1),
	}, nil
}

// Close writes the audit records still enqueued (see Enqueue) and
// releases the directory: ports.ErrUnavailable when that write fails.
// Operations after Close return ports.ErrUnavailable; locks already held
// stay held until unlocked.
func (s *Store) Close() error {
	aerr := s.closeAudit()
	if err := s.root.Close(); err != nil || aerr != nil {
		return fmt.Errorf("filestore: close: %w", ports.ErrUnavailable)
	}
	return nil
}

// prepareDir creates dir or checks the existing one, returning its info.
func prepareDir(dir string) (fs.FileInfo, error) {
	err := os.Mkdir(dir, dirMode)
	switch {
	case err == nil:
		// Ours: set the exact mode whatever the umask.
		if err := os.Chmod(dir, dirMode); err != nil {
			return nil, &DirError{Reason: DirInaccessible}
		}
	case errors.Is(err, fs.ErrNotExist):
		return nil, &DirError{Reason: DirMissingParent}
	case errors.Is(err, fs.ErrExist):
	default:
		return nil, &DirError{Reason: DirInaccessible}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, &DirError{Reason: DirInaccessible}
	}
	if err := checkDir(fi); err != nil {
		return nil, err
	}
	return fi, nil
}

// prepareSubdirs checks the existing subdirectories among names, then
// creates the missing ones: nothing is created when one is refused.
func prepareSubdirs(root *os.Root, names ...string) error {
	for _, name := range names {
		fi, err := root.Lstat(name)
		switch {
		case err == nil:
			if err := checkDir(fi); err != nil {
				return err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return &DirError{Reason: DirInaccessible}
		}
	}
	for _, name := range names {
		if err := prepareSubdir(root, name); err != nil {
			return err
		}
	}
	return nil
}

// prepareSubdir creates name inside root or checks the existing one.
func prepareSubdir(root *os.Root, name string) error {
	err := root.Mkdir(name, dirMode)
	switch {
	case err == nil:
		if err := root.Chmod(name, dirMode); err != nil {
			return &DirError{Reason: DirInaccessible}
		}
	case errors.Is(err, fs.ErrExist):
	default:
		return &DirError{Reason: DirInaccessible}
	}
	fi, err := root.Lstat(name)
	if err != nil {
		return &DirError{Reason: DirInaccessible}
	}
	return checkDir(fi)
}

// checkDir applies the directory rules to an Lstat result.
func checkDir(fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &DirError{Reason: DirSymlink}
	case !fi.IsDir():
		return &DirError{Reason: DirNotDirectory}
	case !ownedByMe(fi):
		return &DirError{Reason: DirForeignOwner}
	case fi.Mode().Perm()&0o077 != 0:
		return &DirError{Reason: DirOpenPermissions}
	}
	return nil
}

// unavailable wraps ports.ErrUnavailable with a fixed phrase.
func unavailable(phrase string) error {
	return fmt.Errorf("filestore: %s: %w", phrase, ports.ErrUnavailable)
}

// corrupt wraps ports.ErrCorrupt with a fixed phrase.
func corrupt(phrase string) error {
	return fmt.Errorf("filestore: %s: %w", phrase, ports.ErrCorrupt)
}

// transient reports OS errors that say nothing about the file itself.
func transient(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EINTR, syscall.EAGAIN, os.ErrClosed} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// errTooLarge is readStored's report of a file longer than its limit.
var errTooLarge = errors.New("file too large")

// readStored reads the regular file name (at most limit bytes). It returns
// fs.ErrNotExist or errTooLarge (unwrapped, for the caller to map) when
// there is none or it is longer than limit, ErrCorrupt (wrapped) when the
// file exists but is not a regular file or cannot be read, and
// ErrUnavailable otherwise.
func (s *Store) readStored(name string, limit int64, what string) ([]byte, error) {
	f, err := s.root.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fs.ErrNotExist
		}
		if transient(err) {
			return nil, unavailable("cannot open " + what)
		}
		if _, lerr := s.root.Lstat(name); lerr == nil {
			// It exists but cannot be opened (permissions, a symlink
			// leaving the directory): stored data that cannot be read.
			return nil, corrupt(what + " unreadable")
		}
		return nil, unavailable("cannot open " + what)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, unavailable("cannot inspect " + what)
	}
	if !fi.Mode().IsRegular() {
		return nil, corrupt(what + " is not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		if transient(err) {
			return nil, unavailable("cannot read " + what)
		}
		return nil, corrupt(what + " unreadable")
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

// createFile creates name exclusively with mode 0600 whatever the umask.
func (s *Store) createFile(name string, flag int) (*os.File, error) {
	f, err := s.root.OpenFile(name, flag|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(fileMode); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openOrCreate opens name, creating it with mode 0600 when it is missing.
// It opens first: the files it serves (the locks, the audit log) exist but
// once, so creating first would cost a failed open on every call.
func (s *Store) openOrCreate(name string, flag int) (*os.File, error) {
	for range 3 {
		f, err := s.root.OpenFile(name, flag, 0)
		if !errors.Is(err, fs.ErrNotExist) {
			return f, err
		}
		f, err = s.createFile(name, flag)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
		// Created between the two attempts: try again.
	}
	return nil, fs.ErrExist
}

// writeAtomic replaces name with data: a temporary file in the same
// directory, fsync, rename, fsync of the directory.
func (s *Store) writeAtomic(name string, data []byte, what string) error {
	dir := path.Dir(name)
	var rnd [12]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return unavailable("no randomness for " + what)
	}
	tmp := path.Join(dir, tempPrefix+hex.EncodeToString(rnd[:]))
	f, err := s.createFile(tmp, os.O_WRONLY)
	if err != nil {
		return unavailable("cannot create " + what)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if werr != nil || serr != nil || cerr != nil {
		s.root.Remove(tmp)
		return unavailable("cannot write " + what)
	}
	if err := s.root.Rename(tmp, name); err != nil {
		s.root.Remove(tmp)
		return unavailable("cannot replace " + what)
	}
	if err := s.syncDir(dir); err != nil {
		return unavailable("cannot sync " + what)
	}
	return nil
}

// syncDir fsyncs the directory dir (relative to the root).
func (s *Store) syncDir(dir string) error {
	d, err := s.root.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	return errors.Join(serr, cerr)
}
