package stdiotransport

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refTail is the direct definition of stderrTail.tail over everything
// ever written: the last StderrTailBytes bytes; if that cut anything, the
// bytes up to and including the first newline are dropped; then the last
// StderrTailLines lines.
func refTail(all []byte) string {
	b := all
	if len(b) > StderrTailBytes {
		b = b[len(b)-StderrTailBytes:]
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return ""
		}
		b = b[i+1:]
	}
	body := strings.TrimSuffix(string(b), "\n")
	if body == "" {
		return string(b)
	}
	lines := strings.Split(body, "\n")
	if len(lines) <= StderrTailLines {
		return string(b)
	}
	kept := strings.Join(lines[len(lines)-StderrTailLines:], "\n")
	if strings.HasSuffix(string(b), "\n") {
		kept += "\n"
	}
	return kept
}

func writeAll(s *stderrTail, chunks ...[]byte) {
	for _, c := range chunks {
		n, err := s.Write(c)
		if err != nil || n != len(c) {
			panic("stderrTail.Write must take everything")
		}
	}
}

func TestStderrTail(t *testing.T) {
	line := func(i int) string { return "line " + strconv.Itoa(i) + "\n" }
	var many, last100 strings.Builder
	for i := range 150 {
		many.WriteString(line(i))
		if i >= 50 {
			last100.WriteString(line(i))
		}
	}
	long := strings.Repeat("x", StderrTailBytes+10)
	cases := []struct {
		name   string
		chunks []string
		want   string
	}{
		{name: "nothing", want: ""},
		{name: "one line", chunks: []string{"fatal: missing API key\n"}, want: "fatal: missing API key\n"},
		{name: "unterminated last line", chunks: []string{"a\nb"}, want: "a\nb"},
		{name: "split writes", chunks: []string{"fat", "al\nex", "it\n"}, want: "fatal\nexit\n"},
		{name: "the last 100 lines", chunks: []string{many.String()}, want: last100.String()},
		{name: "a line longer than the bound is dropped", chunks: []string{"head\n", long}, want: ""},
		{name: "the cut line is dropped", chunks: []string{long, "\nafter\n"}, want: "after\n"},
		{name: "wrapping the ring", chunks: []string{strings.Repeat("y", StderrTailBytes-3), "\nz1\n", "z2\n"}, want: "z1\nz2\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s stderrTail
			var all []byte
			for _, c := range tc.chunks {
				writeAll(&s, []byte(c))
				all = append(all, c...)
			}
			assert.Equal(t, tc.want, s.tail())
			assert.Equal(t, refTail(all), s.tail(), "the reference agrees")
			assert.Equal(t, int64(len(all)), s.bytesWritten())
		})
	}
}

// FuzzStderrTail checks the ring against the direct definition, whatever
// the write sizes: the tail is bounded, made of whole lines when anything
// was cut, and equal to refTail.
func FuzzStderrTail(f *testing.F) {
	f.Add([]byte("a\nb\nc"), uint16(1), uint16(3))
	f.Add(bytes.Repeat([]byte("line\n"), 4000), uint16(700), uint16(16384))
	f.Add(bytes.Repeat([]byte("x"), 20000), uint16(16383), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk, repeat uint16) {
		var s stderrTail
		var all []byte
		step := int(chunk)%4096 + 1
		for r := 0; r <= int(repeat)%4; r++ {
			for off := 0; off < len(data); off += step {
				c := data[off:min(off+step, len(data))]
				writeAll(&s, c)
				all = append(all, c...)
			}
		}
		got := s.tail()
		require.Equal(t, refTail(all), got)
		require.LessOrEqual(t, len(got), StderrTailBytes)
		require.LessOrEqual(t, strings.Count(strings.TrimSuffix(got, "\n"), "\n")+1, StderrTailLines)
		require.True(t, bytes.HasSuffix(all, []byte(got)), "the tail is the end of what was written")
	})
}
