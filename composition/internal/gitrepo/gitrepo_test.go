//go:build unix

package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFind: the nearest .git up from a directory, as a directory or as a
// file naming the git directory (relative to the root, or absolute); a
// .git file that names none, or is a FIFO, still marks the root, with no
// git directory, and is never blocked on.
func TestFind(t *testing.T) {
	write := func(t *testing.T, p, s string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
	}
	tests := []struct {
		name   string
		setup  func(t *testing.T, root string)
		gitDir func(root string) string
	}{
		{"directory", func(t *testing.T, root string) { require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o700)) },
			func(root string) string { return filepath.Join(root, ".git") }},
		{"file, relative gitdir", func(t *testing.T, root string) {
			write(t, filepath.Join(root, ".git"), "gitdir: ../main/.git/worktrees/x\n")
		},
			func(root string) string { return filepath.Join(filepath.Dir(root), "main", ".git", "worktrees", "x") }},
		{"file, absolute gitdir", func(t *testing.T, root string) { write(t, filepath.Join(root, ".git"), "gitdir: /srv/repo.git") },
			func(string) string { return "/srv/repo.git" }},
		{"file without gitdir", func(t *testing.T, root string) { write(t, filepath.Join(root, ".git"), "nonsense") },
			func(string) string { return "" }},
		{"fifo", func(t *testing.T, root string) {
			require.NoError(t, syscall.Mkfifo(filepath.Join(root, ".git"), 0o600))
		},
			func(string) string { return "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "w")
			require.NoError(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o700))
			tt.setup(t, root)
			done := make(chan struct{})
			var got, gitDir string
			var ok bool
			go func() { defer close(done); got, gitDir, ok = Find(filepath.Join(root, "a", "b")) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("blocked")
			}
			require.True(t, ok)
			assert.Equal(t, root, got)
			assert.Equal(t, tt.gitDir(root), gitDir)
		})
	}
	t.Run("none", func(t *testing.T) {
		dir := t.TempDir()
		if _, _, ok := Find(filepath.Dir(dir)); ok {
			t.Skip("the temporary directory is inside a git repository")
		}
		_, _, ok := Find(dir)
		assert.False(t, ok)
	})
}

// TestConfigPath: a git directory's own config, or, for a linked
// worktree, the config of the directory its commondir names; a long
// commondir is cut at MaxLinkBytes, never read whole.
func TestConfigPath(t *testing.T) {
	assert.Equal(t, "", ConfigPath(""))
	g := t.TempDir()
	assert.Equal(t, filepath.Join(g, "config"), ConfigPath(g))
	require.NoError(t, os.WriteFile(filepath.Join(g, "commondir"), []byte("../..\n"), 0o600))
	assert.Equal(t, filepath.Join(filepath.Dir(filepath.Dir(g)), "config"), ConfigPath(g))
	require.NoError(t, os.WriteFile(filepath.Join(g, "commondir"), []byte("/abs/common"), 0o600))
	assert.Equal(t, "/abs/common/config", ConfigPath(g))
	require.NoError(t, os.WriteFile(filepath.Join(g, "commondir"), []byte("/"+strings.Repeat("x", 2*MaxLinkBytes)), 0o600))
	assert.Len(t, filepath.Dir(ConfigPath(g)), MaxLinkBytes)
}

// TestReadRegular: a regular file is read up to max bytes; a directory or
// a FIFO is ErrNotRegular without blocking.
func TestReadRegular(t *testing.T) {
	d := t.TempDir()
	p := filepath.Join(d, "f")
	require.NoError(t, os.WriteFile(p, []byte("0123456789"), 0o600))
	b, err := ReadRegular(p, 4)
	require.NoError(t, err)
	assert.Equal(t, "0123", string(b))
	_, err = ReadRegular(d, 4)
	assert.ErrorIs(t, err, ErrNotRegular)
	require.NoError(t, syscall.Mkfifo(filepath.Join(d, "fifo"), 0o600))
	_, err = ReadRegular(filepath.Join(d, "fifo"), 4)
	assert.ErrorIs(t, err, ErrNotRegular)
	_, err = ReadRegular(filepath.Join(d, "missing"), 4)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
