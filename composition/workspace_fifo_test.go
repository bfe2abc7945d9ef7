//go:build unix

package composition

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

// TestGitWorkspaceFIFO: a project can plant a FIFO where a git file or the
// generation file belongs; GitWorkspace and Facts never block on one (a
// reader of a FIFO nobody writes waits forever), they treat it as no file:
// no remote, no linked git directory, a generation refused fail-closed.
func TestGitWorkspaceFIFO(t *testing.T) {
	within := func(t *testing.T, f func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { defer close(done); f() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("blocked on a FIFO")
		}
	}
	t.Run("git config", func(t *testing.T) {
		root := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o700))
		require.NoError(t, syscall.Mkfifo(filepath.Join(root, ".git", "config"), 0o600))
		within(t, func() {
			w := GitWorkspace(root, nil)
			assert.Equal(t, root, w.Root)
			assert.Equal(t, fileURL(root), w.Repository)
		})
	})
	t.Run(".git file and commondir", func(t *testing.T) {
		root := t.TempDir()
		require.NoError(t, syscall.Mkfifo(filepath.Join(root, ".git"), 0o600))
		within(t, func() {
			w := GitWorkspace(filepath.Join(root), nil)
			assert.Equal(t, root, w.Root)
			assert.Equal(t, fileURL(root), w.Repository)
		})
		wt := t.TempDir()
		gitDir := filepath.Join(wt, "gd")
		require.NoError(t, os.Mkdir(gitDir, 0o700))
		require.NoError(t, syscall.Mkfifo(filepath.Join(gitDir, "commondir"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: gd\n"), 0o600))
		within(t, func() {
			assert.Equal(t, fileURL(wt), GitWorkspace(wt, nil).Repository)
		})
	})
	t.Run("generation file", func(t *testing.T) {
		w := GitWorkspace(t.TempDir(), &WorkspaceOptions{StateDir: t.TempDir()})
		p := w.GenerationFile()
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, syscall.Mkfifo(p, 0o600))
		within(t, func() {
			_, err := w.Facts(context.Background())
			assert.Equal(t, ReasonWorkspaceGenerationUnavailable, refusal.ReasonOf(err))
		})
	})
}
