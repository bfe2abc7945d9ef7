package progress

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/ports"
)

func TestProgressWords(t *testing.T) {
	tests := []struct {
		name string
		p    ports.Progress
		want string
	}{
		{"percent", ports.Progress{Progress: 21, Total: 50, Message: "copying"}, "42% copying"},
		{"rounded down", ports.Progress{Progress: 2, Total: 3}, "66%"},
		{"past the total", ports.Progress{Progress: 7, Total: 5}, "100%"},
		{"negative", ports.Progress{Progress: -3, Total: 5}, "0%"},
		{"huge total", ports.Progress{Progress: 1, Total: math.MaxFloat64}, "0%"},
		{"no total", ports.Progress{Progress: 17, Message: "files"}, "17 files"},
		{"no total, huge", ports.Progress{Progress: 1e300}, "1e+300"},
		{"message escaped", ports.Progress{Progress: 1, Total: 2, Message: "a\x1b[2J\rb\u202e"}, `50% a\x1b[2J\rb\u202e`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, progressWords(tt.p))
		})
	}
}

func TestCallLive(t *testing.T) {
	_, _, _, out := iostreams.Test()
	clk := clock.NewFake(t0)
	c := StartCall(CallOptions{Out: out, Clock: clk, Label: "s/t", Live: true, Width: 20})
	defer c.Stop()

	c.Tick()
	assert.Empty(t, out.String(), "nothing before the first notification")
	c.Report(ports.Progress{Progress: 1, Total: 4, Message: "one"})
	c.Report(ports.Progress{Progress: 2, Total: 4, Message: "two"})
	assert.Empty(t, out.String(), "Report never writes")
	c.Tick()
	assert.Equal(t, "\r\x1b[Ks/t: 50% two", out.String(), "the latest, once per tick")
	c.Tick()
	c.Report(ports.Progress{Progress: 2, Total: 4, Message: "two"})
	c.Tick()
	assert.Equal(t, "\r\x1b[Ks/t: 50% two", out.String(), "an unchanged line is not redrawn")

	out.Reset()
	c.Report(ports.Progress{Progress: 3, Total: 4, Message: "a message far wider than the terminal"})
	c.Tick()
	assert.Equal(t, "\r\x1b[Ks/t: 75% a message…", out.String(), "cut to the width less one")

	out.Reset()
	_, _ = c.Above(out).Write([]byte("still waiting for s/t (3s)…\n"))
	assert.Equal(t, "\r\x1b[Kstill waiting for s/t (3s)…\ns/t: 75% a message…", out.String(), "a note goes above the line")

	out.Reset()
	c.Stop()
	assert.Equal(t, "\r\x1b[K", out.String(), "Stop erases the line")
	c.Report(ports.Progress{Progress: 4, Total: 4})
	c.Tick()
	c.Stop()
	assert.Equal(t, "\r\x1b[K", out.String(), "nothing after Stop")
	assert.Zero(t, clk.Tickers(), "the ticker is stopped")
}

func TestCallPlain(t *testing.T) {
	_, _, _, out := iostreams.Test()
	clk := clock.NewFake(t0)
	c := StartCall(CallOptions{Out: out, Clock: clk, Label: "s/t", Plain: true})
	c.Report(ports.Progress{Progress: 1, Total: 2, Message: "x\x1b]0;t\x07"})
	c.Tick()
	c.Report(ports.Progress{Progress: 1, Total: 2, Message: "x\x1b]0;t\x07"})
	c.Tick()
	c.Report(ports.Progress{Progress: 2, Total: 2, Message: strings.Repeat("m", 500)})
	c.Tick()
	c.Stop()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if assert.Len(t, lines, 2, "one line per change: %q", out.String()) {
		assert.Equal(t, `s/t: 50% x\x1b]0;t\x07`, lines[0])
		assert.Equal(t, plainWidth, len([]rune(lines[1])), "a long line is cut")
	}
	assert.NotContains(t, out.String(), "\r", "nothing is redrawn")
	w := &iostreams.Buffer{}
	assert.Equal(t, w, c.Above(w), "no live line, nothing to write around")
}

func TestCallOff(t *testing.T) {
	_, _, _, out := iostreams.Test()
	clk := clock.NewFake(t0)
	c := StartCall(CallOptions{Out: out, Clock: clk, Label: "s/t"})
	assert.Zero(t, clk.Tickers(), "no ticker when nothing is shown")
	c.Report(ports.Progress{Progress: 1, Total: 2})
	c.Tick()
	c.Stop()
	assert.Empty(t, out.String())
}
