//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// newStore opens a store in a fresh directory and closes it at cleanup.
func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s, dir
}

// withUmask runs fn with the process umask set to mask. Tests in this
// package do not run in parallel, so the process-wide umask is safe to swap.
func withUmask(t *testing.T, mask int, fn func()) {
	t.Helper()
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	fn()
}

func perm(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	return fi.Mode().Perm()
}

func TestOpenCreatesPrivateModesWhateverTheUmask(t *testing.T) {
	for _, tc := range []struct {
		name string
		mask int
	}{
		{"umask 000 (would allow everything)", 0o000},
		{"umask 022 (usual)", 0o022},
		{"umask 277 (would strip owner write)", 0o277},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			withUmask(t, tc.mask, func() {
				s, err := Open(dir)
				require.NoError(t, err)
				defer s.Close()
				ctx := t.Context()
				require.NoError(t, s.Set(ctx, "k", []byte("v")))
				require.NoError(t, s.Grant(ctx, ports.Approval{Identity: ports.Identity{ServerID: "a"}}))
				require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditGrant}))
				unlock, err := s.Lock(ctx, "k")
				require.NoError(t, err)
				require.NoError(t, unlock())
			})
			var dirs, files int
			require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				switch {
				case d.IsDir():
					dirs++
					assert.Equal(t, fs.FileMode(0o700), perm(t, p), p)
				default:
					files++
					assert.True(t, d.Type().IsRegular(), p)
					assert.Equal(t, fs.FileMode(0o600), perm(t, p), p)
				}
				return nil
			}))
			assert.Equal(t, 3, dirs, "store, tokens, locks")
			// token, lock, approvals.json, approvals.lock, audit.jsonl, audit.lock
			assert.Equal(t, 6, files)
		})
	}
}

func TestOpenAcceptsExistingPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	require.NoError(t, os.Mkdir(dir, 0o700))
	s, err := Open(dir)
	require.NoError(t, err)
	require.NoError(t, s.Set(t.Context(), "k", []byte("v")))
	require.NoError(t, s.Close())

	// A second Open of the same directory sees the same data.
	s2, err := Open(dir)
	require.NoError(t, err)
	defer s2.Close()
	got, err := s2.Get(t.Context(), "k")
	require.NoError(t, err)
	assert.Equal(t, []byte("v"), got)
}

func TestOpenRefusesUnsafeDirectories(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, dir string) // dir does not exist yet
		reason DirReason
	}{
		{"group readable", func(t *testing.T, dir string) { mkdirMode(t, dir, 0o750) }, DirOpenPermissions},
		{"world readable", func(t *testing.T, dir string) { mkdirMode(t, dir, 0o705) }, DirOpenPermissions},
		{"group writable only", func(t *testing.T, dir string) { mkdirMode(t, dir, 0o720) }, DirOpenPermissions},
		{"symlink to a private directory", func(t *testing.T, dir string) {
			target := filepath.Join(filepath.Dir(dir), "target")
			mkdirMode(t, target, 0o700)
			require.NoError(t, os.Symlink(target, dir))
		}, DirSymlink},
		{"regular file", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(dir, nil, 0o600))
		}, DirNotDirectory},
		{"missing parent", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Dir(dir)))
		}, DirMissingParent},
		{"foreign owner", func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to create a directory owned by someone else")
			}
			mkdirMode(t, dir, 0o700)
			require.NoError(t, os.Chown(dir, 4242, 4242))
		}, DirForeignOwner},
		{"tokens subdirectory group readable", func(t *testing.T, dir string) {
			mkdirMode(t, dir, 0o700)
			mkdirMode(t, filepath.Join(dir, "tokens"), 0o750)
		}, DirOpenPermissions},
		{"locks subdirectory is a symlink", func(t *testing.T, dir string) {
			mkdirMode(t, dir, 0o700)
			mkdirMode(t, filepath.Join(dir, "real"), 0o700)
			require.NoError(t, os.Symlink("real", filepath.Join(dir, "locks")))
		}, DirSymlink},
		{"tokens subdirectory is a file", func(t *testing.T, dir string) {
			mkdirMode(t, dir, 0o700)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tokens"), nil, 0o600))
		}, DirNotDirectory},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "parent")
			mkdirMode(t, parent, 0o700)
			dir := filepath.Join(parent, "store")
			tc.setup(t, dir)
			before := snapshotModes(t, filepath.Dir(parent))

			s, err := Open(dir)
			require.Error(t, err)
			assert.Nil(t, s)
			var de *DirError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.reason, de.Reason)
			assert.ErrorIs(t, err, ports.ErrUnavailable)
			assert.NotContains(t, err.Error(), parent, "no path in errors")
			// Nothing was chmodded or created.
			assert.Equal(t, before, snapshotModes(t, filepath.Dir(parent)))
		})
	}
}

func TestOpenRefusesEmptyPath(t *testing.T) {
	_, err := Open("")
	assert.ErrorIs(t, err, ports.ErrUnavailable)
}

func TestOperationsAfterCloseAreUnavailable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	ctx := t.Context()

	_, err = s.Get(ctx, "k")
	assert.ErrorIs(t, err, ports.ErrUnavailable)
	assert.ErrorIs(t, s.Set(ctx, "k", nil), ports.ErrUnavailable)
	assert.ErrorIs(t, s.Delete(ctx, "k"), ports.ErrUnavailable)
	_, err = s.List(ctx, "a")
	assert.ErrorIs(t, err, ports.ErrUnavailable)
	assert.ErrorIs(t, s.Grant(ctx, ports.Approval{}), ports.ErrUnavailable)
	assert.ErrorIs(t, s.Append(ctx, ports.AuditRecord{}), ports.ErrUnavailable)
	_, err = s.Records(ctx)
	assert.ErrorIs(t, err, ports.ErrUnavailable)
	_, err = s.Lock(ctx, "k")
	assert.ErrorIs(t, err, ports.ErrUnavailable)
}

func TestStoreDirectoryRemovedIsUnavailable(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	require.NoError(t, os.RemoveAll(dir))

	err := s.Set(ctx, "k", []byte("v"))
	assert.ErrorIs(t, err, ports.ErrUnavailable)
	_, err = s.Get(ctx, "k")
	assert.True(t, errors.Is(err, ports.ErrNotFound) || errors.Is(err, ports.ErrUnavailable), "%v", err)
	assert.ErrorIs(t, s.Grant(ctx, ports.Approval{}), ports.ErrUnavailable)
	assert.ErrorIs(t, s.Append(ctx, ports.AuditRecord{}), ports.ErrUnavailable)
	_, err = s.Lock(ctx, "k")
	assert.ErrorIs(t, err, ports.ErrUnavailable)
	// Nothing was recreated behind the host's back.
	assert.NoDirExists(t, dir)
}

func mkdirMode(t *testing.T, dir string, mode fs.FileMode) {
	t.Helper()
	require.NoError(t, os.Mkdir(dir, mode))
	require.NoError(t, os.Chmod(dir, mode))
}

// snapshotModes maps every path under root to its mode.
func snapshotModes(t *testing.T, root string) map[string]fs.FileMode {
	t.Helper()
	out := map[string]fs.FileMode{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		fi, err := d.Info()
		require.NoError(t, err)
		out[p] = fi.Mode()
		return nil
	}))
	return out
}
