package stdiotransport

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

var currentGOOS = runtime.GOOS

// Defaults for Options.
const (
	// DefaultMaxLineLength is the default receive cap: the most bytes one
	// inbound line (one JSON-RPC message, its newline excluded) may hold.
	// It equals the go-sdk's own default.
	DefaultMaxLineLength = 16 << 20
	// DefaultCloseGrace is how long Close waits for the child to exit after
	// closing its stdin, before it signals SIGTERM.
	DefaultCloseGrace = 2 * time.Second
	// DefaultTermGrace is how long Close waits after SIGTERM before SIGKILL.
	DefaultTermGrace = 2 * time.Second
	// DefaultKillGrace bounds the wait for the child to be reaped after
	// SIGKILL (by Close or Kill), and the wait for stderr to reach EOF
	// after the child exited (exec.Cmd.WaitDelay).
	DefaultKillGrace = 2 * time.Second
)

// Options tunes a Launcher. A nil *Options, and every zero or negative
// field, selects the documented default. The receive cap cannot be
// disabled.
type Options struct {
	// MaxLineLength is the receive cap in bytes (DefaultMaxLineLength).
	MaxLineLength int
	// CloseGrace is the wait after closing stdin (DefaultCloseGrace).
	CloseGrace time.Duration
	// TermGrace is the wait after SIGTERM (DefaultTermGrace).
	TermGrace time.Duration
	// KillGrace is the bound on reaping after SIGKILL (DefaultKillGrace).
	KillGrace time.Duration
}

// Launcher makes Transports for stdio targets that a host-owned
// ports.ProcessAuthority admits. It is immutable and safe for concurrent
// use.
type Launcher struct {
	authority ports.ProcessAuthority
	opts      Options
}

// New returns a Launcher that asks authority about every launch. A nil
// opts selects the defaults. New panics if authority is nil: a launcher
// without an authority has nobody to ask.
func New(authority ports.ProcessAuthority, opts *Options) *Launcher {
	if authority == nil {
		panic("stdiotransport: New with a nil ProcessAuthority")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxLineLength <= 0 {
		o.MaxLineLength = DefaultMaxLineLength
	}
	if o.CloseGrace <= 0 {
		o.CloseGrace = DefaultCloseGrace
	}
	if o.TermGrace <= 0 {
		o.TermGrace = DefaultTermGrace
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultKillGrace
	}
	return &Launcher{authority: authority, opts: o}
}

// Transport admits t and returns a single-use Transport for it. Nothing is
// spawned: the child starts in Transport.Connect, which asks the authority
// again.
//
// The authority is asked first, with a LaunchRequest carrying t's server
// id, command, arguments and cwd, before t's environment is read or
// anything is constructed. A refusal returns a *refusal.Error of Class
// Refused and the authority's Refused reason ("process_refused" when the
// authority returned any other error); a ctx that ended returns Class
// Transient, "canceled". Then t is checked against the grant: argv, the
// environment, the working directory and the program (see the package
// documentation for the reasons). t is copied; the caller may reuse it.
// Safe for concurrent use.
func (l *Launcher) Transport(ctx context.Context, t ports.Target) (*Transport, error) {
	if !supported {
		return nil, &refusal.Error{Class: refusal.Unsupported, Reason: "platform_unsupported", Server: t.ServerID}
	}
	if t.Kind != ports.TransportStdio {
		return nil, &refusal.Error{Class: refusal.Config, Reason: "transport_kind_mismatch", Server: t.ServerID}
	}
	t.Args = slices.Clone(t.Args)
	t.Env = maps.Clone(t.Env)
	t.Headers = nil
	if _, err := l.admit(ctx, t); err != nil {
		return nil, err
	}
	return &Transport{
		launcher: l,
		target:   t,
		done:     make(chan struct{}),
	}, nil
}

// Admit runs every check Transport runs, and nothing more: it asks the
// authority about t and checks t against the grant (argv, environment,
// working directory, the program looked up on the child's PATH). It
// spawns nothing and reads only the file system, so a host can say at
// list time that a server could never start. Errors are those of
// Transport. Safe for concurrent use.
func (l *Launcher) Admit(ctx context.Context, t ports.Target) error {
	if !supported {
		return &refusal.Error{Class: refusal.Unsupported, Reason: "platform_unsupported", Server: t.ServerID}
	}
	if t.Kind != ports.TransportStdio {
		return &refusal.Error{Class: refusal.Config, Reason: "transport_kind_mismatch", Server: t.ServerID}
	}
	t.Args = slices.Clone(t.Args)
	t.Env = maps.Clone(t.Env)
	t.Headers = nil
	_, err := l.admit(ctx, t)
	return err
}

// plan is everything exec.Cmd needs, checked against one grant.
type plan struct {
	path string
	args []string
	env  []string
	dir  string
}

// admit asks the authority about t and, on a grant, checks t against it.
func (l *Launcher) admit(ctx context.Context, t ports.Target) (plan, error) {
	req := ports.LaunchRequest{
		ServerID:    t.ServerID,
		Tier:        t.Tier,
		Origin:      t.Origin,
		Fingerprint: t.Fingerprint,
		Command:     t.Command,
		Args:        slices.Clone(t.Args),
		Cwd:         t.Cwd,
	}
	g, err := l.authority.Authorize(ctx, req)
	if err != nil {
		return plan{}, authorityRefusal(ctx, err, t.ServerID)
	}
	return buildPlan(t, g)
}

// authorityRefusal maps an authority's error to a *refusal.Error of Class
// Refused, keeping the authority's reason only when it is itself a Refused
// refusal; a ctx that ended maps to Transient "canceled".
func authorityRefusal(ctx context.Context, err error, server string) error {
	if ctx.Err() != nil {
		return &refusal.Error{Class: refusal.Transient, Reason: "canceled", Server: server}
	}
	var re *refusal.Error
	if errors.As(err, &re) && re.Class == refusal.Refused && re.Reason != "" {
		return &refusal.Error{Class: refusal.Refused, Reason: re.Reason, Server: server}
	}
	return &refusal.Error{Class: refusal.Refused, Reason: "process_refused", Server: server}
}

func refuse(class refusal.Class, reason, server, detail string) error {
	return &refusal.Error{Class: class, Reason: reason, Server: server, Detail: detail}
}

// buildPlan checks t against grant g and resolves what to run.
func buildPlan(t ports.Target, g ports.ProcessGrant) (plan, error) {
	id := t.ServerID
	if t.Command == "" {
		return plan{}, refuse(refusal.Config, "command_empty", id, "")
	}
	args := make([]string, 0, 1+len(t.Args))
	args = append(args, t.Command)
	args = append(args, t.Args...)
	for _, a := range args {
		if strings.ContainsRune(a, 0) {
			return plan{}, refuse(refusal.Config, "argv_invalid", id, "NUL in an argv element")
		}
	}
	dir, err := confine(g.AllowedRoot, t.Cwd, id)
	if err != nil {
		return plan{}, err
	}
	env, err := mergeEnv(g.BaselineEnv, t.Env, id)
	if err != nil {
		return plan{}, err
	}
	path, err := resolveProgram(t.Command, env["PATH"], dir, id)
	if err != nil {
		return plan{}, err
	}
	keys := slices.Sorted(maps.Keys(env))
	list := make([]string, 0, len(keys))
	for _, k := range keys {
		list = append(list, k+"="+env[k])
	}
	return plan{path: path, args: args, env: list, dir: dir}, nil
}

// confine returns the canonical working directory for cwd under root, or
// a Refused refusal.
func confine(root, cwd, id string) (string, error) {
	if root == "" || strings.ContainsRune(root, 0) || !filepath.IsAbs(root) || hasDotDot(root) {
		return "", refuse(refusal.Refused, "root_invalid", id, "allowed root is not a clean absolute path")
	}
	canonRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", refuse(refusal.Refused, "root_invalid", id, "allowed root cannot be resolved")
	}
	if fi, err := os.Stat(canonRoot); err != nil || !fi.IsDir() {
		return "", refuse(refusal.Refused, "root_invalid", id, "allowed root is not a directory")
	}
	if strings.ContainsRune(cwd, 0) {
		return "", refuse(refusal.Refused, "cwd_invalid", id, "NUL in cwd")
	}
	if hasDotDot(cwd) {
		return "", refuse(refusal.Refused, "cwd_invalid", id, "'..' in cwd")
	}
	cand := canonRoot
	switch {
	case cwd == "":
	case filepath.IsAbs(cwd):
		cand = cwd
	default:
		cand = filepath.Join(canonRoot, cwd)
	}
	if cand == canonRoot {
		// The root itself (no cwd, or the canonical root named again, as
		// a neutral directory is): just resolved and found a directory.
		return canonRoot, nil
	}
	canon, err := filepath.EvalSymlinks(cand)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", refuse(refusal.Refused, "cwd_not_found", id, "")
	case errors.Is(err, syscall.ENOTDIR):
		return "", refuse(refusal.Refused, "cwd_not_directory", id, "")
	case err != nil:
		return "", refuse(refusal.Refused, "cwd_invalid", id, "cwd cannot be resolved")
	}
	if !within(canonRoot, canon) {
		return "", refuse(refusal.Refused, "cwd_outside_root", id, "")
	}
	fi, err := os.Stat(canon)
	if err != nil {
		return "", refuse(refusal.Refused, "cwd_not_found", id, "")
	}
	if !fi.IsDir() {
		return "", refuse(refusal.Refused, "cwd_not_directory", id, "")
	}
	return canon, nil
}

// hasDotDot reports whether p has a ".." element, lexically.
func hasDotDot(p string) bool {
	for e := range strings.SplitSeq(p, string(filepath.Separator)) {
		if e == ".." {
			return true
		}
	}
	return false
}

// within reports whether the clean absolute path p is root or lies under it.
func within(root, p string) bool {
	if p == root {
		return true
	}
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(p, prefix)
}

// mergeEnv returns baseline with def applied over it, every key and value
// checked.
func mergeEnv(baseline, def map[string]string, id string) (map[string]string, error) {
	env := make(map[string]string, len(baseline)+len(def))
	for k, v := range baseline {
		if !validEnvKey(k) || !validEnvValue(v) {
			return nil, refuse(refusal.Config, "grant_env_invalid", id, "invalid baseline environment entry")
		}
		env[k] = v
	}
	for k, v := range def {
		if !validEnvKey(k) || !validEnvValue(v) {
			return nil, refuse(refusal.Config, "env_invalid", id, "invalid environment entry")
		}
		env[k] = v
	}
	return env, nil
}

// resolveProgram returns the absolute path execve runs for command: a
// command with a '/' is a path (relative to dir when not absolute); a bare
// name is looked up in childPath, skipping empty and relative entries.
func resolveProgram(command, childPath, dir, id string) (string, error) {
	if strings.ContainsRune(command, filepath.Separator) {
		p := command
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		switch err := executable(p); {
		case err == nil:
			return p, nil
		case errors.Is(err, fs.ErrNotExist):
			return "", refuse(refusal.Config, "program_not_found", id, "")
		default:
			return "", refuse(refusal.Config, "program_not_executable", id, "")
		}
	}
	for _, d := range filepath.SplitList(childPath) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, command)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", refuse(refusal.Config, "program_not_found", id, "not found in the child's PATH")
}

var errNotExecutable = errors.New("not an executable file")

// executable reports nil when p is a regular file with an execute bit.
func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return errNotExecutable
	}
	return nil
}
