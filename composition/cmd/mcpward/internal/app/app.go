// Package app is one run's view of the person's machine: the
// configuration files located and read, the state directory, the
// workspace, and the composition.Host of the chosen profile built over
// them. Commands get an App from the factory, built on first use.
package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/adapters/stdiotransport"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/desktop"
	"github.com/mcpward/mcpward/composition/headless"
	"github.com/mcpward/mcpward/composition/signin"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
)

// Actor is the label of the grants and revokes the CLI records.
const Actor = "cli"

// The deployment profiles.
const (
	ProfileHeadless = "headless"
	ProfileDesktop  = "desktop"
	// ProfileShared is chosen by --store (or MCPWARD_STORE): tokens,
	// approvals, audit and refresh locks in a PostgreSQL database many
	// machines share (shared.Open); --profile is then ignored.
	ProfileShared = "shared"
)

// DefaultManagedPath is the default managed configuration file.
const DefaultManagedPath = "/etc/mcpward/managed-mcp.json"

// Path is a path flag that remembers whether it was given.
type Path struct {
	Value string
	Set   bool
}

// Options are the global flags that shape an App.
type Options struct {
	// Managed and Plugins are the --managed and --plugin files.
	Managed, Plugins []string
	// Local, Project and User are --local, --project and --user.
	Local, Project, User Path
	// StateDir is --state-dir.
	StateDir Path
	// Profile is ProfileHeadless or ProfileDesktop (New makes it
	// ProfileShared when a store DSN is given).
	Profile string
	// Store is --store, the DSN of the shared store ("" when not given:
	// then MCPWARD_STORE is read). It is a secret when it carries a
	// password: show only shared.RedactDSN of it.
	Store string
	// StoreKeyFile is --store-key-file (else MCPWARD_STORE_KEY_FILE).
	StoreKeyFile Path
	// TrustWorkspace is --trust-workspace.
	TrustWorkspace bool
	// AllowHelpers are the headersHelper command lines allowed to run
	// (--allow-header-helper).
	AllowHelpers [][]string
	// LogLevel is --log-level: the least level of the records written to
	// Env.Log, the servers' own log messages among them (see
	// composition.Config.ServerLogLevel). The zero value is
	// slog.LevelInfo; the CLI's default is slog.LevelError.
	LogLevel slog.Level
}

// Env is what a run sees of its process besides its streams.
type Env struct {
	// Lookup reads the environment: ${VAR} values and the XDG locations.
	Lookup func(string) (string, bool)
	// Cwd is the working directory (absolute).
	Cwd string
	// ManagedPath is the default managed configuration file.
	ManagedPath string
	// Log receives the Host's log records (composition.Config.Logger) at
	// Options.LogLevel and above: the servers' own log messages
	// (notifications/message, masked and sanitized) and errors such as
	// the stack of a panic recovered at a server's boundary, which that
	// server's failure (internal panic) refers to. nil discards them.
	Log io.Writer
	// TracerProvider and MeterProvider are the Host's
	// (composition.Config.TracerProvider, MeterProvider): nil means none
	// (main builds them from the OTEL_* variables, internal/telemetry).
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
}

// ErrNoStateDir is New's error when no state directory is known: no
// --state-dir, and neither XDG_STATE_HOME nor HOME is set.
var ErrNoStateDir = errors.New("no state directory: set --state-dir, XDG_STATE_HOME or HOME")

// App is one run: the sources, the state directory, the workspace and the
// Host. Its methods are safe for concurrent use as the Host's are.
type App struct {
	Options Options
	Env     Env
	// Sources are every configuration file looked at, highest tier first.
	Sources  []Source
	StateDir string
	// Legacy are the legacy ./.mcpward/local.json files of the workspace
	// (none is read; see LegacyState), when --local is not given.
	Legacy []LegacyLocal
	// Egress is the egress configuration: the user's and the managed
	// rules, and the policy built from them (the Host's Config.Egress).
	Egress *EgressState
	// Workspace is the run's workspace (the Host's WorkspaceTrust).
	Workspace *Workspace
	// Store describes the shared store; nil unless the profile is
	// ProfileShared.
	Store *StoreInfo
	// Host is nil when it could not be built; HostErr says why.
	Host    *composition.Host
	HostErr error
	cleanup func()
}

// New reads the sources of o and builds the Host of o's profile (the
// shared profile when o.Store or MCPWARD_STORE gives a DSN: the key is
// read with ReadKeyFile from o.StoreKeyFile or MCPWARD_STORE_KEY_FILE,
// and the state directory keeps only the workspace generations). It fails
// only with ErrNoStateDir; a Host that cannot be built is reported in
// HostErr (doctor explains it; every other command fails with it).
func New(o Options, e Env) (*App, error) {
	a := &App{Options: o, Env: e, cleanup: func() {}}
	a.StateDir = o.StateDir.Value
	if !o.StateDir.Set {
		a.StateDir = DefaultStateDir(e)
	} else if !filepath.IsAbs(a.StateDir) {
		a.StateDir = filepath.Join(e.Cwd, a.StateDir)
	}
	if a.StateDir == "" {
		return nil, ErrNoStateDir
	}
	a.Workspace = newWorkspace(e.Cwd, home(e), a.StateDir, o.TrustWorkspace)
	a.Sources = load(locate(o, e, a.Workspace))
	if !o.Local.Set {
		a.Legacy = legacyLocals(a.Workspace, e.Cwd, PrivateFile(e, a.Workspace.Root))
	}
	a.Egress = loadEgress(e, a.Sources)
	// Stdio servers run under the workspace root with the usual baseline
	// of this process's environment (HOME, PATH, USER, ...).
	cfg := composition.Config{
		Lookup: e.Lookup, Actor: Actor, Authority: composition.NewEnvAuthority(a.Workspace.Root), OAuth: &composition.OAuthConfig{},
		Egress:          a.Egress.Policy,
		HelperAllowList: o.AllowHelpers, HelperEnv: helperEnv(e.Lookup),
		TracerProvider: e.TracerProvider, MeterProvider: e.MeterProvider,
	}
	if e.Log != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(e.Log, &slog.HandlerOptions{Level: o.LogLevel}))
		cfg.ServerLogLevel = o.LogLevel
	}
	var (
		h       *composition.Host
		cleanup func()
		err     error
	)
	if dsn := storeDSN(o, e); dsn != "" {
		a.Options.Profile = ProfileShared
		h, cleanup, err = a.openShared(dsn, cfg)
	} else if o.Profile == ProfileDesktop {
		h, cleanup, err = desktop.Open(context.Background(), desktop.Config{Dir: a.StateDir, Trust: a.Workspace, Config: cfg})
	} else {
		h, cleanup, err = headless.Open(context.Background(), headless.Config{Dir: a.StateDir, Trust: a.Workspace, Config: cfg})
	}
	if err != nil {
		a.HostErr = err
		return a, nil
	}
	a.Host, a.cleanup = h, cleanup
	return a, nil
}

// Close releases the Host's stores. It is idempotent.
func (a *App) Close() {
	a.cleanup()
	a.cleanup = func() {}
}

// LibrarySources are the sources to hand to the library: every one that is
// not absent.
func (a *App) LibrarySources() []definition.Source { return librarySources(a.Sources) }

// Evaluate runs the whole flow over the sources for display, recording
// nothing (composition.Host.Preview): list, show, get, doctor and the
// shell completion only show what would be decided, so they write no
// audit record; what connects (tools, call, serve, doctor NAME) decides
// again through its Fleet, and that decision is audited. The Host must be
// built.
func (a *App) Evaluate(ctx context.Context) composition.Evaluation {
	return a.Host.Preview(ctx, a.LibrarySources())
}

// SignInState is the sign-in state word of r when it is an OAuth server
// ("" otherwise), read from the token store without any request; a store
// that cannot say is "unknown (REASON)".
func (a *App) SignInState(ctx context.Context, r composition.ServerEvaluation) string {
	if r.Auth != composition.AuthOAuth {
		return ""
	}
	st, err := signin.State(ctx, a.Host, a.LibrarySources(), r.Name)
	if err != nil {
		return "unknown (" + refusal.ReasonOf(err) + ")"
	}
	return string(st)
}

// SignedIn is the sign-in state word of a server with a stored credential.
const SignedIn = string(oauth.SignedIn)

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
