// Package serve is "mcpward serve [NAME]": mcpward as one MCP server
// fronting the usable servers (or the one named), over stdio or
// Streamable HTTP on a loopback address.
package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/progress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// TokenFile is the file, in the state directory, holding the bearer
// token of --http (mode 0600; made on first use, kept after).
const TokenFile = "serve-token"

// Options are serve's inputs.
type Options struct {
	IO    *iostreams.IOStreams
	App   func() (*app.App, error)
	Clock clock.Clock
	// Name, when not "", is the one server fronted (under its own names).
	Name string
	// HTTP is --http: the loopback address to listen on; "" serves stdio.
	HTTP string
	// NoToken is --unsafe-no-token: no bearer token over HTTP (tests).
	NoToken bool
	// ConnectTimeout and CallTimeout are --connect-timeout and
	// --call-timeout (0: no limit).
	ConnectTimeout, CallTimeout time.Duration
	// Version is the gateway's implementation version.
	Version string
	// NoWait is --no-wait: the first lists answer at once with what is
	// connected then, rather than waiting for the first connect round.
	NoWait bool
	// PrintConfig is --print-config HOST: print HOST's entry for this
	// serve (stdio, or with HTTP the URL) and exit.
	PrintConfig string
	// Workspace is --workspace as given (absolute), "" when not given.
	Workspace string
	// Limits are --max-connections, --max-sessions,
	// --session-idle-timeout, --idle-timeout and --read-timeout (headers
	// and body each), as composition takes them (negative: no limit).
	Limits composition.HTTPLimits
}

// NewCmdServe returns the serve command; runF, when not nil, replaces Run.
func NewCmdServe(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Clock: f.Clock,
		ConnectTimeout: fleet.DefaultConnectTimeout, CallTimeout: fleet.DefaultCallTimeout}
	var workspace string
	lim := composition.DefaultHTTPLimits()
	readTimeout := lim.HeaderTimeout
	cmd := &cobra.Command{
		Use:   "serve [NAME]",
		Short: "Serve the usable servers (or the one named) as one MCP server, over stdio or HTTP",
		Long: `Run mcpward as one MCP server: a host (Claude Desktop, Claude Code, Cursor, ...)
starts it with {"command": "mcpward", "args": ["serve"]} and sees the tools,
prompts and resources of every usable server under their host-facing names
(mcp__SERVER__TOOL), or, with NAME, of that server alone under its own names.
Calls are forwarded with mcpward's checks: arguments validated against the
narrowed schema before anything is sent, results cut to the admission caps,
--call-timeout. Each forwarded call is appended to the audit log (server,
tool, duration, outcome, sizes; never its arguments). The tool
mcpward_status reports each server's state and, for a server that is
refused, denied or failed, the reason; stderr carries the same lines as
"mcpward tools".

The servers connect in the background once serve starts and stay connected
(supervised, reconnected; a server that failed for a passing reason is tried
again every 30 seconds) until it ends; a change of a server's tools is
sent to the client as notifications/tools/list_changed. serve is ready
when it answers: the first tools/list (and prompts/list, resources/list,
resources/templates/list, and a call of a tool, prompt or resource not
offered yet) waits until every server's first connect ended, at most
--connect-timeout (30s; with 0, 30s), then answers with what connected;
mcpward_status says what did not. --no-wait answers at once with what is
connected then (the rest arrives by list_changed). A client's progress
token is passed on to the server; a client's cancel ends the call: for a
stdio server that stops its process (its state is lost; the supervisor
starts it again), and the next call of that server waits for it to be
connected again (at most the same time) rather than failing.

A server's elicitation question (elicitation/create) is passed to the
client only over stdio, where one client speaks, when that client declared
elicitation; else it is refused by name (elicitation_unavailable). A
client on a protocol version before 2026-07-28 is sent elicitation/create.
On 2026-07-28 or later the question comes back as the call's
input-required result (multi round-trip requests) and the server's call
waits, at most 5 minutes and 16 calls at once, for the client to call the
tool again with the answer and the request state; a retry with a state
serve did not hand to that client for that tool, or one expired or used,
is refused by name (input_state_unknown); a question asked while several
calls of that server run is refused (elicitation_unavailable). Over HTTP
elicitation is not offered to the servers.

The servers' log messages (notifications/message) are passed to every
client as serve's own, at the level the client set with logging/setLevel
(none until it sets one), with the server's name as the logger (with
NAME: the server's own logger name), masked like stderr, stripped of
control characters and rate-limited per server; --log-level still decides
what reaches stderr.

Over stdio (the default) one client speaks on stdin/stdout. With --http
ADDR (a loopback address such as 127.0.0.1:8765) mcpward serves
Streamable HTTP at http://ADDR/mcp: every request must carry
"Authorization: Bearer TOKEN", TOKEN being the content of the file
serve-token in the state directory (made on first use, mode 0600); a Host
or Origin header that is not a loopback name with that port is refused
(403, against DNS rebinding); no CORS header is sent. --unsafe-no-token
turns the token off, only on a loopback address, for tests; serve says so
on stderr. Once listening, serve prints on stderr the URL, the token file
and a client entry (never the token). A request without the token is
answered 401 with a JSON-RPC error saying where the token is, and no
OAuth metadata (a client does not start an OAuth sign-in that cannot
succeed). A request refused 401 or 403 closes its connection.

--print-config HOST prints, on stdout, the entry that makes HOST
(claude-desktop, claude-code, cursor, vscode) start or reach this serve,
and on stderr where it goes, then exits: with --http ADDR an HTTP entry
whose Authorization header reads the token from MCPWARD_TOKEN (cursor,
claude-code) or asks for it once (vscode); else a stdio entry starting this
mcpward with the same NAME and --workspace. Claude Desktop takes stdio
entries only. Limits (0:
none): --max-connections (256) connections open at once and
--max-sessions (128) client sessions, past which serve answers 503 with
Retry-After; --session-idle-timeout (30m) closes a session with no request
for that long; --idle-timeout (2m) closes a kept-alive connection between
requests; --read-timeout (10s) bounds the arrival of a request's headers,
and then of its body (408).

SIGINT or SIGTERM ends serve: every server's process group is stopped.`,
		Example: `  $ mcpward serve
  $ mcpward serve weather
  $ mcpward serve --http 127.0.0.1:8765 --workspace ~/src/project
  $ mcpward serve --print-config claude-desktop
  $ mcpward serve --http 127.0.0.1:8765 --print-config cursor`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Name = args[0]
			}
			opts.Version = cmd.Root().Version
			if workspace != "" {
				abs, err := filepath.Abs(workspace)
				if err != nil {
					return cmdutil.FlagErrorf("--workspace: the directory cannot be resolved")
				}
				if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
					return cmdutil.FlagErrorf("--workspace: not a directory")
				}
				f.Env.Cwd = abs
				f.Migrate() // the root command migrated the process's own workspace
				opts.Workspace = abs
			}
			if opts.PrintConfig != "" {
				if !slices.Contains(Hosts, opts.PrintConfig) {
					return cmdutil.FlagErrorf("--print-config: want one of %s", strings.Join(Hosts, ", "))
				}
				if opts.PrintConfig == "claude-desktop" && opts.HTTP != "" {
					return cmdutil.FlagErrorf("--print-config claude-desktop: Claude Desktop starts its local servers as commands: drop --http for its entry")
				}
				if _, port, err := net.SplitHostPort(opts.HTTP); opts.HTTP != "" && (err != nil || port == "0") {
					return cmdutil.FlagErrorf("--print-config: --http wants the port clients will use, not 0")
				}
			}
			if opts.HTTP != "" {
				if err := checkLoopback(opts.HTTP); err != nil {
					return err
				}
			} else if opts.NoToken {
				return cmdutil.FlagErrorf("--unsafe-no-token goes with --http")
			}
			for _, name := range []string{"max-connections", "max-sessions", "session-idle-timeout", "idle-timeout", "read-timeout"} {
				if cmd.Flags().Changed(name) && opts.HTTP == "" {
					return cmdutil.FlagErrorf("--%s goes with --http", name)
				}
			}
			if lim.MaxConnections < 0 || lim.MaxSessions < 0 {
				return cmdutil.FlagErrorf("--max-connections and --max-sessions take a count (0: no limit)")
			}
			lim.HeaderTimeout, lim.BodyTimeout = readTimeout, readTimeout
			opts.Limits = noLimitIfZero(lim)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.HTTP, "http", "", "serve Streamable HTTP on this loopback address (host:port) instead of stdio")
	cmd.Flags().BoolVar(&opts.NoToken, "unsafe-no-token", false, "with --http on a loopback address: accept requests without the bearer token (tests only)")
	cmd.Flags().BoolVar(&opts.NoWait, "no-wait", false, "answer the first lists at once with what is connected then, rather than after the servers' first connect")
	cmd.Flags().StringVar(&opts.PrintConfig, "print-config", "", "print the client entry of `HOST` (claude-desktop, claude-code, cursor, vscode) for this serve and exit")
	cmd.Flags().StringVar(&workspace, "workspace", "", "the `DIR` the workspace is found from, as from a working directory: its git root, else the nearest directory holding .mcp.json, else DIR (default: the working directory)")
	cmd.Flags().Var(cmdutil.DurationValue{D: &opts.ConnectTimeout}, "connect-timeout",
		"how long one attempt to connect a server may take (0: no limit)")
	cmd.Flags().Var(cmdutil.DurationValue{D: &opts.CallTimeout}, "call-timeout",
		"how long a forwarded call may run without progress (0: no limit)")
	cmd.Flags().IntVar(&lim.MaxConnections, "max-connections", lim.MaxConnections,
		"with --http: connections open at once; one more is answered 503 (0: no limit)")
	cmd.Flags().IntVar(&lim.MaxSessions, "max-sessions", lim.MaxSessions,
		"with --http: client sessions open at once; one more is answered 503 (0: no limit)")
	cmd.Flags().Var(cmdutil.DurationValue{D: &lim.SessionIdleTimeout}, "session-idle-timeout",
		"with --http: close a client session with no request for this long (0: never)")
	cmd.Flags().Var(cmdutil.DurationValue{D: &lim.IdleTimeout}, "idle-timeout",
		"with --http: close a kept-alive connection with no request for this long (0: never)")
	cmd.Flags().Var(cmdutil.DurationValue{D: &readTimeout}, "read-timeout",
		"with --http: how long a request's headers, and then its body, may take to arrive (0: no limit)")
	return cmd
}

// noLimitIfZero turns the flags' 0 ("no limit") into composition's
// negative value (its 0 is the default).
func noLimitIfZero(l composition.HTTPLimits) composition.HTTPLimits {
	neg := func(v int) int {
		if v == 0 {
			return -1
		}
		return v
	}
	negD := func(d time.Duration) time.Duration {
		if d == 0 {
			return -1
		}
		return d
	}
	return composition.HTTPLimits{MaxConnections: neg(l.MaxConnections), MaxSessions: neg(l.MaxSessions),
		SessionIdleTimeout: negD(l.SessionIdleTimeout), IdleTimeout: negD(l.IdleTimeout),
		HeaderTimeout: negD(l.HeaderTimeout), BodyTimeout: negD(l.BodyTimeout)}
}

// checkLoopback refuses an --http address that is not host:port of a
// loopback IP or localhost.
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return cmdutil.FlagErrorf("--http: want a loopback host:port, such as 127.0.0.1:8765")
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return cmdutil.FlagErrorf("--http: only a loopback address (127.0.0.1, [::1], localhost) is served")
	}
	return nil
}

// Run connects the servers in the background and serves until the client
// leaves (stdio) or ctx ends.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	if opts.PrintConfig != "" {
		return printConfig(opts, a.StateDir)
	}
	life, stop := context.WithCancel(ctx) // ends the background work when Run returns
	defer stop()
	rep := progress.New(progress.Options{Out: opts.IO.ErrOut, Clock: opts.Clock, ConnectTimeout: opts.ConnectTimeout})
	rep.Start()
	var names []string
	if opts.Name != "" {
		names = []string{opts.Name}
	}
	sup := fleet.SupervisorOptions(fleet.Timeouts{Connect: opts.ConnectTimeout, Call: opts.CallTimeout})
	// Resource updates go to the Gateway made below (subscribed clients).
	var gwp atomic.Pointer[composition.Gateway]
	sup.OnResourceUpdated = func(u ports.ResourceUpdate) {
		if g := gwp.Load(); g != nil {
			g.ResourceUpdated(u)
		}
	}
	copts := &composition.ConnectOptions{Names: names, Supervisor: sup, OnStatus: rep.OnStatus, Background: true,
		// The servers' log messages go to the client too (masked, at the
		// level it set), as the gateway's own.
		OnServerLog: func(r composition.ServerLog) {
			if g := gwp.Load(); g != nil {
				g.ServerLog(r)
			}
		}}
	// Elicitation only over stdio, where one client speaks: the servers'
	// questions go to it when it declared elicitation. Over HTTP it is
	// not offered, and a server's question is refused.
	var asker *composition.GatewayElicitor
	if opts.HTTP == "" {
		asker = &composition.GatewayElicitor{}
		copts.Elicitation = &composition.ElicitationOptions{Elicitor: asker}
	}
	fl := a.Host.Connect(ctx, a.LibrarySources(), copts)
	defer fl.Close()
	go func() {
		if fl.Wait(life) == nil {
			rep.Finish(fl.Servers())
		}
		retryFailed(life, fl, RetryInterval)
	}()
	wait := opts.ConnectTimeout
	if wait <= 0 {
		wait = fleet.DefaultConnectTimeout
	}
	startup := wait
	if opts.NoWait {
		startup = 0
	}
	gw := fl.Gateway(&composition.GatewayOptions{Server: opts.Name, Version: opts.Version, HTTP: opts.Limits,
		StartupWait: startup, ReconnectWait: wait,
		Logger: slog.New(slog.NewTextHandler(opts.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	defer gw.Close()
	gwp.Store(gw)
	if asker != nil {
		asker.Bind(gw)
	}
	if opts.HTTP == "" {
		in, ok := opts.IO.In.(io.ReadCloser)
		if !ok {
			in = io.NopCloser(opts.IO.In)
		}
		err := gw.ServeStdio(ctx, in, nopWriteCloser{opts.IO.Out})
		if ctx.Err() != nil {
			return cmdutil.ErrCancelled
		}
		return err
	}
	return serveHTTP(ctx, opts, a.StateDir, gw)
}

// RetryInterval is how often serve connects again the servers that
// failed with a Transient failure (the supervisor gives up after a few
// attempts; serve lives longer than a command).
const RetryInterval = 30 * time.Second

// retryFailed reconnects, every interval until ctx ends, each server of
// fl that is failed with a Transient failure (only those are retried).
func retryFailed(ctx context.Context, fl *composition.Fleet, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, r := range fl.Servers() {
			if r.State == composition.StateFailed && r.Class == refusal.Transient {
				_ = fl.Reconnect(ctx, r.Name)
			}
		}
	}
}

// serveHTTP serves gw on opts.HTTP until ctx ends.
func serveHTTP(ctx context.Context, opts *Options, stateDir string, gw *composition.Gateway) error {
	token, tokenFile := "", filepath.Join(stateDir, TokenFile)
	if opts.NoToken {
		fmt.Fprintln(opts.IO.ErrOut, "mcpward serve: WARNING: --unsafe-no-token: any local program may call these servers (tests only)")
	} else {
		t, err := loadToken(stateDir)
		if err != nil {
			return err
		}
		token = t
	}
	ln, err := net.Listen("tcp", opts.HTTP)
	if err != nil {
		return fmt.Errorf("mcpward serve: cannot listen on %s", opts.HTTP)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	errOut := opts.IO.ErrOut
	fmt.Fprintf(errOut, "mcpward serve: listening on %s\n", url)
	hint := ""
	if token != "" {
		fmt.Fprintf(errOut, "mcpward serve: token file: %s (every request carries \"Authorization: Bearer TOKEN\", TOKEN its content)\n", tokenFile)
		entry, _, _ := ClientEntry("claude-code", "", nil, url, tokenFile)
		fmt.Fprintf(errOut, "mcpward serve: a client entry (%s=\"$(cat %s)\" in the client's environment; for another host: mcpward serve --http %s --print-config cursor|vscode|claude-code):\n%s",
			TokenEnv, shellLine([]string{tokenFile}), ln.Addr().String(), entry)
		hint = fmt.Sprintf("this mcpward serve wants the header \"Authorization: Bearer TOKEN\", TOKEN being the content of the file %s (mcpward serve --print-config HOST prints a client entry)", tokenFile)
	}
	if err := gw.ServeHTTPWith(ctx, ln, composition.ServeHTTPOptions{Token: token, TokenHint: hint}); err != nil {
		return fmt.Errorf("mcpward serve: the HTTP server stopped")
	}
	if ctx.Err() != nil {
		return cmdutil.ErrCancelled
	}
	return nil
}

// printConfig prints opts.PrintConfig's client entry on stdout, where it
// goes on stderr.
func printConfig(opts *Options, stateDir string) error {
	url, tokenFile := "", filepath.Join(stateDir, TokenFile)
	if opts.HTTP != "" {
		url = "http://" + opts.HTTP + "/mcp"
		if _, err := loadToken(stateDir); err != nil { // the file the entry's notes name exists
			return err
		}
	}
	program, err := os.Executable()
	if err != nil {
		program = "mcpward"
	}
	args := []string{"serve"}
	if opts.Name != "" {
		args = append(args, opts.Name)
	}
	if opts.Workspace != "" {
		args = append(args, "--workspace", opts.Workspace)
	}
	entry, notes, err := ClientEntry(opts.PrintConfig, program, args, url, tokenFile)
	if err != nil {
		return cmdutil.FlagErrorf("%s", err.Error())
	}
	fmt.Fprint(opts.IO.Out, entry)
	for _, n := range notes {
		fmt.Fprintln(opts.IO.ErrOut, "mcpward serve: "+n)
	}
	return nil
}

// loadToken returns the bearer token kept in stateDir, making it (32
// random bytes, hex; mode 0600) when absent, too short, not a regular
// file, or readable by others.
func loadToken(stateDir string) (string, error) {
	path := filepath.Join(stateDir, TokenFile)
	// A token file others may read is not trusted: a new one replaces it.
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 == 0 {
		if b, err := os.ReadFile(path); err == nil {
			if t := strings.TrimSpace(string(b)); len(t) >= 32 {
				return t, nil
			}
		}
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", fmt.Errorf("mcpward serve: the state directory cannot be made")
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("mcpward serve: no randomness for the token")
	}
	t := hex.EncodeToString(b[:])
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(t+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("mcpward serve: the token file cannot be written")
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("mcpward serve: the token file cannot be written")
	}
	return t, nil
}

// nopWriteCloser is a Writer whose Close does nothing (stdout is closed
// when the process ends).
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
