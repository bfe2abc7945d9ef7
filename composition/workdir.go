package composition

import (
	"context"
	"os"
	"slices"
	"sync"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// ReasonWorkdirFailed is the reason a stdio launch is refused with when
// the neutral working directory of a managed, user or plugin server
// could not be made. Class Transient.
const ReasonWorkdirFailed = "workdir_failed"

// A stdio server of the managed, user or plugin tier whose definition
// sets no cwd runs in a neutral directory (definition.WorkdirNeutral): a
// fresh, empty directory of mode 0700 under the system's temporary
// directory, made for the launch and removed, with whatever the server
// wrote there, when its connection is released. It never runs in the
// repository the person happens to open (a repository's mod.py or .npmrc
// would otherwise run through a server they trust in every workspace). A
// project or local server without cwd runs in the granted root, the
// workspace, as every .mcp.json expects.
//
// The host's ProcessAuthority still decides the launch: it is asked with
// the definition's own cwd (""), and the root it grants is replaced by
// the neutral directory for that launch only.

// neutralDirs holds the neutral directories this process made and has not
// removed yet. Their names are random (os.MkdirTemp), so a definition
// cannot name one in advance.
var neutralDirs sync.Map

// needsNeutralDir reports whether t runs in a neutral directory.
func needsNeutralDir(t ports.Target) bool {
	return t.Kind == ports.TransportStdio && t.Cwd == "" &&
		definition.WorkingDirectoryFor(t.Tier, t.Cwd) == definition.WorkdirNeutral
}

// makeNeutralDir makes a neutral directory for server id.
func makeNeutralDir(id string) (string, error) {
	dir, err := os.MkdirTemp("", "mcpward-cwd-")
	if err != nil {
		return "", &refusal.Error{Class: refusal.Transient, Reason: ReasonWorkdirFailed, Server: id,
			Detail: "the neutral working directory could not be made"}
	}
	neutralDirs.Store(dir, struct{}{})
	return dir, nil
}

// removeNeutralDir removes a neutral directory ("" is none).
func removeNeutralDir(dir string) {
	if dir == "" {
		return
	}
	neutralDirs.Delete(dir)
	_ = os.RemoveAll(dir)
}

// neutralAuthority wraps the host's ProcessAuthority: a launch whose cwd
// is a neutral directory of this process is put to the host's authority
// with the definition's own cwd (none), and granted that directory as its
// root.
type neutralAuthority struct{ inner ports.ProcessAuthority }

func (a neutralAuthority) Authorize(ctx context.Context, r ports.LaunchRequest) (ports.ProcessGrant, error) {
	if _, ok := neutralDirs.Load(r.Cwd); !ok || r.Cwd == "" {
		return a.inner.Authorize(ctx, r)
	}
	dir := r.Cwd
	r.Cwd = ""
	g, err := a.inner.Authorize(ctx, r)
	if err != nil {
		return g, err
	}
	g.AllowedRoot = dir
	return g, nil
}

// admissionDirs collects the neutral directories a Fleet's evaluation
// made to admit its stdio launches, so that the Fleet removes them beside
// its connects instead of one by one on the evaluation's path (an rmdir
// waits for the file system's journal: 0.7 ms each under this machine's
// disk load, against a connect's spawn and handshake of tens of ms).
//
// The first launch of each admitted server takes its directory (take,
// then launchDir) instead of making another: it is the fresh, empty directory of mode 0700
// the launch was admitted in, made for that server by this evaluation and
// never run in, so the launch runs where it was checked and one mkdir (and
// one rmdir) leaves the connect path. A directory taken is the launch's
// own from then on (removed when its connection is released); every later
// launch of the server makes a fresh one.
type admissionDirs struct {
	mu   sync.Mutex
	dirs []admissionDir
}

// admissionDir is one neutral directory made to admit server's launch.
type admissionDir struct{ server, dir string }

type admissionDirsKey struct{}

// withAdmissionDirs returns ctx carrying c: Dialer.admit hands c the
// neutral directory it made instead of removing it.
func withAdmissionDirs(ctx context.Context, c *admissionDirs) context.Context {
	return context.WithValue(ctx, admissionDirsKey{}, c)
}

// keepAdmissionDir hands dir, made to admit server's launch, to the
// collector of ctx and reports whether there was one (otherwise the caller
// removes dir itself).
func keepAdmissionDir(ctx context.Context, server, dir string) bool {
	c, ok := ctx.Value(admissionDirsKey{}).(*admissionDirs)
	if !ok || c == nil {
		return false
	}
	c.mu.Lock()
	c.dirs = append(c.dirs, admissionDir{server: server, dir: dir})
	c.mu.Unlock()
	return true
}

// take removes from c the directory kept for server and returns it, or
// "" when there is none (taken already, or removeAll ran). The caller owns
// what it takes.
func (c *admissionDirs) take(server string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, d := range c.dirs {
		if d.server == server {
			c.dirs = slices.Delete(c.dirs, i, i+1)
			return d.dir
		}
	}
	return ""
}

// launchDir holds the admitted neutral directory of one server for its
// first launch: Dialer.Dial takes it once (takeLaunchDir); the Fleet
// removes it when the connect ends without a launch having taken it.
type launchDir struct {
	server string
	mu     sync.Mutex
	dir    string
}

type launchDirKey struct{}

// withLaunchDir returns ctx carrying l.
func withLaunchDir(ctx context.Context, l *launchDir) context.Context {
	return context.WithValue(ctx, launchDirKey{}, l)
}

// takeLaunchDir returns the admitted directory ctx carries for server, at
// most once, or "". The caller owns it: it launches there and removes it.
func takeLaunchDir(ctx context.Context, server string) string {
	l, ok := ctx.Value(launchDirKey{}).(*launchDir)
	if !ok || l == nil || l.server != server {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	dir := l.dir
	l.dir = ""
	return dir
}

// release removes l's directory unless a launch took it.
func (l *launchDir) release() {
	l.mu.Lock()
	dir := l.dir
	l.dir = ""
	l.mu.Unlock()
	removeNeutralDir(dir)
}

// removeAll starts removing every directory handed to c and not taken,
// and returns a func that waits until they are gone. A take after it
// finds nothing.
func (c *admissionDirs) removeAll() (wait func()) {
	c.mu.Lock()
	dirs := c.dirs
	c.dirs = nil
	c.mu.Unlock()
	if len(dirs) == 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, d := range dirs {
			removeNeutralDir(d.dir)
		}
	}()
	return func() { <-done }
}
