// Package gitrepo finds the git repository holding a directory by reading
// the file system only (no git program runs): the one copy composition's
// GitWorkspace and the mcpward CLI share. Every file it reads may have
// been written by a project, so it reads only regular files, bounded,
// and never blocks on a FIFO or a device planted in their place.
package gitrepo

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// MaxLinkBytes bounds what Find and ConfigPath read of a .git file or a
// commondir file (more is cut).
const MaxLinkBytes = 4 << 10

// ErrNotRegular is ReadRegular's refusal of what is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Find walks up from dir to the nearest directory holding .git and
// returns it as root with its git directory: .git itself, or the
// "gitdir:" a .git file names (a linked worktree or a submodule; a
// relative one is taken from root). gitDir is "" when a .git file cannot
// be followed (unreadable, not regular, no gitdir line). ok is false when
// no directory up to the file system's root holds .git.
func Find(dir string) (root, gitDir string, ok bool) {
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		fi, err := os.Stat(p)
		if err == nil {
			if fi.IsDir() {
				return d, p, true
			}
			if data, err := ReadRegular(p, MaxLinkBytes); err == nil {
				if g, found := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:"); found {
					g = strings.TrimSpace(g)
					if !filepath.IsAbs(g) {
						g = filepath.Join(d, g)
					}
					return d, filepath.Clean(g), true
				}
			}
			return d, "", true
		}
		if filepath.Dir(d) == d {
			return "", "", false
		}
	}
}

// ConfigPath returns the config file of the git directory gitDir,
// following its "commondir" file for a linked worktree (the shared
// repository's config); "" for a gitDir of "".
func ConfigPath(gitDir string) string {
	if gitDir == "" {
		return ""
	}
	if data, err := ReadRegular(filepath.Join(gitDir, "commondir"), MaxLinkBytes); err == nil {
		c := strings.TrimSpace(string(data))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		return filepath.Join(c, "config")
	}
	return filepath.Join(gitDir, "config")
}

// ReadRegular reads the regular file at path, at most max bytes (more is
// cut). It never blocks on a FIFO or a device planted in place of a
// file: anything but a regular file is ErrNotRegular, checked before
// and after a non-blocking open. Other errors are os.Stat's and
// os.Open's.
func ReadRegular(path string, max int64) ([]byte, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	return io.ReadAll(io.LimitReader(f, max))
}
