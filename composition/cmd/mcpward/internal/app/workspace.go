package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/internal/gitrepo"
	"github.com/mcpward/mcpward/ports"
)

// ReasonGenerationUnavailable is the reason of the refusal Facts returns
// when the workspace generation cannot be read or created
// (composition.ReasonWorkspaceGenerationUnavailable).
const ReasonGenerationUnavailable = composition.ReasonWorkspaceGenerationUnavailable

// How a workspace root was found (Workspace.RootFrom).
const (
	// RootGit: the root of the git work tree holding the working
	// directory.
	RootGit = "git"
	// RootProjectFile: outside git, the nearest directory holding
	// .mcp.json, from the working directory up (never above HOME, nor into
	// a directory another user owns).
	RootProjectFile = "project_file"
	// RootCwd: outside git, with no .mcp.json above: the working
	// directory itself.
	RootCwd = "cwd"
)

// Workspace is the CLI's ports.WorkspaceTrust: composition.GitWorkspace of
// the workspace root, its generation kept in the state directory, and
// trust only when --trust-workspace is given. Facts is safe for concurrent
// use; the fields are read-only.
type Workspace struct {
	// Root is the workspace root: the git root, else the nearest
	// directory holding .mcp.json, else the working directory (RootFrom
	// says which). The project file, the private scope and the approvals
	// all belong to it, so they are the same from any subdirectory.
	Root string
	// RootFrom is RootGit, RootProjectFile or RootCwd.
	RootFrom string
	// Repository is the repository identity (composition.Workspace's).
	Repository string
	// Trusted is --trust-workspace.
	Trusted bool
	// gitDir is the git directory of a RootGit workspace ("" otherwise, or
	// when a .git file could not be followed).
	gitDir string
	ws     *composition.Workspace
}

// WorkspaceRoot returns the root of cwd's workspace, as Workspace.Root is
// (the git root above cwd, else the nearest directory holding .mcp.json,
// else cwd; see FindWorkspace, which also bounds the search by HOME): the
// directory the CLI runs stdio servers in. It reads only the file system.
func WorkspaceRoot(cwd string) string {
	return newWorkspace(cwd, "", "", false).Root
}

// newWorkspace describes the workspace of cwd; home bounds the search for
// .mcp.json outside git ("" for no bound).
func newWorkspace(cwd, home, stateDir string, trusted bool) *Workspace {
	w := &Workspace{Trusted: trusted}
	if root, gitDir, ok := gitrepo.Find(cwd); ok {
		w.Root, w.RootFrom, w.gitDir = root, RootGit, gitDir
	} else {
		w.Root, w.RootFrom = cwd, RootCwd
		if d, ok := nearestProjectDir(cwd, home); ok {
			w.Root, w.RootFrom = d, RootProjectFile
		}
	}
	// The repository identity and the generation are composition's, of
	// the root found above (GitWorkspace finds the same git root from it,
	// and none outside git), so a host given the same state directory
	// shares the CLI's approvals of the workspace.
	w.ws = composition.GitWorkspace(w.Root, &composition.WorkspaceOptions{Trusted: trusted, StateDir: stateDir})
	w.Repository = w.ws.Repository
	return w
}

// Tracks reports, for each of paths (absolute), whether the workspace's
// git repository tracks it: read from the git index, never by running git
// (see gitindex.go). Outside git nothing is tracked. An error means it
// cannot be told (no readable index).
func (w *Workspace) Tracks(paths ...string) (map[string]bool, error) {
	if w.RootFrom != RootGit {
		out := map[string]bool{}
		for _, p := range paths {
			out[p] = false
		}
		return out, nil
	}
	return gitTracks(w.Root, w.gitDir, paths)
}

// Facts implements ports.WorkspaceTrust: composition.Workspace's facts
// of the root (its generation read at every call).
func (w *Workspace) Facts(ctx context.Context) (ports.WorkspaceFacts, error) {
	return w.ws.Facts(ctx)
}

// generationFile is the file holding the generation of w's root.
func (w *Workspace) generationFile() string { return w.ws.GenerationFile() }

// ProjectFileName is the project file's name, as Claude Code names it.
const ProjectFileName = ".mcp.json"

// nearestProjectDir walks up from cwd (outside git) to the nearest
// directory holding .mcp.json. It never looks at HOME itself unless it is
// cwd, never above it, and never enters a directory the current user does
// not own (a /tmp/.mcp.json someone else wrote is no project of yours).
func nearestProjectDir(cwd, home string) (string, bool) {
	for d := cwd; ; {
		if _, err := os.Lstat(filepath.Join(d, ProjectFileName)); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d || d == home || parent == home {
			return "", false
		}
		if fi, err := os.Stat(parent); err != nil || !ownedByMe(fi) {
			return "", false
		}
		d = parent
	}
}

// projectFile is the default project file of a workspace: the nearest
// .mcp.json from cwd up to root (both included: a package of a monorepo
// may have its own), else root's. The walk never enters a directory the
// current user does not own: when the way up crosses one, it is cwd's own
// .mcp.json (a .git someone else planted above cwd does not make their
// .mcp.json yours).
func projectFile(cwd, root string) string {
	rel, err := filepath.Rel(root, cwd)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.Join(cwd, ProjectFileName)
	}
	for d := cwd; ; d = filepath.Dir(d) {
		if d != cwd {
			if fi, err := os.Stat(d); err != nil || !ownedByMe(fi) {
				return filepath.Join(cwd, ProjectFileName)
			}
		}
		p := filepath.Join(d, ProjectFileName)
		if _, err := os.Lstat(p); err == nil {
			return p
		}
		if d == root || filepath.Dir(d) == d {
			return filepath.Join(root, ProjectFileName)
		}
	}
}
