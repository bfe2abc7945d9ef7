package httptransport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Reasons carried by the refusals of a HeaderHelper. None of them ever
// carries an argv element, an environment value, the helper's output or its
// stderr.
const (
	// ReasonHelperArgvInvalid: the helper's argv is empty, its program is
	// not an absolute path, or an element holds NUL. Class Config.
	ReasonHelperArgvInvalid = "header_helper_argv_invalid"
	// ReasonHelperNotAllowed: the helper's argv is not, element by element,
	// one of the host's allowed command lines. Class Refused.
	ReasonHelperNotAllowed = "header_helper_not_allowed"
	// ReasonHelperEnvInvalid: an HelperOptions.Env entry is not KEY=VALUE
	// with a non-empty key, holds NUL, or repeats a key. Class Config.
	ReasonHelperEnvInvalid = "header_helper_env_invalid"
	// ReasonHelperDirInvalid: HelperOptions.Dir is not absolute or holds
	// NUL. Class Config.
	ReasonHelperDirInvalid = "header_helper_dir_invalid"
	// ReasonHelperStartFailed: the helper could not be started. Class
	// AuthRequired.
	ReasonHelperStartFailed = "header_helper_start_failed"
	// ReasonHelperTimeout: the helper ran longer than its timeout and was
	// killed. Class Transient.
	ReasonHelperTimeout = "header_helper_timeout"
	// ReasonHelperFailed: the helper exited non-zero, died from a signal or
	// left its output pipe open. Class AuthRequired.
	ReasonHelperFailed = "header_helper_failed"
	// ReasonHelperOutputTooLarge: the helper wrote more than MaxOutput bytes
	// to stdout and was killed. Class AuthRequired.
	ReasonHelperOutputTooLarge = "header_helper_output_too_large"
	// ReasonHelperOutputInvalid: the helper's stdout is not exactly one
	// JSON object of distinct, valid header names to non-empty, valid string
	// values. Class AuthRequired.
	ReasonHelperOutputInvalid = "header_helper_output_invalid"
	// ReasonHelperOutputEmpty: the helper's stdout is the empty object.
	// Class AuthRequired: no request is ever sent without its headers.
	ReasonHelperOutputEmpty = "header_helper_output_empty"
	// ReasonHelperReservedHeader: the helper's output names a header the
	// transport or the protocol owns (see Reserved). Class AuthRequired.
	ReasonHelperReservedHeader = "header_helper_reserved_header"
	// ReasonHelperCanceled: the caller's context ended while it waited for
	// the helper. Class Transient; the helper's run itself goes on for the
	// other callers, bounded by its timeout.
	ReasonHelperCanceled = "header_helper_canceled"
	// ReasonHelperServerMismatch: the helper was asked about a server other
	// than HelperOptions.ServerID. Class AuthRequired.
	ReasonHelperServerMismatch = "header_helper_server_mismatch"
)

const (
	// DefaultHelperTimeout is the helper timeout when HelperOptions.Timeout
	// is 0 or negative.
	DefaultHelperTimeout = 10 * time.Second
	// DefaultHelperMaxOutput is the stdout cap, in bytes, when
	// HelperOptions.MaxOutput is 0 or negative.
	DefaultHelperMaxOutput = 64 << 10
	// helperWaitDelay bounds how long Wait waits for the output pipe after
	// the helper exited or was killed (a grandchild may hold it open).
	helperWaitDelay = time.Second
)

// HelperOptions configures a HeaderHelper. A nil *HelperOptions is the zero
// value, which allows no command line at all.
type HelperOptions struct {
	// Allowed is the host's allow-list of WHOLE command lines: a helper's
	// argv must equal one entry element by element (same program, same
	// arguments, same count). Allowing a program does not allow it with
	// other arguments.
	Allowed [][]string
	// Timeout bounds one run of the helper, after which it is killed; 0 or
	// negative means DefaultHelperTimeout.
	Timeout time.Duration
	// MaxOutput caps the helper's stdout in bytes; a helper writing more is
	// killed. 0 or negative means DefaultHelperMaxOutput.
	MaxOutput int
	// Env is the helper's whole environment, as KEY=VALUE entries with
	// distinct keys. nil or empty means an empty environment: the helper
	// never inherits the parent's environment.
	Env []string
	// Dir is the helper's working directory, an absolute path. "" means the
	// filesystem root, never the host's working directory.
	Dir string
	// ServerID is the server identity the helper is registered for. When
	// set, it is stamped on every refusal and a request or refusal for
	// another server is refused (ReasonHelperServerMismatch).
	ServerID string
}

// HeaderHelper is a ports.Authenticator whose headers come from running a
// host-allowed command line: an exact argv, never a shell line or a
// template, started with an explicit environment, empty stdin and discarded
// stderr, whose stdout must be exactly one JSON object mapping header names
// to string values.
//
// Use one HeaderHelper per connection (per Factory.Transport call). The
// helper runs once, on the first Headers call, and its parsed headers are
// cached and handed out as clones; it runs once more after the server
// refuses them, however many requests were refused together. A failed run
// is final for this HeaderHelper: every later Headers and Refused call
// returns its refusal, and no request is sent without headers.
//
// Coalescing: concurrent first Headers calls share one run; Refused calls
// arriving while a run is in flight share that run; a Refused call arriving
// after a re-run installed fresh headers that no request has been given yet
// is for an already-replaced credential and answers retry=true without
// running the helper again. Limitation: the port does not say which headers
// a refused request carried, so a refusal that arrives after the fresh
// headers have been handed out is taken as a refusal of those headers and
// runs the helper again.
//
// Errors are *refusal.Error values with the Reason constants above; they
// never carry the argv, an environment value, a header value or anything
// the helper wrote. Killing on timeout or overflow ends the direct child
// only; a grandchild it started is not terminated.
//
// HeaderHelper is safe for concurrent use.
type HeaderHelper struct {
	argv    []string
	env     []string // never nil
	dir     string
	timeout time.Duration
	maxOut  int
	server  string

	mu        sync.Mutex
	cur       http.Header    // the current headers; nil until obtained
	gen       uint64         // successful runs so far
	handedOut bool           // cur has been given to a caller
	failed    *refusal.Error // a failed run; final
	flight    *helperFlight  // the run in progress, or nil
}

var _ ports.Authenticator = (*HeaderHelper)(nil)

// helperFlight is one run of the helper shared by every caller waiting on
// it. err is written before done is closed.
type helperFlight struct {
	done chan struct{}
	err  *refusal.Error
}

// NewHeaderHelper returns a HeaderHelper for argv, or a *refusal.Error:
// Class Config with ReasonHelperArgvInvalid (empty argv, a program that is
// not an absolute path, NUL in any element), ReasonHelperEnvInvalid or
// ReasonHelperDirInvalid; Class Refused with ReasonHelperNotAllowed when
// argv is not exactly one of opts.Allowed. A definition whose helper is
// refused stays listed and refused by name: the caller must not connect it
// with its static headers alone. Nothing is run here; argv and opts are
// copied.
func NewHeaderHelper(argv []string, opts *HelperOptions) (*HeaderHelper, error) {
	if opts == nil {
		opts = &HelperOptions{}
	}
	server := opts.ServerID
	refuse := func(class refusal.Class, reason string) (*HeaderHelper, error) {
		return nil, refusal.New(class, reason, server)
	}
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return refuse(refusal.Config, ReasonHelperArgvInvalid)
	}
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return refuse(refusal.Config, ReasonHelperArgvInvalid)
		}
	}
	if !slices.ContainsFunc(opts.Allowed, func(line []string) bool { return slices.Equal(line, argv) }) {
		return refuse(refusal.Refused, ReasonHelperNotAllowed)
	}
	env := make([]string, 0, len(opts.Env))
	seen := make(map[string]bool, len(opts.Env))
	for _, kv := range opts.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.IndexByte(kv, 0) >= 0 {
			return refuse(refusal.Config, ReasonHelperEnvInvalid)
		}
		if runtime.GOOS == "windows" {
			k = strings.ToUpper(k)
		}
		if seen[k] {
			return refuse(refusal.Config, ReasonHelperEnvInvalid)
		}
		seen[k] = true
		env = append(env, kv)
	}
	dir := opts.Dir
	if dir == "" {
		dir = string(filepath.Separator)
	} else if !filepath.IsAbs(dir) || strings.IndexByte(dir, 0) >= 0 {
		return refuse(refusal.Config, ReasonHelperDirInvalid)
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultHelperTimeout
	}
	maxOut := opts.MaxOutput
	if maxOut <= 0 {
		maxOut = DefaultHelperMaxOutput
	}
	return &HeaderHelper{
		argv:    slices.Clone(argv),
		env:     env,
		dir:     dir,
		timeout: timeout,
		maxOut:  maxOut,
		server:  server,
	}, nil
}

// Headers implements ports.Authenticator. It returns a clone of the cached
// headers, running the helper first when none are cached (concurrent
// callers share one run). A failure is a *refusal.Error: Class Transient
// for ReasonHelperTimeout and ReasonHelperCanceled, Class AuthRequired for
// every other Reason.
func (h *HeaderHelper) Headers(ctx context.Context, r ports.AuthRequest) (http.Header, error) {
	if h.server != "" && r.ServerID != h.server {
		return nil, h.stamp(refusal.New(refusal.AuthRequired, ReasonHelperServerMismatch, ""), r.ServerID, r.Origin)
	}
	for {
		h.mu.Lock()
		f := h.flight
		if f == nil {
			switch {
			case h.failed != nil:
				e := h.failed
				h.mu.Unlock()
				return nil, h.stamp(e, r.ServerID, r.Origin)
			case h.cur != nil:
				h.handedOut = true
				c := h.cur.Clone()
				h.mu.Unlock()
				return c, nil
			}
			f = h.startLocked(ctx)
		}
		h.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, h.stamp(refusal.New(refusal.Transient, ReasonHelperCanceled, ""), r.ServerID, r.Origin)
		}
	}
}

// Refused implements ports.Authenticator. It runs the helper once more and
// returns retry=true when fresh headers are ready; callers refused together
// share one run (see the type's comment for how they are coalesced). When
// the run fails it returns (false, the run's *refusal.Error), and so does
// every later call.
func (h *HeaderHelper) Refused(ctx context.Context, r ports.AuthRefusal) (bool, error) {
	if h.server != "" && r.ServerID != h.server {
		return false, h.stamp(refusal.New(refusal.AuthRequired, ReasonHelperServerMismatch, ""), r.ServerID, r.Origin)
	}
	h.mu.Lock()
	f := h.flight
	if f == nil {
		switch {
		case h.failed != nil:
			e := h.failed
			h.mu.Unlock()
			return false, h.stamp(e, r.ServerID, r.Origin)
		case h.gen > 1 && !h.handedOut:
			// A re-run replaced the credential and nobody has been given
			// the new one yet, so the refused request carried an old one.
			h.mu.Unlock()
			return true, nil
		}
		f = h.startLocked(ctx)
	}
	h.mu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
		return false, h.stamp(refusal.New(refusal.Transient, ReasonHelperCanceled, ""), r.ServerID, r.Origin)
	}
	if f.err != nil {
		return false, h.stamp(f.err, r.ServerID, r.Origin)
	}
	return true, nil
}

// startLocked starts a run shared by every caller until it ends. The run
// is detached from ctx's cancellation (a caller giving up must not fail the
// others) and bounded by the helper's timeout. h.mu is held.
func (h *HeaderHelper) startLocked(ctx context.Context) *helperFlight {
	f := &helperFlight{done: make(chan struct{})}
	h.flight = f
	runCtx := context.WithoutCancel(ctx)
	go func() {
		hdr, err := h.run(runCtx)
		h.mu.Lock()
		if err != nil {
			h.failed, h.cur = err, nil
		} else {
			h.cur, h.handedOut = hdr, false
			h.gen++
		}
		f.err = err
		h.flight = nil
		h.mu.Unlock()
		close(f.done)
	}()
	return f
}

// run runs the helper once and parses its output.
func (h *HeaderHelper) run(parent context.Context) (http.Header, *refusal.Error) {
	ctx, cancel := context.WithTimeout(parent, h.timeout)
	defer cancel()
	out := &capWriter{max: h.maxOut, cancel: cancel}
	cmd := exec.CommandContext(ctx, h.argv[0])
	cmd.Path = h.argv[0]
	cmd.Args = slices.Clone(h.argv)
	cmd.Env = append(make([]string, 0, len(h.env)), h.env...) // non-nil: nil would inherit
	cmd.Dir = h.dir
	cmd.Stdin = nil  // the null device
	cmd.Stderr = nil // the null device: never read, never published
	cmd.Stdout = out
	cmd.WaitDelay = helperWaitDelay
	if err := cmd.Start(); err != nil {
		return nil, refusal.New(refusal.AuthRequired, ReasonHelperStartFailed, "")
	}
	werr := cmd.Wait()
	switch {
	case out.over:
		return nil, refusal.New(refusal.AuthRequired, ReasonHelperOutputTooLarge, "")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, refusal.New(refusal.Transient, ReasonHelperTimeout, "")
	case werr != nil:
		return nil, refusal.New(refusal.AuthRequired, ReasonHelperFailed, "")
	}
	hdr, reason := parseHelperOutput(out.buf)
	if reason != "" {
		return nil, refusal.New(refusal.AuthRequired, reason, "")
	}
	return hdr, nil
}

// stamp returns a copy of e carrying the server id (h's, else the
// caller's) and origin.
func (h *HeaderHelper) stamp(e *refusal.Error, server, origin string) *refusal.Error {
	c := *e
	c.Server = h.server
	if c.Server == "" {
		c.Server = server
	}
	c.Origin = origin
	return &c
}

// capWriter keeps at most max bytes; a write beyond it marks over, cancels
// the run (killing the helper) and fails, which makes os/exec close the
// pipe.
type capWriter struct {
	buf    []byte
	max    int
	over   bool
	cancel context.CancelFunc
}

var errHelperOutputCap = errors.New("header helper output cap")

func (w *capWriter) Write(p []byte) (int, error) {
	if w.over || len(p) > w.max-len(w.buf) {
		w.over = true
		w.cancel()
		return 0, errHelperOutputCap
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// parseHelperOutput parses a helper's stdout strictly: valid UTF-8 holding
// exactly one JSON object (whitespace around it allowed, nothing else),
// whose keys are valid header names, distinct case-insensitively and not
// Reserved, and whose values are non-empty strings without control bytes
// (tab excepted). It returns the canonical headers and "", or nil and the
// Reason of the first rule broken.
func parseHelperOutput(b []byte) (http.Header, string) {
	if !utf8.Valid(b) {
		return nil, ReasonHelperOutputInvalid
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, ReasonHelperOutputInvalid
	}
	h := http.Header{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, ReasonHelperOutputInvalid
		}
		k, ok := kt.(string)
		if !ok {
			return nil, ReasonHelperOutputInvalid
		}
		vt, err := dec.Token()
		if err != nil {
			return nil, ReasonHelperOutputInvalid
		}
		v, ok := vt.(string)
		if !ok || !validName(k) {
			return nil, ReasonHelperOutputInvalid
		}
		if Reserved(k) {
			return nil, ReasonHelperReservedHeader
		}
		c := http.CanonicalHeaderKey(k)
		if _, dup := h[c]; dup || v == "" || !validValue(v) {
			return nil, ReasonHelperOutputInvalid
		}
		h[c] = []string{v}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, ReasonHelperOutputInvalid
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ReasonHelperOutputInvalid
	}
	if len(h) == 0 {
		return nil, ReasonHelperOutputEmpty
	}
	return h, ""
}
