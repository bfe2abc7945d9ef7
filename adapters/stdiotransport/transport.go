package stdiotransport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

var _ mcp.Transport = (*Transport)(nil)

// Transport is an admitted, not yet spawned stdio launch. It implements
// mcp.Transport for one mcp.Client.Connect, and adds Close and Kill so an
// owner can end the child whatever state the SDK's session is in.
//
// All methods are safe for concurrent use.
type Transport struct {
	launcher *Launcher
	target   ports.Target
	done     chan struct{} // closed when the child has been reaped (never, if it never started)

	mu     sync.Mutex
	used   bool
	closed bool
	p      *proc
	conn   mcp.Connection

	endErr atomic.Pointer[refusal.Error]
	stderr stderrTail
	filter atomic.Pointer[func(method string, call bool) bool]
}

// Stats is what a Transport reports about its child.
type Stats struct {
	// StderrBytes counts the bytes the child (and its group) wrote to
	// stderr; only the last StderrTailBytes are kept (see StderrTail).
	StderrBytes int64
	// Exited reports that the direct child has exited and been reaped.
	Exited bool
	// ExitStatus is how the direct child ended, once Exited, as
	// os.ProcessState.String() writes it: "exit status 3",
	// "signal: killed", ...; "" before.
	ExitStatus string
	// ExitedOnItsOwn reports that ExitStatus is the child's own doing — a
	// crash, a fatal error, an exit on bad configuration — rather than its
	// answer to being stopped: this side sent it no signal, and it either
	// failed (a non-zero status, a signal from elsewhere) or exited before
	// this side began to end it (Close, Kill, or the close of the
	// connection Connect returned, which closes its stdin). A success after
	// its stdin was closed is not its own.
	ExitedOnItsOwn bool
}

// Connect asks the authority again, re-checks the target against the new
// grant (working directory, environment, program) and spawns the child,
// then returns an mcp.Connection over its stdin and stdout (this package's
// framing, see frameConn), with the receive cap applied to every inbound
// line. ctx bounds the authority call only: the child's lifetime is ended
// by Close or Kill (or by closing the returned connection, which is what
// mcp.ClientSession.Close does), never by ctx.
//
// Errors are *refusal.Error values: those of Launcher.Transport; Class
// Transient "canceled" when ctx has ended before the spawn; Transient
// "transport_closed" after Close or Kill; Internal "transport_reused" on a
// second call; Config "program_not_found" or "program_not_executable", or
// Transient "spawn_failed", when the spawn fails. The re-check limits, but
// cannot eliminate, a concurrent replacement of the filesystem between the
// check and execve.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	id := t.target.ServerID
	t.mu.Lock()
	if t.used {
		t.mu.Unlock()
		return nil, refuse(refusal.Internal, "transport_reused", id, "a Transport connects once")
	}
	t.used = true
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return nil, refuse(refusal.Transient, "transport_closed", id, "")
	}
	if ctx.Err() != nil {
		return nil, refuse(refusal.Transient, "canceled", id, "")
	}
	pl, err := t.launcher.admit(ctx, t.target)
	if err != nil {
		return nil, err
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, refuse(refusal.Transient, "transport_closed", id, "")
	}
	if ctx.Err() != nil {
		return nil, refuse(refusal.Transient, "canceled", id, "")
	}
	p, err := start(pl, t.launcher.opts, &t.stderr, t.done, id)
	if err != nil {
		return nil, err
	}
	r := &lineCapReader{r: p.stdout, limit: t.launcher.opts.MaxLineLength}
	r.mapErr = func(err error) error {
		var re *refusal.Error
		if errors.As(err, &re) {
			re.Server = id
			t.endErr.CompareAndSwap(nil, re)
			return re
		}
		return err
	}
	// lineCapReader enforces an exact per-line cap and reports it typed;
	// frameConn frames and decodes the lines itself (see frameconn.go).
	c := &killAwareConn{Connection: newFrameConn(r, p), p: p, t: t, lines: r}
	t.p, t.conn = p, c
	return c, nil
}

// killAwareConn reports every read failure after Kill as Transient
// "child_killed", whichever way the SDK's reader learns of the end (a
// closed pipe or its own closed connection), and a line frameConn could not
// decode as Protocol "malformed_message" (recorded for Transport.Err). It
// drops the requests and notifications the inbound filter refuses.
type killAwareConn struct {
	mcp.Connection
	p     *proc
	t     *Transport
	lines *lineCapReader // read by frameConn's reader until it fails
}

// lineSettle bounds how long killAwareConn reads on, after frameConn failed
// to decode a line, to learn whether that line outgrows the receive cap.
const lineSettle = 2 * time.Second

func (c *killAwareConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		if req, ok := m.(*jsonrpc.Request); ok {
			if admit := c.t.filter.Load(); admit != nil && !(*admit)(req.Method, req.IsCall()) {
				continue // dropped before the SDK queues it
			}
		}
		return m, nil
	}
}

func (c *killAwareConn) read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		return m, nil
	}
	if c.p.killed.Load() {
		return nil, refuse(refusal.Transient, "child_killed", c.p.server, "")
	}
	if ctx.Err() == nil && !c.p.ending.Load() && isDecodeFailure(err) {
		c.settleLine()
		re := &refusal.Error{Class: refusal.Protocol, Reason: "malformed_message", Server: c.p.server,
			Detail: "the server wrote a line that is not a JSON-RPC message"}
		if !c.t.endErr.CompareAndSwap(nil, re) {
			re = c.t.endErr.Load() // the line outgrew the cap meanwhile
		}
		return nil, re
	}
	return nil, err
}

// settleLine reads on, once frameConn's decoder has failed (its reader has
// stopped: nothing else reads the pipe), to the end of the line being
// read, for at most lineSettle and never past the receive cap. The decoder
// stops at a line's first byte when it cannot start a message, so an
// endless line of garbage would otherwise pass for any malformed line:
// read on, it breaches the cap, which lineCapReader records as the
// transport's error.
func (c *killAwareConn) settleLine() {
	if c.lines.line == 0 {
		return // the last byte delivered ended a line
	}
	_ = c.p.stdout.SetReadDeadline(time.Now().Add(lineSettle))
	buf := make([]byte, 32<<10)
	for {
		n, err := c.lines.Read(buf)
		if bytes.IndexByte(buf[:n], '\n') >= 0 || err != nil {
			return
		}
	}
}

// isDecodeFailure reports whether err, returned by frameConn, is its
// failure to decode what the child wrote rather than the end of the
// stream: everything but a refusal (the receive cap), a context error, a
// failed read of the pipe, and the errors of a stream that has ended.
func isDecodeFailure(err error) bool {
	var re *refusal.Error
	var pe *fs.PathError
	switch {
	case errors.As(err, &re), errors.As(err, &pe),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.ErrClosedPipe),
		errors.Is(err, os.ErrClosed), errors.Is(err, net.ErrClosed), errors.Is(err, syscall.EPIPE),
		errors.Is(err, mcp.ErrConnectionClosed):
		return false
	}
	return true
}

// Close ends the child gracefully and closes the connection Connect
// returned: it closes the child's stdin, waits up to CloseGrace for the
// child to exit, then signals SIGTERM to its process group, waits up to
// TermGrace, then SIGKILL, and waits up to KillGrace for the child to be
// reaped. Whatever remains of the group when the child exits is killed.
// So Close returns within CloseGrace+TermGrace+KillGrace (plus the time an
// in-flight SDK call holds the connection; use Kill for those).
//
// Close returns nil once the child has been reaped, whatever its exit
// status, and a *refusal.Error of Class Transient "close_timeout" when it
// could not be reaped within the bound. Before Connect, Close makes a later
// Connect fail with "transport_closed" and returns nil. Idempotent;
// concurrent calls share one shutdown and its result.
func (t *Transport) Close() error {
	t.mu.Lock()
	t.closed = true
	conn := t.conn
	t.mu.Unlock()
	if conn == nil {
		return nil
	}
	return conn.Close()
}

// Kill ends the child's process group at once (SIGKILL), closes the pipes
// so that a call in flight fails at once (with Transient "child_killed")
// and mcp.ClientSession.Close, which otherwise waits for in-flight calls,
// can return, then waits up to KillGrace for the child to be reaped. It is
// the abort for a cancelled or timed-out call: the SDK cannot cancel one
// cleanly. Kill returns what Close does; after Close it only waits. Before
// Connect it makes a later Connect fail with "transport_closed".
func (t *Transport) Kill() error {
	t.mu.Lock()
	t.closed = true
	p, conn := t.p, t.conn
	t.mu.Unlock()
	if p == nil {
		return nil
	}
	p.kill()
	return conn.Close()
}

// Err returns the *refusal.Error that made this side end the connection,
// or nil: Class Protocol "receive_cap_exceeded" (an inbound line over the
// cap; its Detail names the cap — also for a line of garbage that never
// ends, though the decoder gives up at its first byte) or Class
// Protocol "malformed_message" (a line that is not one JSON-RPC 2.0
// message: not JSON, not JSON-RPC 2.0, trailing data, a message split
// over lines, a batch). A call in flight at the breach fails with this error
// (errors.As finds it); later calls fail with the SDK's
// mcp.ErrConnectionClosed, so a session adapter consults Err to classify
// them.
func (t *Transport) Err() error {
	if e := t.endErr.Load(); e != nil {
		return e
	}
	return nil
}

// Stats reports the stderr byte count and whether and how the child
// ended. Safe for concurrent use.
func (t *Transport) Stats() Stats {
	s := Stats{StderrBytes: t.stderr.bytesWritten()}
	select {
	case <-t.done:
		s.Exited = true
		t.mu.Lock()
		p := t.p
		t.mu.Unlock()
		if p != nil {
			// Written by the reaper before done was closed.
			s.ExitStatus, s.ExitedOnItsOwn = p.exitStatus, p.selfExit
		}
	default:
	}
	return s
}

// WaitExited waits up to d for the child to have exited and been reaped,
// and reports whether it has. It returns false at once when no child was
// started. It ends nothing: see Close and Kill for that.
func (t *Transport) WaitExited(d time.Duration) bool {
	t.mu.Lock()
	p := t.p
	t.mu.Unlock()
	if p == nil {
		return false
	}
	return p.wait(d)
}

// SetInboundFilter makes the connection ask admit about every request and
// notification the child sends (its method, and whether it is a request)
// before the SDK sees it, and drop it when admit returns false; responses
// always pass. It is mcpsession's Conn.InboundFilter: the SDK queues every
// inbound request and notification without bound, so a flood must be cut
// here. admit is called from the SDK's reading goroutine and must not
// block. A later call replaces the filter; nil removes it. Safe for
// concurrent use.
func (t *Transport) SetInboundFilter(admit func(method string, call bool) bool) {
	if admit == nil {
		t.filter.Store(nil)
		return
	}
	t.filter.Store(&admit)
}

// StderrTail returns the end of what the child (and its process group)
// wrote to stderr: the kept StderrTailBytes, as whole lines (a line cut by
// the byte bound is dropped), at most the last StderrTailLines of them.
//
// It is the server's own output, as is: untrusted bytes that may hold
// secrets (a server may print its environment or argv), invalid UTF-8 and
// terminal control sequences. This package never puts it in an error, and
// neither may a caller: mask it before showing it (composition does, with
// the definition's secrets) and sanitize it for a terminal. Safe for
// concurrent use, also while the child runs and after it was reaped.
func (t *Transport) StderrTail() string { return t.stderr.tail() }

// lineCapReader passes through r while every line (the bytes between two
// '\n', the newline excluded) holds at most limit bytes. At the first
// longer line it delivers the complete lines before it and then fails,
// for good, with a receive_cap_exceeded refusal. Its errors pass through
// mapErr when it is set.
type lineCapReader struct {
	r      io.Reader
	limit  int
	line   int // bytes of the current line delivered so far
	err    error
	mapErr func(error) error
}

func (c *lineCapReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	for off := 0; off < n; {
		j := bytes.IndexByte(p[off:n], '\n')
		seg := j
		if j < 0 {
			seg = n - off
		}
		if c.line+seg > c.limit {
			c.err = &refusal.Error{
				Class:  refusal.Protocol,
				Reason: "receive_cap_exceeded",
				Detail: "an inbound line exceeded the receive cap of " + strconv.Itoa(c.limit) + " bytes",
			}
			if c.mapErr != nil {
				c.err = c.mapErr(c.err)
			}
			return off, c.err
		}
		if j < 0 {
			c.line += seg
			break
		}
		c.line = 0
		off += j + 1
	}
	if err != nil && c.mapErr != nil {
		err = c.mapErr(err)
	}
	return n, err
}

// proc is one spawned child: the parent's ends of its stdin and stdout,
// and the reaper. As the io.WriteCloser of frameConn, its
// Close is the graceful shutdown.
type proc struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File
	stdout *os.File
	opts   Options
	server string
	done   chan struct{}

	mu         sync.Mutex
	reaping    bool // the child has exited; its group was killed; no more signals
	signalled  bool // this side sent the group SIGTERM or SIGKILL
	killed     atomic.Bool
	ending     atomic.Bool // this side began to end the child (Close or kill)
	endedFirst atomic.Bool // the child had exited when this side began to end it
	stdinOnce  sync.Once
	stdoutOnce sync.Once

	// Written by reap before done is closed; read only after done.
	exitStatus string
	selfExit   bool
}

// start spawns pl. Parent copies of the child's pipe ends are closed
// before it returns, on success and on failure.
func start(pl plan, o Options, stderr io.Writer, done chan struct{}, id string) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, refuse(refusal.Transient, "spawn_failed", id, "")
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, refuse(refusal.Transient, "spawn_failed", id, "")
	}
	cmd := &exec.Cmd{
		Path:        pl.path,
		Args:        pl.args,
		Env:         pl.env, // never nil: nil would inherit the parent's environment
		Dir:         pl.dir, // never "": "" would be the parent's working directory
		Stdin:       inR,
		Stdout:      outW,
		Stderr:      stderr, // not an *os.File: exec drains a pipe into it
		SysProcAttr: sysProcAttr(),
		WaitDelay:   o.KillGrace,
	}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, spawnRefusal(err, pl.dir, id)
	}
	p := &proc{
		cmd:    cmd,
		pid:    cmd.Process.Pid,
		stdin:  inW,
		stdout: outR,
		opts:   o,
		server: id,
		done:   done,
	}
	go p.reap()
	return p, nil
}

// spawnRefusal maps a failed exec.Cmd.Start to a refusal without its text,
// which names the program.
func spawnRefusal(err error, dir, id string) error {
	if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
		return refuse(refusal.Refused, "cwd_not_found", id, "the working directory vanished before spawn")
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return refuse(refusal.Config, "program_not_found", id, "")
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return refuse(refusal.Config, "program_not_executable", id, "")
	default:
		return refuse(refusal.Transient, "spawn_failed", id, "")
	}
}

// reap waits for the child. Where the exit can be observed without
// reaping (Linux), the group is killed while the exited child still holds
// its pid, so the group id cannot have been reused; elsewhere it is killed
// right after reaping, a window in which a reused group id could in theory
// be signalled.
func (p *proc) reap() {
	var signalled, early bool
	observed := func() {
		p.mu.Lock()
		p.reaping = true
		killGroup(p.pid)
		signalled = p.signalled
		early = p.endedFirst.Load() || !p.ending.Load()
		p.mu.Unlock()
	}
	if observeExit(p.pid) {
		observed()
		_ = p.cmd.Wait()
	} else {
		_ = p.cmd.Wait()
		observed()
	}
	if ps := p.cmd.ProcessState; ps != nil {
		p.exitStatus = ps.String()
		// A failure this side did not signal is the child's own (even
		// when its stdin had been closed: a server ends with 0 then); a
		// success is its own only when it came before this side began to
		// end it.
		p.selfExit = !signalled && (early || !ps.Success())
	}
	close(p.done)
}

// signal sends one signal to the child's group, unless the child has
// already exited (then its group has been killed).
func (p *proc) signal(send func(pid int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaping {
		p.signalled = true
		send(p.pid)
	}
}

func (p *proc) wait(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.done:
		return true
	case <-timer.C:
		return false
	}
}

func (p *proc) closeStdin()  { p.stdinOnce.Do(func() { p.stdin.Close() }) }
func (p *proc) closeStdout() { p.stdoutOnce.Do(func() { p.stdout.Close() }) }

// beginEnding marks that this side is ending the child, noting first
// whether the child had already exited on its own (where that can be seen
// without reaping), so the reaper does not take its exit for an answer to
// being stopped.
func (p *proc) beginEnding() {
	if !p.ending.Load() && exitedNow(p.pid) {
		p.endedFirst.Store(true)
	}
	p.ending.Store(true)
}

// kill ends the group now and closes both pipes, unblocking any read or
// write in flight.
func (p *proc) kill() {
	p.beginEnding()
	p.killed.Store(true)
	p.signal(killGroup)
	p.closeStdin()
	p.closeStdout()
}

// Write writes to the child's stdin.
func (p *proc) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close is the graceful shutdown (see Transport.Close). The SDK's
// connection calls it exactly once.
func (p *proc) Close() error {
	p.beginEnding()
	p.closeStdin()
	if !p.killed.Load() && !p.wait(p.opts.CloseGrace) {
		p.signal(termGroup)
		if !p.wait(p.opts.TermGrace) {
			p.signal(killGroup)
		}
	}
	ok := p.wait(p.opts.KillGrace)
	p.closeStdout()
	if !ok {
		return refuse(refusal.Transient, "close_timeout", p.server, "the child was not reaped within the bound")
	}
	return nil
}
