package iostreams

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "f")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a regular file is no terminal")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.False(t, isTerminal(w), "a pipe is no terminal")
	assert.Zero(t, terminalWidth(w))
	if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		defer tty.Close()
		assert.True(t, isTerminal(tty))
	}
}

func TestTestStreams(t *testing.T) {
	s, _, out, _ := Test()
	assert.False(t, s.IsStdoutTTY())
	assert.False(t, s.CanRedraw())
	s.SetStderrTTY(true)
	assert.True(t, s.CanRedraw())
	assert.Equal(t, 80, s.TerminalWidth())
	s.SetWidth(120)
	assert.Equal(t, 120, s.TerminalWidth())
	_, _ = s.Out.Write([]byte("x"))
	assert.Equal(t, "x", out.String())
}
