package composition

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/mcpsession"
	"github.com/mcpward/mcpward/adapters/stdiotransport"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/secret"
	"github.com/mcpward/mcpward/ports"
)

// The words of FailureDetail.Cause: what kind of network failure ended the
// latest attempt to reach an HTTP server.
const (
	// CauseRefused: the server's address refused the connection.
	CauseRefused = httptransport.CauseRefused
	// CauseDNS: the host name did not resolve.
	CauseDNS = httptransport.CauseDNS
	// CauseTimeout: connecting, the TLS handshake or a read timed out.
	CauseTimeout = httptransport.CauseTimeout
	// CauseTLS: the TLS handshake or certificate verification failed.
	CauseTLS = httptransport.CauseTLS
	// CauseReset: the peer reset or aborted the connection.
	CauseReset = httptransport.CauseReset
	// CauseEOF: the server closed the connection before a complete
	// response.
	CauseEOF = httptransport.CauseEOF
	// CauseUnreachable: no route to the host or its network.
	CauseUnreachable = httptransport.CauseUnreachable
	// CauseNetwork: any other network failure.
	CauseNetwork = httptransport.CauseNetwork
)

// FailureDetail is what a failed server's ServerStatus says about the
// failure beyond its Class and Reason, for a person to act on. It holds no
// secret and no text of the server's: fixed words, an exit status, and
// values as the definition's redacted projection shows them. Every field
// is "" when it does not apply.
type FailureDetail struct {
	// Exit is how the stdio server's process ended, when it ended on its
	// own during the latest attempt — a crash, a fatal error, an exit on a
	// missing API key —, as the OS reports it: "exit status 3",
	// "signal: killed", ... "" when it did not end, or ended because
	// mcpward stopped it.
	Exit string `json:"exit,omitempty"`
	// Program is the stdio server's program as the definition's projection
	// shows it (definition.Projection.Command: what a credential-shaped
	// variable expanded to replaced by a marker, literal credential shapes
	// masked), for every failed stdio server — program_not_found and
	// program_not_executable above all.
	Program string `json:"program,omitempty"`
	// Endpoint is "host:port" of the HTTP server's URL as the projection
	// shows it (the port always written), for every failed HTTP server.
	Endpoint string `json:"endpoint,omitempty"`
	// Cause is the kind of network failure that ended the latest attempt
	// to reach the HTTP server: one of the Cause* words ("refused", "dns",
	// "timeout", "tls", "reset", "eof", "unreachable", "network").
	Cause string `json:"cause,omitempty"`
	// Status is the HTTP status that ended the latest attempt to reach
	// the HTTP server (a 405 where a legacy SSE endpoint answered, a
	// 404 at a wrong path), 0 when none did.
	Status int `json:"status,omitempty"`
}

// diagnostics is what one Fleet's dialer saw of each server's latest
// connection attempt, by server name. Every method is safe for concurrent
// use: the supervisors dial from their own goroutines while a host reads.
type diagnostics struct {
	mu      sync.Mutex
	servers map[string]*serverDiag
}

// serverDiag is the record of one server.
type serverDiag struct {
	// Fixed when the server is added.
	program  string // the projection's command (stdio)
	endpoint string // host:port of the projection's URL (http)
	mask     secretMask
	// Of the latest attempt (reset by every Dial).
	cause   string
	status  int
	attempt *stdiotransport.Transport
	// The latest child this Fleet made for the server (ServerStderr).
	last *stdiotransport.Transport
}

func newDiagnostics() *diagnostics {
	return &diagnostics{servers: map[string]*serverDiag{}}
}

// add records server name, about to be connected from m, shown as p.
func (d *diagnostics) add(name string, m *definition.Materialized, p *definition.Projection) {
	sd := &serverDiag{mask: newSecretMask(m)}
	if p != nil {
		switch p.Transport {
		case definition.KindStdio:
			sd.program = p.Command
		default:
			sd.endpoint = endpointOf(p.URL)
		}
	}
	d.mu.Lock()
	d.servers[name] = sd
	d.mu.Unlock()
}

// update runs f on name's record under the lock, if there is one.
func (d *diagnostics) update(name string, f func(*serverDiag)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if sd := d.servers[name]; sd != nil {
		f(sd)
	}
}

// detail is the FailureDetail of name's latest attempt.
func (d *diagnostics) detail(name string) FailureDetail {
	var fd FailureDetail
	var attempt *stdiotransport.Transport
	d.update(name, func(sd *serverDiag) {
		fd = FailureDetail{Program: sd.program, Endpoint: sd.endpoint, Cause: sd.cause, Status: sd.status}
		attempt = sd.attempt
	})
	if attempt != nil {
		if st := attempt.Stats(); st.Exited && st.ExitedOnItsOwn {
			fd.Exit = st.ExitStatus
		}
	}
	return fd
}

// recording returns d as an mcpsession.Dialer that keeps rec up to date:
// every Dial starts a new attempt of its server, a stdio transport is kept
// as the attempt's (and the latest) child, and the network cause of every
// HTTP error the session classifies is noted.
func (d *Dialer) recording(rec *diagnostics) mcpsession.Dialer {
	return mcpsession.DialerFunc(func(ctx context.Context, t ports.Target) (*mcpsession.Conn, error) {
		name := t.ServerID
		rec.update(name, func(sd *serverDiag) { sd.cause, sd.status, sd.attempt = "", 0, nil })
		conn, err := d.Dial(ctx, t)
		if err != nil {
			return nil, err
		}
		if tr, ok := conn.Transport.(*stdiotransport.Transport); ok {
			rec.update(name, func(sd *serverDiag) { sd.attempt, sd.last = tr, tr })
		}
		if t.Kind == ports.TransportHTTP {
			note := func(classify func(error) *refusal.Error) func(error) *refusal.Error {
				if classify == nil {
					return nil
				}
				return func(err error) *refusal.Error {
					if c := httptransport.Cause(err); c != "" {
						rec.update(name, func(sd *serverDiag) { sd.cause = c })
					}
					if se := (*httptransport.StatusError)(nil); errors.As(err, &se) {
						rec.update(name, func(sd *serverDiag) { sd.status = se.Status })
					}
					return classify(err)
				}
			}
			conn.Classify = note(conn.Classify)
			conn.ClassifyConnect = note(conn.ClassifyConnect)
		}
		return conn, nil
	})
}

// ServerStderr returns the end of what the stdio server named name wrote
// to stderr (its whole process group) in the latest start this Fleet made
// of it: at most stdiotransport.StderrTailBytes bytes (16 KiB) and
// stdiotransport.StderrTailLines (100) whole lines, kept in memory only.
// Before it is returned, every secret value of the server's materialized
// definition is replaced by a marker — the value of a credential-shaped
// env or header key by secret.Redacted, what a credential-shaped variable
// expanded to by secret.RedactedVar(VAR), in the forms a program would
// print them (as is, line by line, JSON- and URL-escaped) —, and then
// every literal credential shape (ghp_…, sk-…, Bearer …, ...) is masked by
// secret.MaskLiterals. ok is false when this Fleet made no stdio transport
// for name (an HTTP server, a server it did not connect, an unknown name);
// the text may be empty when ok is true (nothing written, or the spawn
// failed).
//
// The text is the server's own output and untrusted. Masking removes the
// secrets mcpward knows of and guesses at others by their shape: a secret
// the server obtained elsewhere and of no recognisable shape may remain.
// It may hold invalid UTF-8 and terminal control sequences: sanitize it
// before writing it to a terminal. mcpward never puts it in an error, a
// ServerStatus, a status or a log line; a host shows it only on explicit
// request. Safe for concurrent use, also after Close.
func (f *Fleet) ServerStderr(name string) (string, bool) {
	if f.diag == nil {
		return "", false
	}
	var tr *stdiotransport.Transport
	var mask secretMask
	f.diag.update(name, func(sd *serverDiag) { tr, mask = sd.last, sd.mask })
	if tr == nil {
		return "", false
	}
	return mask.apply(tr.StderrTail()), true
}

// endpointOf returns "host:port" of the (projected) URL raw, the port
// always written (80 for http, 443 for https), or "" when raw does not
// parse as an http(s) URL with a host.
func endpointOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	port := u.Port()
	switch strings.ToLower(u.Scheme) {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
	default:
		return ""
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// maskValue is one secret text and the marker that replaces it.
type maskValue struct {
	text, marker string
}

// secretMask is the set of secret values of one materialized definition,
// longest first. Its zero value masks nothing but literal shapes.
type secretMask []maskValue

// newSecretMask collects the secret values of m: every value under a
// credential-shaped key (KeySecret) and every stretch a credential-shaped
// variable produced, each also line by line (a multi-line secret cut by
// the stderr bound must not show its other lines) and in its JSON- and
// URL-escaped forms.
func newSecretMask(m *definition.Materialized) secretMask {
	if m == nil {
		return nil
	}
	seen := map[string]bool{}
	var out secretMask
	add := func(text, marker string) {
		forms := []string{text}
		for l := range strings.SplitSeq(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
			forms = append(forms, l)
		}
		if b, err := json.Marshal(text); err == nil {
			forms = append(forms, string(b[1:len(b)-1]))
		}
		forms = append(forms, url.QueryEscape(text), url.PathEscape(text))
		for _, f := range forms {
			if f != "" && !seen[f] {
				seen[f] = true
				out = append(out, maskValue{text: f, marker: marker})
			}
		}
	}
	value := func(v definition.Value) {
		// The argument after a credential-shaped flag (--api-key VALUE) is
		// secret as a whole, as the projection shows it.
		if v.KeySecret || v.ArgSecret {
			add(v.Text, secret.Redacted)
		}
		for _, st := range v.Stretches {
			if st.Secret && st.Start < st.End && st.End <= len(v.Text) {
				add(v.Text[st.Start:st.End], secret.RedactedVar(st.Var))
			}
		}
	}
	value(m.Command)
	for _, a := range m.Args {
		value(a)
	}
	value(m.Cwd)
	value(m.URL)
	for _, k := range slices.Sorted(maps.Keys(m.Env)) {
		value(m.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.Headers)) {
		value(m.Headers[k])
	}
	slices.SortStableFunc(out, func(a, b maskValue) int { return len(b.text) - len(a.text) })
	return out
}

// apply returns text with every occurrence of every secret value replaced
// by its marker (overlapping occurrences merge into one marker, the
// longest value's), then every literal credential shape masked.
func (s secretMask) apply(text string) string {
	type span struct {
		start, end int
		marker     string
	}
	var spans []span
	for _, v := range s {
		for off := 0; ; {
			i := strings.Index(text[off:], v.text)
			if i < 0 {
				break
			}
			spans = append(spans, span{off + i, off + i + len(v.text), v.marker})
			off += i + 1
		}
	}
	if len(spans) > 0 {
		slices.SortStableFunc(spans, func(a, b span) int { return a.start - b.start })
		var b strings.Builder
		last := 0
		for i := 0; i < len(spans); {
			cur := spans[i]
			for i++; i < len(spans) && spans[i].start < cur.end; i++ {
				cur.end = max(cur.end, spans[i].end)
			}
			b.WriteString(text[last:cur.start])
			b.WriteString(cur.marker)
			last = cur.end
		}
		b.WriteString(text[last:])
		text = b.String()
	}
	return secret.MaskLiterals(text)
}
