package httptransport

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// streamEvent is one server-sent event as the go-sdk's reader (mcp/event.go)
// yields it: name, id and retry are the last of their fields, trimmed of
// spaces; data joins the data lines (each trimmed of spaces) with '\n'.
// data is only valid until the next call of sseReader.next.
type streamEvent struct {
	name, id, retry string
	data            []byte
}

// errSSEMalformed is the error of a line without a ':' (the SDK fails the
// stream on one), errSSETooLarge that of an event over the receive cap.
var (
	errSSEMalformed = errors.New("httptransport: malformed line in SSE stream")
	errSSETooLarge  = errors.New("httptransport: SSE event exceeded the receive cap")
)

// sseBufSize is the size of the buffer a stream is read through (a
// longer line is assembled in the line buffer), and maxPooledLine the
// largest line or data buffer kept for the next stream.
const (
	sseBufSize    = 4 << 10
	maxPooledLine = 64 << 10
)

// sseReader splits an SSE stream into events. Lines end at "\r\n", "\n"
// or a lone "\r" (the SSE specification; a "\r" that ends one read and a
// "\n" that starts the next are one line end); a line "field:value" sets
// a field ("event", "id", "retry", "data"; others are ignored, and a
// line starting with ':' is a comment); an empty line ends the event. An
// event cut by the end of the stream is delivered, as the SDK does. An
// event whose lines (line ends included) exceed limit bytes fails the
// stream with errSSETooLarge before more of it is buffered. It is not
// safe for concurrent use; its buffers are pooled (release).
type sseReader struct {
	body  io.Reader
	limit int
	bufs  *sseBufs
	r, w  int  // bufs.buf[r:w] is read but not yet split
	skip  bool // the last line ended with '\r': a '\n' first is its end
	eof   bool
	err   error // the read error to report once the buffer is empty
}

// sseBufs are the buffers of one sseReader, pooled.
type sseBufs struct {
	buf  []byte // sseBufSize
	line []byte // a line that spans reads
	data []byte // the event's joined data
}

var ssePool = sync.Pool{New: func() any { return &sseBufs{buf: make([]byte, sseBufSize)} }}

func newSSEReader(body io.Reader, limit int64) *sseReader {
	l := int(min(limit, int64(int(^uint(0)>>1))))
	return &sseReader{body: body, limit: l, bufs: ssePool.Get().(*sseBufs)}
}

// release gives the buffers back; the reader must not be used after.
func (s *sseReader) release() {
	b := s.bufs
	if b == nil {
		return
	}
	s.bufs = nil
	if cap(b.line) > maxPooledLine {
		b.line = nil
	}
	if cap(b.data) > maxPooledLine {
		b.data = nil
	}
	b.line, b.data = b.line[:0], b.data[:0]
	ssePool.Put(b)
}

// readLine returns the next line without its end, and how many bytes it
// took from the stream (line end included); io.EOF (or the read error)
// once nothing is left, a final line without an end being returned
// first. budget bounds the bytes taken: beyond it errSSETooLarge.
func (s *sseReader) readLine(budget int) (line []byte, n int, err error) {
	b := s.bufs
	b.line = b.line[:0]
	spanning := false
	for {
		if s.skip && s.r < s.w {
			s.skip = false
			if b.buf[s.r] == '\n' {
				s.r++
				n++
			}
		}
		chunk := b.buf[s.r:s.w]
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
				b.line = append(b.line, chunk[:i]...)
				return b.line, n, nil
			}
			return chunk[:i], n, nil
		}
		n += len(chunk)
		if n > budget {
			return nil, n, errSSETooLarge
		}
		if len(chunk) > 0 {
			b.line = append(b.line, chunk...)
			spanning = true
		}
		s.r, s.w = 0, 0
		if s.eof {
			if spanning {
				return b.line, n, nil
			}
			return nil, n, s.err
		}
		m, rerr := s.body.Read(b.buf)
		s.w = m
		if rerr != nil {
			s.eof, s.err = true, rerr
		}
	}
}

// next returns the next event. Its error is io.EOF at the end of the
// stream, errSSEMalformed, errSSETooLarge, or the body's read error.
func (s *sseReader) next() (streamEvent, error) {
	var ev streamEvent
	hasData, some := false, false
	b := s.bufs
	b.data = b.data[:0]
	taken := 0
	for {
		line, n, err := s.readLine(s.limit - taken)
		taken += n
		if err != nil {
			if err == errSSETooLarge {
				return streamEvent{}, err
			}
			if some {
				ev.data = b.data
				return ev, nil // cut by the end of the stream
			}
			return streamEvent{}, err
		}
		if len(line) == 0 {
			if some {
				ev.data = b.data
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
			if v := bytes.TrimSpace(val); string(v) == "message" {
				ev.name = "message" // no copy for the common name
			} else {
				ev.name = string(v)
			}
		case "id":
			ev.id = string(bytes.TrimSpace(val))
		case "retry":
			ev.retry = string(bytes.TrimSpace(val))
		case "data":
			if hasData {
				b.data = append(b.data, '\n')
			}
			b.data = append(b.data, bytes.TrimSpace(val)...)
			hasData = true
		default:
			continue
		}
		some = ev.name != "" || ev.id != "" || ev.retry != "" || len(b.data) > 0
	}
}
