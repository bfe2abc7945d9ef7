package progress

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/ports"
)

// PlainEvery is the least time between two plain progress lines of a
// call.
const PlainEvery = time.Second

// plainWidth bounds a plain progress line, in runes.
const plainWidth = 200

// CallOptions configure a Call.
type CallOptions struct {
	// Out is where progress goes (stderr).
	Out io.Writer
	// Clock is the time; nil means the system clock.
	Clock clock.Clock
	// Label names the call ("server/tool"); it must be safe for the
	// terminal.
	Label string
	// Live keeps one line on Out that is redrawn in place (at most every
	// Redraw) and erased by Stop: a terminal that allows it.
	Live bool
	// Plain, without Live, writes a line for the progress at most every
	// PlainEvery, when it changed. Neither: nothing is shown.
	Plain bool
	// Width is the terminal's width (Live); 0 means 80.
	Width int
}

// Call shows the progress notifications of one tool call on stderr: one
// line "LABEL: 42% message" (or "LABEL: 17 message" when the server gave
// no total), the server's message made safe for the terminal
// (termsafe.Line) and the line cut to the terminal's width. Its methods
// are safe for concurrent use; Report never writes and never blocks on
// the output.
type Call struct {
	o CallOptions

	mu      sync.Mutex
	latest  ports.Progress
	dirty   bool   // latest not yet shown
	shown   string // the live line on screen, "" when none
	last    string // the last plain line written
	stopped bool

	stop, done chan struct{}
}

// StartCall returns a Call whose output has started: a ticker draws the
// latest progress until Stop. With neither Live nor Plain nothing is ever
// written (Report only records).
func StartCall(o CallOptions) *Call {
	if o.Clock == nil {
		o.Clock = clock.Real()
	}
	if o.Width <= 0 {
		o.Width = 80
	}
	c := &Call{o: o}
	if !o.Live && !o.Plain {
		return c
	}
	interval := PlainEvery
	if o.Live {
		interval = Redraw
	}
	stop, done := make(chan struct{}), make(chan struct{})
	c.stop, c.done = stop, done
	t := o.Clock.NewTicker(interval)
	go func() {
		defer close(done)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C():
				c.Tick()
			}
		}
	}()
	return c
}

// Report records p, the call's latest progress (ports.WithProgress's
// callback); the next tick shows it.
func (c *Call) Report(p ports.Progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.latest, c.dirty = p, true
}

// Tick does the clock-driven output: it shows the latest progress when it
// changed since the last tick.
func (c *Call) Tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || !c.dirty || !(c.o.Live || c.o.Plain) {
		return
	}
	c.dirty = false
	line := c.o.Label + ": " + progressWords(c.latest)
	if c.o.Live {
		line = termsafe.Truncate(line, c.o.Width-1)
		if line != c.shown {
			_, _ = io.WriteString(c.o.Out, "\r\x1b[K"+line)
			c.shown = line
		}
		return
	}
	line = termsafe.Truncate(line, plainWidth)
	if line != c.last {
		fmt.Fprintln(c.o.Out, line)
		c.last = line
	}
}

// progressWords is "42% message", or "17 message" without a total.
func progressWords(p ports.Progress) string {
	var s string
	if p.Total > 0 {
		pct := math.Floor(p.Progress / p.Total * 100)
		if math.IsNaN(pct) {
			pct = 0
		}
		s = strconv.Itoa(int(max(0, min(100, pct)))) + "%"
	} else {
		s = strconv.FormatFloat(p.Progress, 'g', 6, 64)
	}
	if p.Message != "" {
		s += " " + termsafe.Line(p.Message)
	}
	return s
}

// Above returns a writer to w for lines that go above the live line (the
// "still waiting" notes): each write erases the live line, writes its
// bytes (whole lines), and draws the live line again. Without Live it is w.
func (c *Call) Above(w io.Writer) io.Writer {
	if !c.o.Live {
		return w
	}
	return aboveWriter{c: c, w: w}
}

type aboveWriter struct {
	c *Call
	w io.Writer
}

func (a aboveWriter) Write(b []byte) (int, error) {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	if a.c.stopped {
		return a.w.Write(b)
	}
	if a.c.shown != "" {
		_, _ = io.WriteString(a.w, "\r\x1b[K")
	}
	n, err := a.w.Write(b)
	if a.c.shown != "" {
		_, _ = io.WriteString(a.w, a.c.shown)
	}
	return n, err
}

// Stop ends the output: the ticker stops and the live line is erased, so
// what follows starts on a clean line. Nothing is written after Stop
// returns. It is idempotent.
func (c *Call) Stop() {
	c.mu.Lock()
	stop, done := c.stop, c.done
	c.stop = nil
	c.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.stopped = true
	if c.shown != "" {
		_, _ = io.WriteString(c.o.Out, "\r\x1b[K")
		c.shown = ""
	}
}
