package stdiotransport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
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

	capErr      atomic.Pointer[refusal.Error]
	stderrBytes atomic.Int64
}

// Stats is what a Transport reports about its child. Stderr itself is
// never kept or published.
type Stats struct {
	// StderrBytes counts the bytes the child (and its group) wrote to
	// stderr; they were all discarded.
	StderrBytes int64
	// Exited reports that the direct child has exited and been reaped.
	Exited bool
}

// Connect asks the authority again, re-checks the target against the new
// grant (working directory, environment, program) and spawns the child,
// then returns the go-sdk connection over its stdin and stdout, with the
// receive cap applied to every inbound line. ctx bounds the authority call
// only: the child's lifetime is ended by Close or Kill (or by closing the
// returned connection, which is what mcp.ClientSession.Close does), never
// by ctx.
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
	p, err := start(pl, t.launcher.opts, (*countingWriter)(&t.stderrBytes), t.done, id)
	if err != nil {
		return nil, err
	}
	r := &lineCapReader{r: p.stdout, limit: t.launcher.opts.MaxLineLength}
	r.mapErr = func(err error) error {
		var re *refusal.Error
		if errors.As(err, &re) {
			re.Server = id
			t.capErr.CompareAndSwap(nil, re)
			return re
		}
		return err
	}
	// The SDK's own frame cap is disabled: lineCapReader enforces an exact
	// per-line cap and reports it typed; the SDK's counts read-ahead bytes
	// and reports an untyped error.
	conn, err := (&mcp.IOTransport{Reader: io.NopCloser(r), Writer: p, MaxLineLength: -1}).Connect(ctx)
	if err != nil { // IOTransport.Connect cannot fail in v1.8.0; stay safe.
		p.kill()
		p.Close()
		return nil, refuse(refusal.Internal, "connect_failed", id, "")
	}
	c := &killAwareConn{Connection: conn, p: p}
	t.p, t.conn = p, c
	return c, nil
}

// killAwareConn reports every read failure after Kill as Transient
// "child_killed", whichever way the SDK's reader learns of the end (a
// closed pipe or its own closed connection).
type killAwareConn struct {
	mcp.Connection
	p *proc
}

func (c *killAwareConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil && c.p.killed.Load() {
		return nil, refuse(refusal.Transient, "child_killed", c.p.server, "")
	}
	return m, err
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
// or nil: today only Class Protocol "receive_cap_exceeded", whose Detail
// names the cap. A call in flight at the breach fails with this error
// (errors.As finds it); later calls fail with the SDK's
// mcp.ErrConnectionClosed, so a session adapter consults Err to classify
// them.
func (t *Transport) Err() error {
	if e := t.capErr.Load(); e != nil {
		return e
	}
	return nil
}

// Stats reports the stderr byte count and whether the child was reaped.
func (t *Transport) Stats() Stats {
	s := Stats{StderrBytes: t.stderrBytes.Load()}
	select {
	case <-t.done:
		s.Exited = true
	default:
	}
	return s
}

// countingWriter counts and discards what is written to it.
type countingWriter atomic.Int64

func (w *countingWriter) Write(p []byte) (int, error) {
	(*atomic.Int64)(w).Add(int64(len(p)))
	return len(p), nil
}

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
// and the reaper. As the io.WriteCloser of the SDK's IOTransport, its
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
	killed     atomic.Bool
	stdinOnce  sync.Once
	stdoutOnce sync.Once
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
	if observeExit(p.pid) {
		p.mu.Lock()
		p.reaping = true
		killGroup(p.pid)
		p.mu.Unlock()
		_ = p.cmd.Wait()
	} else {
		_ = p.cmd.Wait()
		p.mu.Lock()
		p.reaping = true
		killGroup(p.pid)
		p.mu.Unlock()
	}
	close(p.done)
}

// signal sends one signal to the child's group, unless the child has
// already exited (then its group has been killed).
func (p *proc) signal(send func(pid int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaping {
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

// kill ends the group now and closes both pipes, unblocking any read or
// write in flight.
func (p *proc) kill() {
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
