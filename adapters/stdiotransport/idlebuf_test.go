package stdiotransport

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/internal/jsonrpcwire"
)

// sizeReader serves data in chunks (as chunkReader) and records the size
// of the buffer each Read was given and whether bytes were left then.
type sizeReader struct {
	chunkReader
	sizes []int
}

func (r *sizeReader) Read(p []byte) (int, error) {
	r.sizes = append(r.sizes, len(p))
	return r.chunkReader.Read(p)
}

func msgLine(method string, pad int) string {
	return `{"jsonrpc":"2.0","method":"` + method + `","params":{"s":"` + strings.Repeat("x", pad) + `"}}` + "\n"
}

// TestFramerIdleBuffer: once every byte read has been framed, the framer
// reads again into its small idle buffer, whatever size the lines before
// had (it held a pooled 32 KiB buffer, or the grown one, before). Lines of
// every size around the buffers' bounds frame as before.
func TestFramerIdleBuffer(t *testing.T) {
	sizes := []int{0, idleBufSize - 60, idleBufSize - 50, idleBufSize, readBufSize - 50, readBufSize, 5 * readBufSize}
	for _, pad := range sizes {
		for _, chunk := range []int{0, 7, 4096} {
			var data strings.Builder
			var want []string
			for _, p := range []int{pad, 3, pad, pad} {
				data.WriteString(msgLine("m", p))
				want = append(want, "m")
			}
			r := &sizeReader{chunkReader: chunkReader{data: []byte(data.String())}}
			if chunk > 0 {
				r.chunks = []int{chunk}
			}
			f := &framer{r: r}
			var got []string
			for {
				m, err := f.next()
				if err != nil {
					require.ErrorIs(t, err, io.EOF)
					break
				}
				got = append(got, methods([]jsonrpc.Message{m})...)
			}
			f.release()
			assert.Equal(t, want, got, "pad %d chunk %d", pad, chunk)
			// The last Read (which met the end) came with nothing pending:
			// into the idle buffer.
			assert.Equal(t, idleBufSize, r.sizes[len(r.sizes)-1], "pad %d chunk %d", pad, chunk)
			assert.Nil(t, f.pool, "no pooled buffer held after release")
		}
	}
}

// segmentReader serves each segment by itself: a Read never crosses
// from one to the next (two messages written apart in time).
type segmentReader struct{ segs [][]byte }

func (r *segmentReader) Read(p []byte) (int, error) {
	if len(r.segs) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.segs[0])
	if r.segs[0] = r.segs[0][n:]; len(r.segs[0]) == 0 {
		r.segs = r.segs[1:]
	}
	return n, nil
}

// TestFramerReusesGrownBuffer: a line longer than the pooled buffer grows
// a buffer; once the line is framed and nothing is pending, the framer
// reads into its idle buffer again and the grown one goes to a pool, where
// the next long line finds it instead of growing its own from the pooled
// size (each page of a listing used to regrow it).
func TestFramerReusesGrownBuffer(t *testing.T) {
	line := []byte(msgLine("page", 3*readBufSize))
	f := &framer{r: &segmentReader{segs: [][]byte{bytes.Clone(line), bytes.Clone(line)}}}
	defer f.release()
	_, err := f.next()
	require.NoError(t, err)
	grown := f.pool
	require.NotNil(t, grown)
	require.Greater(t, len(*grown), readBufSize)
	_, err = f.next()
	require.NoError(t, err)
	// sync.Pool may drop what was put in it (a collection in between);
	// when it did not, the second line reused the grown buffer.
	if f.pool != grown {
		t.Skip("the pool dropped the grown buffer")
	}
	assert.Same(t, grown, f.pool)
}

// TestStderrReadFrom: what ReadFrom drains is what Write would have kept,
// whatever the chunking; it reads into its small buffer except during a
// burst (reads that fill the buffer), and returns to it after one.
func TestStderrReadFrom(t *testing.T) {
	data := bytes.Repeat([]byte("a stderr line\n"), 5000)
	for _, chunk := range []int{1, 100, stderrReadSize, 4096, 1 << 20} {
		var s, ref stderrTail
		writeAll(&ref, data)
		r := &sizeReader{chunkReader: chunkReader{data: bytes.Clone(data), chunks: []int{chunk, chunk, 10}}}
		n, err := s.ReadFrom(r)
		require.NoError(t, err)
		assert.Equal(t, int64(len(data)), n)
		assert.Equal(t, ref.tail(), s.tail())
		assert.Equal(t, ref.bytesWritten(), s.bytesWritten())
		assert.Equal(t, stderrReadSize, r.sizes[0], "a quiet pipe is read with the small buffer")
		for i := 1; i < len(r.sizes); i++ {
			if r.sizes[i-1] != stderrReadSize { // after a read of the burst buffer
				continue
			}
			// the read before filled it or not: the next size follows
			assert.Contains(t, []int{stderrReadSize, readBufSize}, r.sizes[i])
		}
		assert.Equal(t, stderrReadSize, r.sizes[len(r.sizes)-1], "chunk %d: back to the small buffer after a short read", chunk)
	}
	var quiet stderrTail
	n, err := quiet.ReadFrom(&chunkReader{})
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Empty(t, quiet.buf, "a child that wrote nothing costs no ring")
}

// TestStderrRingGrows: the ring grows with what is kept, up to
// StderrTailBytes, and keeps the tail intact across each growth.
func TestStderrRingGrows(t *testing.T) {
	var s stderrTail
	var all []byte
	for i := range 3000 {
		c := []byte(strings.Repeat("y", i%37) + "\n")
		writeAll(&s, c)
		all = append(all, c...)
		require.LessOrEqual(t, len(s.buf), StderrTailBytes)
		if len(all) < 256 {
			require.LessOrEqual(t, len(s.buf), 256)
		}
	}
	assert.Equal(t, refTail(all), s.tail())
	assert.Len(t, s.buf, StderrTailBytes)
}

// TestFramerDropsHugeBuffer: a buffer grown past bigBufKeep (a line near
// the receive cap) is dropped once its line is framed, not kept in the
// pool for the next line.
func TestFramerDropsHugeBuffer(t *testing.T) {
	line := []byte(msgLine("huge", bigBufKeep))
	f := &framer{r: &segmentReader{segs: [][]byte{line}}}
	_, err := f.next()
	require.NoError(t, err)
	huge := f.pool
	require.NotNil(t, huge)
	require.Greater(t, len(*huge), bigBufKeep)
	f.release()
	for range 4 {
		p, _ := bigBufs.Get().(*[]byte)
		assert.False(t, p == huge, "the huge buffer was pooled")
	}
}

// TestFramerBurst: a burst of small lines (a flood of notifications, the
// output of a chatty server) is read in large reads, not 512 bytes at a
// time: once a read fills the idle buffer, the framer reads into the
// pooled one until a read comes back short.
func TestFramerBurst(t *testing.T) {
	var data strings.Builder
	for range 2000 {
		data.WriteString(`{"jsonrpc":"2.0","method":"notifications/progress"}` + "\n")
	}
	r := &sizeReader{chunkReader: chunkReader{data: []byte(data.String())}}
	f := &framer{r: r}
	defer f.release()
	n := 0
	for {
		_, err := f.next()
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		n++
	}
	require.Equal(t, 2000, n)
	assert.Less(t, len(r.sizes), 12, "%d bytes in %d reads", data.Len(), len(r.sizes))
	assert.Equal(t, idleBufSize, r.sizes[len(r.sizes)-1], "back to the idle buffer once drained")
}

// FuzzFramerOwnership: no message the framer returns shares memory it, or
// a later framer taking its pooled buffers, writes again (the framer's
// buffers are reused and pooled; Decode copies what a message keeps).
// Lines of generated sizes (from a few bytes to eight times the pooled
// buffer, so that lines fill the idle, the pooled and grown buffers), read
// in generated chunks; every message is compared with its line only after
// the whole stream, and a second stream of other bytes through a second
// framer, were read.
func FuzzFramerOwnership(f *testing.F) {
	f.Add([]byte{0, 40, 3, 90, 90, 1, 200, 0, 255}, uint16(4096))
	f.Add([]byte{100, 100, 100, 100}, uint16(0))
	f.Add([]byte{33, 0, 0, 0, 66, 2}, uint16(511))
	f.Fuzz(func(t *testing.T, sizes []byte, chunk uint16) {
		if len(sizes) > 16 {
			sizes = sizes[:16]
		}
		stream := func(fill string) ([]byte, []string) {
			var data []byte
			var lines []string
			for i, n := range sizes {
				// n*1 KiB, plus an odd remainder so that lines end anywhere.
				line := msgLine(fill, int(n)*1024+i*37)
				data = append(data, line...)
				lines = append(lines, line)
			}
			return data, lines
		}
		chunks := []int{int(chunk) + 1, 3*int(chunk) + 7, 1 << 16}
		dataA, linesA := stream("a")
		msgsA, err := frameAll(t, &chunkReader{data: dataA, chunks: chunks})
		require.ErrorIs(t, err, io.EOF)
		dataB, _ := stream("b")
		msgsB, err := frameAll(t, &chunkReader{data: bytes.ReplaceAll(dataB, []byte("x"), []byte("y")), chunks: chunks[1:]})
		require.ErrorIs(t, err, io.EOF)
		require.Len(t, msgsA, len(linesA))
		require.Len(t, msgsB, len(linesA))
		for i, line := range linesA {
			want, err := jsonrpcwire.Decode([]byte(line))
			require.NoError(t, err)
			requireSameMessage(t, want, msgsA[i])
		}
	})
}
