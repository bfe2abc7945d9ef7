package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcpward/mcpward/adapters/stdiotransport"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/core/refusal"
)

// actor is the label of the grants and revokes the CLI records.
const actor = "cli"

// checkTimeout bounds each store probe of doctor.
const checkTimeout = 5 * time.Second

// app is one run of a command.
type app struct {
	env      env
	opts     options
	sources  []source
	stateDir string
	ws       *workspace
	host     *composition.Host
	// hostErr is why the host could not be built (doctor reports it).
	hostErr error
	cleanup func()
}

// newApp reads the sources and builds the Host of o's profile. When the
// Host cannot be built, every command but doctor fails; it returns nil and
// the exit code then.
func newApp(ctx context.Context, o options, e env) (*app, int) {
	a := &app{env: e, opts: o, cleanup: func() {}}
	a.stateDir = o.stateDir.path
	if !o.stateDir.set {
		a.stateDir = defaultStateDir(e)
	} else if !filepath.IsAbs(a.stateDir) {
		a.stateDir = filepath.Join(e.cwd, a.stateDir)
	}
	if a.stateDir == "" {
		fmt.Fprintln(e.stderr, "mcpward: no state directory: set --state-dir, XDG_STATE_HOME or HOME\nRun \"mcpward -h\" for usage.")
		return nil, exitUsage
	}
	a.sources = load(locate(o, e))
	a.ws = newWorkspace(e.cwd, a.stateDir, o.trustWorkspace)
	// Stdio servers run under the workspace root with the usual baseline
	// of this process's environment (HOME, PATH, USER, ...).
	cfg := composition.Config{
		Lookup: e.lookup, Actor: actor, Authority: composition.NewEnvAuthority(a.ws.root), OAuth: &composition.OAuthConfig{},
		HelperAllowList: o.allowHelpers, HelperEnv: helperEnv(e.lookup),
	}
	var (
		h       *composition.Host
		cleanup func()
		err     error
	)
	if o.profile == profileDesktop {
		h, cleanup, err = composition.Desktop(composition.StateDir(a.stateDir), nil, a.ws, cfg)
	} else {
		h, cleanup, err = composition.Headless(composition.StateDir(a.stateDir), a.ws, cfg)
	}
	if err != nil {
		if o.command != "doctor" {
			return nil, failTo(e, o.json, err)
		}
		a.hostErr = err
		return a, exitOK
	}
	a.host, a.cleanup = h, cleanup
	return a, exitOK
}

func (a *app) close() { a.cleanup() }

// evaluate runs the whole flow over the sources.
func (a *app) evaluate(ctx context.Context) composition.Evaluation {
	return a.host.Evaluate(ctx, librarySources(a.sources))
}

func (a *app) list(ctx context.Context) int {
	ev := a.evaluate(ctx)
	if a.opts.json {
		out := make([]serverJSON, len(ev.Servers))
		for i, r := range ev.Servers {
			out[i] = toJSON(r)
		}
		writeJSON(a.env.stdout, out)
	} else {
		writeList(a.env.stdout, ev)
	}
	return exitForErrors(ev)
}

func (a *app) show(ctx context.Context, name string) int {
	ev := a.evaluate(ctx)
	r, ok := ev.Server(name)
	if !ok {
		return a.fail(refusal.New(refusal.Config, composition.ReasonUnknownServer, name))
	}
	signIn := a.signInState(ctx, r)
	if a.opts.json {
		j := toJSON(r)
		j.SignIn = signIn
		writeJSON(a.env.stdout, j)
	} else {
		writeShow(a.env.stdout, r, signIn)
	}
	if r.Err != nil {
		return exitFailure
	}
	return exitOK
}

func (a *app) approve(ctx context.Context, name string) int {
	srcs := librarySources(a.sources)
	ap, err := a.host.Approve(ctx, srcs, name)
	if err != nil {
		return a.fail(err)
	}
	r, _ := a.host.Evaluate(ctx, srcs).Server(name)
	if a.opts.json {
		writeJSON(a.env.stdout, approveJSON{
			Approval: approvalJSON{Identity: ap.Identity, GrantedBy: ap.GrantedBy},
			Server:   toJSON(r),
		})
		return exitOK
	}
	writeApproved(a.env.stdout, ap, r)
	return exitOK
}

func (a *app) revoke(ctx context.Context, name string) int {
	n, err := a.host.RevokeAll(ctx, name)
	if err != nil {
		return a.fail(err)
	}
	if n == 0 {
		return a.fail(&refusal.Error{Class: refusal.Config, Reason: "approval_not_found", Server: name, Detail: "no approval is recorded for this name"})
	}
	if a.opts.json {
		writeJSON(a.env.stdout, revokeJSON{Name: name, Revoked: n})
		return exitOK
	}
	plural := "s"
	if n == 1 {
		plural = ""
	}
	fmt.Fprintf(a.env.stdout, "revoked %d approval%s of %s\n", n, plural, name)
	return exitOK
}

// exitForErrors is exitFailure when activation could not decide about
// some server, exitOK otherwise.
func exitForErrors(ev composition.Evaluation) int {
	for _, r := range ev.Servers {
		if r.Err != nil {
			return exitFailure
		}
	}
	return exitOK
}

// helperEnv is the whole environment of a header helper: the baseline a
// stdio server gets (HOME, PATH, USER and the like), from lookup.
func helperEnv(lookup func(string) (string, bool)) []string {
	base := stdiotransport.DefaultBaseline(lookup)
	env := make([]string, 0, len(base))
	for _, k := range slices.Sorted(maps.Keys(base)) {
		env = append(env, k+"="+base[k])
	}
	return env
}
