//go:build linux || darwin

package stdiotransport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

// FuzzConfine throws arbitrary cwd strings at a root that holds symlinks
// pointing inside and outside it, a file, and a sibling sharing the root's
// prefix. Whatever confine accepts must canonically be a directory under
// the root; whatever it refuses must be Class Refused.
func FuzzConfine(f *testing.F) {
	for _, s := range []string{"", ".", "sub", "in", "out", "out/x", "file", "..", "sub/..", "/", "/etc", "in/../..", "sub//./", "\x00", "../root-sibling", "loop"} {
		f.Add(s)
	}
	base, err := filepath.EvalSymlinks(f.TempDir())
	require.NoError(f, err)
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "root-sibling")
	for _, d := range []string{filepath.Join(root, "sub", "deep"), filepath.Join(outside, "x")} {
		require.NoError(f, os.MkdirAll(d, 0o755))
	}
	require.NoError(f, os.WriteFile(filepath.Join(root, "file"), nil, 0o644))
	require.NoError(f, os.Symlink("sub/deep", filepath.Join(root, "in")))
	require.NoError(f, os.Symlink("../root-sibling", filepath.Join(root, "out")))
	require.NoError(f, os.Symlink("/", filepath.Join(root, "sub", "slash")))
	require.NoError(f, os.Symlink("loop", filepath.Join(root, "loop")))

	f.Fuzz(func(t *testing.T, cwd string) {
		dir, err := confine(root, cwd, "fx")
		if err != nil {
			require.Equal(t, refusal.Refused, refusal.ClassOf(err))
			return
		}
		require.True(t, dir == root || strings.HasPrefix(dir, root+"/"), "escaped the root")
		canon, err := filepath.EvalSymlinks(dir)
		require.NoError(t, err)
		require.Equal(t, dir, canon, "not canonical")
		fi, err := os.Stat(dir)
		require.NoError(t, err)
		require.True(t, fi.IsDir())
	})
}
