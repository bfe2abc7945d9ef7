package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func status(s supervisor.State, err *refusal.Error) supervisor.Status {
	return supervisor.Status{State: s, Err: err}
}

func ready(n int) supervisor.Status {
	cat := &catalog.Catalog{}
	for range n {
		cat.Tools = append(cat.Tools, nil)
	}
	return supervisor.Status{State: supervisor.Ready, Catalog: cat}
}

func TestPlain(t *testing.T) {
	_, _, _, out := iostreams.Test()
	clk := clock.NewFake(t0)
	r := New(Options{Out: out, Clock: clk, ConnectTimeout: 30 * time.Second})

	r.OnStatus("alpha", status(supervisor.Connecting, nil))
	assert.Equal(t, "connecting alpha…\n", out.String(), "said when it starts, not when it ends")
	r.OnStatus("beta\x1b[2J", status(supervisor.Connecting, nil))
	assert.Contains(t, out.String(), `connecting beta\x1b[2J…`, "a name is made safe")

	timeout := refusal.New(refusal.Transient, supervisor.ReasonConnectTimeout, "alpha")
	clk.Advance(9 * time.Second)
	r.Tick()
	assert.NotContains(t, out.String(), "still", "no note before 10s")
	clk.Advance(1 * time.Second)
	r.Tick()
	assert.Contains(t, out.String(), "still connecting alpha (10s)…\n")
	r.OnStatus("alpha", status(supervisor.Backoff, timeout))
	assert.Contains(t, out.String(), "alpha: attempt 1 failed (transient connect_timeout); retrying…\n")
	r.OnStatus("beta\x1b[2J", ready(2))
	assert.Contains(t, out.String(), `beta\x1b[2J: connected (2 tools)`+"\n", "an outcome as soon as it is known")

	clk.Advance(time.Second)
	r.OnStatus("alpha", status(supervisor.Connecting, timeout))
	clk.Advance(30*time.Second + 120*time.Millisecond)
	r.OnStatus("alpha", status(supervisor.Failed, timeout))
	assert.Contains(t, out.String(), "alpha: failed (transient connect_timeout): timed out after 30.1s (--connect-timeout 30s)\n")
	d, ok := r.LastAttempt("alpha")
	assert.True(t, ok)
	assert.Equal(t, 30*time.Second+120*time.Millisecond, d)

	before := out.String()
	r.Finish([]composition.ServerStatus{
		{Name: "alpha", State: composition.StateFailed},
		{Name: "gamma", State: composition.StateConnected, Tools: make([]composition.ToolSummary, 1)},
		{Name: "delta", State: composition.StateFailed, Class: refusal.AuthRequired, Reason: "oauth_sign_in_required"},
		{Name: "denied", State: composition.StateDenied},
	})
	assert.Equal(t, before+"gamma: connected (1 tool)\n"+
		"delta: failed (auth_required oauth_sign_in_required); sign in with \"mcpward login delta\"\n", out.String(),
		"Finish adds only the outcomes not written yet")
	r.OnStatus("alpha", status(supervisor.Connecting, nil))
	r.Tick()
	assert.Equal(t, before+"gamma: connected (1 tool)\n"+
		"delta: failed (auth_required oauth_sign_in_required); sign in with \"mcpward login delta\"\n", out.String(),
		"nothing after Finish")
}

func TestPlainNoteSchedule(t *testing.T) {
	_, _, _, out := iostreams.Test()
	clk := clock.NewFake(t0)
	r := New(Options{Out: out, Clock: clk})
	r.OnStatus("s", status(supervisor.Connecting, nil))
	for range 200 {
		clk.Advance(time.Second)
		r.Tick()
	}
	var notes []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "still") {
			notes = append(notes, l)
		}
	}
	assert.Equal(t, []string{
		"still connecting s (10s)…", "still connecting s (30s)…", "still connecting s (1m0s)…",
		"still connecting s (2m0s)…", "still connecting s (3m0s)…",
	}, notes, "sparse: 10s, 30s, 1m, then every minute")
}

func TestQuiet(t *testing.T) {
	_, _, _, out := iostreams.Test()
	clk := clock.NewFake(t0)
	r := New(Options{Out: out, Clock: clk, Quiet: 3 * time.Second})
	r.OnStatus("s", status(supervisor.Connecting, nil))
	clk.Advance(2 * time.Second)
	r.Tick()
	assert.Empty(t, out.String(), "nothing before Quiet")
	r.OnStatus("s", status(supervisor.Backoff, refusal.New(refusal.Transient, "disconnected", "s")))
	assert.Empty(t, out.String())
	clk.Advance(time.Second)
	r.Tick()
	assert.Equal(t, "still connecting s (3s)…\n", out.String())
	r.OnStatus("s", status(supervisor.Connecting, nil))
	r.OnStatus("s", status(supervisor.Backoff, refusal.New(refusal.Transient, "disconnected", "s")))
	assert.Contains(t, out.String(), "s: attempt 2 failed (transient disconnected); retrying…\n", "announced: retries are said")
	r.OnStatus("s", ready(1))
	r.Finish([]composition.ServerStatus{{Name: "s", State: composition.StateConnected}})
	assert.NotContains(t, out.String(), "connected (", "no outcome line in quiet mode")
}

func TestLive(t *testing.T) {
	_, _, _, out := iostreams.Test()
	clk := clock.NewFake(t0)
	r := New(Options{Out: out, Clock: clk, Live: true, Width: 40})
	r.OnStatus("alpha", status(supervisor.Connecting, nil))
	r.OnStatus("beta", status(supervisor.Connecting, nil))
	assert.Empty(t, out.String(), "OnStatus never writes in live mode")
	r.Tick()
	assert.Equal(t, "connecting alpha… 0s\nconnecting beta… 0s\n", out.String())
	out.Reset()
	r.Tick()
	assert.Empty(t, out.String(), "an unchanged block is not redrawn")
	clk.Advance(1500 * time.Millisecond)
	r.Tick()
	assert.Equal(t, "\r\x1b[2A\x1b[Jconnecting alpha… 1s\nconnecting beta… 1s\n", out.String(), "redrawn in place")
	out.Reset()
	r.OnStatus("beta", ready(3))
	r.OnStatus("alpha", status(supervisor.Backoff, refusal.New(refusal.Transient, supervisor.ReasonConnectTimeout, "alpha")))
	r.Tick()
	assert.Equal(t, "\r\x1b[2A\x1b[Jbeta: connected (3 tools)\nconnecting alpha… 1s (attempt 1 failed…\n", out.String(),
		"the outcome above the block, the block cut to the width")
	out.Reset()
	r.OnStatus("alpha", status(supervisor.Failed, refusal.New(refusal.Transient, "x", "alpha")))
	r.Finish(nil)
	assert.Equal(t, "\r\x1b[1A\x1b[Jalpha: failed (transient x)\n", out.String(), "the block is erased at the end")
}

func TestLiveStart(t *testing.T) {
	_, _, _, out := iostreams.Test()
	clk := clock.NewFake(t0)
	r := New(Options{Out: out, Clock: clk, Live: true})
	r.Start()
	r.OnStatus("s", status(supervisor.Connecting, nil))
	require.Eventually(t, func() bool {
		clk.Advance(Redraw)
		return strings.Contains(out.String(), "connecting s…")
	}, 5*time.Second, time.Millisecond, "the ticker redraws")
	r.Finish(nil)
	assert.Zero(t, clk.Tickers(), "Finish stops the ticker")
	assert.True(t, strings.HasSuffix(out.String(), "\x1b[J"), "and erases the block")
}

func TestWait(t *testing.T) {
	_, _, _, out := iostreams.Test()
	clk := clock.NewFake(t0)
	stop := Wait(out, clk, "srv/tool")
	for range 2 {
		clk.Advance(time.Second)
	}
	require.Eventually(t, func() bool {
		clk.Advance(time.Second)
		return strings.Contains(out.String(), "still waiting for srv/tool (")
	}, 5*time.Second, time.Millisecond)
	stop()
	stop()
	assert.Regexp(t, `^still waiting for srv/tool \([3-9]s\)…\n$`, out.String())
	assert.Zero(t, clk.Tickers())
	n := len(out.String())
	clk.Advance(time.Hour)
	assert.Len(t, out.String(), n, "nothing after stop")
}

func TestTimedOut(t *testing.T) {
	assert.Equal(t, "timed out after 10m0s (--call-timeout 10m0s)", TimedOut(10*time.Minute, "--call-timeout", 10*time.Minute))
	assert.Equal(t, "timed out after 0.3s", TimedOut(299*time.Millisecond, "--call-timeout", 0))
}

func TestIsTimeout(t *testing.T) {
	assert.True(t, IsTimeout("connect_timeout", "connect_timeout", 0, 0))
	assert.True(t, IsTimeout("deadline_exceeded", "connect_timeout", time.Second, time.Second))
	assert.True(t, IsTimeout("timeout", "call_timeout", 2*time.Second, time.Second))
	assert.False(t, IsTimeout("deadline_exceeded", "connect_timeout", time.Millisecond, time.Second), "a deadline that is not ours")
	assert.False(t, IsTimeout("deadline_exceeded", "connect_timeout", time.Hour, 0), "no limit set")
	assert.False(t, IsTimeout("refused", "connect_timeout", time.Hour, time.Second))
}
