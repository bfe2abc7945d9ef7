// Package progress shows, on stderr, what the CLI is waiting for: each
// server's connection as it starts, retries and ends, and a call that
// takes long. On a terminal that can be redrawn it keeps a live block of
// per-server status lines with their elapsed time (redrawn in place at
// most ten times a second, erased at the end); elsewhere it writes plain
// lines, sparsely. Stdout is never touched.
package progress

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
)

// Redraw is the interval of the live block's redraws (ten a second).
const Redraw = 100 * time.Millisecond

// noteSchedule is when a plain "still ..." note is written, after the
// first one: then every minute.
var noteSchedule = []time.Duration{10 * time.Second, 30 * time.Second, time.Minute}

// nextNote returns the first time of the schedule after d.
func nextNote(d time.Duration) time.Duration {
	for _, s := range noteSchedule {
		if s > d {
			return s
		}
	}
	return d.Truncate(time.Minute) + time.Minute
}

// Options configure a Reporter.
type Options struct {
	// Out is where progress goes (stderr).
	Out io.Writer
	// Clock is the time; nil means the system clock.
	Clock clock.Clock
	// Live redraws a status block in place (a terminal that allows it).
	Live bool
	// Width is the terminal's width (Live); 0 means 80.
	Width int
	// Quiet, when positive, says nothing in plain mode about a server
	// until it has been connecting that long, and writes no outcome line
	// (call: its own output says how it ended).
	Quiet time.Duration
	// ConnectTimeout is the --connect-timeout value the timeout note
	// names; 0 means no limit was set.
	ConnectTimeout time.Duration
}

// Reporter follows the servers of one Connect. Its methods are safe for
// concurrent use; OnStatus never blocks on the output in Live mode.
type Reporter struct {
	o Options

	mu       sync.Mutex
	servers  map[string]*entry
	order    []string
	pending  []string // outcome lines not yet written (Live)
	shown    []string // the block on screen (Live)
	finished bool

	stop, done chan struct{}
}

// entry is one server's progress.
type entry struct {
	name         string // safe for the terminal
	state        supervisor.State
	started      time.Time // first Connecting
	attemptStart time.Time // latest Connecting
	attemptEnd   time.Time // when the latest attempt failed (Backoff, Failed)
	failures     int
	lastErr      *refusal.Error
	announced    bool          // plain: a line about it was written
	note         time.Duration // plain: when the next "still connecting" note is due
	outcome      bool          // its outcome line was written (or queued)
}

// New returns a Reporter; Start begins its clock-driven output.
func New(o Options) *Reporter {
	if o.Clock == nil {
		o.Clock = clock.Real()
	}
	if o.Width <= 0 {
		o.Width = 80
	}
	return &Reporter{o: o, servers: map[string]*entry{}}
}

// Start runs the ticker that redraws the live block (Live) or writes the
// sparse "still connecting" notes (plain) until Finish.
func (r *Reporter) Start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop != nil || r.finished {
		return
	}
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	interval := time.Second
	if r.o.Live {
		interval = Redraw
	}
	t := r.o.Clock.NewTicker(interval)
	go func() {
		defer close(r.done)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C():
				r.Tick()
			}
		}
	}()
}

// OnStatus is the ConnectOptions.OnStatus of the CLI: it records st and,
// in plain mode, writes the line it calls for at once.
func (r *Reporter) OnStatus(name string, st supervisor.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	e := r.servers[name]
	if e == nil {
		e = &entry{name: termsafe.Line(name), state: supervisor.Idle}
		r.servers[name] = e
		r.order = append(r.order, name)
	}
	now := r.o.Clock.Now()
	prev := e.state
	e.state = st.State
	if st.Err != nil {
		e.lastErr = st.Err
	}
	switch st.State {
	case supervisor.Connecting:
		if prev == supervisor.Connecting {
			return
		}
		e.attemptStart = now
		if e.started.IsZero() {
			e.started = now
			e.note = nextNote(0)
			if r.o.Quiet > 0 {
				e.note = r.o.Quiet
			} else if !r.o.Live {
				e.announced = true
				r.plain("connecting " + e.name + "…")
			}
		}
	case supervisor.Backoff:
		if prev == supervisor.Backoff {
			return
		}
		e.failures++
		e.attemptEnd = now
		if !r.o.Live && e.announced {
			r.plain(fmt.Sprintf("%s: attempt %d failed (%s); retrying…", e.name, e.failures, errWords(st.Err)))
		}
	case supervisor.Ready:
		n := 0
		if st.Catalog != nil {
			n = len(st.Catalog.Tools)
		}
		r.outcome(e, fmt.Sprintf("%s: connected (%d tool%s)", e.name, n, view.Plural(n)))
	case supervisor.Failed:
		e.attemptEnd = now
		reason := ""
		if st.Err != nil {
			reason = st.Err.Reason
		}
		r.outcome(e, e.name+": failed ("+errWords(st.Err)+")"+r.timeoutNote(e, reason, now)+view.Hint(name, reason))
	}
}

// errWords is "class reason" of err, "unknown" when nil.
func errWords(err *refusal.Error) string {
	if err == nil {
		return "unknown"
	}
	return err.Class.String() + " " + termsafe.Line(err.Reason)
}

// timeoutNote is what a failure line adds for a connect timeout: the
// elapsed time of the last attempt and the flag that bounds it.
func (r *Reporter) timeoutNote(e *entry, reason string, now time.Time) string {
	if e.attemptStart.IsZero() {
		return ""
	}
	elapsed := now.Sub(e.attemptStart)
	if !IsTimeout(reason, supervisor.ReasonConnectTimeout, elapsed, r.o.ConnectTimeout) {
		return ""
	}
	return ": " + TimedOut(elapsed, "--connect-timeout", r.o.ConnectTimeout)
}

// IsTimeout reports whether a failure with reason, after elapsed, is the
// timeout whose own reason word is named: that word, or a deadline's
// reason ("timeout", "deadline_exceeded") once elapsed has reached limit.
func IsTimeout(reason, named string, elapsed, limit time.Duration) bool {
	switch reason {
	case named:
		return true
	case supervisor.ReasonTimeout, "deadline_exceeded":
		return limit > 0 && elapsed >= limit
	}
	return false
}

// TimedOut is the words of a timeout: "timed out after 30.1s
// (--connect-timeout 30s)"; without a limit the flag part is left out.
func TimedOut(elapsed time.Duration, flag string, limit time.Duration) string {
	s := "timed out after " + view.Elapsed(elapsed)
	if limit > 0 {
		s += " (" + flag + " " + limit.String() + ")"
	}
	return s
}

// outcome writes (plain) or queues (Live) e's outcome line, once.
func (r *Reporter) outcome(e *entry, line string) {
	if e.outcome {
		return
	}
	e.outcome = true
	if r.o.Quiet > 0 {
		return
	}
	if r.o.Live {
		r.pending = append(r.pending, line)
		return
	}
	r.plain(line)
}

// plain writes one line. r.mu is held.
func (r *Reporter) plain(line string) { fmt.Fprintln(r.o.Out, line) }

// Tick does the clock-driven output: in Live mode it writes the queued
// outcome lines above the block and redraws the block when it changed; in
// plain mode it writes the "still connecting" notes that are due.
func (r *Reporter) Tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	now := r.o.Clock.Now()
	if r.o.Live {
		if lines := r.block(now); len(r.pending) > 0 || !slices.Equal(lines, r.shown) {
			r.redraw(lines)
		}
		return
	}
	for _, name := range r.order {
		e := r.servers[name]
		if e.outcome || e.started.IsZero() || !inProgress(e.state) {
			continue
		}
		elapsed := now.Sub(e.started)
		if elapsed < e.note {
			continue
		}
		e.announced = true
		r.plain(fmt.Sprintf("still connecting %s (%s)…", e.name, elapsed.Truncate(time.Second)))
		e.note = nextNote(elapsed)
	}
}

func inProgress(s supervisor.State) bool {
	return s == supervisor.Connecting || s == supervisor.Backoff
}

// block is the live block's lines at now: one per server in progress.
func (r *Reporter) block(now time.Time) []string {
	var lines []string
	for _, name := range r.order {
		e := r.servers[name]
		if e.outcome || e.started.IsZero() || !inProgress(e.state) {
			continue
		}
		elapsed := now.Sub(e.started).Truncate(time.Second)
		line := "connecting " + e.name + "… " + elapsed.String()
		if e.state == supervisor.Backoff || e.failures > 0 {
			line = fmt.Sprintf("connecting %s… %s (attempt %d failed: %s)", e.name, elapsed, e.failures, errWords(e.lastErr))
		}
		lines = append(lines, termsafe.Truncate(line, r.o.Width-1))
	}
	return lines
}

// redraw replaces the block on screen by lines, writing the queued
// outcome lines above it. r.mu is held.
func (r *Reporter) redraw(lines []string) {
	var b strings.Builder
	if len(r.shown) > 0 {
		fmt.Fprintf(&b, "\r\x1b[%dA\x1b[J", len(r.shown))
	}
	for _, l := range r.pending {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	r.pending = r.pending[:0]
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	r.shown = lines
	if b.Len() > 0 {
		_, _ = io.WriteString(r.o.Out, b.String())
	}
}

// LastAttempt is how long the latest failed connect attempt of name ran;
// false when none failed.
func (r *Reporter) LastAttempt(name string) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.servers[name]
	if e == nil || e.attemptStart.IsZero() || e.attemptEnd.Before(e.attemptStart) {
		return 0, false
	}
	return e.attemptEnd.Sub(e.attemptStart), true
}

// Finish ends the Reporter: it stops the ticker, erases the live block,
// writes the outcome lines still queued, then the outcome of every
// connected or failed server of rs whose line was not written (a connect
// that ended with the command's ctx). Nothing is written after Finish.
func (r *Reporter) Finish(rs []composition.ServerStatus) {
	r.mu.Lock()
	stop, done := r.stop, r.done
	r.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	if r.o.Live {
		r.redraw(nil)
	}
	r.finished = true
	if r.o.Quiet > 0 {
		return
	}
	for _, sr := range rs {
		e := r.servers[sr.Name]
		if e != nil && e.outcome {
			continue
		}
		name := termsafe.Line(sr.Name)
		switch sr.State {
		case composition.StateConnected:
			r.plain(fmt.Sprintf("%s: connected (%d tool%s)", name, len(sr.Tools), view.Plural(len(sr.Tools))))
		case composition.StateFailed:
			r.plain(name + ": failed (" + sr.Class.String() + " " + termsafe.Line(sr.Reason) + ")" + view.Hint(sr.Name, sr.Reason))
		}
	}
}
