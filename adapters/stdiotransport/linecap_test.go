package stdiotransport

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

// chunkReader returns data in the given chunk sizes (cycling), to split
// lines across reads.
type chunkReader struct {
	data   []byte
	chunks []int
	i      int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.chunks) > 0 {
		n = max(1, r.chunks[r.i%len(r.chunks)])
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func readAllCapped(data []byte, limit int, chunks []int) ([]byte, error) {
	return io.ReadAll(&lineCapReader{r: &chunkReader{data: data, chunks: chunks}, limit: limit})
}

func TestLineCapReader(t *testing.T) {
	cases := []struct {
		name   string
		data   string
		limit  int
		chunks []int
		want   string // delivered bytes
		breach bool
	}{
		{name: "exactly the limit", data: "abcd\nefgh\n", limit: 4, want: "abcd\nefgh\n"},
		{name: "one over", data: "abcd\nefghi\n", limit: 4, want: "abcd\n", breach: true},
		{name: "over without newline", data: "abcdefgh", limit: 4, want: "", breach: true},
		{name: "unterminated last line within limit", data: "ab\ncd", limit: 4, want: "ab\ncd"},
		{name: "empty lines", data: "\n\n\n", limit: 0, want: "\n\n\n"},
		{name: "split across reads", data: "ab\ncdef\nghijk\n", limit: 4, chunks: []int{1}, want: "ab\ncdef\nghij", breach: true},
		{name: "split across reads, within", data: "abcd\nabcd\n", limit: 4, chunks: []int{3, 2}, want: "abcd\nabcd\n"},
		{name: "breach after several lines in one read", data: "a\nb\nc\ntoolong\n", limit: 3, want: "a\nb\nc\n", breach: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAllCapped([]byte(tc.data), tc.limit, tc.chunks)
			assert.Equal(t, tc.want, string(got))
			if !tc.breach {
				require.NoError(t, err)
				return
			}
			var re *refusal.Error
			require.True(t, errors.As(err, &re))
			assert.Equal(t, refusal.Protocol, re.Class)
			assert.Equal(t, "receive_cap_exceeded", re.Reason)
		})
	}
	t.Run("sticky", func(t *testing.T) {
		r := &lineCapReader{r: bytes.NewReader([]byte("toolong")), limit: 2}
		_, err1 := r.Read(make([]byte, 10))
		_, err2 := r.Read(make([]byte, 10))
		require.Error(t, err1)
		assert.Same(t, err1, err2)
	})
	t.Run("passes the source's errors", func(t *testing.T) {
		_, err := io.ReadAll(&lineCapReader{r: iotest.ErrReader(io.ErrUnexpectedEOF), limit: 2})
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
}

// FuzzLineCapReader checks the reader against a direct definition: it
// delivers a prefix of the input, every line of which fits the limit; it
// fails exactly when some line does not fit, and then only after every
// line before that one was delivered.
func FuzzLineCapReader(f *testing.F) {
	f.Add([]byte("abc\ndefg\n"), uint8(3), uint8(2))
	f.Add([]byte("\n\nxx"), uint8(0), uint8(1))
	f.Add(bytes.Repeat([]byte("a"), 300), uint8(255), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, limit, chunk uint8) {
		got, err := readAllCapped(data, int(limit), []int{int(chunk), int(chunk) / 2, 1})
		require.True(t, bytes.HasPrefix(data, got), "not a prefix")
		for _, l := range bytes.Split(got, []byte("\n")) {
			require.LessOrEqual(t, len(l), int(limit), "a delivered line exceeds the limit")
		}
		firstBad := -1 // start of the first line over the limit
		for start := 0; start <= len(data); {
			end := bytes.IndexByte(data[start:], '\n')
			if end < 0 {
				end = len(data) - start
			}
			if end > int(limit) {
				firstBad = start
				break
			}
			start += end + 1
		}
		if firstBad < 0 {
			require.NoError(t, err)
			require.Equal(t, data, got)
			return
		}
		require.Equal(t, "receive_cap_exceeded", refusal.ReasonOf(err))
		require.GreaterOrEqual(t, len(got), firstBad, "a line before the breach was withheld")
	})
}
