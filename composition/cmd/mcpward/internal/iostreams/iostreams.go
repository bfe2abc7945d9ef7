// Package iostreams holds the standard streams of one run of the CLI and
// what is known about them: whether each is a terminal, the terminal's
// width, whether it can be redrawn in place. Commands read it from the
// factory, so tests can hand them buffers and force a TTY.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"sync"
)

// defaultWidth is the terminal width assumed when it cannot be read.
const defaultWidth = 80

// IOStreams are the streams of one run. Out and ErrOut may be written from
// several goroutines only when the writers allow it (System's files and
// Test's buffers do).
type IOStreams struct {
	// In is where login reads a pasted redirect; nil means none.
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY, stdoutTTY, stderrTTY bool
	width                          int
	dumb                           bool
}

// System returns the process's standard streams, each marked as a terminal
// when it is one. TERM=dumb means no redrawing in place.
func System() *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, width: defaultWidth}
	s.stdinTTY = isTerminal(os.Stdin)
	s.stdoutTTY = isTerminal(os.Stdout)
	s.stderrTTY = isTerminal(os.Stderr)
	if s.stderrTTY {
		if w := terminalWidth(os.Stderr); w > 0 {
			s.width = w
		}
	}
	s.dumb = os.Getenv("TERM") == "dumb"
	return s
}

// Test returns streams on buffers, none of them a terminal (see the
// Set*TTY methods). The buffers are safe for concurrent use.
func Test() (s *IOStreams, in *bytes.Buffer, out, errOut *Buffer) {
	in, out, errOut = &bytes.Buffer{}, &Buffer{}, &Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, width: defaultWidth}, in, out, errOut
}

// IsStdinTTY reports whether In is a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// IsStdoutTTY reports whether Out is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether ErrOut is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStdinTTY marks In as a terminal or not (tests).
func (s *IOStreams) SetStdinTTY(v bool) { s.stdinTTY = v }

// SetStdoutTTY marks Out as a terminal or not (tests).
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY = v }

// SetStderrTTY marks ErrOut as a terminal or not (tests).
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY = v }

// SetWidth sets the terminal width (tests); 0 or less means the default.
func (s *IOStreams) SetWidth(w int) {
	if w <= 0 {
		w = defaultWidth
	}
	s.width = w
}

// TerminalWidth is the width of ErrOut's terminal, 80 when unknown.
func (s *IOStreams) TerminalWidth() int {
	if s.width <= 0 {
		return defaultWidth
	}
	return s.width
}

// CanRedraw reports whether progress on ErrOut may be redrawn in place:
// ErrOut is a terminal and TERM is not "dumb".
func (s *IOStreams) CanRedraw() bool { return s.stderrTTY && !s.dumb }

// Buffer is a bytes.Buffer safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Reset empties the buffer.
func (b *Buffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Reset()
}
