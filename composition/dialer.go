package composition

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/mcpsession"
	"github.com/mcpward/mcpward/adapters/stdiotransport"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/secret"
	"github.com/mcpward/mcpward/ports"
)

// Reasons of the refusals a Dialer makes itself (the transports' own
// reasons pass through unchanged).
const (
	// ReasonTransportUnsupported: the target's Kind is neither http nor
	// stdio. Class Config.
	ReasonTransportUnsupported = "transport_unsupported"
	// ReasonConnectionClosed: the stdio server closed its output (it
	// exited, or closed stdout) after it had completed initialize, so the
	// call or the session failed: a crash after a healthy start. Class
	// Transient (a new process may well run).
	ReasonConnectionClosed = "connection_closed"
	// ReasonServerExited: the stdio server's process ended (exited, was
	// killed by a signal mcpward did not send, or closed its output) before
	// it completed initialize. Class Config: a process that cannot get
	// through its start — a mistyped npx package, a missing API key, a
	// program that is no MCP server — ends the same way each time, so it is
	// not retried (a retry would only spawn, and maybe download, it again);
	// the fix is in its definition or environment. The server's result
	// carries its exit status (FailureDetail.Exit) and Fleet.ServerStderr
	// its last words.
	ReasonServerExited = "server_exited"
	// ReasonProgramNotFound: starting the stdio server failed because its
	// program does not exist (a failure the stdio transport did not
	// classify itself). Class Config.
	ReasonProgramNotFound = "program_not_found"
	// ReasonSpawnFailed: starting the stdio server failed otherwise. Class
	// Transient.
	ReasonSpawnFailed = "spawn_failed"
)

// Dialer admits and constructs the transport of one target: it implements
// mcpsession.Dialer over adapters/httptransport and adapters/stdiotransport.
// Admission comes first: for HTTP the egress policy (URL now, every address
// at dial time) and the authentication decision; for stdio the process
// authority. Nothing is connected or spawned by Dial itself: the session
// connects Conn.Transport exactly once.
//
// A Dialer is immutable and safe for concurrent use.
type Dialer struct {
	http  *httptransport.Factory
	stdio *stdiotransport.Launcher
	auth  *Authentication
}

var _ mcpsession.Dialer = (*Dialer)(nil)

// newHTTPFactory returns the HTTP transport factory of cfg: cfg.Egress
// (nil means core/egress's strict default: https to public addresses, http
// to loopback only) and cfg.HTTP (nil means httptransport's strict
// defaults). It is a Wire provider.
func newHTTPFactory(cfg Config) *httptransport.Factory {
	policy := cfg.Egress
	if policy == nil {
		policy = egress.Default()
	}
	return httptransport.New(policy, cfg.HTTP)
}

// newLauncher returns the stdio launcher of cfg: cfg.Authority (nil means
// every launch is refused with ReasonNoProcessAuthority) and cfg.Stdio
// (nil means stdiotransport's defaults). It is a Wire provider.
func newLauncher(cfg Config) *stdiotransport.Launcher {
	return stdiotransport.New(neutralAuthority{inner: processAuthority(cfg)}, cfg.Stdio)
}

// newDialer returns a Dialer building HTTP transports with f, stdio
// transports with l, and authenticating HTTP connections as auth decides
// (auth must be the Authentication the Host evaluates with). It panics when
// any argument is nil. It is a Wire provider.
func newDialer(f *httptransport.Factory, l *stdiotransport.Launcher, auth *Authentication) *Dialer {
	if f == nil || l == nil || auth == nil {
		panic("composition: newDialer needs a factory, a launcher and an authentication")
	}
	return &Dialer{http: f.WithOnChallenge(auth.recordChallenge), stdio: l, auth: auth}
}

// Dial admits t and constructs its transport. Errors are *refusal.Error
// values carrying t.ServerID and never a URL path or query, a header value,
// argv, an environment value or stderr text:
//
//   - http: the authentication refusals of Authentication
//     (ReasonAuthNotDecided, ReasonOAuthSignInUnavailable,
//     ReasonHeaderHelperNotAllowed, ...), then those of
//     httptransport.Factory.Transport (the egress policy's own reasons,
//     Class Refused, for a URL it refuses: nothing is connected);
//   - stdio: those of stdiotransport.Launcher.Transport (the authority's
//     refusal, the cwd and program checks), and ReasonWorkdirFailed when
//     the neutral working directory of a managed, user or plugin server
//     without cwd could not be made (workdir.go);
//   - any other Kind: Class Config, ReasonTransportUnsupported.
//
// The Conn it returns:
//
//   - http: Origin is "scheme://host:port" of the URL (port always
//     written); Classify is httptransport.Classify for this server and
//     origin, except that a 401 without an authenticator whose challenge
//     was Bearer is Reason oauth.ReasonSignInRequired in a deployment
//     with Config.OAuth (challenges.go); Trace is httptransport.WithTraceparent, and TraceMeta
//     is set for an origin the transport sends a traceparent to (Options.TraceOrigins); Release lets go
//     of the connections this Host's transports share per origin (the
//     last Conn of an origin to be released closes its idle connections;
//     see httptransport.Factory.Transport); Abort is a no-op (the SDK cancels an
//     abandoned call's POST and sends notifications/cancelled, so the
//     session stays up); InboundFilter is the transport's SetInboundFilter;
//     WithTool is httptransport.WithTool (Mcp-Param-* headers).
//   - stdio: Origin is ""; Abort kills the child's process group at once
//     (stdiotransport.Transport.Kill); Classify maps the transport's errors
//     (see classifyStdio) and ClassifyConnect those of initialize (the
//     child's output ending there is ReasonServerExited); Trace is nil;
//     Release closes the transport, reaping the child within the
//     transport's bound, then removes the server's neutral working
//     directory if it has one; InboundFilter is
//     stdiotransport.Transport.SetInboundFilter.
func (d *Dialer) Dial(ctx context.Context, t ports.Target) (*mcpsession.Conn, error) {
	switch t.Kind {
	case ports.TransportHTTP:
		return d.dialHTTP(ctx, t)
	case ports.TransportStdio:
		return d.dialStdio(ctx, t)
	}
	return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonTransportUnsupported, Server: t.ServerID,
		Detail: "the target's transport is neither http nor stdio"}
}

// admit runs the admission Dial runs before constructing a transport, and
// nothing more: for http the URL's shape and the egress policy's AdmitURL
// (pure: no resolver), for stdio the process authority and the checks of
// the launch against its grant (the program looked up on the child's
// PATH, the cwd; file-system reads only). Authentication is not part of
// it (Evaluate decides that itself). Errors are those of Dial.
func (d *Dialer) admit(ctx context.Context, t ports.Target) error {
	switch t.Kind {
	case ports.TransportHTTP:
		return d.http.Admit(ctx, t)
	case ports.TransportStdio:
		if needsNeutralDir(t) {
			dir, err := makeNeutralDir(t.ServerID)
			if err != nil {
				return err
			}
			// Removed after the admission: here, or by the Fleet whose
			// evaluation this is, beside its connects (workdir.go).
			defer func() {
				if !keepAdmissionDir(ctx, t.ServerID, dir) {
					removeNeutralDir(dir)
				}
			}()
			t.Cwd = dir
		}
		return d.stdio.Admit(ctx, t)
	}
	return &refusal.Error{Class: refusal.Config, Reason: ReasonTransportUnsupported, Server: t.ServerID,
		Detail: "the target's transport is neither http nor stdio"}
}

func (d *Dialer) dialHTTP(ctx context.Context, t ports.Target) (*mcpsession.Conn, error) {
	auth, err := d.auth.authenticator(t)
	if err != nil {
		return nil, err
	}
	if auth == nil {
		auth = d.auth.signedInAuthenticator(ctx, t)
	}
	tr, err := d.http.Transport(ctx, t, auth)
	if err != nil {
		return nil, err
	}
	origin := originOf(t.URL)
	server := t.ServerID
	return &mcpsession.Conn{
		Transport: tr,
		Origin:    origin,
		Classify: func(err error) *refusal.Error {
			return d.auth.signInRequired(t, httptransport.Classify(err, server, origin))
		},
		Trace:     httptransport.WithTraceparent,
		TraceMeta: d.http.TracesTo(origin),
		// The SDK cancels an abandoned POST and sends
		// notifications/cancelled itself: the session stays up.
		Abort:         func() {},
		Release:       tr.CloseIdleConnections,
		InboundFilter: tr.SetInboundFilter,
		WithTool:      httptransport.WithTool,
		Mask:          targetMask(t),
	}, nil
}

func (d *Dialer) dialStdio(ctx context.Context, t ports.Target) (*mcpsession.Conn, error) {
	neutral := ""
	if needsNeutralDir(t) {
		// The directory this server's launch was admitted in by the
		// Fleet's evaluation, when this is its first launch; else a
		// fresh one (workdir.go).
		dir := takeLaunchDir(ctx, t.ServerID)
		if dir == "" {
			var err error
			if dir, err = makeNeutralDir(t.ServerID); err != nil {
				return nil, err
			}
		}
		neutral, t.Cwd = dir, dir
	}
	tr, err := d.stdio.Transport(ctx, t)
	if err != nil {
		removeNeutralDir(neutral)
		return nil, err
	}
	server := t.ServerID
	return &mcpsession.Conn{
		Transport:       tr,
		Classify:        func(err error) *refusal.Error { return classifyStdio(err, tr, server) },
		ClassifyConnect: func(err error) *refusal.Error { return classifyStdioConnect(err, tr, server) },
		Abort:           func() { _ = tr.Kill() },
		Release: func() {
			_ = tr.Close()
			removeNeutralDir(neutral)
		},
		InboundFilter: tr.SetInboundFilter,
		Mask:          targetMask(t),
	}, nil
}

// minTargetMask is the shortest definition value targetMask hides: a
// shorter one would mangle the message's words and hide nothing.
const minTargetMask = 4

// targetMask returns the mask mcpsession runs over a server's own error
// message before a refusal's Detail keeps it: every env and header value
// of t (each header value also word by word after its first, so
// "Bearer TOKEN" hides TOKEN), and every argument after a credential-shaped flag, are
// replaced by secret.Redacted, longest first. Not only credential-shaped
// keys: a server echoing its own configuration back is told nothing new,
// but a log or an audit record would be.
func targetMask(t ports.Target) func(string) string {
	var vals []string
	add := func(v string) {
		if len(v) >= minTargetMask {
			vals = append(vals, v)
		}
	}
	for _, v := range t.Env {
		add(v)
	}
	for _, v := range t.Headers {
		add(v)
		if f := strings.Fields(v); len(f) > 1 {
			for _, w := range f[1:] { // "Bearer" itself is no secret
				add(w)
			}
		}
	}
	for i, a := range t.Args {
		if flag, v, ok := strings.Cut(a, "="); ok && secret.IsCredentialFlag(flag) {
			add(v)
		} else if secret.IsCredentialFlag(a) && i+1 < len(t.Args) {
			add(t.Args[i+1])
		}
	}
	if len(vals) == 0 {
		return nil
	}
	slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) })
	return func(msg string) string {
		for _, v := range vals {
			msg = strings.ReplaceAll(msg, v, secret.Redacted)
		}
		return msg
	}
}

// stdioErr is what classifyStdio needs of a stdio transport.
type stdioErr interface{ Err() error }

// stdioExit is what classifyStdioConnect needs of a stdio transport.
type stdioExit interface {
	stdioErr
	WaitExited(d time.Duration) bool
}

// serverExitWait bounds how long classifyStdioConnect waits for a child
// whose output ended during initialize to be reaped, so that its exit
// status is known when the failure is reported.
const serverExitWait = 2 * time.Second

// classifyStdioConnect maps an error of the initialize handshake over the
// stdio transport tr: the server's output ending there (EOF, a broken
// pipe) is Class Config, ReasonServerExited, after waiting up to
// serverExitWait for the child to be reaped; everything else is
// classifyStdio's.
func classifyStdioConnect(err error, tr stdioExit, server string) *refusal.Error {
	r := classifyStdio(err, tr, server)
	if r == nil || r.Reason != ReasonConnectionClosed {
		return r
	}
	tr.WaitExited(serverExitWait)
	return &refusal.Error{Class: refusal.Config, Reason: ReasonServerExited, Server: server,
		Detail: "the server process ended before completing initialize"}
}

// classifyStdio maps an error a session over the stdio transport tr
// returned to a *refusal.Error stamped with server, copying nothing of
// err's text:
//
//   - nil and context errors give nil (the caller checks its ctx);
//   - the error that made the transport end the connection (tr.Err(): the
//     receive cap, a malformed message; Class Protocol) wins;
//   - a *refusal.Error in err's chain (the transport's own: child_killed,
//     transport_closed, spawn failures) is returned as is;
//   - the errors of a peer that has gone (EOF, a closed or broken pipe) are
//     Class Transient, ReasonConnectionClosed;
//   - an exec failure is Class Config, ReasonProgramNotFound, or Class
//     Transient, ReasonSpawnFailed;
//   - anything else (a JSON-RPC error reply, the SDK's own
//     connection-closed sentinel) gives nil, so mcpsession's own mapping
//     decides.
func classifyStdio(err error, tr stdioErr, server string) *refusal.Error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	stamp := func(r *refusal.Error) *refusal.Error {
		c := *r
		if c.Server == "" {
			c.Server = server
		}
		return &c
	}
	var ref *refusal.Error
	switch {
	case tr != nil && errors.As(tr.Err(), &ref):
		return stamp(ref)
	case errors.As(err, &ref):
		return stamp(ref)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.ErrClosedPipe),
		errors.Is(err, os.ErrClosed), errors.Is(err, net.ErrClosed), errors.Is(err, syscall.EPIPE):
		return &refusal.Error{Class: refusal.Transient, Reason: ReasonConnectionClosed, Server: server,
			Detail: "the server process closed its connection"}
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return &refusal.Error{Class: refusal.Config, Reason: ReasonProgramNotFound, Server: server,
			Detail: "the server's program was not found"}
	}
	var ee *exec.Error
	var pe *fs.PathError
	if errors.As(err, &ee) || errors.As(err, &pe) {
		return &refusal.Error{Class: refusal.Transient, Reason: ReasonSpawnFailed, Server: server,
			Detail: "the server process could not be started"}
	}
	return nil
}

// originOf returns "scheme://host:port" of an http(s) URL, with the
// scheme and host lower-cased and the port always written (80 and 443 by
// default), exactly as httptransport stamps its refusals and AuthRequests;
// or "" when raw does not parse, is not http(s), or its host is neither an
// IP literal without a zone nor a name of letters, digits, '.', '-' and
// '_'. It never carries userinfo, a path, a query or a fragment.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch {
	case scheme != "http" && scheme != "https":
		return ""
	case port == "" && scheme == "http":
		port = "80"
	case port == "" && scheme == "https":
		port = "443"
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return ""
		}
	} else if !hostname(host) {
		return ""
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// hostname reports whether h is made of letters, digits, '.', '-' and
// '_' only (the egress policy has judged the name itself).
func hostname(h string) bool {
	if h == "" {
		return false
	}
	for _, r := range h {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != '-' && r != '_' {
			return false
		}
	}
	return true
}

// targetOf returns the ports.Target of a materialized definition with
// fingerprint fp. Its values may hold secrets: it is never printed.
func targetOf(m *definition.Materialized, fp string) ports.Target {
	d := m.Def
	t := ports.Target{
		ServerID:    d.Name,
		Tier:        d.Tier,
		Origin:      d.Origin,
		Fingerprint: fp,
	}
	switch d.Kind {
	case definition.KindHTTP:
		t.Kind = ports.TransportHTTP
		t.URL = m.URL.Text
		t.Headers = texts(m.Headers)
	case definition.KindStdio:
		t.Kind = ports.TransportStdio
		t.Command = m.Command.Text
		if m.Args != nil {
			t.Args = make([]string, len(m.Args))
			for i, a := range m.Args {
				t.Args[i] = a.Text
			}
		}
		t.Env = texts(m.Env)
		t.Cwd = m.Cwd.Text
	default:
		t.Kind = ports.TransportKind(d.Kind)
	}
	return t
}

// texts returns the Text of every value of m, nil for nil.
func texts(m map[string]definition.Value) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v.Text
	}
	return out
}
