package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binary is the server, built once for every test.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hostile-server-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "hostile")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the hostile server:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// wait bounds every read and every wait for an exit.
const wait = 5 * time.Second

// child is the binary running over stdio in a process group of its own,
// killed (the whole group) at cleanup.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	r      *bufio.Reader

	mu         sync.Mutex
	stderr     bytes.Buffer
	stderrDone chan struct{}

	exited chan struct{}
	err    error // of Wait, once exited is closed
}

// start runs the binary with args and an environment of env alone.
func start(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	or, ow, err := os.Pipe()
	require.NoError(t, err)
	er, ew, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = ow, ew
	require.NoError(t, cmd.Start())
	ow.Close()
	ew.Close()
	c := &child{t: t, cmd: cmd, stdin: stdin, stdout: or, r: bufio.NewReaderSize(or, 1<<20),
		stderrDone: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(c.stderrDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := er.Read(buf)
			c.mu.Lock()
			c.stderr.Write(buf[:n])
			c.mu.Unlock()
			if err != nil {
				er.Close()
				return
			}
		}
	}()
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-c.exited:
		case <-time.After(wait):
			t.Errorf("pid %d not reaped after SIGKILL", cmd.Process.Pid)
		}
		or.Close()
	})
	return c
}

// stderrText returns what the child wrote to stderr so far.
func (c *child) stderrText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

func (c *child) send(msg string) {
	c.t.Helper()
	_, err := io.WriteString(c.stdin, msg+"\n")
	require.NoError(c.t, err)
}

// line reads the next line from stdout, within wait.
func (c *child) line() []byte {
	c.t.Helper()
	require.NoError(c.t, c.stdout.SetReadDeadline(time.Now().Add(wait)))
	b, err := c.r.ReadBytes('\n')
	require.NoError(c.t, err, "reading a line from stdout")
	return bytes.TrimSuffix(b, []byte("\n"))
}

// nothing checks that stdout stays silent for d.
func (c *child) nothing(d time.Duration) {
	c.t.Helper()
	require.NoError(c.t, c.stdout.SetReadDeadline(time.Now().Add(d)))
	b, err := c.r.ReadBytes('\n')
	require.ErrorIs(c.t, err, os.ErrDeadlineExceeded, "unexpected output %.200q", b)
}

// rpc is one decoded message from the server.
type rpc struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data"`
	} `json:"error"`
}

func decode(t *testing.T, b []byte) rpc {
	t.Helper()
	var m rpc
	require.NoError(t, json.Unmarshal(b, &m), "%.300q", b)
	return m
}

// next reads the next message.
func (c *child) next() rpc {
	c.t.Helper()
	return decode(c.t, c.line())
}

const initRequest = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`

// initResult is the part of an initialize result the tests look at.
type initResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	ServerInfo      map[string]any `json:"serverInfo"`
	Instructions    string         `json:"instructions"`
}

// initialize runs the handshake and returns the initialize result.
func (c *child) initialize() initResult {
	c.t.Helper()
	c.send(initRequest)
	m := c.next()
	require.Equal(c.t, "1", string(m.ID))
	var r initResult
	require.NoError(c.t, json.Unmarshal(m.Result, &r))
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

// listedTool is a tools/list entry.
type listedTool struct {
	Name        string         `json:"name"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
}

func (c *child) tools() []listedTool {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	m := c.next()
	var r struct {
		Tools []listedTool `json:"tools"`
	}
	require.NoError(c.t, json.Unmarshal(m.Result, &r))
	return r.Tools
}

// callResult is a tools/call result.
type callResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// call calls tool with args (JSON) as request id and returns the answer.
func (c *child) call(id int, tool string, args string) rpc {
	c.t.Helper()
	name, _ := json.Marshal(tool)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s,"arguments":%s}}`, id, name, args))
	m := c.next()
	require.Equal(c.t, strconv.Itoa(id), string(m.ID))
	return m
}

func resultText(t *testing.T, m rpc) (string, bool) {
	t.Helper()
	require.Nil(t, m.Error)
	var r callResult
	require.NoError(t, json.Unmarshal(m.Result, &r))
	require.Len(t, r.Content, 1)
	return r.Content[0].Text, r.IsError
}

// exitCode waits for the child to exit and returns its status (-1 for a
// signal).
func (c *child) exitCode() int {
	c.t.Helper()
	select {
	case <-c.exited:
	case <-time.After(wait):
		c.t.Fatal("the child did not exit")
	}
	if c.err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.ErrorAs(c.t, c.err, &ee)
	return ee.ExitCode()
}

func (c *child) running() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

func names(tools []listedTool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func TestUsage(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"no mode", nil, exitUsage},
		{"unknown mode", []string{"-mode", "nope"}, exitUsage},
		{"stdio-only mode over http", []string{"-mode", "ignore-term", "-http", "127.0.0.1:0"}, exitUsage},
		{"not loopback", []string{"-mode", "normal", "-http", "0.0.0.0:0"}, exitUsage},
		{"bad page size", []string{"-mode", "huge-pages", "-page-bytes", "0"}, exitUsage},
		{"help", []string{"-h"}, exitOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, nil, tt.args...)
			assert.Equal(t, tt.code, c.exitCode())
		})
	}
	c := start(t, nil, "-mode", "nope")
	c.exitCode()
	<-c.stderrDone
	for _, n := range modeNames() {
		assert.Contains(t, c.stderrText(), n, "the usage lists every mode")
	}
	assert.NotContains(t, c.stderrText(), "sleeper", "the internal mode is not listed")
}

func TestNormal(t *testing.T) {
	c := start(t, nil, "-mode", "normal")
	r := c.initialize()
	assert.Equal(t, ProtocolVersion, r.ProtocolVersion)
	assert.Equal(t, []string{"ok", "echo"}, names(c.tools()))
	text, isErr := resultText(t, c.call(3, "ok", `{}`))
	assert.Equal(t, "ok", text)
	assert.False(t, isErr)
	text, _ = resultText(t, c.call(4, "echo", `{"text":"hi"}`))
	assert.Equal(t, "hi", text)
	m := c.call(5, "nope", `{}`)
	require.NotNil(t, m.Error)
	assert.Equal(t, codeInvalidParams, m.Error.Code)
	require.NoError(t, c.stdin.Close())
	assert.Equal(t, exitOK, c.exitCode(), "stdin closed ends the server")
}

// TestNormalWithSDKClient: the hand-written wire is one the official
// client speaks, over stdio and over Streamable HTTP.
func TestNormalWithSDKClient(t *testing.T) {
	check := func(t *testing.T, tr mcp.Transport) {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
		cs, err := cl.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
		require.NoError(t, err)
		defer cs.Close()
		assert.Equal(t, ProtocolVersion, cs.InitializeResult().ProtocolVersion)
		tools, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		require.Len(t, tools.Tools, 2)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
		require.NoError(t, err)
		require.Len(t, res.Content, 1)
		assert.Equal(t, "hello", res.Content[0].(*mcp.TextContent).Text)
	}
	t.Run("stdio", func(t *testing.T) {
		cmd := exec.Command(binary, "-mode", "normal")
		cmd.Env = []string{}
		check(t, &mcp.CommandTransport{Command: cmd})
	})
	t.Run("http", func(t *testing.T) {
		url := startHTTP(t, "-mode", "normal")
		check(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1})
	})
}

func TestLongNames(t *testing.T) {
	c := start(t, nil, "-mode", "long-names")
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	raw := c.line()
	assert.Contains(t, string(raw), invalidUTF8Name, "invalid UTF-8 goes on the wire as raw bytes")
	var r struct {
		Result struct{ Tools []listedTool } `json:"result"`
	}
	require.NoError(t, json.Unmarshal(raw, &r))
	got := names(r.Result.Tools)
	lengths := map[int]bool{}
	dups := 0
	for _, n := range got {
		lengths[len(n)] = true
		if n == "dup" {
			dups++
		}
	}
	for _, n := range []int{65, 128, 300, 0} {
		assert.True(t, lengths[n], "a name of %d bytes", n)
	}
	assert.Equal(t, 2, dups)
	assert.Contains(t, got, "nul\x00byte")
	assert.Contains(t, got, "with space")
	assert.Contains(t, got, invalidUTF8Decoded)
	assert.Contains(t, got, "ok")

	text, _ := resultText(t, c.call(3, "ok", `{}`))
	assert.Equal(t, "ok", text)
	text, _ = resultText(t, c.call(4, longName(300), `{}`))
	assert.Equal(t, "called the tool of 300 bytes", text)
	text, _ = resultText(t, c.call(5, invalidUTF8Decoded, `{}`))
	assert.Contains(t, text, "called the tool")
}

func TestControlChars(t *testing.T) {
	c := start(t, nil, "-mode", "control-chars")
	r := c.initialize()
	for _, s := range []string{r.ServerInfo["name"].(string), r.ServerInfo["version"].(string), r.ServerInfo["title"].(string), r.Instructions} {
		assert.Contains(t, s, evil)
	}
	for _, seq := range []string{"\x1b[2J", "\x1b]0;pwned\x07", "\x1b]52;c;", "\r\nmcpward: ", "\u009b", "\u202e", "\u2066", "\u200d"} {
		assert.Contains(t, evil, seq)
	}
	tools := c.tools()
	require.NotEmpty(t, tools)
	withEvilName := 0
	for _, tl := range tools {
		assert.Contains(t, tl.Description, evil, tl.Name)
		assert.Equal(t, evil, tl.Title, tl.Name)
		if strings.ContainsAny(tl.Name, "\x1b\r\n\u009b\u202e\u200d") {
			withEvilName++
		}
	}
	assert.GreaterOrEqual(t, withEvilName, 5)
	echo := tools[0]
	require.Equal(t, "echo", echo.Name)
	props := echo.InputSchema["properties"].(map[string]any)
	assert.Equal(t, evil, props["text"].(map[string]any)["description"])
	assert.Equal(t, evil, echo.InputSchema["description"])

	text, isErr := resultText(t, c.call(3, "echo", `{"text":"hi"}`))
	assert.Equal(t, evil+"hi", text)
	assert.False(t, isErr)
	text, isErr = resultText(t, c.call(4, "echo", `{"text":"hi","error":true}`))
	assert.Equal(t, "error: "+evil+"hi", text)
	assert.True(t, isErr)
	m := c.call(5, "rpc_error", `{}`)
	require.NotNil(t, m.Error)
	assert.Equal(t, evil, m.Error.Message)
	text, _ = resultText(t, c.call(6, "csi\x1b[2Jclear", `{}`))
	assert.Equal(t, evil, text)
}

// endlessAtLeast is how many bytes the endless-line tests read.
const endlessAtLeast = 20 << 20

func TestEndlessLine(t *testing.T) {
	c := start(t, nil, "-mode", "endless-line")
	c.send(initRequest)
	require.NoError(t, c.stdout.SetReadDeadline(time.Now().Add(10*time.Second)))
	buf := make([]byte, 1<<20)
	total := 0
	for total < endlessAtLeast {
		n, err := c.r.Read(buf)
		require.NoError(t, err)
		require.NotContains(t, string(buf[:n]), "\n", "no newline, ever")
		if total == 0 {
			assert.True(t, bytes.HasPrefix(buf[:n], []byte(`{"jsonrpc":"2.0","id":1,"result":`)), "%.100q", buf[:n])
		}
		total += n
	}
	t.Logf("read %d bytes without a newline", total)
	// Closing the reading end stops the writer (SIGPIPE or EPIPE).
	require.NoError(t, c.stdout.Close())
	c.exitCode()
}

func TestHugePages(t *testing.T) {
	t.Run("sized", func(t *testing.T) {
		c := start(t, nil, "-mode", "huge-pages", "-page-bytes", "1000000", "-tools-per-page", "100")
		c.initialize()
		for page, cursor := range []string{"", "page-1", "page-2"} {
			params := `{}`
			if cursor != "" {
				params = `{"cursor":"` + cursor + `"}`
			}
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}`, 10+page, params))
			raw := c.line()
			assert.InDelta(t, 1000000, len(raw), 1000000*0.01, "page %d has %d bytes", page, len(raw))
			var r struct {
				Result struct {
					Tools      []listedTool
					NextCursor string
				}
			}
			require.NoError(t, json.Unmarshal(raw, &r))
			assert.Len(t, r.Result.Tools, 100)
			assert.Equal(t, fmt.Sprintf("page-%d", page+1), r.Result.NextCursor, "always a next page")
			assert.Equal(t, fmt.Sprintf("p%d_t0", page), r.Result.Tools[0].Name, "every page lists new tools")
		}
	})
	t.Run("default", func(t *testing.T) {
		c := start(t, nil, "-mode", "huge-pages")
		c.initialize()
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		raw := c.line()
		assert.InDelta(t, 14<<20, len(raw), (14<<20)*0.01)
		assert.Less(t, len(raw), 16<<20, "under mcpward's default stdio receive cap, so the page bound must act")
	})
}

func TestNoInit(t *testing.T) {
	c := start(t, nil, "-mode", "no-init")
	c.send(initRequest)
	c.nothing(500 * time.Millisecond)
	assert.True(t, c.running())
	require.NoError(t, c.stdin.Close())
	assert.Equal(t, exitOK, c.exitCode())
}

// hangCall sends a call of hang as request 7, with a progress token when
// token is not "".
func hangCall(c *child, token string) {
	c.t.Helper()
	meta := ""
	if token != "" {
		meta = `,"_meta":{"progressToken":"` + token + `"}`
	}
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hang","arguments":{}` + meta + `}}`)
}

func TestHangCall(t *testing.T) {
	t.Run("silent", func(t *testing.T) {
		c := start(t, nil, "-mode", "hang-call", "-progress-every", "20")
		c.initialize()
		assert.Contains(t, names(c.tools()), "hang")
		hangCall(c, "tok")
		c.nothing(300 * time.Millisecond)
		text, _ := resultText(t, c.call(3, "ok", `{}`))
		assert.Equal(t, "ok", text, "the hanging call does not block the others")
	})
	t.Run("progress", func(t *testing.T) {
		c := start(t, nil, "-mode", "hang-call", "-progress", "-progress-every", "20")
		c.initialize()
		hangCall(c, "tok-1")
		last := 0.0
		for range 3 {
			m := c.next()
			require.Equal(t, "notifications/progress", m.Method, "never an answer to the call")
			var p struct {
				ProgressToken string  `json:"progressToken"`
				Progress      float64 `json:"progress"`
			}
			require.NoError(t, json.Unmarshal(m.Params, &p))
			assert.Equal(t, "tok-1", p.ProgressToken)
			assert.Greater(t, p.Progress, last)
			last = p.Progress
		}
		c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
		time.Sleep(100 * time.Millisecond)
		// Drain what was sent before the cancellation arrived.
		for {
			require.NoError(t, c.stdout.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
			if _, err := c.r.ReadBytes('\n'); err != nil {
				require.ErrorIs(t, err, os.ErrDeadlineExceeded)
				break
			}
		}
		c.nothing(200 * time.Millisecond)
	})
	t.Run("progress without a token", func(t *testing.T) {
		c := start(t, nil, "-mode", "hang-call", "-progress", "-progress-every", "20")
		c.initialize()
		hangCall(c, "")
		c.nothing(300 * time.Millisecond)
	})
}

// procStat returns the state, parent, process group and session of pid
// from /proc, and false when there is no such process.
func procStat(pid int) (state string, ppid, pgrp, sid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, 0, 0, false
	}
	// pid (comm) state ppid pgrp session ...; comm may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ppid, _ = strconv.Atoi(f[1])
	pgrp, _ = strconv.Atoi(f[2])
	sid, _ = strconv.Atoi(f[3])
	return f[0], ppid, pgrp, sid, true
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	state, _, _, _, ok := procStat(pid)
	return ok && state != "Z"
}

// grandchildren waits for the "hostile: grandchildren" line on stderr and
// returns the pids.
func (c *child) grandchildren() []int {
	c.t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		for l := range strings.Lines(c.stderrText()) {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "hostile: grandchildren "); ok {
				var pids []int
				for _, f := range strings.Fields(rest) {
					pid, err := strconv.Atoi(f)
					require.NoError(c.t, err)
					pids = append(pids, pid)
				}
				return pids
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatal("no grandchildren line on stderr")
	return nil
}

func TestIgnoreTerm(t *testing.T) {
	t.Run("group", func(t *testing.T) {
		c := start(t, nil, "-mode", "ignore-term", "-lifetime", "1m")
		pids := c.grandchildren()
		require.Len(t, pids, 2)
		pid := c.cmd.Process.Pid
		for _, g := range pids {
			_, ppid, pgrp, _, ok := procStat(g)
			require.True(t, ok)
			assert.Equal(t, pid, ppid)
			assert.Equal(t, pid, pgrp, "the grandchildren stay in the child's process group")
		}
		require.NoError(t, syscall.Kill(-pid, syscall.SIGTERM))
		time.Sleep(200 * time.Millisecond)
		assert.True(t, c.running(), "SIGTERM is ignored")
		for _, g := range pids {
			assert.True(t, alive(g), "grandchild %d ignores SIGTERM", g)
		}
		c.initialize()
		text, _ := resultText(t, c.call(3, "ok", `{}`))
		assert.Equal(t, "ok", text)

		require.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))
		c.exitCode()
		assert.Eventually(t, func() bool { return !alive(pids[0]) && !alive(pids[1]) }, wait, 10*time.Millisecond,
			"a group kill ends the grandchildren")
	})
	t.Run("setsid", func(t *testing.T) {
		c := start(t, nil, "-mode", "ignore-term", "-setsid", "-lifetime", "1m")
		pids := c.grandchildren()
		require.Len(t, pids, 2)
		t.Cleanup(func() { _ = syscall.Kill(pids[1], syscall.SIGKILL) })
		pid := c.cmd.Process.Pid
		_, _, pgrp, _, ok := procStat(pids[0])
		require.True(t, ok)
		assert.Equal(t, pid, pgrp)
		_, _, pgrp, sid, ok := procStat(pids[1])
		require.True(t, ok)
		assert.Equal(t, pids[1], pgrp, "the setsid grandchild leads a group of its own")
		assert.Equal(t, pids[1], sid)

		require.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))
		c.exitCode()
		assert.Eventually(t, func() bool { return !alive(pids[0]) }, wait, 10*time.Millisecond)
		assert.True(t, alive(pids[1]), "a group kill does not reach the setsid grandchild: the documented limit")
		require.NoError(t, syscall.Kill(pids[1], syscall.SIGKILL))
		assert.Eventually(t, func() bool { return !alive(pids[1]) }, wait, 10*time.Millisecond)
	})
}

func TestCrashSecrets(t *testing.T) {
	const envCanary, argvCanary = "canary-env-7f3a", "canary-argv-9c1e"
	c := start(t, []string{"HOSTILE_TOKEN=" + envCanary}, "-mode", "crash-secrets", argvCanary)
	c.send(initRequest)
	assert.Equal(t, 3, c.exitCode())
	<-c.stderrDone
	assert.Contains(t, c.stderrText(), "hostile: env HOSTILE_TOKEN="+envCanary)
	assert.Contains(t, c.stderrText(), "="+argvCanary)
	require.NoError(t, c.stdout.SetReadDeadline(time.Now().Add(wait)))
	b, err := c.r.ReadBytes('\n')
	assert.ErrorIs(t, err, io.EOF)
	assert.Empty(t, b, "initialize is never answered")
}

func TestCrashAfterInit(t *testing.T) {
	c := start(t, nil, "-mode", "crash-after-init")
	c.initialize()
	text, _ := resultText(t, c.call(3, "ok", `{}`))
	assert.Equal(t, "ok", text)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"crash","arguments":{}}}`)
	assert.Equal(t, 2, c.exitCode())
}

func TestWrongVersion(t *testing.T) {
	c := start(t, nil, "-mode", "wrong-version")
	assert.Equal(t, "1999-01-01", c.initialize().ProtocolVersion)
}

func TestFlood(t *testing.T) {
	const count = 3000
	c := start(t, nil, "-mode", "flood", "-count", strconv.Itoa(count))
	c.initialize()
	seen := map[string]int{}
	for range count {
		m := c.next()
		require.False(t, m.ID != nil && string(m.ID) != "null", "only notifications")
		seen[m.Method]++
	}
	assert.Equal(t, map[string]int{
		"notifications/tools/list_changed": count / 3,
		"notifications/message":            count / 3,
		"notifications/progress":           count / 3,
	}, seen)
	text, _ := resultText(t, c.call(3, "ok", `{}`))
	assert.Equal(t, "ok", text)
	assert.Eventually(t, func() bool {
		return strings.Contains(c.stderrText(), fmt.Sprintf("hostile: flood of %d notifications sent", count))
	}, wait, 10*time.Millisecond)
}

func TestServerRequests(t *testing.T) {
	c := start(t, nil, "-mode", "server-requests")
	c.initialize()
	var methods []string
	for range 3 {
		m := c.next()
		require.NotEmpty(t, m.ID, "a request")
		methods = append(methods, m.Method)
		c.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"no"}}`)
	}
	assert.Equal(t, []string{"sampling/createMessage", "elicitation/create", "roots/list"}, methods)
	text, _ := resultText(t, c.call(3, "ok", `{}`))
	assert.Equal(t, "ok", text)
	assert.Eventually(t, func() bool { return strings.Count(c.stderrText(), "the client answered") == 3 }, wait, 10*time.Millisecond)
}

func TestMalformed(t *testing.T) {
	c := start(t, nil, "-mode", "malformed")
	c.send(initRequest)
	assert.False(t, json.Valid(c.line()), "a truncated object")
	assert.False(t, json.Valid(c.line()), "not JSON")
	wrong := c.next()
	assert.Equal(t, "2.0", wrong.JSONRPC)
	assert.NotEqual(t, "1", string(wrong.ID), "a result for another request")
	assert.NotEmpty(t, wrong.Result)
	bare := c.next()
	assert.Empty(t, bare.JSONRPC, "no jsonrpc member")
	assert.Equal(t, "1", string(bare.ID))
	c.nothing(300 * time.Millisecond)
}

func TestExitBeforeInit(t *testing.T) {
	c := start(t, nil, "-mode", "exit-before-init")
	assert.Equal(t, 3, c.exitCode(), "without waiting for any input")
	<-c.stderrDone
	assert.Equal(t, "fatal: missing API key\n", c.stderrText())
}

// startHTTP runs the binary with -http on a free loopback port and returns
// its URL. At cleanup SIGTERM must end it with status 0.
func startHTTP(t *testing.T, args ...string) string {
	t.Helper()
	c := start(t, nil, append(args, "-http", "127.0.0.1:0")...)
	url := string(c.line())
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:") && strings.HasSuffix(url, "/mcp"), url)
	t.Cleanup(func() {
		if c.running() {
			require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
			assert.Equal(t, exitOK, c.exitCode())
		}
	})
	return url
}

// post sends one JSON-RPC message and returns the response.
func post(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads SSE events from r and sends their data on the returned
// channel, closed at the end of the stream.
func events(r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- d
			}
		}
	}()
	return ch
}

func recvEvent(t *testing.T, ch <-chan string) rpc {
	t.Helper()
	select {
	case d, ok := <-ch:
		require.True(t, ok, "the stream ended")
		return decode(t, []byte(d))
	case <-time.After(wait):
		t.Fatal("no event")
		return rpc{}
	}
}

// httpInit initializes over HTTP and sends notifications/initialized.
func httpInit(t *testing.T, url string) {
	t.Helper()
	resp := post(t, context.Background(), url, initRequest)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.NotEmpty(t, resp.Header.Get("Mcp-Session-Id"))
	m := recvEvent(t, events(resp.Body))
	assert.Equal(t, "1", string(m.ID))
	resp = post(t, context.Background(), url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
}

func TestHTTPFlood(t *testing.T) {
	const count = 300
	url := startHTTP(t, "-mode", "flood", "-count", strconv.Itoa(count))
	httpInit(t, url)
	resp := post(t, context.Background(), url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ok","arguments":{}}}`)
	ch := events(resp.Body)
	for range count {
		m := recvEvent(t, ch)
		require.True(t, strings.HasPrefix(m.Method, "notifications/"), "the flood comes first")
	}
	m := recvEvent(t, ch)
	assert.Equal(t, "3", string(m.ID))
	text, _ := resultText(t, m)
	assert.Equal(t, "ok", text)
	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "no standalone stream")
}

func TestHTTPHangCallProgress(t *testing.T) {
	url := startHTTP(t, "-mode", "hang-call", "-progress", "-progress-every", "20")
	httpInit(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := post(t, ctx, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hang","arguments":{},"_meta":{"progressToken":5}}}`)
	ch := events(resp.Body)
	for range 3 {
		m := recvEvent(t, ch)
		require.Equal(t, "notifications/progress", m.Method)
		assert.Contains(t, string(m.Params), `"progressToken":5`)
	}
	cancel() // the client goes away; the server stops (checked by the SIGTERM at cleanup)
}

func TestHTTPEndlessLine(t *testing.T) {
	url := startHTTP(t, "-mode", "endless-line")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := post(t, ctx, url, initRequest)
	br := bufio.NewReader(resp.Body)
	head := make([]byte, len(sseFrame))
	_, err := io.ReadFull(br, head)
	require.NoError(t, err)
	assert.Equal(t, sseFrame, string(head))
	buf := make([]byte, 1<<20)
	total := 0
	for total < endlessAtLeast {
		n, err := br.Read(buf)
		require.NoError(t, err)
		require.NotContains(t, string(buf[:n]), "\n")
		total += n
	}
	cancel()
}

func TestHTTPMalformed(t *testing.T) {
	url := startHTTP(t, "-mode", "malformed")
	resp := post(t, context.Background(), url, initRequest)
	var got []string
	for d := range events(resp.Body) {
		got = append(got, d)
	}
	require.Len(t, got, 4, "four messages, then the stream ends")
	assert.False(t, json.Valid([]byte(got[0])))
	assert.False(t, json.Valid([]byte(got[1])))
}

func TestHTTPNoInit(t *testing.T) {
	url := startHTTP(t, "-mode", "no-init")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(initRequest))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "no answer: %v", err)
}

// TestSpawnLogAndHangList: -spawn-log appends one line per start; with
// -hang-list, normal never answers tools/list but still answers a call.
func TestSpawnLogAndHangList(t *testing.T) {
	log := filepath.Join(t.TempDir(), "spawns")
	for range 2 {
		c := start(t, nil, "-mode", "normal", "-hang-list", "-spawn-log", log)
		c.initialize()
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
		c.nothing(300 * time.Millisecond)
		text, _ := resultText(t, c.call(3, "ok", `{}`))
		assert.Equal(t, "ok", text)
		require.NoError(t, c.stdin.Close())
		assert.Equal(t, exitOK, c.exitCode())
	}
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Regexp(t, `^normal \d+\nnormal \d+\n$`, string(b))
}
