package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Harness is one backing store of a port S and the way to open handles on
// it. A host's harness maker (func(t *testing.T) Harness[S]) returns a new
// Harness, on a fresh, empty backing store, each time a suite calls it (once
// per subtest).
type Harness[S any] struct {
	// Open returns a new handle on the harness's one backing store. The
	// suites call it more than once per harness and expect every handle to
	// see the same data (and, for a Locker, the same locks). Required.
	Open func(t *testing.T) S
	// Location names the backing store so that another OS process can open
	// it (a directory, a keychain service name). Leave it "" when S cannot
	// be shared across processes: the cross-process subtests then skip.
	Location string
	// Attach returns a handle on the backing store named by location. The
	// suites call it in a child process (the re-executed test binary; see
	// the package doc), on a Harness the maker returned there, with the
	// parent harness's Location. Required when Location is not "".
	Attach func(t *testing.T, location string) S
}

// The environment a suite gives the child processes it starts.
const (
	envSuite    = "MCPWARD_CONFORMANCE_CHILD_SUITE"
	envTest     = "MCPWARD_CONFORMANCE_CHILD_TEST"
	envRole     = "MCPWARD_CONFORMANCE_CHILD_ROLE"
	envLocation = "MCPWARD_CONFORMANCE_CHILD_LOCATION"
	envArg      = "MCPWARD_CONFORMANCE_CHILD_ARG"
)

// childPrefix starts every protocol line a child writes on standard output.
const childPrefix = "mcpward-conformance: "

// childArg is what a child role is told, JSON in envArg.
type childArg struct {
	Key   []byte        `json:"key,omitempty"`
	Value []byte        `json:"value,omitempty"`
	Dir   string        `json:"dir,omitempty"`
	ID    string        `json:"id,omitempty"`
	N     int           `json:"n,omitempty"`
	Wait  time.Duration `json:"wait,omitempty"`
}

// childRole is what a child process does with its handle. It reports with
// say and fails with t.Fatal.
type childRole[S any] func(t *testing.T, s S, arg childArg)

// suite is what every subtest of one Run call shares.
type suite[S any] struct {
	name string // "tokenstore", "locker", ...
	top  string // name of the test the Run call was given
	mk   func(*testing.T) Harness[S]
}

func newSuite[S any](t *testing.T, name string, mk func(*testing.T) Harness[S]) *suite[S] {
	return &suite[S]{name: name, top: t.Name(), mk: mk}
}

// harness makes a harness for one subtest and checks its shape.
func (s *suite[S]) harness(t *testing.T) Harness[S] {
	t.Helper()
	h := s.mk(t)
	require.NotNil(t, h.Open, "Harness.Open is required")
	if h.Location != "" {
		require.NotNil(t, h.Attach, "Harness.Attach is required when Harness.Location is set")
	}
	return h
}

// crossProcess skips t unless h can be shared with child processes.
func crossProcess[S any](t *testing.T, h Harness[S]) {
	t.Helper()
	if h.Location == "" {
		t.Skip("harness has no Location: its backing store cannot be shared with another process")
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skipf("cross-process subtests need a Unix-like system, not %s", runtime.GOOS)
	}
}

// runChild reports whether this process is a child started by a suite. If
// it is, and the child is for this suite and this test, it performs the role
// and ends the test with t.SkipNow; otherwise the caller must return without
// running its suite.
func runChild[S any](t *testing.T, s *suite[S], roles map[string]childRole[S]) bool {
	role := os.Getenv(envRole)
	if role == "" {
		return false
	}
	if os.Getenv(envSuite) != s.name || os.Getenv(envTest) != s.top {
		return true
	}
	fn, ok := roles[role]
	if !ok {
		t.Fatalf("conformance child: unknown role %q for suite %s", role, s.name)
	}
	var arg childArg
	if err := json.Unmarshal([]byte(os.Getenv(envArg)), &arg); err != nil {
		t.Fatalf("conformance child: bad %s: %v", envArg, err)
	}
	h := s.mk(t)
	if h.Attach == nil {
		t.Fatal("conformance child: the harness has no Attach")
	}
	fn(t, h.Attach(t, os.Getenv(envLocation)), arg)
	t.SkipNow()
	return true
}

// say writes one protocol line for the parent.
func say(format string, args ...any) {
	fmt.Fprintf(os.Stdout, childPrefix+format+"\n", args...)
}

// awaitGo says "ready" and waits for the parent to close standard input.
func awaitGo() {
	say("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// startReady starts one child per arg in role, waits until each has said
// "ready" (see awaitGo), then lets them all go at once.
func startReady[S any](t *testing.T, s *suite[S], role, location string, args []childArg) []*child {
	t.Helper()
	var cs []*child
	for _, a := range args {
		cs = append(cs, s.startChild(t, role, location, a))
	}
	for _, c := range cs {
		c.expect("ready", childWait)
	}
	for _, c := range cs {
		c.release()
	}
	return cs
}

// child is a child process started by a suite.
type child struct {
	t     *testing.T
	role  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // protocol lines, closed when stdout ends
	out   syncBuffer  // everything the child wrote
	done  chan struct{}
	err   error // Wait's result, set before done is closed
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// runPattern is the -test.run pattern that selects exactly the test name.
func runPattern(name string) string {
	elems := strings.Split(name, "/")
	for i, e := range elems {
		elems[i] = "^" + regexp.QuoteMeta(e) + "$"
	}
	return strings.Join(elems, "/")
}

// startChild re-executes the test binary as a child in role, on the backing
// store at location. The child is killed when t ends.
func (s *suite[S]) startChild(t *testing.T, role, location string, arg childArg) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	a, err := json.Marshal(arg)
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run="+runPattern(s.top), "-test.count=1", "-test.timeout=5m")
	// The child is this same test binary, not an MCP server: it needs the
	// parent's environment (the keychain's D-Bus address, HOME, GOCOVERDIR)
	// to reach the same backing store.
	cmd.Env = append(os.Environ(),
		envSuite+"="+s.name,
		envTest+"="+s.top,
		envRole+"="+role,
		envLocation+"="+location,
		envArg+"="+string(a),
		// A race-enabled binary sleeps a second on exit unless told not to.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
	)
	c := &child{t: t, role: role, cmd: cmd, lines: make(chan string, 1024), done: make(chan struct{})}
	c.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	// Our own pipe, not StdoutPipe, so Wait never closes the reading end
	// under the reader.
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout = pw
	cmd.Stderr = &c.out
	err = cmd.Start()
	_ = pw.Close()
	if err != nil {
		_ = pr.Close()
		require.NoError(t, err, "re-executing the test binary")
	}
	go func() {
		defer close(c.lines)
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(&c.out, line)
			if rest, ok := strings.CutPrefix(line, childPrefix); ok {
				select {
				case c.lines <- rest:
				default: // nobody listens; the line is in c.out
				}
			}
		}
		_, _ = io.Copy(&c.out, pr)
	}()
	t.Cleanup(func() {
		_ = c.stdin.Close()
		if c.cmd.Process != nil {
			_ = c.cmd.Process.Kill()
		}
		c.wait(10 * time.Second)
	})
	return c
}

// expect waits up to d for the child to say want. A line starting "error"
// or the child ending first fails t.
func (c *child) expect(want string, d time.Duration) {
	c.t.Helper()
	got := c.next(d)
	if got != want {
		c.t.Fatalf("child %s said %q, want %q; its output:\n%s", c.role, got, want, c.out.String())
	}
}

// next returns the child's next protocol line, failing t if none comes in d.
func (c *child) next(d time.Duration) string {
	c.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.wait(10 * time.Second)
			c.t.Fatalf("child %s ended (%v) before saying anything more; its output:\n%s", c.role, c.err, c.out.String())
		}
		return line
	case <-timer.C:
		c.t.Fatalf("child %s said nothing for %v; its output:\n%s", c.role, d, c.out.String())
	}
	return ""
}

// release closes the child's standard input, its signal to finish.
func (c *child) release() { _ = c.stdin.Close() }

// wait waits up to d for the child to exit and records Wait's error.
func (c *child) wait(d time.Duration) {
	select {
	case <-c.done:
		return
	default:
	}
	ch := make(chan error, 1)
	go func() { ch <- c.cmd.Wait() }()
	select {
	case err := <-ch:
		c.err = err
		close(c.done)
	case <-time.After(d):
		if c.cmd.Process != nil {
			_ = c.cmd.Process.Kill()
		}
		c.err = <-ch
		close(c.done)
	}
}

// finish waits for a child that was told to end and fails t unless it
// exited cleanly.
func (c *child) finish(d time.Duration) {
	c.t.Helper()
	c.wait(d)
	if c.err != nil {
		c.t.Fatalf("child %s failed: %v; its output:\n%s", c.role, c.err, c.out.String())
	}
}
