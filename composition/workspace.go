package composition

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/mcpward/mcpward/composition/internal/gitrepo"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// ReasonWorkspaceGenerationUnavailable (Class Internal) is the refusal of
// Workspace.Facts when the workspace's generation file cannot be read or
// created: activation then denies every server that needs the workspace
// (activation.ReasonWorkspaceFactsUnavailable), never guessing.
const ReasonWorkspaceGenerationUnavailable = "workspace_generation_unavailable"

// workspacesDir is the subdirectory of WorkspaceOptions.StateDir holding
// one generation file per workspace root.
const workspacesDir = "workspaces"

// WorkspaceOptions are what a host decides about a GitWorkspace. The zero
// value (or nil) is an untrusted workspace without a generation.
type WorkspaceOptions struct {
	// Trusted is the host's decision that the workspace is trusted (the
	// user answered a trust prompt, a flag said so): without it a
	// definition that requires a trusted workspace is denied
	// (activation.ReasonWorkspaceUntrusted). It is not part of an
	// approval's identity; Workspace.SetTrusted changes it later.
	Trusted bool
	// StateDir, when set, keeps the workspace's generation in a file under
	// StateDir/workspaces (one per workspace root, a random id written
	// the first time), so approvals bound to it hold across runs of the
	// host, and a new clone at another root, or a removed file, needs
	// approving again. "" means no generation: approvals bind the
	// repository alone (suits the memory profile, whose approvals last
	// one process anyway). The mcpward CLI uses its state directory, so a
	// host given the same one shares the CLI's approvals of the workspace.
	StateDir string
}

// Workspace is a production ports.WorkspaceTrust: the facts of the
// workspace holding a directory, from the git repository there. Facts is
// safe for concurrent use; Root and Repository are read-only.
type Workspace struct {
	// Root is the workspace's root: the top of the git working tree
	// holding the directory (a linked worktree's own top), else the
	// directory itself.
	Root string
	// Repository is the identity approvals of project, local and plugin
	// servers bind: the URL of the repository's "origin" remote (else its
	// first remote by name) with its userinfo, query and fragment removed
	// and its scheme and host lower-cased (an scp-like "git@host:path" is
	// ssh://host/path); file://ROOT for a repository without a usable
	// remote; file://DIR outside git (a path's '%', '?' and '#' escaped).
	// It never holds a credential a remote URL carried.
	Repository string

	stateDir string
	trusted  atomic.Bool
}

var _ ports.WorkspaceTrust = (*Workspace)(nil)

// GitWorkspace returns the Workspace holding dir (an absolute path; a
// relative one is taken from the process's working directory), reading
// the git repository there once: its root, and the remote that identifies
// it. It only reads the file system (no git program runs, nothing is
// written until Facts needs a generation), and cannot fail: a directory
// outside git, or a repository it cannot read, is identified by its path.
// Give it to a profile's Config.Trust.
func GitWorkspace(dir string, opts *WorkspaceOptions) *Workspace {
	var o WorkspaceOptions
	if opts != nil {
		o = *opts
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	root, repo := repositoryOf(filepath.Clean(dir))
	w := &Workspace{Root: root, Repository: repo, stateDir: o.StateDir}
	w.trusted.Store(o.Trusted)
	return w
}

// SetTrusted records the host's new decision about the workspace's trust;
// the next Facts reports it. It is safe for concurrent use.
func (w *Workspace) SetTrusted(trusted bool) { w.trusted.Store(trusted) }

// Facts implements ports.WorkspaceTrust: the current trust decision, the
// Repository, and the generation kept under the StateDir ("" without
// one), read afresh at every call and created the first time. A
// generation file that cannot be read or created is a *refusal.Error of
// Class Internal, ReasonWorkspaceGenerationUnavailable, with no facts.
func (w *Workspace) Facts(context.Context) (ports.WorkspaceFacts, error) {
	f := ports.WorkspaceFacts{Trusted: w.trusted.Load(), Repository: w.Repository}
	if w.stateDir == "" {
		return f, nil
	}
	gen, err := w.generation()
	if err != nil {
		return ports.WorkspaceFacts{}, err
	}
	f.Generation = gen
	return f, nil
}

// GenerationFile returns the file that keeps the workspace's generation
// (one line of lowercase hex), "" without a StateDir.
func (w *Workspace) GenerationFile() string {
	if w.stateDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(w.Root))
	return filepath.Join(w.stateDir, workspacesDir, hex.EncodeToString(sum[:16]))
}

// generation returns the generation of w's root, creating it (a random id)
// when there is none. Concurrent first runs agree: the file is created
// whole with a hard link that fails when another run created it first.
func (w *Workspace) generation() (string, error) {
	fail := func(detail string) (string, error) {
		return "", &refusal.Error{Class: refusal.Internal, Reason: ReasonWorkspaceGenerationUnavailable, Detail: detail}
	}
	path := w.GenerationFile()
	if gen, err := readGeneration(path); err == nil {
		return gen, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail("generation file unreadable")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fail("workspaces directory cannot be created")
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fail("no randomness")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return fail("generation file cannot be created")
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(hex.EncodeToString(b[:]) + "\n")
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		return fail("generation file cannot be written")
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fail("generation file cannot be created")
	}
	gen, err := readGeneration(path)
	if err != nil {
		return fail("generation file unreadable")
	}
	return gen, nil
}

// readGeneration reads a generation file: one line of lowercase hex.
func readGeneration(path string) (string, error) {
	data, err := gitrepo.ReadRegular(path, maxGeneration)
	if err != nil {
		return "", err
	}
	gen := strings.TrimSpace(string(data))
	if len(gen) == 0 || len(gen) > 64 || strings.Trim(gen, "0123456789abcdef") != "" {
		return "", errors.New("malformed generation")
	}
	return gen, nil
}

// StaticTrust returns a ports.WorkspaceTrust that always reports f: for a
// host that decides the workspace's facts itself, once (a container whose
// repository is known, a test). Its Facts is safe for concurrent use.
func StaticTrust(f ports.WorkspaceFacts) ports.WorkspaceTrust { return staticTrust(f) }

type staticTrust ports.WorkspaceFacts

func (s staticTrust) Facts(context.Context) (ports.WorkspaceFacts, error) {
	return ports.WorkspaceFacts(s), nil
}

// repositoryOf returns the workspace root of dir and its repository
// identity (see Workspace).
func repositoryOf(dir string) (root, repository string) {
	root, gitDir, ok := gitrepo.Find(dir)
	if !ok {
		return dir, fileURL(dir)
	}
	if remote := canonicalRemote(readRemote(gitrepo.ConfigPath(gitDir)), root); remote != "" {
		return root, remote
	}
	return root, fileURL(root)
}

// fileURLEscaper escapes what would end a file URL's path or break its
// parse ('%', '?', '#'); every other character stays as the path has it,
// so the identity of a usual path is the path itself.
var fileURLEscaper = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")

// fileURL returns the file:// URL of the absolute path p.
func fileURL(p string) string {
	return "file://" + fileURLEscaper.Replace(filepath.ToSlash(p))
}

// maxGitConfig bounds what readRemote reads of a git config file, and
// maxGeneration a generation file: a project can write any file there.
const (
	maxGitConfig  = 1 << 20
	maxGeneration = 4 << 10
)

// readRemote returns the url of the "origin" remote of a git config file,
// else of the first remote by name, else "".
func readRemote(configPath string) string {
	if configPath == "" {
		return ""
	}
	data, err := gitrepo.ReadRegular(configPath, maxGitConfig)
	if err != nil {
		return ""
	}
	return parseRemote(bufio.NewScanner(bytes.NewReader(data)))
}

// parseRemote returns the url of the "origin" remote of the git config
// sc scans, else of the first remote by name, else "". A line too long to
// scan, or a config cut by its bound, ends the scan with what was read.
func parseRemote(sc *bufio.Scanner) string {
	urls := map[string]string{}
	remote, inRemote := "", false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			remote, inRemote = parseRemoteSection(line)
			continue
		}
		if !inRemote {
			continue
		}
		k, v, found := strings.Cut(line, "=")
		if !found || !strings.EqualFold(strings.TrimSpace(k), "url") {
			continue
		}
		if _, seen := urls[remote]; !seen {
			urls[remote] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	if u, ok := urls["origin"]; ok {
		return u
	}
	names := make([]string, 0, len(urls))
	for n := range urls {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return urls[names[0]]
}

// parseRemoteSection parses a section header; it reports the remote name
// for [remote "NAME"].
func parseRemoteSection(line string) (string, bool) {
	inner, ok := strings.CutSuffix(strings.TrimPrefix(line, "["), "]")
	if !ok {
		return "", false
	}
	sect, sub, found := strings.Cut(inner, " ")
	if !found || !strings.EqualFold(sect, "remote") {
		return "", false
	}
	sub = strings.TrimSpace(sub)
	if len(sub) < 2 || sub[0] != '"' || sub[len(sub)-1] != '"' {
		return "", false
	}
	return sub[1 : len(sub)-1], true
}

// canonicalRemote returns a remote URL without anything that may be a
// credential (userinfo, query, fragment), scheme and host lower-cased; an
// scp-like "user@host:path" becomes "ssh://host/path"; a local path becomes
// file://PATH (relative to root). It returns "" for what it cannot parse,
// and for a URL holding a control character.
func canonicalRemote(remote, root string) string {
	if remote == "" || strings.ContainsFunc(remote, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ""
	}
	if strings.Contains(remote, "://") {
		u, err := url.Parse(remote)
		if err != nil || u.Host == "" && u.Scheme != "file" {
			return ""
		}
		u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
		u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
		return u.String()
	}
	// scp-like [user[:password]@]host:path: drop everything up to the last
	// "@" before the first "/", so no userinfo survives.
	scp := remote
	if head, _, _ := strings.Cut(scp, "/"); strings.Contains(head, "@") {
		scp = scp[strings.LastIndexByte(head, '@')+1:]
	}
	if hostPart, path, found := strings.Cut(scp, ":"); found && !strings.Contains(hostPart, "/") {
		if hostPart == "" {
			return ""
		}
		u := url.URL{Scheme: "ssh", Host: strings.ToLower(hostPart), Path: "/" + strings.TrimPrefix(path, "/")}
		if _, err := url.Parse(u.String()); err != nil {
			return "" // no host: " :x"
		}
		return u.String()
	}
	p := scp
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return fileURL(filepath.Clean(p))
}
