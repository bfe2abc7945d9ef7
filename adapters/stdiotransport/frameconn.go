package stdiotransport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/adapters/internal/jsonrpcwire"
)

var _ mcp.Connection = (*frameConn)(nil)

// frameConn is this package's mcp.Connection over a child's stdout and
// stdin: newline-delimited JSON-RPC 2.0, one message a line, as the MCP
// stdio transport defines it. It replaces the go-sdk's IOTransport
// connection, which decodes every inbound message with a fresh reflective
// decoder (and its buffers) and encodes every outbound one with a fresh
// encoder: lines are framed in a reused buffer and decoded by decodeLine
// (jsonrpcwire's decoder); messages are encoded by jsonrpcwire.Append into
// a reused buffer.
//
// What it accepts is what the SDK's connection accepts, one line at a
// time, with three deliberate differences: a message must fit on one line
// (the protocol forbids embedded newlines; the SDK's stream decoder would
// read a value across lines), a line holds one message (the SDK would
// read a second value after a '\r'), and a JSON-RPC batch is refused (the
// protocol versions mcpward speaks have none). Each is a
// malformed line.
//
// Like the SDK's connection it reads on its own goroutine, so that Close
// unblocks Read; that goroutine ends when the reader fails (the pipe is
// closed when the child is reaped) or, after Close, at its next message.
type frameConn struct {
	w        io.WriteCloser // the child's stdin; its Close ends the child
	incoming chan msgOrErr
	closed   chan struct{}

	closeOnce sync.Once
	closeErr  error

	writeMu sync.Mutex
	wbuf    []byte
}

type msgOrErr struct {
	msg jsonrpc.Message
	err error
}

func newFrameConn(r io.Reader, w io.WriteCloser) *frameConn {
	c := &frameConn{w: w, incoming: make(chan msgOrErr), closed: make(chan struct{})}
	go c.readLoop(&framer{r: r})
	return c
}

func (c *frameConn) readLoop(f *framer) {
	defer f.release()
	for {
		m, err := f.next()
		select {
		case c.incoming <- msgOrErr{m, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read returns the next inbound message; after Close, io.EOF.
func (c *frameConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case v := <-c.incoming:
		return v.msg, v.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// writeBufKeep is the largest write buffer kept between messages.
const writeBufKeep = 64 << 10

// Write encodes msg as one line, as jsonrpc.EncodeMessage does
// (jsonrpcwire.Append), and writes
// it to the child's stdin. Safe for concurrent use.
func (c *frameConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	b, err := jsonrpcwire.Append(c.wbuf[:0], msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %v", err)
	}
	b = append(b, '\n')
	_, err = c.w.Write(b)
	if cap(b) > writeBufKeep {
		b = nil
	}
	c.wbuf = b
	return err
}

// Close closes the child's stdin (the writer's Close, which ends the
// child) and then unblocks Read. Idempotent.
func (c *frameConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.w.Close()
		close(c.closed)
	})
	return c.closeErr
}

// SessionID is "": stdio has no session id.
func (c *frameConn) SessionID() string { return "" }

// idleBufSize is the size of the buffer a framer reads into while no
// part of a line is pending: what an idle connection holds while it waits
// for its child. A line that does not fit, or a burst of lines (a read
// that filled the idle buffer), moves to a pooled buffer of readBufSize; a
// longer line grows a private one (up to the receive cap, which the reader
// below enforces). Both go back to their pools once every byte read has
// been framed and the last read came back short, before the next read.
const (
	idleBufSize = 512
	readBufSize = 32 << 10
)

var readBufs = sync.Pool{New: func() any { b := make([]byte, readBufSize); return &b }}

// bigBufs holds buffers grown past readBufSize by a long line, so that the
// next long line (the next page of a listing) reuses one instead of
// growing its own from readBufSize; like every sync.Pool it drops what
// stays unused over two garbage collections, so an idle connection holds
// none. A buffer over bigBufKeep is dropped instead (a hostile line near
// the receive cap grows one of up to twice the cap).
var bigBufs sync.Pool

const bigBufKeep = 4 << 20

// framer splits what r delivers into lines and decodes each. The messages
// it returns never share its buffers (decodeLine copies what it keeps).
type framer struct {
	r     io.Reader
	pool  *[]byte // the pooled (readBufs or bigBufs) buffer, while held
	buf   []byte  // buf[start:end] is read and not yet framed
	start int
	end   int
	seen  int   // buf[start:seen] holds no newline
	err   error // the reader's error, returned once the buffer is framed
	burst bool  // the last read filled all the room it was offered
	idle  [idleBufSize]byte
}

func (f *framer) release() {
	if f.pool != nil {
		switch n := len(*f.pool); {
		case n == readBufSize:
			readBufs.Put(f.pool)
		case n <= bigBufKeep:
			bigBufs.Put(f.pool)
		}
		f.pool = nil
	}
	f.buf = f.idle[:]
}

// next returns the next message. Its errors: the reader's (after every
// complete line before it), io.ErrUnexpectedEOF at the end of the stream
// inside a message, and a decode error for a line that is not one
// JSON-RPC message — reported as soon as the line's first byte shows it.
func (f *framer) next() (jsonrpc.Message, error) {
	if f.buf == nil {
		f.buf = f.idle[:]
	}
	for {
		if i := bytes.IndexByte(f.buf[f.seen:f.end], '\n'); i >= 0 {
			line := f.buf[f.start : f.seen+i]
			f.start = f.seen + i + 1
			f.seen = f.start
			m, err := decodeLine(line)
			if errors.Is(err, jsonrpcwire.ErrTruncated) {
				err = jsonrpcwire.ErrSyntax // a message must fit on its line
			}
			if m == nil && err == nil {
				continue // a blank line
			}
			return m, err
		}
		f.seen = f.end
		partial := f.buf[f.start:f.end]
		if p := bytes.TrimLeft(partial, " \t\r"); len(p) > 0 && p[0] != '{' {
			return nil, jsonrpcwire.ErrNotMessage // not a message, whatever follows
		}
		if f.err != nil {
			if f.err != io.EOF {
				return nil, f.err
			}
			f.start, f.seen = f.end, f.end
			m, err := decodeLine(partial) // a last line without '\n'
			switch {
			case errors.Is(err, jsonrpcwire.ErrTruncated):
				return nil, io.ErrUnexpectedEOF
			case err != nil:
				return nil, err
			case m != nil:
				return m, nil
			}
			return nil, io.EOF
		}
		f.fill()
	}
}

// fill reads once more into the buffer. It first moves the unframed bytes
// to the front of the smallest buffer they leave room in — the idle one
// when they are few and the last read did not fill what it was offered
// (the child's output is drained), releasing a pooled one — and, when
// they fill the buffer, or the last read filled the idle buffer (a burst
// of lines), moves them to a larger one: the pooled buffer, then a pooled
// or new buffer of at least twice the size.
func (f *framer) fill() {
	pending := f.end - f.start
	switch {
	case pending < idleBufSize && f.pool != nil && !f.burst:
		n := copy(f.idle[:], f.buf[f.start:f.end])
		f.release()
		f.seen -= f.start
		f.start, f.end = 0, n
	case f.start > 0:
		n := copy(f.buf, f.buf[f.start:f.end])
		f.seen -= f.start
		f.start, f.end = 0, n
	}
	if f.end == len(f.buf) || f.burst && f.pool == nil {
		f.grow()
	}
	n, err := f.r.Read(f.buf[f.end:])
	f.burst = n == len(f.buf)-f.end
	f.end += n
	if err != nil {
		f.err = err
	}
}

// grow moves the unframed bytes, which fill the buffer from its front, to
// a larger one.
func (f *framer) grow() {
	var next *[]byte
	if f.pool == nil {
		next = readBufs.Get().(*[]byte)
	} else {
		if p, _ := bigBufs.Get().(*[]byte); p != nil && len(*p) >= 2*len(f.buf) {
			next = p
		} else {
			b := make([]byte, 2*len(f.buf))
			next = &b
		}
	}
	copy(*next, f.buf[:f.end])
	old := f.pool
	f.pool, f.buf = next, *next
	if old != nil && len(*old) == readBufSize {
		readBufs.Put(old)
	}
	// A grown private buffer outgrown in turn is dropped.
}

// decodeLine decodes one inbound line (without its '\n') with
// jsonrpcwire.Decode, under the stdio framing's own rules: a line of only
// whitespace yields (nil, nil); a line whose first byte is not '{' is not
// a message whatever follows (jsonrpcwire.ErrNotMessage; a JSON-RPC batch,
// which the protocol versions mcpward speaks do not have, is one); and
// after the message only a '\r' and whitespace may follow
// (jsonrpcwire.ErrTrailing otherwise), as the SDK's connection requires
// the byte after a message to end the line. Its errors are Decode's:
// jsonrpcwire.ErrTruncated when the line ends inside the message.
func decodeLine(line []byte) (jsonrpc.Message, error) {
	end := len(bytes.TrimRight(line, " \t\r\n"))
	if end == 0 {
		return nil, nil
	}
	if bytes.TrimLeft(line, " \t\r\n")[0] != '{' {
		return nil, jsonrpcwire.ErrNotMessage
	}
	m, err := jsonrpcwire.Decode(line)
	if err != nil {
		return nil, err
	}
	if end < len(line) && line[end] != '\r' {
		return nil, jsonrpcwire.ErrTrailing
	}
	return m, nil
}
