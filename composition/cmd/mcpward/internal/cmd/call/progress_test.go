package call

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/testserver"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
)

func TestNewCmdCallProgressFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{{[]string{"s", "t"}, false}, {[]string{"s", "t", "--progress"}, true}} {
		run := cmdtest.NewWorld(t, nil).Factory(t)
		var got *Options
		require.NoError(t, cmdtest.Execute(run.F, NewCmdCall(run.F, func(_ context.Context, o *Options) error { got = o; return nil }), tt.args...))
		assert.Equal(t, tt.want, got.Progress, "%v", tt.args)
	}
}

// waitNote is a "still waiting" note of the slow tool, or a "still
// connecting" note of its server: "(5s)", and from a minute on "(1m0s)".
// The test's fake clock runs 5× faster than the real one from the start
// of Run until the progress shows, connect included, so a loaded machine
// sees these notes (the connect's after 0.6 s, minutes after 12 s).
var waitNote = regexp.MustCompile(`still (?:waiting for t/slow|connecting t) \((?:\d+m)?\d+s\)…\n`)

// TestRunProgress: the call always asks the server for progress (the
// server says whether it got a token); on a terminal the progress is one
// line redrawn in place and erased before the result, elsewhere nothing
// unless --progress (plain lines); the server's message is escaped; stdout
// carries only the result, with or without --json.
func TestRunProgress(t *testing.T) {
	// The progress shown: the latest notification at a tick, either of
	// the server's two (the first may be overtaken before a tick, the
	// second dropped by the session's inbound gate while the first waits).
	shown := "t/slow: (50% " + regexp.QuoteMeta(termsafe.Line(testserver.ProgressMessage(1))) +
		"|100% " + regexp.QuoteMeta(termsafe.Line(testserver.ProgressMessage(2))) + ")"
	tests := []struct {
		name     string
		tty      bool
		progress bool
		json     bool
		errOut   func(t *testing.T, errOut string)
	}{
		{name: "terminal", tty: true, errOut: func(t *testing.T, errOut string) {
			assert.Regexp(t, "\r\x1b\\[K"+shown, errOut)
			assert.True(t, strings.HasSuffix(errOut, "\r\x1b[K"), "the line is erased before the result: %q", errOut)
			assert.NotContains(t, errOut, "\n", "one line, redrawn in place")
		}},
		{name: "terminal, json", tty: true, json: true, errOut: func(t *testing.T, errOut string) {
			assert.Regexp(t, "\r\x1b\\[K"+shown, errOut)
		}},
		{name: "not a terminal", errOut: func(t *testing.T, errOut string) {
			assert.Empty(t, errOut)
		}},
		{name: "not a terminal, --progress", progress: true, errOut: func(t *testing.T, errOut string) {
			assert.Regexp(t, "^("+shown+"\n)+$", errOut, "plain lines, nothing redrawn")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := world(t, testserver.ModeProgress)
			run := w.Factory(t)
			run.IO.SetStderrTTY(tt.tty)
			release := filepath.Join(w.Root, "release")
			args, err := json.Marshal(map[string]string{"release": release})
			require.NoError(t, err)
			opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, Server: "t", Tool: "slow", Args: string(args),
				JSON: tt.json, Progress: tt.progress, Timeouts: fleet.Timeouts{Connect: time.Minute, Call: time.Minute}}
			done := make(chan error, 1)
			go func() { done <- Run(context.Background(), opts) }()
			if tt.tty || tt.progress {
				require.Eventually(t, func() bool {
					select {
					case err := <-done:
						require.Failf(t, "the call ended before its release", "%v %q", err, run.ErrOut.String())
					default:
					}
					run.Clock.Advance(100 * time.Millisecond)
					return strings.Contains(run.ErrOut.String(), "t/slow: ")
				}, 30*time.Second, 20*time.Millisecond, "no progress shown")
			}
			require.NoError(t, os.WriteFile(release, nil, 0o600))
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("the call did not end")
			}
			// "still waiting" and "still connecting" notes, written when
			// the fake clock ran past progress.WaitAfter, are not the
			// call's progress, nor is the connect's live block (erased with
			// "\x1b[J" before the call).
			errOut := waitNote.ReplaceAllString(run.ErrOut.String(), "")
			if i := strings.LastIndex(errOut, "\x1b[J"); i >= 0 {
				errOut = errOut[i+len("\x1b[J"):]
			}
			tt.errOut(t, errOut)
			for _, r := range strings.ReplaceAll(errOut, "\r\x1b[K", "") {
				require.False(t, r != '\n' && termsafe.Unsafe(r), "rune %U of the server's reaches the terminal: %q", r, errOut)
			}
			if !tt.json {
				assert.Equal(t, "token\n", run.Out.String(), "the server got a progress token; stdout is the result alone")
				return
			}
			var got view.Call
			require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &got), "stdout is the JSON result alone")
			assert.JSONEq(t, `[{"type":"text","text":"token"}]`, string(got.Content))
		})
	}
}
