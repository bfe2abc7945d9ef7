package httptransport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prevSSE is the SSE reader as it was before it read a stream into one
// growing buffer (a fixed 4 KiB read buffer, every line that spans reads
// copied into a line buffer, every data value into a data buffer): the
// oracle of FuzzSSEReader. It was proven against the go-sdk's reader by
// FuzzConnVsSDK and keeps no buffer across streams.
type prevSSE struct {
	body  io.Reader
	limit int
	buf   []byte
	line  []byte
	data  []byte
	r, w  int
	skip  bool
	eof   bool
	err   error
}

func newPrevSSE(body io.Reader, limit int) *prevSSE {
	return &prevSSE{body: body, limit: limit, buf: make([]byte, sseBufSize)}
}

func (s *prevSSE) readLine(budget int) (line []byte, n int, err error) {
	s.line = s.line[:0]
	spanning := false
	for {
		if s.skip && s.r < s.w {
			s.skip = false
			if s.buf[s.r] == '\n' {
				s.r++
				n++
			}
		}
		chunk := s.buf[s.r:s.w]
		if i := bytes.IndexAny(chunk, "\r\n"); i >= 0 {
			n += i + 1
			if n > budget {
				return nil, n, errSSETooLarge
			}
			s.r += i + 1
			if chunk[i] == '\r' {
				s.skip = true
			}
			if spanning {
				s.line = append(s.line, chunk[:i]...)
				return s.line, n, nil
			}
			return chunk[:i], n, nil
		}
		n += len(chunk)
		if n > budget {
			return nil, n, errSSETooLarge
		}
		if len(chunk) > 0 {
			s.line = append(s.line, chunk...)
			spanning = true
		}
		s.r, s.w = 0, 0
		if s.eof {
			if spanning {
				return s.line, n, nil
			}
			return nil, n, s.err
		}
		m, rerr := s.body.Read(s.buf)
		s.w = m
		if rerr != nil {
			s.eof, s.err = true, rerr
		}
	}
}

func (s *prevSSE) next() (streamEvent, error) {
	var ev streamEvent
	hasData, some := false, false
	s.data = s.data[:0]
	taken := 0
	for {
		line, n, err := s.readLine(s.limit - taken)
		taken += n
		if err != nil {
			if err == errSSETooLarge {
				return streamEvent{}, err
			}
			if some {
				ev.data = s.data
				return ev, nil
			}
			return streamEvent{}, err
		}
		if len(line) == 0 {
			if some {
				ev.data = s.data
				return ev, nil
			}
			taken = 0
			continue
		}
		key, val, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			return streamEvent{}, errSSEMalformed
		}
		switch string(key) {
		case "event":
			ev.name = string(bytes.TrimSpace(val))
		case "id":
			ev.id = string(bytes.TrimSpace(val))
		case "retry":
			ev.retry = string(bytes.TrimSpace(val))
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, bytes.TrimSpace(val)...)
			hasData = true
		default:
			continue
		}
		some = ev.name != "" || ev.id != "" || ev.retry != "" || len(s.data) > 0
	}
}

// failingPieces reads b n bytes at a time, then fails with err (io.EOF
// when nil).
type failingPieces struct {
	b   []byte
	n   int
	err error
}

func (r *failingPieces) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[n:]
	return n, nil
}

var errBoom = errors.New("boom")

// sseOutcome is what a reader made of a stream: every event as text, and
// the error that ended it.
func sseOutcome(next func() (streamEvent, error)) (events []string, end error) {
	for {
		ev, err := next()
		if err != nil {
			return events, err
		}
		events = append(events, fmt.Sprintf("name=%q id=%q retry=%q data=%q", ev.name, ev.id, ev.retry, ev.data))
	}
}

// FuzzSSEReader: for any stream, any limit, any way the stream is cut
// into reads (and a read error or the end after it), the reader yields
// exactly the events and the error the previous reader yielded (prevSSE)
// — lines ending at "\r\n", "\n" or a lone "\r" also when cut between
// reads, comments, id:/retry:/event: fields, multi-line data, the
// receive cap per event, a malformed line, an event cut by the end —
// also when its buffer starts at a few bytes, so that compaction, the
// pinned data value and growth happen within a few lines; and its buffer
// never grows past twice what an event may hold.
func FuzzSSEReader(f *testing.F) {
	const msg = `{"jsonrpc":"2.0","id":1,"result":{}}`
	for _, s := range []string{
		"event: message\ndata: " + msg + "\n\n",
		": c\r\nid: 3\r\nretry: 9\r\ndata: " + msg + "\r\ndata: 2\r\n\r\ndata: b\r\n\r\n",
		"data: a\rdata: b\r\rdata:\r\r",
		"data:\n\n:x\n\ndata: late\n\n",
		"data:  a b  \nid: 1\n\ndata: x",
		"data: 1\nnocolon\n\n",
		"data: " + strings.Repeat("y", 300) + "\n\nevent: other\ndata: z\n\n",
		"id: 5\n\nretry: x\n\n",
		"data: \u00a0a\u00a0\n\n",
	} {
		f.Add([]byte(s), uint16(1<<15), uint8(1), uint8(3), false)
		f.Add([]byte(s), uint16(40), uint8(7), uint8(0), true)
	}
	f.Fuzz(func(t *testing.T, stream []byte, limit uint16, piece, bufSize uint8, fail bool) {
		var err error
		if fail {
			err = errBoom
		}
		n := 1 + int(piece)%64
		want, wantEnd := sseOutcome(newPrevSSE(&failingPieces{b: stream, n: n, err: err}, int(limit)).next)

		s := newSSEReader(&failingPieces{b: stream, n: n, err: err}, int64(limit))
		pooled := s.bufs.buf
		s.bufs.buf = make([]byte, 1+int(bufSize)%16)
		grown := 0
		got, gotEnd := sseOutcome(func() (streamEvent, error) {
			ev, err := s.next()
			grown = max(grown, len(s.bufs.buf))
			return ev, err
		})
		s.bufs.buf = pooled
		s.release()
		require.Equal(t, want, got)
		require.Equal(t, wantEnd, gotEnd)
		// The buffer holds at most an event's lines and the line being
		// split, with a read of at most n bytes beyond: it doubled only
		// while that did not fit.
		require.LessOrEqual(t, grown, max(32, 2*(int(limit)+n+2)), "buffer size for limit %d", limit)
	})
}

// TestSSEReaderLargeEventWarm: a tools/list page written as one event of
// about 75 KiB (100 tools with their schemas), cut into reads of any
// size, is read through a warm buffer (as a stream's reader gets it from
// the pool after the first page) without allocating, and its data is the
// event's own bytes.
func TestSSEReaderLargeEventWarm(t *testing.T) {
	var page strings.Builder
	page.WriteString(`{"jsonrpc":"2.0","id":9,"result":{"tools":[`)
	for i := range 100 {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, `{"name":"t%d","inputSchema":{"type":"object","description":"%s"}}`, i, strings.Repeat("d", 700))
	}
	page.WriteString(`]}}`)
	want := page.String()
	stream := []byte("event: message\r\nid: 1\r\ndata: " + want + "\r\n\r\n")
	for _, piece := range []int{1 << 10, 4 << 10, 16 << 10, 64 << 10} {
		r := &failingPieces{}
		s := newSSEReader(r, DefaultReceiveCap)
		read := func() {
			r.b, r.n = stream, piece
			s.r, s.w, s.eof, s.err, s.skip = 0, 0, false, nil, false
			ev, err := s.next()
			if err != nil || string(ev.data) != want || ev.id != "1" {
				t.Fatal("event not read")
			}
			if _, err := s.next(); err != io.EOF {
				t.Fatal("stream not ended")
			}
		}
		read() // grows the buffer once
		assert.Zero(t, testing.AllocsPerRun(20, read), "pieces of %d", piece)
		assert.LessOrEqual(t, len(s.bufs.buf), 2*len(stream), "grown by doubling")
		s.release()
	}
}

// TestSSEReaderBoundedMemory: the buffer of a reader is bounded by the
// receive cap whatever the stream holds: an endless line fails at the
// cap, and a stream of empty events (an empty data value, comments and
// blank lines, which do not end an event that has nothing) is read in a
// small buffer, as nothing of it is kept.
func TestSSEReaderBoundedMemory(t *testing.T) {
	t.Run("endless line", func(t *testing.T) {
		s := newSSEReader(io.MultiReader(strings.NewReader("data: "), endless('x')), 64<<10)
		s.bufs.buf = make([]byte, sseBufSize) // not a larger one from the pool
		_, err := s.next()
		require.ErrorIs(t, err, errSSETooLarge)
		require.LessOrEqual(t, len(s.bufs.buf), 2*(64<<10))
		s.release()
	})
	t.Run("empty data then blanks", func(t *testing.T) {
		stream := "data:\n" + strings.Repeat(":"+strings.Repeat("c", 1000)+"\n\n", 2000) + "data: end\n\n"
		s := newSSEReader(&failingPieces{b: []byte(stream), n: 4096}, 4096)
		s.bufs.buf = make([]byte, sseBufSize)
		ev, err := s.next()
		require.NoError(t, err)
		require.Equal(t, "\nend", string(ev.data), "the empty value is joined as before")
		require.LessOrEqual(t, len(s.bufs.buf), 16<<10)
		s.release()
	})
}

// endless reads c forever.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// TestSSEAnswerBufferReused: SSE answers are read through the reader's
// pooled buffer, reused for the next stream once the answer is decoded;
// every message keeps its own bytes. The answers are as long as each
// other and larger than the first buffer (so each is read into the grown
// buffer the last one left) and differ in every byte of their result.
func TestSSEAnswerBufferReused(t *testing.T) {
	answersKeepTheirBytes(t, true, 3*sseBufSize)
}

// TestSSEReaderLastingStreamStartsSmall: the reader of a stream that may
// stay open for the session (the standalone GET stream) does not keep a
// grown buffer the pool hands it; a call's stream does.
func TestSSEReaderLastingStreamStartsSmall(t *testing.T) {
	for _, lasting := range []bool{false, true} {
		s := newSSEReader(strings.NewReader(""), 1<<20)
		s.bufs.buf = make([]byte, 256<<10) // as a listing's page left it
		if lasting {
			s.lasting()
			assert.Equal(t, sseBufSize, len(s.bufs.buf))
		} else {
			assert.Equal(t, 256<<10, len(s.bufs.buf))
		}
		_, err := s.next()
		require.ErrorIs(t, err, io.EOF)
		s.release()
	}
}
