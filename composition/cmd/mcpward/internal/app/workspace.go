package app

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/internal/gitrepo"
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

// Workspace is the CLI's ports.WorkspaceTrust: composition's Workspace
// (GitWorkspace) of the workspace root, its generation kept in the state
// directory and trust only when --trust-workspace is given, whose Root,
// Repository, Facts and GenerationFile it is. It cannot be composition's
// alone, which roots a directory outside git at itself: the CLI first
// chooses the root by its own rule (outside git, the nearest directory
// holding .mcp.json: the project file, the private scope and the
// approvals belong to it, so they are the same from any subdirectory),
// says which rule chose it (RootFrom), and reads git's index (Tracks).
// Facts is safe for concurrent use; the fields are read-only.
type Workspace struct {
	// Workspace is composition's workspace of the root: its Root is the
	// git root, else the nearest directory holding .mcp.json, else the
	// working directory (RootFrom says which).
	*composition.Workspace
	// RootFrom is RootGit, RootProjectFile or RootCwd.
	RootFrom string
	// Trusted is --trust-workspace.
	Trusted bool
	// gitDir is the git directory of a RootGit workspace ("" otherwise, or
	// when a .git file could not be followed).
	gitDir string
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
	root := cwd
	if r, gitDir, ok := gitrepo.Find(cwd); ok {
		root, w.RootFrom, w.gitDir = r, RootGit, gitDir
	} else {
		w.RootFrom = RootCwd
		if d, ok := nearestProjectDir(cwd, home); ok {
			root, w.RootFrom = d, RootProjectFile
		}
	}
	// composition's workspace of the root found above (GitWorkspace finds
	// the same git root from it, and none outside git), so a host given
	// the same state directory shares the CLI's approvals of the
	// workspace.
	w.Workspace = composition.GitWorkspace(root, &composition.WorkspaceOptions{Trusted: trusted, StateDir: stateDir})
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

// generationFile is the file holding the generation of w's root.
func (w *Workspace) generationFile() string { return w.GenerationFile() }

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
